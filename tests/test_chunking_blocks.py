"""The Markdown blocks the chunker stores on each chunk (``Chunk.blocks``): taken from one parse of the document
and moved into each chunk's text, they are the blocks a parse of the chunk's own text finds, for the code blocks
and table rows a reader uses, also in the parts of a long table and of a long code block; other loaders' text
gets none. On Markdown and HTML files read by the real loaders and cut by the real chunker."""

from __future__ import annotations

from pathlib import Path

from openbook.blocks import parse_blocks
from openbook.chunking import chunk_document
from openbook.config import ChunkingConfig
from openbook.ingest import load_file
from openbook.types import Chunk, Document

CFG = ChunkingConfig(target_words=40, overlap_words=8, max_words=60)

DOC = "\n".join([
    "# Deploy guide",
    "",
    "Intro paragraph about deploying the service to a cluster of machines.",
    "",
    "## Limits",
    "",
    "| Plan | Limit | Notes |",
    "| --- | --- | --- |",
    *(f"| plan{i} | {i * 10} requests | row number {i} with a few words \\| escaped |" for i in range(14)),
    "",
    "## Install",
    "",
    "1. Fetch the package from the mirror near you.",
    "2. Run the installer:",
    "",
    "   ```bash",
    *(f"   run_step({i}, mode='fast')  # step {i}" for i in range(30)),
    "   ```",
    "",
    "3. Check the service answers.",
    "",
    "> ```",
    "> quoted code is no fence here",
    "",
])


def load(tmp_path: Path, name: str, text: str) -> Document:
    (tmp_path / name).write_text(text, encoding="utf-8")
    (doc,) = load_file(tmp_path / name, name)
    return doc


def used(blocks: tuple | list, text: str) -> tuple[list, list]:
    """What a reader of blocks uses: fenced code blocks (lines, closed) and table rows (line, header, cells)."""
    nlines = text.count("\n") + 1
    code = [(b.lines[0], min(b.lines[1], nlines), b.closed, b.fence, b.info)
            for b in blocks if b.kind == "code" and b.fence and not b.quoted]
    rows = [(b.lines[0], b.header, b.cells) for b in blocks if b.kind == "table_row"]
    return code, rows


def chunks_of(tmp_path: Path) -> list[Chunk]:
    return chunk_document(load(tmp_path, "guide.md", DOC), CFG)


def test_each_chunk_holds_the_blocks_a_parse_of_its_own_text_finds(tmp_path):
    chunks = chunks_of(tmp_path)
    assert len(chunks) > 4
    for c in chunks:
        assert c.blocks, c.text
        assert used(c.blocks, c.text) == used(parse_blocks(c.text), c.text), c.text
        for b in c.blocks:
            assert 0 <= b.start <= b.end <= len(c.text)
            assert c.text[b.start:b.end] == c.text[b.start:b.end].strip()


def test_table_parts_and_code_parts_carry_their_header_row_and_fences(tmp_path):
    chunks = chunks_of(tmp_path)
    rows = [b for c in chunks for b in c.blocks if b.kind == "table_row" and b.header]
    assert len(rows) == 14
    assert {b.header for b in rows} == {("Plan", "Limit", "Notes")}
    # (the escaped pipe as the parser reads it)
    assert rows[3].cells == ("plan3", "30 requests", "row number 3 with a few words | escaped")
    continued = [c for c in chunks if c.text.startswith("| Plan") and c.start > DOC.index("| plan0")]
    assert continued, "the table is cut into parts"
    for c in continued:
        first = c.blocks[0]
        assert (first.kind, first.start, first.lines, first.header) == ("table_row", 0, (0, 1), ())
    code = [(c, b) for c in chunks for b in c.blocks if b.kind == "code" and b.fence and not b.quoted]
    assert len(code) > 1, "the long code block is cut into parts"
    for c, b in code:
        assert b.info == "bash" and b.closed
        assert c.text[b.start:b.end].startswith("```bash") and c.text[b.start:b.end].endswith("```")


def test_headings_keep_their_level(tmp_path):
    text = "# Top\n\nSome text here.\n\n## Sub\n\nMore text there.\n\n### Deep\n\nLast words.\n"
    (chunk,) = chunk_document(Document("d.md", text, "Top", "d.md", "markdown"), ChunkingConfig())
    heads = [(chunk.text[b.start:b.end], b.level) for b in chunk.blocks if b.kind == "heading"]
    assert heads == [("## Sub", 2), ("### Deep", 3)]


def test_text_of_other_loaders_gets_no_blocks(tmp_path):
    html = load(tmp_path, "page.html", "<html><body><h1>T</h1><p>Some text.</p><table><tr><th>a</th></tr>"
                                       "<tr><td>1</td></tr></table></body></html>")
    assert html.format == "html"
    assert all(c.blocks == () for c in chunk_document(html, CFG))
    pdf_like = Document("p.pdf", "# Heading\n\n| a | b |\n| - | - |\n| 1 | 2 |\n", "P", "p.pdf", "pdf")
    assert all(c.blocks == () for c in chunk_document(pdf_like, CFG))
    md = Document("p.md", pdf_like.text, "P", "p.md", "markdown")
    assert any(c.blocks for c in chunk_document(md, CFG))
