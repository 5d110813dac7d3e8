"""A chat follow-up that asks its own question about the previous turn's subject ("And how do I disable the
limit?") is condensed with that turn and answered, on ``/v1/chat/completions`` and ``/v1/ask`` alike. A real
server over a real store, the offline answerer."""

from __future__ import annotations

import httpx

from helpers.served import ServerThread, server_config

UPLOADS = """# Upload settings

## Size limit

The server refuses uploads larger than 20 MiB by default. The upload size limit protects the server's memory.

## Disabling the limit

To disable the upload size limit, start the server with `--max-upload-mb 0`. Without a limit, very large files
can exhaust memory.
"""
TRASH = "# Trash\n\nDeleted files stay in the trash for 30 days. After 30 days the trash is emptied automatically.\n"


def test_a_follow_up_with_its_own_question_is_condensed_and_answered(tmp_path):
    from openbook.api import Engine
    from openbook.server import create_app

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "uploads.md").write_text(UPLOADS, encoding="utf-8")
    (docs / "trash.md").write_text(TRASH, encoding="utf-8")
    store = tmp_path / "store"
    with Engine.open(store, server_config(store), create=True) as engine:
        assert sorted(engine.ingest([docs]).added) == ["trash.md", "uploads.md"]
    first = "What is the upload size limit?"
    follow_up = "And how do I disable the limit?"
    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, timeout=60) as c:
        before = c.post("/v1/ask", json={"question": first}).json()
        history = [{"role": "user", "content": first}, {"role": "assistant", "content": before["answer"]}]
        chat = c.post("/v1/chat/completions", json={
            "model": "openbook", "messages": [*history, {"role": "user", "content": follow_up}]}).json()
        ask = c.post("/v1/ask", json={"question": follow_up, "history": history}).json()
    for result in (chat["openbook"], ask):
        assert result["question"].startswith(follow_up) and "upload" in result["question"]
        assert result["refused"] is False, result["notes"]
        assert "--max-upload-mb 0" in result["answer"]
        assert [c["doc_id"] for c in result["citations"]] == ["uploads.md"]
    assert "--max-upload-mb 0" in chat["choices"][0]["message"]["content"]
