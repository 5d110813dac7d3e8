"""What the offline answerer reads as one sentence of a passage (``_units``): a sentence, a markdown list item,
a line opening with a bold label, a table row read as ``header: value; ...``, or a fenced code block whole; a
heading inside the passage is the subject of the units under it. ``_cap`` cuts an over-long unit, and
``_without_code`` gives a passage's text without its code blocks, as ``_units`` reads them."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from ...blocks import Block, parse_blocks
from ...chunking import split_sentences
from ...emphasis import MARKDOWN_FORMATS
from ...fences import fenced_blocks
from ...retrieve.snippets import strip_emphasis
from ...types import Passage

_TABLE_SEP_RE = re.compile(r"^\|?\s*:?-{2,}")
MAX_SENTENCE_CHARS = 300


def _cap(text: str, limit: int = MAX_SENTENCE_CHARS) -> list[str]:
    """A "sentence" longer than ``limit`` characters (an option list or a log without sentence punctuation)
    cut into pieces of at most ``limit`` characters: at line breaks first, then at ``;``/``,``, then at
    spaces (a single longer word is cut hard)."""
    if len(text) <= limit:
        return [text]
    for sep in ("\n", "; ", ", ", " "):
        parts = [p for p in text.split(sep) if p.strip()]
        if len(parts) < 2:
            continue
        out: list[str] = []
        current = ""
        for part in parts:
            candidate = f"{current}{sep}{part}" if current else part
            if len(candidate) <= limit:
                current = candidate
                continue
            if current:
                out.append(current)
            current = part
        out.append(current)
        return [q for piece in out for q in _cap(piece, limit)]
    return [text[i:i + limit] for i in range(0, len(text), limit)]


@dataclass(frozen=True)
class _Unit:
    """A sentence of a passage as the answerer reads it: its text, the heading inside the passage it sits under
    ('' when none), and for a list item the list it belongs to (``run``, counted per passage) and its place in
    it (``step``, from 0); ``run`` is -1 outside a list."""

    text: str
    heading: str = ""
    run: int = -1
    step: int = 0
    cells: tuple[tuple[str, str], ...] = ()  # a table row's (header, value) pairs, in column order
    number: int | None = None  # an ordered list item's own number ("3. Open ..." -> 3), None otherwise
    columns: tuple[str, ...] = ()  # a table row's table header, every column (also those the row leaves empty)
    code: bool = False  # a fenced code block, whole: its lines as written, without the fences


def _without_code(text: str, keep: bool = False) -> str:
    """``text`` without its fenced code blocks, fences included, as ``_units`` reads them (``keep``: unchanged)."""
    if keep or ("```" not in text and "~~~" not in text):
        return text
    lines = text.split("\n")
    fenced = fenced_blocks(lines)
    if not fenced:
        return text
    code = {n for b in fenced for n in range(b.start, b.end)}
    return "\n".join(line for n, line in enumerate(lines) if n not in code)


_LIST_ITEM_RE = re.compile(r"^(\s*)(?:[-*+•]|(\d{1,3})[.)])\s+")
_LABEL_LINE_RE = re.compile(r"^\s*(?:\*\*|__)[^*_\n]{1,60}?(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:)")
# Leading spaces and list-bullet dashes ("- item", "-- item") of a unit; never an option's dash ("-v, --invert-match")
_BULLET_DASH_RE = re.compile(r"^(?:[ \t]*-+(?=[ \t]|$))*[ \t]*")


def _flush(out: list[_Unit], block: list[str], heading: str, block_run: int, step: int,
           number: int | None, markdown: bool = True) -> None:
    """Append to ``out`` the sentences of the text lines read so far (``block``, then emptied): a list item's
    (``block_run`` >= 0) without its bullet, with its list, step and number; each under ``heading``. Emphasis
    markers are stripped only from Markdown text (``markdown``): other loaders' text holds none."""
    if block:
        text = "\n".join(block)
        text = _LIST_ITEM_RE.sub("", text, count=1) if block_run >= 0 else text
        for s, e in split_sentences(text):
            for piece in _cap(text[s:e]):
                sent = " ".join(piece.split())
                sent = strip_emphasis(sent) if markdown else sent
                # a list bullet's dash ("- item", "-- item"), not an option's ("-v, --invert-match")
                sent = sent if block_run >= 0 else _BULLET_DASH_RE.sub("", sent)
                if sent.strip() and not sent.startswith("#"):
                    out.append(_Unit(sent.strip(), heading, block_run, step,
                                     number=number if block_run >= 0 else None))
        block.clear()


def _add_code(out: list[_Unit], code: list[str], heading: str, code_run: int, step: int,
              number: int | None) -> None:
    """Append to ``out`` a code block's lines (``code``, dedented) as one unit marked ``code`` (cut by ``_cap``
    when over-long), in the list step above it when ``code_run`` >= 0."""
    text = textwrap.dedent("\n".join(line.rstrip() for line in code)).strip("\n")
    for piece in _cap(text) if text.strip() else []:
        out.append(_Unit(piece, heading, code_run, step if code_run >= 0 else 0,
                         number=number if code_run >= 0 else None, code=True))


def _table_row(header: list[str], cells: list[str], heading: str) -> _Unit:
    """A table row's unit: its non-empty cells as ``header: value; ...`` (a cell past the header alone), with its
    ``(header, value)`` pairs and every column of its table's ``header``."""
    pairs = [f"{h}: {v}" if h else v for h, v in zip(header, cells) if v]
    pairs += [v for v in cells[len(header):] if v]
    return _Unit("; ".join(pairs), heading, cells=tuple((h, v) for h, v in zip(header, cells) if v),
                 columns=tuple(header))


@dataclass(frozen=True)
class _Fence:
    """A fenced code block's lines: ``start`` (its opening fence) to ``end`` (exclusive); ``closed``: line
    ``end - 1`` is its closing fence."""

    start: int
    end: int
    closed: bool

    @classmethod
    def of(cls, b: Block) -> _Fence:
        return cls(b.lines[0], b.lines[1], b.closed)

    @property
    def body(self) -> range:
        """The block's code lines, fences excluded."""
        return range(self.start + 1, self.end - 1 if self.closed else self.end)


def _units(p: Passage) -> list[_Unit]:
    """Sentences of a passage, in order. A table row becomes ``header: value; ...`` so it reads on its own; a
    markdown list item and a line that opens with a bold label (``**Standard limit:** 600 ...``) start a
    sentence of their own even without sentence punctuation before them; a heading inside the passage is no
    sentence but the subject of the sentences under it. In a Markdown passage holding a table or a fence, the code
    blocks and table rows are the chunk's ``Chunk.blocks``, taken by the chunker from the one Markdown parse of its
    document (``blocks.parse_blocks`` of the passage's text when the chunk has none, as in an older store; a row's
    cells as the parser splits them, a row past its header's columns cut to them); elsewhere a fenced code block
    is read by ``fences.fenced_blocks``, from the same parse, and a line opening with ``|`` is a table row. A code block
    (```` ``` ```` or ``~~~``, as the loader and the chunker read it; the Markdown loader fences indented code too)
    is one unit marked ``code``, its lines kept as written: never cut into sentences at its periods, its ``#``
    comments no headings; inside a list it belongs to the step above it. A block the passage does not close runs
    to the passage's end."""
    out: list[_Unit] = []
    markdown = p.chunk.format in MARKDOWN_FORMATS  # other loaders' text holds no emphasis markers
    header: list[str] | None = None
    heading = ""
    block: list[str] = []
    block_run = -1
    runs = 0
    step = 0
    number: int | None = None
    indent = 0  # the indent of the list's items; a more indented item is a sub-item of the step above it
    in_list = False  # the list goes on across blank lines until a heading, a paragraph or a table ends it
    code_run = -1

    def flush() -> None:
        _flush(out, block, heading, block_run, step, number, markdown)

    text = p.chunk.text
    lines = text.split("\n")
    rows: dict[int, Block] = {}  # a Markdown table's rows by line, header row included (the one parse's)
    if markdown and ("|" in text or "```" in text or "~~~" in text):
        parsed = p.chunk.blocks or parse_blocks(text)  # the chunker's, from its parse of the document
        fenced = {b.lines[0]: _Fence.of(b) for b in parsed if b.kind == "code" and b.fence and not b.quoted}
        rows = {b.lines[0]: b for b in parsed if b.kind == "table_row"}
    else:
        fenced = {b.start: _Fence(b.start, b.end, b.closed) for b in fenced_blocks(lines)}
    code_end = 0  # the end (a line number) of the code block just read
    for n, line in enumerate(lines):
        if n < code_end:
            continue
        stripped = line.strip()
        if n in fenced:
            flush()
            # (a block in a list is part of the step above it, however it is indented)
            block_run = code_run = block_run if in_list else -1
            _add_code(out, [lines[k] for k in fenced[n].body], heading, code_run, step, number)
            code_end = fenced[n].end
            continue
        if n in rows:  # a Markdown table's row: its cells as the parser reads them (escaped and code-span pipes)
            flush()
            in_list, block_run = False, -1
            if rows[n].header:
                out.append(_table_row(list(rows[n].header), list(rows[n].cells), heading))
            header = None
            continue
        if n - 1 in rows and not rows[n - 1].header:  # the separator line under a header row
            continue
        if stripped.startswith("|"):
            flush()
            in_list, block_run = False, -1
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if _TABLE_SEP_RE.match(stripped):
                continue
            if header is None:
                header = cells
                continue
            out.append(_table_row(header, cells, heading))
            continue
        header = None if stripped else header
        if stripped.startswith("#"):
            flush()
            in_list, block_run = False, -1
            heading = stripped.lstrip("#").strip()
            continue
        if not stripped:
            if not line.strip(" \t\r"):  # a blank line; a page break (form feed) ends no sentence
                flush()
            continue
        item = _LIST_ITEM_RE.match(line)
        if item:
            flush()
            if not in_list:
                runs += 1
                in_list, step, indent = True, 0, len(item[1])
                number = int(item[2]) if item[2] else None
            elif len(item[1]) <= indent:  # (a more indented item belongs to the step above it)
                step += 1
                number = int(item[2]) if item[2] else None
            block_run = runs - 1
        elif _LABEL_LINE_RE.match(line) or (in_list and not block):
            # a bold label opens a sentence; a paragraph after the list (a blank line before it) ends the list
            flush()
            in_list, block_run = False, -1
        block.append(line)
    flush()
    return out
