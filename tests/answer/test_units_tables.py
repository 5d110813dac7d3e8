"""The answerer's table-row units of a Markdown passage come from the one Markdown parse (``openbook.blocks``)."""

from __future__ import annotations

from openbook.answer.extractive import _units
from openbook.types import Chunk, Hit, Passage


def _passage(text: str, fmt: str = "markdown") -> Passage:
    chunk = Chunk(chunk_id="c1", doc_id="d.md", text=text, title="Plans", headings=(), start=0, end=len(text),
                  format=fmt)
    return Passage(n=1, hit=Hit(chunk_id="c1", doc_id="d.md", score=1.0, legs={}, chunk=chunk))


def test_rows_read_as_header_value_pairs_under_their_heading() -> None:
    units = _units(_passage("## Prices\n\n| Plan | Price |\n|---|---:|\n| Basic | 5 EUR |\n| Pro | 9 EUR |\n\n"
                            "Prices include tax."))
    assert [(u.text, u.heading, u.columns) for u in units] == [
        ("Plan: Basic; Price: 5 EUR", "Prices", ("Plan", "Price")),
        ("Plan: Pro; Price: 9 EUR", "Prices", ("Plan", "Price")),
        ("Prices include tax.", "Prices", ())]
    assert units[1].cells == (("Plan", "Pro"), ("Price", "9 EUR"))


def test_an_escaped_pipe_and_a_table_without_outer_pipes() -> None:
    units = _units(_passage("Key | Meaning\n--- | ---\n`a\\|b` | either a or b\n"))
    assert [u.text for u in units] == ["Key: `a|b`; Meaning: either a or b"]


def test_text_of_another_loader_keeps_its_line_reading() -> None:
    # a PDF's table lines are split at every pipe (no Markdown there): the escaped pipe is two cells
    units = _units(_passage("| Key | Meaning |\n| --- | --- |\n| a\\|b | either |\n", fmt="pdf"))
    assert [u.text for u in units] == ["Key: a\\; Meaning: b; either"]


def test_a_chunks_stored_blocks_are_read_and_give_the_units_a_parse_of_its_text_gives() -> None:
    from dataclasses import replace

    from openbook.chunking import chunk_document
    from openbook.config import ChunkingConfig
    from openbook.types import Document

    rows = [f"| plan{i} | {i} EUR | note {i} with `a\\|b` in it |" for i in range(16)]
    code = [f"   run_step({i}, mode='fast')  # step {i}" for i in range(30)]
    text = "\n".join(["# Plans", "", "Every plan is billed monthly.", "", "| Plan | Price | Notes |",
                      "| --- | --- | --- |", *rows, "", "## Install", "", "1. Fetch it.", "2. Run:", "",
                      "   ```bash", *code, "   ```", "", "3. Check it answers."])
    doc = Document("d.md", text, "Plans", "d.md", "markdown")
    chunks = chunk_document(doc, ChunkingConfig(target_words=40, overlap_words=8, max_words=60))
    assert len(chunks) > 4 and all(c.blocks for c in chunks)
    read = 0
    for c in chunks:
        stored = Passage(n=1, hit=Hit(chunk_id=c.chunk_id, doc_id=c.doc_id, score=1.0, legs={}, chunk=c))
        parsed = Passage(n=1, hit=Hit(chunk_id=c.chunk_id, doc_id=c.doc_id, score=1.0, legs={},
                                      chunk=replace(c, blocks=())))
        assert _units(stored) == _units(parsed), c.text
        read += any(u.cells or u.code for u in _units(stored))
    assert read >= 3
    # the stored blocks are what is read: a row's cells as stored, not as the text would parse
    c = next(c for c in chunks if any(b.kind == "table_row" and b.header for b in c.blocks))
    changed = tuple(replace(b, cells=("X", "Y", "Z")) if b.kind == "table_row" and b.header else b
                    for b in c.blocks)
    units = _units(Passage(n=1, hit=Hit(chunk_id=c.chunk_id, doc_id=c.doc_id, score=1.0, legs={},
                                        chunk=replace(c, blocks=changed))))
    assert {u.text for u in units if u.cells} == {"Plan: X; Price: Y; Notes: Z"}
