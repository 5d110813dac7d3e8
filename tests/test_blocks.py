"""``openbook.blocks.parse_blocks``: the one Markdown parse, on hand-written Markdown."""

from __future__ import annotations

from openbook.blocks import decode_blocks, encode_blocks, parse_blocks


def _seen(text: str) -> list[tuple[str, int, str]]:
    return [(b.kind, b.level, text[b.start:b.end]) for b in parse_blocks(text)]


def test_headings_paragraphs_and_their_spans() -> None:
    text = "# Travel policy\n\nHotels are booked\nby the office.\n\n## Hotels  \n\n  Indented text.\n"
    assert _seen(text) == [("heading", 1, "# Travel policy"), ("paragraph", 0, "Hotels are booked\nby the office."),
                           ("heading", 2, "## Hotels"), ("paragraph", 0, "Indented text.")]
    assert [b.lines for b in parse_blocks(text)] == [(0, 1), (2, 4), (5, 6), (7, 8)]


def test_setext_heading_and_a_hash_without_space_is_text() -> None:
    assert _seen("Title\n=====\n\n#hashtag\n") == [("heading", 1, "Title\n====="), ("paragraph", 0, "#hashtag")]


def test_list_items_nest_and_hold_their_code() -> None:
    text = "1. Install\n   ```sh\n   pip install x\n   ```\n2. Run\n   - fast\n"
    assert _seen(text) == [("list_item", 1, "1. Install\n   ```sh\n   pip install x\n   ```"),
                           ("code", 1, "```sh\n   pip install x\n   ```"),
                           ("list_item", 1, "2. Run\n   - fast"), ("list_item", 2, "- fast")]
    code = parse_blocks(text)[1]
    assert (code.fence, code.info, code.closed, code.lines) == ("```", "sh", True, (1, 4))


def test_table_rows_carry_their_header() -> None:
    text = "| Plan | Price |\n|---|---:|\n| Basic | 5 EUR |\n| Pro | 9 EUR |\n\nAfter.\n"
    rows = [b for b in parse_blocks(text) if b.kind == "table_row"]
    assert [(r.header, r.cells) for r in rows] == [((), ("Plan", "Price")), (("Plan", "Price"), ("Basic", "5 EUR")),
                                                   (("Plan", "Price"), ("Pro", "9 EUR"))]
    assert text[rows[2].start:rows[2].end] == "| Pro | 9 EUR |"
    assert parse_blocks(text)[-1].kind == "paragraph"


def test_pipes_without_a_separator_are_a_paragraph() -> None:
    assert _seen("| a | b |\n| c | d |\n") == [("paragraph", 0, "| a | b |\n| c | d |")]


def test_code_fenced_unclosed_and_indented() -> None:
    text = "Intro:\n\n    indented code\n\n~~~\n# not a heading\n"
    blocks = parse_blocks(text)
    assert [(b.kind, b.fence, b.closed) for b in blocks] == [("paragraph", "", True), ("code", "", True),
                                                             ("code", "~~~", False)]
    assert text[blocks[2].start:blocks[2].end] == "~~~\n# not a heading"


def test_crlf_keeps_offsets_of_the_text_as_given() -> None:
    text = "# A\r\n\r\nBody text.\r\n"
    assert _seen(text) == [("heading", 1, "# A"), ("paragraph", 0, "Body text.")]


def test_block_quote_paragraphs_are_quoted() -> None:
    [b] = parse_blocks("> quoted\n> text\n")
    assert (b.kind, b.quoted) == ("paragraph", True)


def test_empty_text_has_no_blocks() -> None:
    assert parse_blocks("") == [] and parse_blocks(" \n\n") == []


def test_encoded_blocks_decode_to_the_same_blocks() -> None:
    text = ("# T\n\n| a | b |\n|---|---|\n| 1 | x \\| y |\n\n~~~py\nx = 1\n~~~\n\n> ```\n> quoted\n\n- item\n"
            "  - nested\n\n    indented code\n")
    blocks = tuple(parse_blocks(text))
    assert {b.kind for b in blocks} == {"heading", "table_row", "code", "list_item"}
    raw = encode_blocks(blocks)
    assert decode_blocks(raw) == blocks
    assert raw.count('"o"') == raw.count('"q"') == 1  # compact: only the quoted, unclosed fence is not at defaults
    assert decode_blocks(None) == decode_blocks("") == decode_blocks(encode_blocks(())) == ()
