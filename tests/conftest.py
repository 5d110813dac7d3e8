"""Shared fixtures: where the read-only shared data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()


@pytest.fixture(scope="session")
def shared() -> Path:
    """The read-only ``shared/`` folder next to the repository (datasets, labs, samples)."""
    assert SHARED.is_dir(), f"shared data not found at {SHARED}"
    return SHARED
