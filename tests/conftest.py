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


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL 18 + pgvector server for the session (``tests/helpers/postgres_server.py``), started on
    first use and stopped at the end. Skips only when the server binaries are not installed (the ``test`` extra
    installs them, so CI runs these tests)."""
    from helpers.postgres_server import PostgresServer, ServerUnavailable

    try:
        server = PostgresServer.start()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server, request) -> str:
    """A fresh, empty database on the session's server, as a ``postgresql://`` URL."""
    import re

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return postgres_server.create_database(name)
