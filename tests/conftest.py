"""Shared fixtures: where the read-only shared data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a CI run is red only for a change, never for a new random
# draw); `HYPOTHESIS_PROFILE=explore` (or `--hypothesis-profile explore`) draws new ones to look for bugs.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()


@pytest.fixture(scope="session", autouse=True)
def cache_folder(tmp_path_factory):
    """What openbook caches for the user (the WordNet index, ``openbook._cachedir``) goes to a folder of the test
    session (``$OPENBOOK_CACHE_DIR``, inherited by the CLI processes tests start), never to the user's."""
    patch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("openbook-cache")
    patch.setenv("OPENBOOK_CACHE_DIR", str(folder))
    yield folder
    patch.undo()


@pytest.fixture(scope="session")
def shared() -> Path:
    """The read-only ``shared/`` folder next to the repository (datasets, labs, samples)."""
    assert SHARED.is_dir(), f"shared data not found at {SHARED}"
    return SHARED


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL 18 + pgvector server for the session (``tests/helpers/postgres_server.py``), started on
    first use and stopped at the end. Skips only when the server binaries are not installed (the ``test`` extra
    installs them, so CI runs these tests)."""
    from helpers.postgres_server import ServerUnavailable, shared_server, stop_shared

    try:
        server = shared_server()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    stop_shared()


@pytest.fixture
def postgres_url(postgres_server, request) -> str:
    """A fresh, empty database on the session's server, as a ``postgresql://`` URL."""
    import hashlib

    return postgres_server.create_database("t_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16])


@pytest.fixture
def postgresql_location(postgres_url) -> str:
    """The conformance suite's PostgreSQL backend (``tests/store/test_conformance.py``): a fresh database."""
    return postgres_url
