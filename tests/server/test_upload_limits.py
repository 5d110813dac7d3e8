"""An uploaded decompression bomb is refused before it is parsed, with its reason in the upload's report, and
the other files of the upload land; the server does not grow by what the bomb would inflate to. A real server,
a real HTTP client, a real DOCX of about 1 MiB that inflates to 300 MiB."""

from __future__ import annotations

import resource

import httpx

from helpers.served import ServerThread, server_config
from helpers.zip_packages import docx_with_body, repeated


def test_an_uploaded_docx_bomb_is_refused_with_its_reason_and_the_rest_lands(tmp_path):
    from openbook.server import create_app

    bomb = docx_with_body(tmp_path / "bomb.docx", repeated(b"The deposit is forty marks. ", 300 * 2**20))
    store = tmp_path / "store"
    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, timeout=120) as c:
        notes = ("notes.md", b"# Notes\n\nThe canteen closes at three.\n", "text/markdown")
        assert c.post("/v1/ingest", files=[("files", notes)]).status_code == 200  # loaders and index warm
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with open(bomb, "rb") as f:
            both = c.post("/v1/ingest", files=[("files", ("bomb.docx", f, "application/octet-stream")),
                                               ("files", ("canteen.md", b"# Canteen\n\nOpen at noon.\n",
                                                          "text/markdown"))])
        with open(bomb, "rb") as f:
            alone = c.post("/v1/ingest", files=[("files", ("bomb.docx", f, "application/octet-stream"))])
        growth_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert both.status_code == 200, both.text
        report = both.json()
        assert report["added"] == ["canteen.md"]
        (problem,) = report["problems"]
        assert problem["doc_id"] == "bomb.docx" and problem["kind"] == "failed"
        assert "decompression bomb" in problem["reason"] and "[ingest] max_unzipped_mb" in problem["reason"]
        assert alone.status_code == 422 and "decompression bomb" in alone.json()["failed"][0][1]
        assert c.get("/v1/documents/bomb.docx").status_code == 404
        assert growth_mib < 32, f"the server grew by {growth_mib:.0f} MiB"
    assert not (store / "uploads" / "bomb.docx").exists()
