"""Where the shared sample data lives, for the ingest tests."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = (Path(__file__).resolve().parents[2] / ".." / "shared").resolve()
SKYLADDER = SHARED / "labs" / "skyladder"
SAMPLES = SHARED / "samples"


def need(path: Path) -> Path:
    """``path`` if it exists, else skip the test (the shared data folder is not in the repository)."""
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    return path
