"""A sentence is never cut at a page break: the PDF loader joins a sentence that runs on to the next page, the
plain-text loader reads a form feed as a page break (not a paragraph break where the sentence goes on), and the
chunker ends lines at ``\\n`` only, so a form feed inside a paragraph cuts nothing. Real loaders, files on disk."""

from __future__ import annotations

import sys
from pathlib import Path

from openbook.chunking import chunk_document, chunker_revision, split_sentences
from openbook.config import ChunkingConfig
from openbook.ingest import load_file
from openbook.types import Document

sys.path.insert(0, str(Path(__file__).resolve().parent / "ingest"))
from ingest_minipdf import write_pdf  # noqa: E402

SMALL = ChunkingConfig(target_words=20, overlap_words=0, max_words=60)


def _sentences(doc: Document) -> list[str]:
    return [" ".join(c.text[s:e].split()) for c in chunk_document(doc, SMALL) for s, e in split_sentences(c.text)]


def test_a_text_file_with_form_feeds(tmp_path: Path) -> None:
    path = tmp_path / "lease.txt"
    path.write_text("Lease terms\n\nThe monthly fee is payable by the\n\ftenant within 30 days of the invoice date.\n"
                    "Late fees apply.\n\f\nPAYMENT METHODS\n\nThe deposit is held by the landlord\n\f\n"
                    "until the lease ends.\n", encoding="utf-8")
    doc = load_file(path, "lease.txt")[0]
    assert "\f" not in doc.text
    sentences = _sentences(doc)
    assert "The monthly fee is payable by the tenant within 30 days of the invoice date." in sentences
    assert "The deposit is held by the landlord until the lease ends." in sentences
    assert "# PAYMENT METHODS" in doc.text.split("\n")  # after a finished sentence, a page break is a new block


def test_the_chunker_reads_a_form_feed_inside_a_paragraph_as_a_space() -> None:
    doc = Document("lease", "The monthly fee is payable by the\n\f\ntenant within 30 days of the invoice date. "
                   "Late fees apply.\n\nThe deposit\u2028is held by the landlord.", "Lease", "", "beir")
    assert _sentences(doc)[:1] == ["The monthly fee is payable by the tenant within 30 days of the invoice date."]
    assert "The deposit is held by the landlord." in _sentences(doc)
    assert chunker_revision(doc) == "page-breaks-1"
    plain = Document("plain", "No page break here.\n\nNor here.", "Plain", "", "beir")
    assert chunker_revision(plain) == ""  # (its chunks and their ids are as before)


def test_a_pdf_sentence_running_on_to_the_next_page(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "lease.pdf", [
        ["Lease terms", "", "The monthly fee is payable by the tenant within 30 days of the invoice date, and the",
         "deposit is held by the landlord"],
        [", who returns it within 14 days of the end of the lease.", "", "Late fees apply to every invoice."],
    ])
    doc = load_file(path, "lease.pdf")[0]
    sentences = _sentences(doc)
    assert any(s.endswith("deposit is held by the landlord, who returns it within 14 days of the end of the lease.")
               for s in sentences), sentences
    chunk = next(c for c in chunk_document(doc, SMALL) if "landlord" in c.text)
    assert chunk.page == 1  # the page where the sentence starts
