"""An uploaded hostile file is read by the same bounded loader as the CLI's ingest: a file that cannot be read
answers 422 with its one-line reason, a PDF flate bomb lands its honest page with a warning, and the server
does not grow by what the bomb would inflate to. A real server, a real HTTP client, files from
``helpers.hostile_files``."""

from __future__ import annotations

import resource

import httpx

from helpers.hostile_files import deep_html, docx_billion_laughs, pdf_cyclic, pdf_flate_bomb
from helpers.served import ServerThread, server_config


def test_an_uploaded_hostile_file_answers_its_reason_and_a_flate_bomb_stays_bounded(tmp_path):
    from openbook.server import create_app

    files = {"deep.html": (deep_html, "nested more than 256 levels deep"),
             "laughs.docx": (docx_billion_laughs, "entity-expansion bomb"),
             "cyclic.pdf": (pdf_cyclic, "cyclic")}
    bomb = pdf_flate_bomb(tmp_path / "flate-bomb.pdf")
    store = tmp_path / "store"
    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, timeout=180) as c:
        notes = ("notes.md", b"# Notes\n\nThe canteen closes at three.\n", "text/markdown")
        assert c.post("/v1/ingest", files=[("files", notes)]).status_code == 200  # loaders and index warm
        for name, (build, reason) in files.items():
            answer = c.post("/v1/ingest", files=[("files", (name, build(tmp_path / name).read_bytes(),
                                                            "application/octet-stream"))])
            assert answer.status_code == 422, (name, answer.text)
            ((doc_id, why),) = answer.json()["failed"]
            assert doc_id.endswith(name) and reason in why and "\n" not in why and "Traceback" not in why, why
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with open(bomb, "rb") as f:
            landed = c.post("/v1/ingest", files=[("files", ("flate-bomb.pdf", f, "application/pdf"))])
        growth_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert landed.status_code == 200, landed.text
        report = landed.json()
        assert report["added"] == ["flate-bomb.pdf"]
        assert any("page 2 of 2 not read" in message and "decompression bomb" in message
                   for _, message in report["warnings"]), report["warnings"]
        assert growth_mib < 64, f"the server grew by {growth_mib:.0f} MiB"
        hits = c.post("/v1/search", json={"query": "flate bomb report honest text"}).json()["hits"]
        assert hits[0]["doc_id"] == "flate-bomb.pdf"
