"""Two writes of one name at once, the second by a key that may not read what the first writes: the access rule
is decided in one step with the write, under the store's writer lock, so the second upload is refused (403), a
delete finds nothing it may delete (404), and the first document stays as it was, on every backend. A real server, real keys, a real HTTP client; the interleaving is
forced by holding the store's writer lock from the test, as another writer (``openbook ingest`` in a shell)
would, while both uploads arrive."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import httpx
import pytest

from helpers.served import ServerThread, server_config

FINANCE_PLAN = b"---\nacl: [finance]\n---\n# Plan\n\nThe acquisition closes on 3 March; code FIN-4471.\n"
PUBLIC_PLAN = b"# Plan\n\nThe canteen menu changes on Monday.\n"


@pytest.fixture(params=["embedded", "postgresql"])
def location(request, tmp_path, monkeypatch) -> str:
    """A fresh store on each backend (a PostgreSQL database on the session's test server)."""
    if request.param == "embedded":
        return str(tmp_path / "store")
    monkeypatch.setenv("OPENBOOK_STATE_DIR", str(tmp_path / "state"))  # the server's keys and uploads
    return request.getfixturevalue("postgres_url")


class _Lines(logging.Handler):
    """The server log's lines, as they come."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def server_log():
    """The ``openbook.server`` log's lines at INFO while the test runs (``_Lines``)."""
    logger = logging.getLogger("openbook.server")
    lines, level = _Lines(), logger.level
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)


def _keys(location: str) -> tuple[str, str]:
    """Write keys ``fin`` (role finance) and ``ops`` (role staff) on the store: their tokens."""
    from openbook.server import KeyStore

    keys = KeyStore(location)
    return keys.add("fin", ["finance"], write=True), keys.add("ops", ["staff"], write=True)


def _upload(url: str, token: str, content: bytes) -> httpx.Response:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
        return c.post("/v1/ingest", files={"files": ("plan.md", content, "text/markdown")})


def _delete(url: str, token: str) -> httpx.Response:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
        return c.delete("/v1/documents/plan.md")


def _wait_for(what: str, done: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def test_an_upload_cannot_replace_a_hidden_document_written_at_the_same_time(location, server_log):
    from openbook.server import create_app
    from openbook.store import local_folder, open_store

    fin, ops = _keys(location)
    uploads = local_folder(location) / "uploads"
    lines = server_log

    def staged() -> list[Path]:
        return list((uploads / ".incoming").glob("*-plan.md")) if (uploads / ".incoming").is_dir() else []

    with ServerThread(create_app(location, server_config(location), readers=2)) as server, \
            ThreadPoolExecutor(2) as pool:
        holder = open_store(location)  # another writer
        try:
            with holder.write_lock():
                first = pool.submit(_upload, server.url, fin, FINANCE_PLAN)
                # the finance upload is in the server's writer: it waits for the lock (or its file is in place)
                _wait_for("the first upload waits for the writer lock",
                          lambda: any("waiting for another" in line for line in lines.lines)
                          or (uploads / "plan.md").exists())
                second = pool.submit(_upload, server.url, ops, PUBLIC_PLAN)
                _wait_for("the second upload is received",
                          lambda: len(staged()) + (uploads / "plan.md").exists() >= 2)
                time.sleep(0.5)  # room for any check made before the write; the outcome must not depend on it
                assert not first.done() and not second.done()
        finally:
            holder.close()
        first_r, second_r = first.result(), second.result()
    assert first_r.status_code == 200, first_r.text
    assert second_r.status_code == 403, second_r.text
    assert "key 'ops' may not write" in second_r.json()["error"]["message"]
    assert (uploads / "plan.md").read_bytes() == FINANCE_PLAN  # the uploaded original is the finance one
    assert staged() == []
    from openbook.api import Engine

    with Engine.open(location, server_config(location)) as engine:
        doc = engine.document("plan.md", roles=["finance"])
        assert doc is not None and "FIN-4471" in doc["chunks"][0]["text"]
        assert engine.document("plan.md", roles=["staff"]) is None


def test_a_delete_cannot_remove_a_document_made_hidden_at_the_same_time(location, server_log):
    from openbook.server import create_app
    from openbook.store import local_folder, open_store

    fin, ops = _keys(location)
    uploads = local_folder(location) / "uploads"
    lines = server_log

    with ServerThread(create_app(location, server_config(location), readers=2)) as server, \
            ThreadPoolExecutor(2) as pool:
        assert _upload(server.url, ops, PUBLIC_PLAN).status_code == 200  # a public plan, ops may delete it
        holder = open_store(location)  # another writer
        try:
            with holder.write_lock():
                first = pool.submit(_upload, server.url, fin, FINANCE_PLAN)  # fin may replace a public plan
                _wait_for("the finance upload waits for the writer lock",
                          lambda: any("waiting for another" in line for line in lines.lines)
                          or (uploads / "plan.md").read_bytes() == FINANCE_PLAN)
                second = pool.submit(_delete, server.url, ops)
                time.sleep(0.5)  # room for any check made before the delete; the outcome must not depend on it
                assert not first.done() and not second.done()
        finally:
            holder.close()
        first_r, second_r = first.result(), second.result()
    assert first_r.status_code == 200, first_r.text
    assert second_r.status_code == 404, second_r.text
    assert (uploads / "plan.md").read_bytes() == FINANCE_PLAN
    from openbook.api import Engine

    with Engine.open(location, server_config(location)) as engine:
        doc = engine.document("plan.md", roles=["finance"])
        assert doc is not None and "FIN-4471" in doc["chunks"][0]["text"]
