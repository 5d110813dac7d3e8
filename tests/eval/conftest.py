"""Shared fixtures for the evaluation tests: the shared datasets next to the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
DATASETS = SHARED / "datasets"
LAB = SHARED / "labs" / "skyladder"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data {path} is not available next to the repository")
    return path


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return _need(DATASETS / "scifact")


@pytest.fixture(scope="session")
def cranfield_dir() -> Path:
    return _need(DATASETS / "cranfield")


@pytest.fixture(scope="session")
def lab_dir() -> Path:
    return _need(LAB)
