"""A folder of hostile files (zip bombs of each zip-based format, a zip nested in a package, deep XML, entity
expansion, deep HTML, Markdown and front matter, PDFs with a cyclic object graph and with a flate bomb, a BEIR
corpus with a deeply nested line) ingests through the real CLI in a subprocess: each hostile file is named in
the report with its one-line reason, the honest files are searchable, nothing prints a traceback, and the
process tree's peak memory stays under 1 GiB. The files are built by ``helpers.hostile_files``."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.hostile_files import build_corpus, pdf_honest  # noqa: E402

from openbook.ingest import load_file  # noqa: E402
from openbook.ingest.limits import ParseLimits  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"
PEAK_LIMIT_MIB = 1024
SAFETY_AS_BYTES = 8 << 30
"""Address space the CLI process may reserve (its parse workers set their own limit): a regression that parses a
bomb in the CLI process fails here instead of filling the machine's memory."""

_MEASURE = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:])
print("PEAK_KIB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(proc.returncode)
"""
"""Runs the command and prints the peak resident set of it and its descendants (the parse workers included:
the kernel carries a waited-for child's peak up to its parent)."""


def _cli(args: list[str], home: Path, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], int]:
    """``python -m openbook.cli ARGS`` in a fresh process: (the completed process, peak MiB of its tree)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (SAFETY_AS_BYTES, resource.RLIM_INFINITY))

    proc = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "openbook.cli", *args],
                          capture_output=True, text=True, timeout=timeout, preexec_fn=limit,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(home)}, cwd=home)
    peak = next(int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("PEAK_KIB"))
    return proc, peak // 1024


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return build_corpus(tmp_path_factory.mktemp("hostile") / "docs")


FAILED = {
    "size-bomb.docx": ("decompression bomb", "[ingest] max_unzipped_mb"),
    "ratio-bomb.pptx": ("decompression bomb", "[ingest] max_zip_ratio"),
    "entry-bomb.epub": ("decompression bomb", "[ingest] max_zip_entries"),
    "deep-xml.docx": ("XML nested more than 256 levels deep",),
    "laughs.docx": ("entity-expansion bomb",),
    "deep.html": ("nested more than 256 levels deep",),
    "cyclic.pdf": ("malformed PDF", "cyclic"),
    "self-reference.pdf": ("malformed PDF",),
    "deep-front-matter.md": ("YAML front matter nested too deeply",),
    "laughs-yaml.md": ("YAML aliases are not read",),
}
"""Each file that fails, with what its reason must say."""

ADDED = {"honest.md", "nested-zip.docx", "flate-bomb.pdf", "laughs.epub", "laughs.html", "deep.md", "j1", "j2"}
"""What lands: the honest files, the honest parts of the flate-bomb PDF and of the BEIR corpus, and the files
whose hostile part no parser expands (the nested zip is never inflated, the HTML parser reads no DTD, markdown-it
stops nesting at its limit)."""

WARNED = {
    "flate-bomb.pdf": "page 2 of 2 not read: its content decompresses to more than pypdf's limit",
    "corpus.jsonl": "corpus.jsonl line 2 skipped: ",
}
DEEP_LINE = ("metadata nested more than 32 levels deep", "JSON nested too deeply to parse")
"""The deep BEIR line's reason: the metadata check's, or the JSON parser's own nesting limit (recent orjson
releases, or the standard library's recursion limit), depending on the parser installed."""


def test_the_hostile_corpus_ingests_with_a_report_and_bounded_memory(corpus, tmp_path):
    store = tmp_path / "store"
    started = time.monotonic()
    proc, peak_mib = _cli(["ingest", str(corpus), "--no-embed", "--store", str(store), "--json"], tmp_path)
    seconds = time.monotonic() - started
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    failed = {Path(path).name: reason for path, reason in report["failed"]}
    assert set(failed) == set(FAILED), failed
    for name, needed in FAILED.items():
        reason = failed[name]
        assert "\n" not in reason and all(part in reason for part in needed), (name, reason)
    assert set(report["added"]) == ADDED
    assert report["skipped"] == []
    warned = {Path(path).name: message for path, message in report["warnings"]}
    for name, message in WARNED.items():
        assert message in warned.get(name, ""), (name, warned)
    assert any(reason in warned["corpus.jsonl"] for reason in DEEP_LINE), warned
    assert report["chunks_total"] < 200  # no entity, alias or nesting was expanded into text
    assert peak_mib < PEAK_LIMIT_MIB, f"the ingest's process tree peaked at {peak_mib} MiB"
    print(f"hostile corpus: {seconds:.1f} s, peak {peak_mib} MiB")

    found, _ = _cli(["search", "night porter spare keys blue cabinet", "--store", str(store), "--json"], tmp_path)
    assert found.returncode == 0, found.stderr[-2000:]
    hits = json.loads(found.stdout)["hits"]
    assert hits and hits[0]["doc_id"] == "honest.md" and "east wing" in hits[0]["snippet"]
    for query, doc_id in (("flate bomb report honest text", "flate-bomb.pdf"), ("lift archive Sundays", "j1")):
        found, _ = _cli(["search", query, "--store", str(store), "--json"], tmp_path)
        assert json.loads(found.stdout)["hits"][0]["doc_id"] == doc_id


def test_a_long_honest_pdf_finishes_under_a_per_page_deadline(tmp_path):
    """The parse deadline bounds each page: a PDF whose whole parse takes longer than the deadline is read."""
    path = pdf_honest(tmp_path / "long.pdf", 1500)
    load_file(pdf_honest(tmp_path / "warm.pdf", 1), "warm.pdf", ParseLimits())  # a worker started, libraries warm
    started = time.monotonic()
    load_file(path, "long.pdf", ParseLimits(parse_timeout_s=600))
    whole = time.monotonic() - started
    # a third of the whole parse: hundreds of times one page's share, and well under the whole (on any machine)
    limits = ParseLimits(parse_timeout_s=whole / 3)
    (doc,) = load_file(path, "long.pdf", limits)
    assert len(doc.pages) == 1500 and "The room bfaa keeps its spare key" in doc.text


@pytest.mark.slow
def test_ten_thousand_tiny_files_ingest_with_bounded_memory(tmp_path):
    docs = tmp_path / "docs"
    for n in range(10_000):
        folder = docs / f"d{n // 500:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{n:05d}.md").write_text(f"# Note {n}\n\nRoom {n} is cleaned on day {n % 7}.\n",
                                                 encoding="utf-8")
    store = tmp_path / "store"
    started = time.monotonic()
    proc, peak_mib = _cli(["ingest", str(docs), "--no-embed", "--store", str(store), "--json"], tmp_path,
                          timeout=1200)
    seconds = time.monotonic() - started
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert len(report["added"]) == 10_000 and report["failed"] == [] and report["documents_total"] == 10_000
    assert peak_mib < PEAK_LIMIT_MIB, f"the ingest of 10,000 files peaked at {peak_mib} MiB"
    print(f"10,000 tiny files: {seconds:.1f} s, peak {peak_mib} MiB")
    found, _ = _cli(["search", "room 7777 cleaned", "--store", str(store), "--json"], tmp_path)
    assert json.loads(found.stdout)["hits"][0]["doc_id"] == "d15/note-07777.md"
