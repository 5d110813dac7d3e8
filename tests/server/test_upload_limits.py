"""Uploads are read by the same bounded loader as the CLI's ingest. An uploaded decompression bomb is refused
before it is parsed, with its reason in the upload's report, and the other files of the upload land; a hostile
file that cannot be read answers 422 with its one-line reason; a PDF flate bomb lands its honest page with a
warning; the server does not grow by what a bomb would inflate to. A real server, a real HTTP client, a real DOCX
of about 1 MiB that inflates to 300 MiB, and files from ``helpers.hostile_files``."""

from __future__ import annotations

import resource
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

from helpers.hostile_files import deep_html, docx_billion_laughs, pdf_cyclic, pdf_flate_bomb
from helpers.served import ServerThread, server_config
from helpers.zip_packages import docx_with_body, repeated


@contextmanager
def warm_server(store: Path, timeout: float) -> Iterator[httpx.Client]:
    """A client of a real server on ``store`` (one reader) whose loaders and index are warm: one note uploaded."""
    from openbook.server import create_app

    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, timeout=timeout) as c:
        notes = ("notes.md", b"# Notes\n\nThe canteen closes at three.\n", "text/markdown")
        assert c.post("/v1/ingest", files=[("files", notes)]).status_code == 200
        yield c


def test_an_uploaded_docx_bomb_is_refused_with_its_reason_and_the_rest_lands(tmp_path):
    bomb = docx_with_body(tmp_path / "bomb.docx", repeated(b"The deposit is forty marks. ", 300 * 2**20))
    store = tmp_path / "store"
    with warm_server(store, timeout=120) as c:
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


def test_an_uploaded_hostile_file_answers_its_reason_and_a_flate_bomb_stays_bounded(tmp_path):
    files = {"deep.html": (deep_html, "nested more than 256 levels deep"),
             "laughs.docx": (docx_billion_laughs, "entity-expansion bomb"),
             "cyclic.pdf": (pdf_cyclic, "cyclic")}
    bomb = pdf_flate_bomb(tmp_path / "flate-bomb.pdf")
    store = tmp_path / "store"
    with warm_server(store, timeout=180) as c:
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
