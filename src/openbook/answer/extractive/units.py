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


def _table_row(header: list[str], cells: list[str], heading: str, markdown: bool = True) -> _Unit:
    """A table row's unit: its non-empty cells as ``header: value; ...`` (a cell past the header alone), with its
    ``(header, value)`` pairs and every column of its table's ``header``; in Markdown text (``markdown``) each
    header and cell without its emphasis markers, read alone (``strip_emphasis``)."""
    if markdown:
        header, cells = [strip_emphasis(h) for h in header], [strip_emphasis(c) for c in cells]
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


class _Reader:
    """The state of ``_units``' walk over a passage's lines, one method per kind of line: the units read so far
    (``out``), the text lines of the sentence being read (``block``), the heading they sit under, the current
    table's header (pipe tables outside a Markdown parse) and the list being read (``runs`` lists so far; the
    current item's ``block_run``, ``step`` and ``number``; the items' ``indent``; ``in_list``: the list goes on
    across blank lines until a heading, a paragraph or a table ends it). ``markdown``: emphasis markers are
    stripped (other loaders' text holds none)."""

    def __init__(self, markdown: bool) -> None:
        self.out: list[_Unit] = []
        self.markdown = markdown
        self.header: list[str] | None = None
        self.heading = ""
        self.block: list[str] = []
        self.block_run = -1
        self.runs = 0
        self.step = 0
        self.number: int | None = None
        self.indent = 0  # the indent of the list's items; a more indented item is a sub-item of the step above it
        self.in_list = False

    def flush(self) -> None:
        """Turn the text lines read so far into units (``_flush``)."""
        _flush(self.out, self.block, self.heading, self.block_run, self.step, self.number, self.markdown)

    def _end_list(self) -> None:
        self.flush()
        self.in_list, self.block_run = False, -1

    def code(self, lines: list[str], fence: _Fence) -> None:
        """A fenced code block: one unit (``_add_code``); a block in a list is part of the step above it,
        however it is indented."""
        self.flush()
        self.block_run = code_run = self.block_run if self.in_list else -1
        _add_code(self.out, [lines[k] for k in fence.body], self.heading, code_run, self.step, self.number)

    def parsed_row(self, row: Block) -> None:
        """A Markdown table's row: its cells as the parser reads them (escaped and code-span pipes)."""
        self._end_list()
        if row.header:
            self.out.append(_table_row(list(row.header), list(row.cells), self.heading, self.markdown))
        self.header = None

    def pipe_row(self, stripped: str) -> None:
        """A line opening with ``|`` outside a Markdown parse: the table's header, its separator or a row."""
        self._end_list()
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        if _TABLE_SEP_RE.match(stripped):
            return
        if self.header is None:
            self.header = cells
            return
        self.out.append(_table_row(self.header, cells, self.heading, self.markdown))

    def text_line(self, line: str) -> None:
        """Any other line: a heading, a blank line, a list item, a bold label's line or a line of text."""
        stripped = line.strip()
        self.header = None if stripped else self.header
        if stripped.startswith("#"):
            self._end_list()
            self.heading = stripped.lstrip("#").strip()
            return
        if not stripped:
            if not line.strip(" \t\r"):  # a blank line; a page break (form feed) ends no sentence
                self.flush()
            return
        item = _LIST_ITEM_RE.match(line)
        if item:
            self.flush()
            if not self.in_list:
                self.runs += 1
                self.in_list, self.step, self.indent = True, 0, len(item[1])
                self.number = int(item[2]) if item[2] else None
            elif len(item[1]) <= self.indent:  # (a more indented item belongs to the step above it)
                self.step += 1
                self.number = int(item[2]) if item[2] else None
            self.block_run = self.runs - 1
        elif _LABEL_LINE_RE.match(line) or (self.in_list and not self.block):
            # a bold label opens a sentence; a paragraph after the list (a blank line before it) ends the list
            self._end_list()
        self.block.append(line)


def _code_and_rows(p: Passage, lines: list[str], markdown: bool) -> tuple[dict[int, _Fence], dict[int, Block]]:
    """A passage's fenced code blocks by their opening line, and a Markdown table's rows by line (header row
    included): in a Markdown passage (``markdown``) holding a table or a fence, from the chunk's
    ``Chunk.blocks`` (the one parse's; ``blocks.parse_blocks`` of its text when the chunk has none), elsewhere
    the blocks of ``fences.fenced_blocks`` of ``lines`` and no rows."""
    text = p.chunk.text
    if markdown and ("|" in text or "```" in text or "~~~" in text):
        parsed = p.chunk.blocks or parse_blocks(text)  # the chunker's, from its parse of the document
        fenced = {b.lines[0]: _Fence.of(b) for b in parsed if b.kind == "code" and b.fence and not b.quoted}
        return fenced, {b.lines[0]: b for b in parsed if b.kind == "table_row"}
    return {b.start: _Fence(b.start, b.end, b.closed) for b in fenced_blocks(lines)}, {}


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
    markdown = p.chunk.format in MARKDOWN_FORMATS  # other loaders' text holds no emphasis markers
    reader = _Reader(markdown)
    lines = p.chunk.text.split("\n")
    fenced, rows = _code_and_rows(p, lines, markdown)
    code_end = 0  # the end (a line number) of the code block just read
    for n, line in enumerate(lines):
        if n < code_end:
            continue
        if n in fenced:
            reader.code(lines, fenced[n])
            code_end = fenced[n].end
        elif n in rows:
            reader.parsed_row(rows[n])
        elif n - 1 in rows and not rows[n - 1].header:  # the separator line under a header row
            continue
        elif line.strip().startswith("|"):
            reader.pipe_row(line.strip())
        else:
            reader.text_line(line)
    reader.flush()
    return reader.out
