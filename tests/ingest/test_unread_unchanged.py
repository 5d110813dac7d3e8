"""A re-ingest leaves files whose bytes did not change unread (not parsed); a touched file with the same bytes
stays unread, a file with other bytes is parsed again, a deleted document's file is read again. Real files
(PDFs among them), a real embedded store, the real loaders: the loader is wrapped only to count its calls."""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import time

import pytest

import openbook.ingest.distributed as distributed
from openbook.api import Engine
from openbook.config import load_config

from ingest_minipdf import write_pdf


@pytest.fixture
def counted(monkeypatch):
    """The paths ``load_file`` (the real one) is called with during the test."""
    calls: list[str] = []
    real = distributed.load_file

    def load_file(path, *args, **kwargs):
        calls.append(os.path.basename(str(path)))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(distributed, "load_file", load_file)
    return calls


def _corpus(folder):
    folder.mkdir()
    (folder / "leave.md").write_text("# Leave\n\nFull-time staff get 25 days of annual leave each year.\n")
    (folder / "trash.txt").write_text("Deleted files stay in the trash for 30 days before they are removed.\n")
    for i in range(3):
        write_pdf(folder / f"report{i}.pdf", [[f"Report number {i} on the kiln firing schedule.",
                                               "The kiln is fired every Tuesday and cooled overnight."]])
    return folder


def _config(**flags):
    return load_config(None, environ={}, flags={"embedding.enabled": False, **flags})


@pytest.mark.parametrize("backend", ["embedded", "postgresql"])
def test_unchanged_files_are_not_parsed_again(tmp_path, counted, backend, request):
    docs = _corpus(tmp_path / "docs")
    store = tmp_path / "store" if backend == "embedded" else request.getfixturevalue("postgres_url")
    with Engine.open(store, _config(), create=True) as engine:
        first = engine.ingest([docs])
        assert len(first.added) == 5 and len(counted) == 5
        counted.clear()
        again = engine.ingest([docs])
        assert counted == [] and sorted(again.unchanged) == sorted(first.added) == sorted(again.unread)
        assert not again.added and not again.updated

        # touched, same bytes: still not parsed
        later = time.time() + 5
        os.utime(docs / "report1.pdf", (later, later))
        os.utime(docs / "leave.md", (later, later))
        touched = engine.ingest([docs])
        assert counted == [] and len(touched.unchanged) == 5

        # other bytes, same text (a PDF rewritten with an extra space in its file structure): parsed once, then
        # unchanged and unread
        raw = (docs / "report2.pdf").read_bytes()
        (docs / "report2.pdf").write_bytes(raw.replace(b"%PDF-1.4\n", b"%PDF-1.4\n%\n", 1))
        resaved = engine.ingest([docs])
        assert counted == ["report2.pdf"] and "report2.pdf" in resaved.unchanged
        assert "report2.pdf" not in resaved.unread
        counted.clear()
        assert engine.ingest([docs]).unread and counted == []

        # other text: parsed and updated
        (docs / "leave.md").write_text("# Leave\n\nFull-time staff get 28 days of annual leave each year.\n")
        changed = engine.ingest([docs])
        assert counted == ["leave.md"] and changed.updated == ["leave.md"]
        assert "28 days" in engine.store.get_document("leave.md").text
        counted.clear()

        # a deleted document's file is read again (its document comes back)
        engine.delete(["trash.txt"])
        back = engine.ingest([docs])
        assert counted == ["trash.txt"] and back.added == ["trash.txt"]


def _ingested(tmp_path):
    """The corpus in ``tmp_path/docs``, ingested once into a new store ``tmp_path/store``: (docs, store)."""
    docs = _corpus(tmp_path / "docs")
    store = tmp_path / "store"
    with Engine.open(store, _config(), create=True) as engine:
        engine.ingest([docs])
    return docs, store


def test_other_settings_read_every_file_again(tmp_path, counted):
    docs, store = _ingested(tmp_path)
    counted.clear()
    cfg = _config(**{"chunking.target_words": 60})
    with Engine.open(store, cfg) as engine:
        engine.ingest([docs])
    assert sorted(counted) == sorted(p.name for p in docs.iterdir())


def test_a_copy_of_the_folder_elsewhere_is_read(tmp_path, counted):
    docs, store = _ingested(tmp_path)
    with Engine.open(store, _config()) as engine:
        counted.clear()
        shutil.copytree(docs, tmp_path / "other")
        report = engine.ingest([tmp_path / "other"])
    assert len(counted) == 5 and not report.unread


def test_every_loader_library_of_the_parsing_extras_is_in_the_fingerprint():
    # installing or upgrading a library an extra brings to read files (the html extra's readability-lxml ...)
    # must make the next ingest read those files again, so each one's version is part of the file digest
    import re
    import tomllib

    from openbook.ingest.signature import PARSER_DISTRIBUTIONS

    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    not_text = {"cryptography"}  # decrypts a PDF for pypdf; the text is pypdf's
    named = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0] for extra in ("pdf", "office", "rst", "html")
             for spec in extras[extra]}
    assert named - not_text <= set(PARSER_DISTRIBUTIONS), named - not_text - set(PARSER_DISTRIBUTIONS)
