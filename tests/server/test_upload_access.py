"""A write key publishes only what it may read: an upload whose access list names none of the key's roles is
refused (the key could neither read, replace nor delete it afterwards), and so is an upload over a document the
key may not read, with the same answer, so that uploading does not tell a hidden document from a missing one.
A real server, a real HTTP client."""

from __future__ import annotations

import httpx

from helpers.served import ServerThread, server_config


def test_a_writer_cannot_publish_a_document_it_could_not_read(served, tmp_path):
    other = tmp_path / "hr-only.md"
    other.write_text("---\nacl: [hr]\n---\n# Salaries\n\nThe salary review meets in March.\n", encoding="utf-8")
    own = tmp_path / "finance-note.md"
    own.write_text("---\nacl: [finance]\n---\n# Budget note\n\nThe budget closes in May.\n", encoding="utf-8")
    with httpx.Client(base_url=served.url, headers=served.auth("admin"), timeout=60) as c:  # roles staff, finance
        with open(other, "rb") as f:
            r = c.post("/v1/ingest", files={"files": ("hr-only.md", f, "text/markdown")})
        assert r.status_code == 403 and "key 'admin' may not write" in r.json()["error"]["message"]
        assert c.get("/v1/documents/hr-only.md").status_code == 404
        with open(own, "rb") as f:
            r = c.post("/v1/ingest", files={"files": ("finance-note.md", f, "text/markdown")})
        assert r.status_code == 200, r.text
        assert c.get("/v1/documents/finance-note.md").status_code == 200
        assert c.delete("/v1/documents/finance-note.md").json() == {"deleted": ["finance-note.md"]}


def test_an_upload_over_a_hidden_document_reads_as_any_upload_the_key_may_not_write(tmp_path):
    from openbook.api import Engine
    from openbook.server import KeyStore, create_app

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "salaries.md").write_text("---\nacl: [hr]\n---\n# Salaries\n\nThe salary review meets in March.\n",
                                        encoding="utf-8")
    (corpus / "welcome.md").write_text("# Welcome\n\nThe office opens at nine.\n", encoding="utf-8")
    store = tmp_path / "store"
    with Engine.open(store, server_config(store), create=True) as engine:
        assert sorted(engine.ingest([corpus]).added) == ["salaries.md", "welcome.md"]
    token = KeyStore(store).add("writer", ["staff"], write=True)
    public = b"# Notes\n\nThe canteen closes at three.\n"
    not_mine = b"---\nacl: [finance]\n---\n# Notes\n\nThe canteen closes at three.\n"

    def upload(client: httpx.Client, name: str, content: bytes) -> httpx.Response:
        return client.post("/v1/ingest", files={"files": (name, content, "text/markdown")})

    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        over_hidden = upload(c, "salaries.md", public)  # a hidden document holds this id
        unreadable = upload(c, "canteen.md", not_mine)  # a new id, an access list naming none of the key's roles
        assert over_hidden.status_code == unreadable.status_code == 403
        assert over_hidden.json() == {"error": {k: v.replace("canteen.md", "salaries.md") if k == "message" else v
                                                for k, v in unreadable.json()["error"].items()}}
        message = over_hidden.json()["error"]["message"]
        assert "exist" not in message and "salar" not in message.replace("salaries.md", "")
        assert c.get("/v1/documents/salaries.md").status_code == c.get("/v1/documents/nothing.md").status_code == 404
        assert upload(c, "canteen.md", public).status_code == 200  # a new id the key may write: stored
    with Engine.open(store, server_config(store)) as engine:  # the hidden document is untouched
        assert "salary review" in engine.document("salaries.md", roles=["hr"])["chunks"][0]["text"]
