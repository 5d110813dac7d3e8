"""Fixtures for the server tests (see ``helpers.served``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.served import Served, ServerThread, build_store, server_config  # noqa: E402


@pytest.fixture(scope="session")
def served(tmp_path_factory) -> Iterator[Served]:
    """A server with keys: staff (role staff), finance (role finance), public (no role), admin (both, write)."""
    from openbook.server import KeyStore, create_app

    root = tmp_path_factory.mktemp("served")
    store = build_store(root)
    keys = KeyStore(store)
    tokens = {"staff": keys.add("staff", ["staff"]), "finance": keys.add("finance", ["finance"]),
              "public": keys.add("public", []), "admin": keys.add("admin", ["staff", "finance"], write=True)}
    with ServerThread(create_app(store, server_config(store), readers=2)) as server:
        yield Served(server.url, store, root / "corpus", tokens)
