"""Zip-based files (DOCX, PPTX, EPUB) are bounded before parsing (decompressed size, entries, ratio, sizes the
header states read back) and their parse by time and memory (``openbook.ingest.limits``): a file over a limit
fails with its reason, the rest of the ingest lands. Real packages written by the libraries that read them, the
real CLI in a subprocess for the memory measurement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.zip_packages import docx_with_body, random_words, repeated, understate  # noqa: E402

from openbook.errors import IngestError  # noqa: E402
from openbook.ingest import load_file  # noqa: E402
from openbook.ingest.limits import ParseLimits, check_zip  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"
SENTENCE = b"The deposit is forty marks and is paid back when the key is returned. "


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """A DOCX of about 1 MiB whose document.xml inflates to 300 MiB."""
    path = docx_with_body(tmp_path_factory.mktemp("bomb") / "bomb.docx", repeated(SENTENCE, 300 * 2**20))
    assert path.stat().st_size < 2 * 2**20
    return path


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> Path:
    """An honest, large DOCX: 12 MiB of words that compress less than 2:1 (within every zip limit)."""
    return docx_with_body(tmp_path_factory.mktemp("large") / "large.docx", random_words(12 * 2**20))


_MEASURE = """
import json, resource, sys
from openbook.cli import main

def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def run(args):
    try:
        main(args)
    except SystemExit as exc:
        return exc.code
    return 0

store, warm, mixed = sys.argv[1:4]
run(["ingest", warm, "--store", store, "--no-embed", "--json"])  # loaders imported, a DOCX parsed
before = peak_kib()
code = run(["ingest", mixed, "--store", store, "--no-embed", "--json"])
print(json.dumps({"before_kib": before, "after_kib": peak_kib(), "code": code}), file=sys.stderr)
"""


def test_a_docx_bomb_is_refused_before_parsing_with_bounded_memory_and_the_rest_lands(bomb, tmp_path):
    import docx

    warm, mixed = tmp_path / "warm", tmp_path / "mixed"
    warm.mkdir(), mixed.mkdir()
    d = docx.Document()
    d.add_paragraph("Keys are returned at the front desk.")
    d.save(str(warm / "keys.docx"))
    (mixed / "bomb.docx").symlink_to(bomb)
    (mixed / "notes.md").write_text("# Notes\n\nThe canteen closes at three.\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(tmp_path / "store"), str(warm), str(mixed)],
                          capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(SRC),
                                                                            "PATH": "/usr/bin:/bin",
                                                                            "HOME": str(tmp_path)})
    measured = json.loads(proc.stderr.strip().splitlines()[-1])
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["added"] == ["notes.md"], report
    (failed,) = report["failed"]
    assert failed[0].endswith("bomb.docx") and "decompression bomb" in failed[1] and "305 MiB" in failed[1]
    assert "[ingest] max_unzipped_mb" in failed[1]
    growth_mib = (measured["after_kib"] - measured["before_kib"]) / 1024
    assert growth_mib < 32, f"the ingest of the bomb grew the process by {growth_mib:.0f} MiB"


def test_a_bomb_within_the_size_limit_is_refused_by_its_ratio(tmp_path):
    path = docx_with_body(tmp_path / "dense.docx", repeated(SENTENCE, 20 * 2**20))
    with pytest.raises(IngestError, match=r"compresses 'word/document.xml' [\d,]+ times.*max_zip_ratio"):
        load_file(path, "dense.docx")
    check_zip(path, "DOCX", ParseLimits(max_zip_ratio=2000))  # within a higher limit


def test_a_header_that_understates_an_entry_is_refused_as_damaged(tmp_path):
    path = docx_with_body(tmp_path / "liar.docx", random_words(3 * 2**20))
    understate(path, "word/document.xml", 4096)
    with pytest.raises(IngestError, match="liar.docx: not a valid DOCX file \\(a damaged zip package"):
        load_file(path, "liar.docx")


def test_every_zip_format_shares_the_guard(tmp_path):
    import docx
    import pptx
    from ebooklib import epub

    docx.Document().save(str(tmp_path / "a.docx"))
    pptx.Presentation().save(str(tmp_path / "a.pptx"))
    book = epub.EpubBook()
    book.set_identifier("id-1")
    book.set_title("A book")
    chapter = epub.EpubHtml(title="One", file_name="one.xhtml", content="<h1>One</h1><p>Text.</p>")
    book.add_item(chapter)
    book.spine = [chapter]
    epub.write_epub(str(tmp_path / "a.epub"), book)
    for name in ("a.docx", "a.pptx", "a.epub"):
        kind = name[2:].upper()
        with pytest.raises(IngestError, match=f"the {kind} package holds [\\d,]+ entries, more than the limit of 3 "
                                              f"\\(\\[ingest\\] max_zip_entries\\)"):
            load_file(tmp_path / name, name, ParseLimits(max_zip_entries=3))


def test_a_parse_over_its_memory_or_time_limit_fails_and_the_next_file_is_read(large, tmp_path):
    small = docx_with_body(tmp_path / "small.docx", [b"Keys are returned at the front desk."])
    with pytest.raises(IngestError, match=r"large.docx: parsing needs more than 16 MiB of memory "
                                          r"\(\[ingest\] parse_memory_mb\)"):
        load_file(large, "large.docx", ParseLimits(parse_memory_mb=16))
    assert "front desk" in load_file(small, "small.docx", ParseLimits(parse_memory_mb=16))[0].text
    with pytest.raises(IngestError, match=r"large.docx: parsing took longer than 0.05 s "
                                          r"\(\[ingest\] parse_timeout_s\)"):
        load_file(large, "large.docx", ParseLimits(parse_timeout_s=0.05))
    assert "front desk" in load_file(small, "small.docx", ParseLimits(parse_timeout_s=60))[0].text


def test_the_ingest_reads_its_limits_from_the_configuration(large, tmp_path):
    from openbook.api import Engine
    from openbook.config import load_config

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "large.docx").symlink_to(large)
    (folder / "notes.md").write_text("# Notes\n\nThe canteen closes at three.\n", encoding="utf-8")
    store = tmp_path / "store"
    config = load_config(None, environ=None, flags={"store": str(store), "embedding.enabled": False,
                                                    "ingest.parse_memory_mb": 16})
    with Engine.open(store, config, create=True) as engine:
        report = engine.ingest([folder])
    assert report.added == ["notes.md"]
    assert [(Path(p).name, "parse_memory_mb" in why) for p, why in report.failed] == [("large.docx", True)]
