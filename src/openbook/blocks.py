"""The blocks of a Markdown text, parsed once by markdown-it-py (CommonMark 0.31.2 plus GFM pipe tables).

``parse_blocks(text)`` returns the headings, paragraphs, list items, table rows and code blocks of ``text`` in text
order, each with its character span in ``text``. Stages that read Markdown structure (fenced code for the loader,
the chunker and the answerer) read it here, so that one line is the same kind of block for all of them.
The chunker keeps each chunk's share of its document's parse on the chunk (``Chunk.blocks``, offsets moved into the
chunk's text), so that the answerer reads a stored chunk's blocks without parsing it again; ``encode_blocks`` and
``decode_blocks`` are the form the stores keep them in.

Blocks may nest: a list item's span holds its own paragraphs, its nested items and its code, and a block quote's
paragraphs are paragraphs. A paragraph inside a list item is not reported on its own (the item stands for it);
a code block inside one is, after its item. HTML blocks, thematic breaks, link reference definitions and block
quote markers are no blocks. Line breaks are ``\\n``; a ``\\r`` (of ``\\r\\n`` or alone) is read as a space, so a
line is one line here whatever its ending and spans index the text as given.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from .types import Block, BlockKind

__all__ = ["Block", "BlockKind", "decode_blocks", "encode_blocks", "parse_blocks"]


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    # block structure only: inline parsing (emphasis, links) is most of the parse's time, and no block needs it
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


_NEWLINE = re.compile("\n")


def parse_blocks(text: str) -> list[Block]:
    """The blocks of ``text`` (Markdown), by markdown-it-py.

    Args:
        text: a Markdown text (a ``Document.text``, a chunk's text, a loader's body).

    Returns:
        The blocks in text order (by ``start``; an enclosing list item before what it holds); ``[]`` for a text
        without any. Kinds and fields: ``Block``.
    """
    return list(_parsed(text)) if text.strip() else []


@lru_cache(maxsize=8)
def _parsed(text: str) -> tuple[Block, ...]:
    """``parse_blocks``, remembered for the last texts: the loader, the chunker and its revision read one
    document's text in turn."""
    source = text.replace("\r", " ")  # same length: offsets stay those of ``text``
    starts = [0, *(m.end() for m in _NEWLINE.finditer(source))]

    def span(first: int, end_line: int) -> tuple[int, int]:
        s = starts[first] if first < len(starts) else len(text)
        e = starts[end_line] if end_line < len(starts) else len(text)
        while e > s and source[e - 1] in " \t\n":
            e -= 1
        while s < e and source[s] in " \t":
            s += 1
        return s, e

    tokens = _parser().parse(source)
    blocks: list[Block] = []
    depth = 0  # open list items
    quotes = 0  # open block quotes
    header: tuple[str, ...] = ()
    in_head = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "list_item_open":
            depth += 1
            s, e = span(*tok.map)
            blocks.append(Block("list_item", depth, s, e, tuple(tok.map), quoted=quotes > 0))
        elif kind == "list_item_close":
            depth -= 1
        elif kind == "blockquote_open":
            quotes += 1
        elif kind == "blockquote_close":
            quotes -= 1
        elif kind == "heading_open":
            s, e = span(*tok.map)
            blocks.append(Block("heading", int(tok.tag[1]), s, e, tuple(tok.map), quoted=quotes > 0))
        elif kind == "paragraph_open" and not (depth and _in_item_directly(tokens, i)):
            s, e = span(*tok.map)
            blocks.append(Block("paragraph", depth, s, e, tuple(tok.map), quoted=quotes > 0))
        elif kind in ("fence", "code_block"):
            first, end_line = tok.map
            s, e = span(first, end_line)
            closed = True
            if kind == "fence":  # content holds the lines between the fences: one line fewer when it is closed
                body = tok.content.count("\n") + (not tok.content.endswith("\n") and tok.content != "")
                closed = end_line - first - 1 > body
            fenced = kind == "fence"
            blocks.append(Block("code", depth, s, e, (first, end_line), fence=tok.markup if fenced else "",
                                info=tok.info.strip() if fenced else "", closed=closed, quoted=quotes > 0))
        elif kind == "thead_open":
            in_head = True
        elif kind == "thead_close":
            in_head = False
        elif kind == "tr_open":
            cells: list[str] = []
            j = i + 1
            while tokens[j].type != "tr_close":
                if tokens[j].type == "inline":
                    cells.append(tokens[j].content.strip())
                j += 1
            s, e = span(*tok.map)
            row = tuple(cells)
            if in_head:
                header = row
            blocks.append(Block("table_row", depth, s, e, tuple(tok.map), () if in_head else header, row,
                                quoted=quotes > 0))
            i = j
        i += 1
    return tuple(blocks)


def _in_item_directly(tokens: list[Any], i: int) -> bool:
    """Whether the paragraph opened at ``tokens[i]`` belongs to a list item (not to a block quote inside one)."""
    level = tokens[i].level
    for j in range(i - 1, -1, -1):
        if tokens[j].level < level and tokens[j].nesting == 1:
            return tokens[j].type == "list_item_open"
    return False



_EXTRAS = (("header", "h", ()), ("cells", "c", ()), ("fence", "f", ""), ("info", "i", ""), ("closed", "o", True),
           ("quoted", "q", False))  # (field, key, default): a field at its default is not written


def encode_blocks(blocks: tuple[Block, ...] | list[Block]) -> str:
    """``blocks`` as compact JSON, the form the stores keep (``Chunk.blocks``): one list per block,
    ``[kind, start, end, level, first line, end line]`` and, when a field is not at its default, an object of the
    others (``h`` header, ``c`` cells, ``f`` fence, ``i`` info, ``o`` closed, ``q`` quoted). ``"[]"`` for none.
    ``decode_blocks`` reads it back."""
    out: list[list[Any]] = []
    for b in blocks:
        row: list[Any] = [b.kind, b.start, b.end, b.level, b.lines[0], b.lines[1]]
        extra = {key: list(v) if isinstance(v, tuple) else v
                 for name, key, default in _EXTRAS if (v := getattr(b, name)) != default}
        if extra:
            row.append(extra)
        out.append(row)
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def decode_blocks(raw: str | None) -> tuple[Block, ...]:
    """The blocks ``encode_blocks`` wrote; ``()`` for ``None`` or ``""`` (a store written before blocks were
    kept)."""
    if not raw:
        return ()
    return _decoded(raw)


@lru_cache(maxsize=4096)
def _decoded(raw: str) -> tuple[Block, ...]:
    """``decode_blocks`` remembered (blocks are immutable; a search reads the same chunks again)."""
    out: list[Block] = []
    for row in json.loads(raw):
        extra = row[6] if len(row) > 6 else {}
        fields = {name: tuple(extra[key]) if isinstance(default, tuple) else extra[key]
                  for name, key, default in _EXTRAS if key in extra}
        out.append(Block(row[0], row[3], row[1], row[2], (row[4], row[5]), **fields))
    return tuple(out)
