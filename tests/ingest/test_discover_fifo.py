"""Non-regular files met while walking a folder are skipped, never opened (a FIFO would block forever)."""

from __future__ import annotations

import os

import pytest

from openbook.api import Engine


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_folder_is_skipped_and_the_batch_goes_on(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Comets have icy nuclei.\n", encoding="utf-8")
    os.mkfifo(docs / "pipe.md")
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([docs], embed=False)
    assert report.added == ["a.txt"]
    assert any("not a regular file" in str(s) for s in report.skipped)
