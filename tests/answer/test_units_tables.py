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
