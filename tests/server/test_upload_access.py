"""A write key publishes only what it may read: an upload whose access list names none of the key's roles is
refused (the key could neither read, replace nor delete it afterwards). A real server, a real HTTP client."""

from __future__ import annotations

import httpx


def test_a_writer_cannot_publish_a_document_it_could_not_read(served, tmp_path):
    other = tmp_path / "hr-only.md"
    other.write_text("---\nacl: [hr]\n---\n# Salaries\n\nThe salary review meets in March.\n", encoding="utf-8")
    own = tmp_path / "finance-note.md"
    own.write_text("---\nacl: [finance]\n---\n# Budget note\n\nThe budget closes in May.\n", encoding="utf-8")
    with httpx.Client(base_url=served.url, headers=served.auth("admin"), timeout=60) as c:  # roles staff, finance
        with open(other, "rb") as f:
            r = c.post("/v1/ingest", files={"files": ("hr-only.md", f, "text/markdown")})
        assert r.status_code == 403 and "names no role of key 'admin'" in r.json()["error"]["message"]
        assert c.get("/v1/documents/hr-only.md").status_code == 404
        with open(own, "rb") as f:
            r = c.post("/v1/ingest", files={"files": ("finance-note.md", f, "text/markdown")})
        assert r.status_code == 200, r.text
        assert c.get("/v1/documents/finance-note.md").status_code == 200
        assert c.delete("/v1/documents/finance-note.md").json() == {"deleted": ["finance-note.md"]}
