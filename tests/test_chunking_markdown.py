"""A Markdown document is cut along the blocks of its one markdown-it parse (``blocks.parse_blocks``): its headings
start sections, and a list item, a table row or a fenced code block that fits is never cut; any other loader's
text is read line by line. Documents cut by the real chunker; Markdown files read by the real loader."""

from __future__ import annotations

from pathlib import Path

from openbook.blocks import parse_blocks
from openbook.chunking import chunk_document
from openbook.config import ChunkingConfig
from openbook.ingest import load_file
from openbook.types import Document

SMALL = ChunkingConfig(target_words=12, overlap_words=3, max_words=40)

GUIDE = "\n".join([
    "# Install guide",
    "",
    "Read this page before you install the agent on a server of your own, since it changes the firewall.",
    "",
    "1. Fetch the package from the mirror that is nearest to you, or from the main site.",
    "2. Unpack it into a folder of its own:",
    "   - on Linux, under /opt with the owner set to root;",
    "   - on macOS, under /Applications as the user who runs it.",
    "3. Run the installer:",
    "",
    "   ```sh",
    "   sudo ./install --with-service",
    "   systemctl enable agent",
    "   ```",
    "",
    "## Ports",
    "",
    "| Port | Protocol | Used by the agent for |",
    "| --- | --- | --- |",
    *(f"| {8000 + i} | tcp | talking to worker number {i} of the cluster |" for i in range(6)),
    "",
    "Open them all.",
    "",
])


def _leaves(text: str) -> list:
    """The list items holding no other block, the table rows and the fenced code blocks of ``text``."""
    blocks = parse_blocks(text)
    return [b for b in blocks if b.kind in ("table_row", "code")
            or b.kind == "list_item" and not any(o is not b and b.start <= o.start < b.end for o in blocks)]


def test_a_list_item_a_table_row_and_a_code_block_are_never_cut(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    (doc,) = load_file(tmp_path / "guide.md", "guide.md")
    chunks = chunk_document(doc, SMALL)
    assert len(chunks) > 5
    leaves = _leaves(doc.text)
    assert {b.kind for b in leaves} == {"list_item", "table_row", "code"}
    for b in leaves:
        assert any(c.start <= b.start and b.end <= c.end for c in chunks), doc.text[b.start:b.end]
    rows = [c for c in chunks if "| 80" in c.text]
    assert len(rows) > 1 and all(c.text.startswith("| Port | Protocol |") for c in rows)  # parts keep the header
    assert {c.headings for c in rows} == {("Install guide", "Ports")}


def test_headings_are_the_parse_s_headings() -> None:
    text = ("Travel\n======\n\nHotels are booked through the portal.\n\n"
            "> # Not a section\n> Quoted advice about hotels.\n\nTaxis are refunded.\n")
    md = chunk_document(Document("t.md", text, "Travel", "t.md", "markdown"), ChunkingConfig())
    assert [c.headings for c in md] == [("Travel",)]  # a setext heading; a heading in a block quote is text
    assert "> # Not a section" in md[0].text
    # another loader's text is read line by line: no setext headings there
    plain = chunk_document(Document("t.txt", text, "Travel", "t.txt", "text"), ChunkingConfig())
    assert [c.headings for c in plain] == [()]


def test_a_number_opening_a_wrapped_line_is_no_list_item() -> None:
    # CommonMark: an ordered list interrupts a paragraph only when it starts at 1; "400)" goes on the sentence
    text = ("A question longer than the limit is an error (exit 1, HTTP\n400) rather than minutes of analysis "
            "spent on it.\n")
    (chunk,) = chunk_document(Document("a.md", text, "A", "a.md", "markdown"), SMALL)
    assert chunk.text == text.strip()


def test_a_store_chunked_by_the_line_reader_re_chunks_its_markdown_documents_once(tmp_path, monkeypatch):
    # a store written before Markdown was cut by its parse (no Markdown revision in the ingest hash): its
    # Markdown documents are re-chunked on the next ingest, a plain-text one stays unchanged
    from openbook.chunking import chunker_revision
    from tests.helpers.stores import engine_chunked_before

    assert chunker_revision(Document("a.md", "Some text.", "A", "a.md", "markdown")) == "markdown-blocks-1"
    assert chunker_revision(Document("a.txt", "Some text.", "A", "a.txt", "text")) == ""
    e = engine_chunked_before(tmp_path, {"guide.md": GUIDE, "notes.txt": "The Team plan includes 1 TB of storage.\n"},
                              monkeypatch, "markdown-blocks-1")
    try:
        report = e.ingest([tmp_path / "docs"])
        assert report.updated == ["guide.md"] and report.unchanged == ["notes.txt"]
        assert e.ingest([tmp_path / "docs"]).unchanged == ["guide.md", "notes.txt"]
    finally:
        e.close()


def test_text_no_block_holds_is_still_chunked() -> None:
    # an empty list item, a quote's blank ">" line, an HTML block and a thematic break are no markdown-it blocks
    for text in ["- ", "> a\n>\n> b", "<div>Opening hours</div>\n\n***\n\nClosed on Sundays."]:
        chunks = chunk_document(Document("a.md", text, "", "a.md", "markdown"), SMALL)
        assert "".join(c.text for c in chunks).split() == text.split(), text
