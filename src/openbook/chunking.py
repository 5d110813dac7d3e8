"""Cut a ``Document`` into ``Chunk``s that respect its structure.

How a document is cut (``chunk_document``):

1. **Blocks.** Two readers, by ``Document.format``:

   - **Markdown** (a format in ``emphasis.MARKDOWN_FORMATS``: the Markdown loader's text, or a document whose
     format is not known) is cut along the blocks of its one parse by markdown-it-py (``blocks.parse_blocks``,
     CommonMark plus GFM pipe tables; the same parse its chunks keep in ``Chunk.blocks``): headings (outside
     block quotes and list items) start sections; paragraphs; list items, each its own text up to its first
     nested block (a nested item is an item of its own); pipe tables (header row, delimiter row, body rows); and
     fenced code blocks (outside block quotes). Text no block holds (an HTML block, a thematic break, an indented
     or quoted code block, a heading inside a quote or a list item, an item's text after a nested block) is read
     as paragraphs between blank lines.
   - **Any other text** (PDF, plain text, HTML, office, ...) is read line by line following the convention in
     ``openbook.types``: ``#`` heading lines, blank-line separated paragraphs, list items (``- ``, ``* ``,
     ``1. ``), ``|`` pipe tables (header row, ``| --- |`` separator, rows) and fenced code blocks
     (``fences.fenced_blocks``, as the loaders and the answerer read them; their ``#`` lines are not headings).

   What follows is the same for both, except the list item rule of 2.
2. **Units.** Paragraphs are split into sentences (``split_sentences``); a code block that fits in ``max`` is one
   unit (never cut, never overlap; see 6 for a longer one); a list item is one unit, split into sentences only
   when it alone exceeds ``max`` in a Markdown document (so a chunk never starts or ends inside an item that
   fits) and when it is longer than half of ``target`` in other text; a table is one unit (see 5 for a longer
   one). A unit longer than ``max`` is split by words as a last resort (and a single "word" longer than ``max``,
   possible with a word-piece counter, by characters).
3. **Sections.** Each heading starts a section whose heading path (e.g. ``("Travel policy", "Hotels")``) is
   carried by its chunks in ``Chunk.headings`` (in a Markdown document without the emphasis markers CommonMark
   renders, ``emphasis.strip_emphasis``: ``## Using __turbo__ mode`` -> ``Using turbo mode``); the heading line
   itself is not put at the start of a chunk's body, since ``Chunk.indexed_text`` already prepends the path. A
   document made only of headings (a heading-only file) does not vanish: each heading that no later heading's
   path carries becomes a chunk whose body is the heading's text (without the ``#`` marks). A new heading closes
   the current chunk, except when the chunk so far is tiny (under a quarter of ``target``) and the new section
   is nested under the chunk's section (an intro paragraph followed by its first subsection): then the two are
   merged and the chunk keeps the *shallower* heading path, the deepest one that contains all of its text; the
   subsection's heading line stays inside the body. Sibling sections are never merged, so each chunk's path is
   exact.
4. **Packing.** Units are packed greedily up to ``target``; within a section the chunks are balanced (a
   250-word section with target 180 gives two chunks of ~125 words instead of 180 + 70): a chunk closes once
   its new text reaches what is left of the section divided by the number of chunks that rest needs. Each chunk after the
   first in a section starts with whole trailing sentences of the previous chunk worth at most ``overlap``
   units. Overlap never crosses a section boundary and never comes from a table or a code block. No chunk
   exceeds ``max``: the final text of every chunk is measured with ``count`` and cut again if needed.
5. **Tables.** A table that fits in ``target`` is packed like any unit. A longer one is cut between rows; each
   part is its own chunk and repeats the header row and separator line. A part's ``text`` is then the header,
   a newline, and the rows; its ``start``/``end`` cover only the rows. A row is split only if, with the
   header, it exceeds ``max``.
6. **Code blocks.** A fenced block longer than ``max`` is cut between its lines into balanced parts of at most
   ``target`` (as a table is), each a well-formed block: a part after the first reopens the block with its
   opening fence line (fence and info string, e.g. ``~~~yaml``), a part before the last closes it with the same
   fence, so that the loader, this module and the answerer (``openbook.fences``) read every part as code and no
   chunk starts with bare code lines read as prose. A part's ``text`` is then that fence line, a newline,
   ``doc.text[start:end]`` (from its first line's indentation) and, cut before the block's end, a newline and the
   closing fence (indented as the opening fence, up to 3 spaces, so that it closes a block written under a list
   item too; a block indented 4 or more, under a nested item, gets an unindented one and may be left open). A part
   that reopens its block starts a chunk and a part closed at a cut ends one; the first
   part (and a block kept whole) joins a tiny text before it ("To install, run:") up to ``max``. Only a line
   that alone exceeds ``max`` is cut inside, by words; a bare fence it carries (the opening one without an info
   string, the closing one) stays with its first or last piece, so that no part is a fence alone. A block of
   fence markers only (no code, no info string) holds nothing to index and makes no chunk. A document without a
   code block is not affected by this rule.
7. **Ids.** ``chunk_id = make_chunk_id(doc_id, text, occurrence)`` where ``occurrence`` numbers identical texts
   within one document (0 for the first). Ids depend on content only, so re-chunking an unchanged document
   gives the same ids and editing one paragraph changes only the ids of chunks whose text changed.

Sentence splitter: BlingFire (``blingfire``, compiled). It misses some boundaries before a sentence that starts
with a lowercase letter or a digit. BlingFire also ends CJK sentences at 。！？; a regular-expression pass
guarantees it.

Defaults (``ChunkingConfig``), measured with ``benchmarks/chunking_defaults.py`` (bm25s, a document scores as
its best chunk). SciFact nDCG@10 (300 test queries, 5,183 abstracts of ~200 words): whole abstracts 0.686;
target/overlap/max 64/16/128 0.669, 100/20/200 0.670, 128/24/256 0.677, 160/20/320 0.679, 180/30/350 0.681,
180/60/350 0.679, 200/20/350 0.687, 256/32/400 0.682, 300/30/500 0.690 (differences under ~0.005 are noise at
300 queries). Skyladder lab (31 answerable questions, structured policy and help pages): recall@10 of relevant
docs is 0.887 for every setting from 64 to 256 words and for whole documents; recall@3 is 0.79-0.84 without
a trend; chunks average 60-70 words there whatever the target, because sections, not the target, bound them.
So: cutting short coherent texts costs BM25 quality below ~180 words and more overlap does not help (60 is
worse than 0-30); structure does the work on real documents. Recommended: ``target_words=200``,
``overlap_words=20``, ``max_words=350`` (SciFact 0.687, 97% of abstracts in 1-2 chunks; 350 words stay under
~460 word pieces, inside a 512-token embedder). ``max`` only binds for an over-long sentence, table row or
Markdown list item.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, replace
from itertools import accumulate
from pathlib import PurePath
from typing import Any, Callable

from .blocks import parse_blocks
from .config import ChunkingConfig
from .emphasis import MARKDOWN_FORMATS, strip_emphasis
from .errors import ChunkingError
from .fences import fenced_blocks
from .types import Block, Chunk, Document, make_chunk_id

__all__ = ["chunk_document", "chunker_revision", "count_words", "split_sentences"]

# Han ideographs, kana, compatibility ideographs and the supplementary ideograph planes: one word each.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# CJK and full-width punctuation: not counted as words.
_CJK_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_WORD_RE = re.compile(f"[{_CJK}]|[^\\s{_CJK}{_CJK_PUNCT}]+")
_CJK_END_RE = re.compile("[。！？]+[」』）\u201d\"')]*")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")  # CommonMark ATX: "# C#" keeps "#"
_LIST_RE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_RUN_RE = re.compile(r"\S+")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")  # lone surrogates: not encodable, so not storable or hashable
_CLOSING_QUOTES = "\"'\u201d\u2019)]"
_TINY_FRACTION = 0.25


def count_words(text: str) -> int:
    """Number of words in ``text``: whitespace-separated tokens, each CJK character counting as one.

    CJK and full-width punctuation (。、，！？ ...) is not counted. ``count_words("Hello, world")`` is 2;
    ``count_words("东京は大きい。")`` is 6.
    """
    return len(_WORD_RE.findall(text))


_EMPHASIS_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t][^\n]*[*_]", re.MULTILINE)  # a heading line that may hold emphasis
_LINE_BREAKS = re.compile("[\v\f\x1c-\x1e\x85\u2028\u2029]")  # what str.splitlines ends a line at, besides \n, \r
_AS_SPACE = {ord(c): " " for c in "\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def split_sentences(text: str, lang: str | None = None) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` as ``(start, end)`` character offsets, in order, without surrounding spaces.

    Uses BlingFire's sentence breaker for every language, then also ends a sentence after CJK terminators
    (。！？) so that Chinese and Japanese text splits even where BlingFire does not. Together the spans cover
    every non-whitespace character of ``text`` exactly once.

    Args:
        text: any text; line breaks inside it are treated as spaces, and so are page breaks (form feeds) and
            Unicode line and paragraph separators: a sentence that goes on across one is one sentence.
        lang: optional language hint (ISO code such as ``"en"``, ``"zh"``); currently every language takes
            the same path, the argument is kept so callers can pass what they know.

    Returns:
        Spans in text order; an empty list for blank text.

    Raises:
        ChunkingError: if the ``blingfire`` package is not installed.
    """
    del lang  # one path for all languages today; see the docstring
    if not text.strip():
        return []
    try:
        import blingfire
    except ImportError:  # pragma: no cover - depends on the environment
        raise ChunkingError("sentence splitting needs the blingfire package: pip install blingfire") from None
    # a page break or a line separator inside a sentence is a space to the sentence breaker (one character each:
    # the offsets stay those of ``text``)
    cuts = _blingfire_cuts(blingfire, text.translate(_AS_SPACE) if _LINE_BREAKS.search(text) else text)
    if any(c in text for c in "。！？"):
        cuts.update(m.end() for m in _CJK_END_RE.finditer(text))
    bounds = sorted(c for c in cuts if 0 < c < len(text))
    spans: list[tuple[int, int]] = []
    prev = 0
    for cut in [*bounds, len(text)]:
        span = _trim(text, prev, cut)
        if span is not None:
            s, e = span
            # BlingFire may start a sentence with the closing quote of the previous one: give it back.
            if spans and text[s] in _CLOSING_QUOTES and (s + 1 == e or text[s + 1].isspace()):
                spans[-1] = (spans[-1][0], s + 1)
                span = _trim(text, s + 1, e)
            if span is not None:
                spans.append(span)
        prev = cut
    return spans


def _blingfire_cuts(blingfire: Any, text: str) -> set[int]:
    """Character offsets where BlingFire starts a sentence (the first sentence's start excluded).

    ``text_to_sentences_and_offsets`` converts byte offsets to characters in a Python loop over every byte, which
    is most of the chunker's time; ``text_to_sentences`` is plain C. Its output keeps every non-space character
    in order, so each boundary is found by counting non-space characters word run by word run.
    """
    sentences = blingfire.text_to_sentences(text).split("\n")
    ends = list(accumulate(len("".join(s.split())) for s in sentences))
    if ends[-1] != len("".join(text.split())):  # characters changed: use the slow exact path
        _, offsets = blingfire.text_to_sentences_and_offsets(text)
        return {s for s, _ in offsets[1:]}
    cuts: set[int] = set()
    runs = _RUN_RE.finditer(text)
    run = next(runs)
    seen = 0  # non-space characters before ``run``
    for want in ends[:-1]:
        while seen + (run.end() - run.start()) <= want:
            seen += run.end() - run.start()
            run = next(runs)
        cuts.add(run.start() + want - seen)
    return cuts


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


# --------------------------------------------------------------------------------------------- parsing


@dataclass
class _Block:
    kind: str  # "para", "item", "code", "table"
    start: int
    end: int
    section: int
    lines: list[tuple[int, int]]  # (start, end) of each line, end without the newline
    closed: bool = False  # a code block: whether its last line is its closing fence


@dataclass
class _Unit:
    start: int
    end: int
    size: int
    section: int
    kind: str  # "sent": sentence or line, may be overlap; "piece": part of a split sentence; "table": a whole
    # table; "alone": a part of a long table, always a chunk of its own; "code": a whole code block or a part of
    # one, never overlap (a part with a prefix starts its chunk, a part with a suffix ends it)
    prefix: str = ""  # text put before doc.text[start:end] (a table continuation's header, a code part's fence)
    suffix: str = ""  # text put after doc.text[start:end] (the fence that closes a code part cut from the rest)


_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+")


def _parse(text: str) -> tuple[list[_Block], list[tuple[str, ...]], list[tuple[int, int] | None]]:
    """The line reader, for a text that is not Markdown (module docstring, 1): blocks of ``text`` in order, the
    heading path of each section (section 0: before any heading), and the span of each section's heading text,
    without its ``#`` marks (None for section 0 and for an empty heading)."""
    sections: list[tuple[str, ...]] = [()]
    heads: list[tuple[int, int] | None] = [None]
    stack: list[tuple[int, str]] = []
    blocks: list[_Block] = []
    cur: _Block | None = None
    raws = _LINE_RE.findall(text)  # lines end at "\n" only: a form feed (a page break) ends no line
    fenced = {b.start: b for b in fenced_blocks([raw.rstrip("\r\n") for raw in raws])}
    code_end = 0  # the end (a line number) of the code block being read
    pos = 0
    for n, raw in enumerate(raws):
        line = raw.rstrip("\r\n")
        ls, le = pos, pos + len(line)
        pos += len(raw)
        sec = len(sections) - 1
        if n < code_end:
            assert cur is not None
            cur.lines.append((ls, le))
            cur.end = le
            continue
        stripped = line.strip()
        heading_m = _HEADING_RE.match(line)
        if n in fenced:
            cur = _Block("code", ls, le, sec, [(ls, le)], fenced[n].closed)
            blocks.append(cur)
            code_end = fenced[n].end
        elif heading_m:
            cur = None
            level = len(heading_m.group(1))
            # the title is the span's text: both trimmed of every white space (str.isspace), never apart
            span = _trim(text, ls + heading_m.start(2), ls + heading_m.end(2)) if heading_m.group(2) else None
            title = text[span[0]:span[1]] if span else ""
            while stack and stack[-1][0] >= level:
                stack.pop()
            if title:
                stack.append((level, title))
            sections.append(tuple(t for _, t in stack))
            heads.append(span)
        elif not line.strip(" \t\r"):  # a blank line (CommonMark: spaces and tabs only) ends a paragraph
            cur = None
        elif not stripped:  # a line of page breaks and other spaces: no text, and no paragraph break
            continue
        elif stripped.startswith("|"):
            ts, te = _trim(text, ls, le) or (ls, le)  # a table's text never starts or ends with spaces
            if cur is None or cur.kind != "table":
                cur = _Block("table", ts, te, sec, [])
                blocks.append(cur)
            cur.lines.append((ts, te))
            cur.end = te
        elif _LIST_RE.match(line) or cur is None or cur.kind in ("table", "code"):
            cur = _Block("item" if _LIST_RE.match(line) else "para", ls, le, sec, [(ls, le)])
            blocks.append(cur)
        else:  # continuation of a paragraph or list item
            cur.lines.append((ls, le))
            cur.end = le
    return blocks, sections, heads


_GAP_BREAK = re.compile(r"\n(?:[ \t\r]*\n)+")  # a run of blank lines (CommonMark: spaces and tabs only)


def _parse_markdown(text: str, parsed: list[Block]
                    ) -> tuple[list[_Block], list[tuple[str, ...]], list[tuple[int, int] | None]]:
    """``_parse`` for a Markdown text: the same three lists, read from ``parsed``, the one parse of ``text``
    (``blocks.parse_blocks``, markdown-it-py), instead of line by line.

    A heading outside block quotes and list items starts a section; a fenced code block outside block quotes is a
    code block of all its lines (opening fence first); a table's rows, from its header row on, are one table whose
    lines are the header row, the delimiter row and the body rows; a paragraph is a paragraph. A list item is an
    item made of its own text up to its first nested block (a nested item, a code block, a table row, ...). Any
    other text, inside an item after a nested block or outside every block (an HTML block, a thematic break, a
    quoted or indented code block, a heading inside a quote or an item), is a paragraph per run of lines between
    blank lines, as the line reader reads it (a quote's blank ``>`` line, an empty item's ``-`` too). So every
    character of ``text`` but spaces is in exactly one block."""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line(n: int) -> tuple[int, int]:
        s = starts[n]
        e = starts[n + 1] - 1 if n + 1 < len(starts) else len(text)
        while e > s and text[e - 1] == "\r":
            e -= 1
        return s, e

    sections: list[tuple[str, ...]] = [()]
    heads: list[tuple[int, int] | None] = [None]
    stack: list[tuple[int, str]] = []
    blocks: list[_Block] = []
    items: list[Block] = []  # the open list items, innermost last
    cursor = 0  # text before it is read

    def gap(upto: int) -> None:  # the text in [cursor, upto) that no block holds: paragraphs (an item's own text)
        nonlocal cursor
        while cursor < upto:
            while items and items[-1].end <= cursor:
                items.pop()
            stop = min(upto, items[-1].end) if items else upto
            head = items[-1].start if items else -1
            pos = cursor
            for brk in [*_GAP_BREAK.finditer(text, cursor, stop), None]:
                piece = _trim(text, pos, brk.start() if brk else stop)
                if piece:
                    kind = "item" if piece[0] == head else "para"
                    blocks.append(_Block(kind, *piece, len(sections) - 1, [piece]))
                if brk:
                    pos = brk.end()
            cursor = stop

    i = 0
    while i < len(parsed):
        b = parsed[i]
        i += 1
        if b.start < cursor:  # (held by a block already read)
            continue
        gap(b.start)
        while items and items[-1].end <= b.start:
            items.pop()
        sec = len(sections) - 1
        if b.kind == "list_item":
            items.append(b)
            continue
        if b.kind == "heading" and not b.quoted and not items:
            first = line(b.lines[0])
            m = _HEADING_RE.match(text[first[0]:first[1]])
            if m:  # ATX: "## Title ##"; the title is the span's text, both trimmed of every white space
                span = _trim(text, first[0] + m.start(2), first[0] + m.end(2)) if m.group(2) else None
                title = strip_emphasis(text[span[0]:span[1]]) if span else ""
            else:  # setext: the lines above the underline
                s, e = b.start, line(b.lines[1] - 2)[1]
                title, span = strip_emphasis(" ".join(text[s:e].split())), _trim(text, s, e)
            while stack and stack[-1][0] >= b.level:
                stack.pop()
            if title:
                stack.append((b.level, title))
            sections.append(tuple(t for _, t in stack))
            heads.append(span if title else None)
        elif b.kind == "code" and b.fence and not b.quoted:
            lines = [line(n) for n in range(*b.lines)]
            blocks.append(_Block("code", lines[0][0], lines[-1][1], sec, lines, b.closed))
        elif b.kind == "table_row":
            rows = [(b.start, b.end)]
            if not b.header:  # the header row: the delimiter row follows it
                rows.append(_trim(text, *line(b.lines[1])) or line(b.lines[1]))
            while i < len(parsed) and parsed[i].kind == "table_row" and parsed[i].header:
                rows.append((parsed[i].start, parsed[i].end))
                i += 1
            blocks.append(_Block("table", rows[0][0], rows[-1][1], sec, rows))
            cursor = rows[-1][1]
            continue
        elif b.kind == "paragraph":
            blocks.append(_Block("para", b.start, b.end, sec, [(b.start, b.end)]))
        else:  # a quoted or indented code block, a quoted heading or one in an item: prose, read as no block's text
            continue
        cursor = b.end
    gap(len(text))
    return blocks, sections, heads


# --------------------------------------------------------------------------------------------- splitting


def _fit(measure: Callable[[int, int], int], toks: list[tuple[int, int]], i: int, limit: int) -> int:
    """Largest j >= i with measure(toks[i] .. toks[j]) <= limit, or i - 1 if token i alone is too big.

    ``measure`` grows with j; a galloping search (j = i, i+1, i+3, i+7, ...) bounds the binary search first,
    so that each call measures spans of about the answer's size, not the rest of the text: one long line of a
    few megabytes is cut in seconds, not in hours."""
    lo, hi, step = i - 1, len(toks) - 1, 1
    while i + step - 1 < hi and measure(toks[i][0], toks[i + step - 1][1]) <= limit:
        lo, step = i + step - 1, step * 2
    hi = min(hi, i + step - 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure(toks[i][0], toks[mid][1]) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _greedy_groups(spans: list[tuple[int, int]], limit: int,
                   measure: Callable[[int, int], int]) -> list[tuple[int, int]]:
    """``spans`` (in order) grouped greedily into (start, end) runs of at most ``limit`` by ``measure``; a span too
    big alone is a run of its own."""
    groups = []
    i = 0
    while i < len(spans):
        j = max(_fit(measure, spans, i, limit), i)
        groups.append((spans[i][0], spans[j][1]))
        i = j + 1
    return groups


def _split_with_fences(text: str, start: int, end: int, lo: int, hi: int, limit: int,
                       measure: Callable[[int, int], int]) -> list[tuple[int, int]]:
    """``_split_span`` of ``text[start:end]``, a span that holds a bare fence line before ``lo`` and/or after
    ``hi`` (``lo == start``, ``hi == end`` where it holds none): only ``text[lo:hi]`` is cut, between words, each
    piece measured with the fence it will carry (the first from ``start``, the last to ``end``), so that no piece
    is a fence alone."""
    def sized(a: int, b: int) -> int:
        return measure(start if a == lo else a, end if b == hi else b)

    if lo == start and hi == end:
        return _split_span(text, start, end, limit, measure)
    pieces = _split_span(text, lo, hi, limit, sized) or [(lo, hi)]
    if lo != start:
        pieces[0] = (start, pieces[0][1])
    if hi != end:
        pieces[-1] = (pieces[-1][0], end)
    return pieces


def _split_span(
    text: str, start: int, end: int, limit: int, measure: Callable[[int, int], int]
) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` between words into pieces that each measure at most ``limit``."""
    toks = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", text[start:end])]
    # A single "word" that is too big (a long CJK run, a URL with a word-piece counter) is cut by characters.
    fine: list[tuple[int, int]] = []
    for s, e in toks:
        if measure(s, e) <= limit:
            fine.append((s, e))
        else:
            fine += _greedy_groups([(k, k + 1) for k in range(s, e)], limit, measure)
    return _greedy_groups(fine, limit, measure)


# --------------------------------------------------------------------------------------------- packing


class _Chunker:
    def __init__(self, doc: Document, config: ChunkingConfig, count: Callable[[str], int]) -> None:
        self.doc, self.text, self.count = doc, doc.text, count
        self.target, self.overlap, self.max = config.target_words, config.overlap_words, config.max_words
        self.spans: list[tuple[int, int, tuple[str, ...], str, str]] = []  # start, end, headings, prefix, suffix

    def measure(self, start: int, end: int) -> int:
        return self.count(self.text[start:end])

    def units(self, blocks: list[_Block], whole_item: int) -> list[_Unit]:
        """The units of ``blocks``: a list item of at most ``whole_item`` is one, else it is cut into sentences
        as a paragraph is (module docstring, 2)."""
        out: list[_Unit] = []
        for block in blocks:
            if block.kind == "table":
                out.extend(self.table_units(block))
                continue
            if block.kind == "code":
                out.extend(self.code_units(block))
                continue
            if block.kind == "item" and self.measure(block.start, block.end) <= whole_item:
                whole = _trim(self.text, block.start, block.end)  # an item kept whole, marker included
                spans = [whole] if whole else []
            else:
                spans = [(s + block.start, e + block.start)
                         for s, e in split_sentences(self.text[block.start:block.end])]
            for s, e in spans:
                size = self.measure(s, e)
                if size <= self.max:
                    out.append(_Unit(s, e, size, block.section, "sent"))
                    continue
                n = math.ceil(size / self.target)
                limit = min(self.target, math.ceil(size / n))
                for ps, pe in _split_span(self.text, s, e, limit, self.measure):
                    out.append(_Unit(ps, pe, self.measure(ps, pe), block.section, "piece"))
        return out

    def code_units(self, block: _Block) -> list[_Unit]:
        """A fenced code block as one unit when it fits in ``max``; else parts cut between its lines, each a
        well-formed block: a part after the first reopens the block with its opening fence line (fence and info
        string, ``prefix``), a part before the last closes it with the same fence (``suffix``). Only a line that
        alone (with both fences) exceeds ``max`` is cut inside, by words (``_split_with_fences``), a bare fence it
        carries kept with its first or last piece. A block of fence markers only (no code, no info string) is no
        unit: a chunk of it would hold nothing to find."""
        sec = block.section
        whole = _trim(self.text, block.start, block.end)
        body = block.lines[1:-1] if block.closed else block.lines[1:]
        info = self.text[block.lines[0][0]:block.lines[0][1]].strip().lstrip("`~").strip()
        if whole is None or not (info or any(self.text[ls:le].strip() for ls, le in body)):
            return []  # (a fence line is never blank); fence lines alone hold nothing to index
        size = self.measure(*whole)
        if size <= self.max:
            return [_Unit(*whole, size, sec, "code")]
        ws, we = whole
        line = self.text[block.lines[0][0]:block.lines[0][1]]
        opening = line.strip()
        run = re.match(r"`+|~+", opening)
        # The fence that closes a part cut from the rest: indented as the opening fence (up to 3 spaces), so that
        # it also closes a block written under a list item ("2. Apply:\n\n   ```sh"), whose content column an
        # unindented fence leaves (CommonMark 5.2: the item and its block would end there and the fence open a
        # new, unclosed block); up to 3 spaces it closes a block reopened at column 0 as well.
        indent = line[:len(line) - len(line.lstrip(" "))]
        fence = (indent if len(indent) <= 3 else "") + (run[0] if run else "```")
        # (an info string as long as the chunk itself is not repeated: the bare fence reopens the block)
        reopen = opening if 2 * self.count(f"{opening}\n{fence}") <= self.max else fence.lstrip(" ")

        def measure(s: int, e: int) -> int:  # a part's size as its chunk's text, fences added at a cut included
            pre = f"{reopen}\n" if s > ws else ""
            return self.count(pre + self.text[s:e] + (f"\n{fence}" if e < we else ""))

        atoms = [(ls, ls + len(self.text[ls:le].rstrip())) for ls, le in body if self.text[ls:le].strip()]
        head_end = block.lines[0][0] + len(self.text[block.lines[0][0]:block.lines[0][1]].rstrip())  # its text
        if not atoms:  # fences only (a giant info string): cut by words like any over-long span, the closing
            # fence kept with the last piece
            pieces = _split_with_fences(self.text, ws, we, ws, head_end if block.closed else we, self.target,
                                        self.measure)
            return [_Unit(ps, pe, self.measure(ps, pe), sec, "piece") for ps, pe in pieces]
        own = [(s + len(self.text[s:e]) - len(self.text[s:e].lstrip()), e) for s, e in atoms]  # a line's own text
        atoms[0] = (ws, atoms[0][1])  # the opening fence goes with the first line, the closing with the last
        atoms[-1] = (atoms[-1][0], we)
        lines: list[tuple[int, int]] = []
        for (s, e), (cs, ce) in zip(atoms, own):
            if measure(s, e) <= self.max:
                lines.append((s, e))
                continue
            # one line longer than a chunk: the only cut inside a line, between the line's own words; a bare
            # fence it carries goes with its first or last piece (an opening fence with an info string, which is
            # text, may be a piece of its own)
            lo = cs if s == ws and not info else s
            hi = ce if e == we and block.closed else e
            lines.extend(_split_with_fences(self.text, s, e, lo, hi, self.max, measure))
        # Balanced parts as for a long table: n parts of about size / n, none over target (a line over target
        # but within max is a part of its own); if line lengths make that give more than n, fill up to target.
        n = math.ceil(size / self.target)
        parts = _greedy_groups(lines, min(self.target, math.ceil(size / n) + self.count(f"{reopen}\n{fence}")),
                               measure)
        if len(parts) > n:
            parts = _greedy_groups(lines, self.target, measure)
        return [_Unit(s, e, measure(s, e), sec, "code", reopen if s > ws else "", fence if e < we else "")
                for s, e in parts]

    def table_units(self, block: _Block) -> list[_Unit]:
        sec = block.section
        size = self.measure(block.start, block.end)
        lines = block.lines
        if size <= self.target or len(lines) < 2:
            if size <= self.max:
                return [_Unit(block.start, block.end, size, sec, "table")]
        has_sep = len(lines) > 1 and set(self.text[lines[1][0]:lines[1][1]].strip()) <= set("|-: \t")
        head_end = lines[1 if has_sep else 0][1]
        header = self.text[block.start:head_end]
        rows = lines[2 if has_sep else 1:]
        if not rows:  # a header alone that is too long: plain word split
            return [_Unit(s, e, self.measure(s, e), sec, "alone")
                    for s, e in _split_span(self.text, block.start, block.end, self.target, self.measure)]

        # Balanced parts: n parts of about size / n units each (header included), none over target; if row
        # lengths make that give more than n parts, fill each part up to target instead.
        n = math.ceil(size / self.target)
        out = self.table_parts(block, header, rows, min(self.target, math.ceil(size / n) + self.count(header)))
        if len(out) > n:
            out = self.table_parts(block, header, rows, self.target)
        return out

    def table_parts(self, block: _Block, header: str, rows: list[tuple[int, int]], part_limit: int) -> list[_Unit]:
        sec = block.section

        def with_header(first: bool, s: int, e: int) -> int:
            return self.measure(block.start, e) if first else self.count(header + "\n" + self.text[s:e])

        out: list[_Unit] = []
        i = 0
        while i < len(rows):
            first = not out
            j = _fit(lambda s, e: with_header(first, s, e), rows, i, part_limit)
            if j < i and with_header(first, *rows[i]) <= self.max:
                j = i  # one row over target but within max: a part of its own
            if j >= i:
                s = block.start if first else rows[i][0]
                e = rows[j][1]
                out.append(_Unit(s, e, with_header(first, rows[i][0], e), sec, "alone", "" if first else header))
                i = j + 1
                continue
            # One row that, with the header, exceeds max: cut it by words, keeping the header if there is room.
            rs, re_ = rows[i]
            head_size = self.count(header)
            keep = head_size * 2 <= self.max
            measure = (lambda s, e: self.count(header + "\n" + self.text[s:e])) if keep else self.measure
            if not keep and not out:  # the header goes out once, on its own
                out.extend(_Unit(s, e, self.measure(s, e), sec, "alone")
                           for s, e in _split_span(self.text, block.start, len(header) + block.start,
                                                   self.target, self.measure))
            for ps, pe in _split_span(self.text, rs, re_, self.max if keep else self.target, measure):
                out.append(_Unit(ps, pe, measure(ps, pe), sec, "alone", header if keep else ""))
            i += 1
        return out

    def run(self, parsed: list[Block] | None) -> list[tuple[int, int, tuple[str, ...], str, str]]:
        """The chunks' (start, end, heading path, prefix, suffix), in order: of the Markdown blocks ``parsed``
        (``parse_blocks`` of the text), or of the line reader's when ``None``."""
        blocks, sections, heads = _parse(self.text) if parsed is None else _parse_markdown(self.text, parsed)
        # a Markdown list item is cut only when it alone exceeds max; another text's, when over half of target
        units = self.heading_units(self.units(blocks, self.target // 2 if parsed is None else self.max), sections,
                                   heads)
        # rest[i]: size of units[i:] that lie in units[i]'s section, for balancing what is left of a section.
        rest = [0] * (len(units) + 1)
        for i in range(len(units) - 1, -1, -1):
            same = i + 1 < len(units) and units[i + 1].section == units[i].section
            rest[i] = units[i].size + (rest[i + 1] if same else 0)
        tiny = self.target * _TINY_FRACTION

        cur: list[_Unit] = []
        size = new = 0  # estimated size of the chunk, and of its units in the last section that are not overlap
        path: tuple[str, ...] = ()
        for i, u in enumerate(units):
            if u.kind == "alone":
                self.flush(cur, path)
                cur, size, new = [], 0, 0
                self.flush([u], sections[u.section])
                continue
            if u.prefix and cur:  # a code part that reopens its block starts a chunk
                self.flush(cur, path)
                cur, size, new = [], 0, 0
            upath = sections[u.section]
            if cur and u.section != cur[-1].section:
                gap = self.measure(cur[-1].end, u.start)
                nested = upath[: len(path)] == path
                if size < tiny and nested and size + gap + u.size <= self.target:
                    size += gap  # merge: the subsection's heading line stays in the body
                    new = 0
                else:
                    self.flush(cur, path)
                    cur, size, new = [], 0, 0
            left = new + rest[i]  # this chunk's new text plus the rest of the section
            aim = left / max(1, math.ceil(left / self.target))  # units may measure 0 (a run of "！！！")
            # A code block (or its first part) after a tiny text of its own section ("To install, run:") joins it
            # up to max rather than leave the text a chunk of its own, apart from the code it introduces.
            room = self.max if u.kind == "code" and not u.prefix and new < tiny else self.target
            if cur and new and (size + u.size > room or new >= aim):
                carry = self.carry(cur, u)
                self.flush(cur, path)
                # (a counter that is not additive may have cut ``cur`` into several chunks: the overlap comes
                # from the last of them only, or the next chunk would start before the one it follows)
                carry = [c for c in carry if c.start >= self.spans[-1][0]]
                cur, size, new = carry, sum(c.size for c in carry), 0
            if not cur or not new and cur[0].section == u.section:
                path = upath
            cur.append(u)
            size += u.size
            new += u.size
            if u.suffix:  # a code part that closes its block at the cut ends its chunk
                self.flush(cur, path)
                cur, size, new = [], 0, 0
        self.flush(cur, path)
        return self.spans

    def heading_units(self, units: list[_Unit], sections: list[tuple[str, ...]],
                      heads: list[tuple[int, int] | None]) -> list[_Unit]:
        """``units`` when there are any; for a document of headings only, a unit for the text of each heading
        that no later heading's path carries, so that the document does not vanish (each in its own section,
        in text order). An empty section between others is a placeholder, not a passage: it adds nothing."""
        if units:
            return units
        extra: list[_Unit] = []
        for sec, span in enumerate(heads):
            if span is None:
                continue
            path = sections[sec]
            nxt = sections[sec + 1] if sec + 1 < len(sections) else ()
            if len(nxt) > len(path) and nxt[: len(path)] == path:
                continue  # the next section's heading path holds this heading
            s, e = span
            size = self.measure(s, e)
            if size <= self.max:
                extra.append(_Unit(s, e, size, sec, "sent"))
            else:
                extra.extend(_Unit(ps, pe, self.measure(ps, pe), sec, "piece")
                             for ps, pe in _split_span(self.text, s, e, self.target, self.measure))
        return extra

    def carry(self, prev: list[_Unit], nxt: _Unit) -> list[_Unit]:
        """Trailing whole sentences of ``prev`` in ``nxt``'s section, at most ``overlap`` units in all."""
        out: list[_Unit] = []
        total = 0
        for u in reversed(prev[1:]):
            if u.kind != "sent" or u.section != nxt.section or total + u.size > self.overlap:
                break
            if total + u.size + nxt.size > self.max:
                break
            out.insert(0, u)
            total += u.size
        return out

    def flush(self, units: list[_Unit], path: tuple[str, ...]) -> None:
        """Record ``units`` as one chunk, or as several when the measured text exceeds ``max`` (fences added at a
        cut included). Only the first unit may have a prefix and only the last a suffix (``run``)."""
        while units:
            pre, suf, end = units[0].prefix, units[-1].suffix, units[-1].end

            def measure(s: int, e: int) -> int:
                return self.count(_with_fences(pre, self.text[s:e], suf if e == end else ""))

            if len(units) == 1 or measure(units[0].start, end) <= self.max:
                self.spans.append((units[0].start, end, path, pre, suf))
                return
            # A counter that is not additive: keep the longest prefix of units that fits.
            k = _fit(measure, [(u.start, u.end) for u in units], 0, self.max)
            k = max(k, 0)
            self.spans.append((units[0].start, units[k].end, path, pre, ""))
            units = units[k + 1:]


def chunker_revision(doc: Document) -> str:
    """What in ``doc`` the chunker has cut differently since stores were first written, for the ingest signature:
    ``"code-parts-3"`` when its text holds a fenced code block (a block is cut only between lines, each part
    reopening and closing its fence; revision 2: the closing fence indented as the opening one; revision 3: no
    part of fence lines only, and a block of fence lines only makes none), plus
    ``"page-breaks-1"`` when it holds a form feed or another character ``str.splitlines`` ends a line at (lines end
    at ``\n`` only since: a page break inside a paragraph cuts no sentence), plus ``"markdown-blocks-1"`` for a
    Markdown document with text (cut along its markdown-it parse since, its list items whole up to ``max``: module
    docstring, 1-2), plus ``"heading-emphasis-1"`` for one with a ``*`` or ``_`` in a heading line (its heading
    path without emphasis markers since: module docstring, 3), joined by ``+``; ``""`` for none, so that a
    re-ingest re-chunks once the documents whose chunks may have changed and keeps every other one unchanged."""
    parts = []
    if ("```" in doc.text or "~~~" in doc.text) and fenced_blocks(doc.text.splitlines()):
        parts.append("code-parts-3")
    if _LINE_BREAKS.search(doc.text):
        parts.append("page-breaks-1")
    if doc.format in MARKDOWN_FORMATS and doc.text.strip():
        parts.append("markdown-blocks-1")
        if _EMPHASIS_HEADING.search(doc.text):
            parts.append("heading-emphasis-1")
    return "+".join(parts)


_BlockIndex = tuple[list[Block], list[int], list[int], list[int]]


def _block_index(blocks: list[Block], text: str) -> _BlockIndex:
    """``blocks`` (the parse of ``text``, in text order) with their starts, for each the furthest end of it and
    the blocks before it, and the offsets of ``text``'s line breaks: what ``_chunk_blocks`` searches to find the
    blocks a span overlaps and its first line without reading all of them."""
    breaks = [m.start() for m in re.finditer("\n", text)] if blocks else []
    return blocks, [b.start for b in blocks], list(accumulate((b.end for b in blocks), max)), breaks


def _chunk_blocks(index: _BlockIndex, doc_text: str, start: int, end: int, prefix: str, suffix: str,
                  text: str) -> tuple[Block, ...]:
    """The blocks of one chunk's ``text`` (``_with_fences(prefix, doc_text[start:end], suffix)``) taken from
    ``index``, the parse of the whole ``doc_text`` (``_block_index``): offsets and lines moved into ``text``. A
    block inside ``[start, end)`` is kept as parsed (its end line cut to ``text``'s lines); a paragraph or list
    item the chunk cuts is cut to the chunk, a heading it cuts is left out; a code block cut at a line starts at
    the reopening fence ``prefix`` or ends with the closing fence ``suffix`` (then closed); a table
    continuation's header ``prefix`` is its table's header row. ``()`` when a code block or a table row is cut
    any other way (a line split by words), so that a reader parses ``text`` itself rather than read blocks that
    are not its own."""
    blocks, starts, reach, breaks = index
    if not blocks or start >= end:
        return ()
    first, stop = bisect.bisect_right(reach, start), bisect.bisect_left(starts, end)  # the blocks that may overlap
    head = len(prefix) + 1 if prefix else 0  # where doc_text[start] sits in text
    shift = head - start
    lshift = (prefix.count("\n") + 1 if prefix else 0) - bisect.bisect_left(breaks, start)
    nlines = text.count("\n") + 1

    def lines_of(s: int, e: int) -> tuple[int, int]:
        return text.count("\n", 0, s), text.count("\n", 0, e) + 1

    out: list[Block] = []
    code_prefix = False
    if prefix:
        if any(b.kind == "code" and b.start < start < b.end for b in blocks[first:stop]):
            code_prefix = True
        else:  # a table continuation: the header row its first line is, the last one before the chunk
            line = prefix.split("\n", 1)[0]
            at = bisect.bisect_left(starts, start) - 1
            while at >= 0 and not (blocks[at].kind == "table_row" and not blocks[at].header
                                   and doc_text.startswith(line, blocks[at].start)):
                at -= 1
            if at < 0:
                return ()
            h = blocks[at]
            out.append(replace(h, start=0, end=h.end - h.start, lines=(0, 1)))
    for b in blocks[first:stop]:
        if b.end <= start or b.start >= end:
            continue
        if start <= b.start and b.end <= end:
            out.append(replace(b, start=b.start + shift, end=b.end + shift,
                               lines=(b.lines[0] + lshift, min(b.lines[1] + lshift, nlines))))
        elif b.kind == "code":
            if (b.start < start and not code_prefix) or (b.end > end and not suffix):
                return ()
            s = 0 if b.start < start else b.start + shift
            e = len(text) if b.end > end else b.end + shift
            out.append(replace(b, start=s, end=e, lines=lines_of(s, e), closed=b.closed or b.end > end))
        elif b.kind in ("paragraph", "list_item"):
            s, e = _trim(text, max(b.start, start) + shift, min(b.end, end) + shift) or (head, head)
            out.append(replace(b, start=s, end=e, lines=lines_of(s, e)))
        elif b.kind == "table_row":
            return ()
    return tuple(out)


def _with_fences(prefix: str, body: str, suffix: str) -> str:
    """A chunk's text: ``body`` (a slice of the document) after ``prefix`` and before ``suffix``, each on lines of
    their own when not empty."""
    text = (f"{prefix}\n{body}" if body else prefix) if prefix else body
    return f"{text}\n{suffix}" if suffix else text


def _names_the_file(doc: Document) -> bool:
    """True when ``doc.title`` only restates its file's name (the loaders' fallback title for a file without
    a heading or front matter): then a document without text has nothing to index, and is reported empty."""
    if not doc.source:
        return False
    title = " ".join(re.sub(r"[\W_]+", " ", doc.title).casefold().split())
    path = PurePath(doc.source)
    for stem in (path.stem, PurePath(path.stem).stem):  # notes.txt.gz -> notes.txt -> notes
        name = " ".join(re.sub(r"[\W_]+", " ", stem).casefold().split())
        if title and (name == title or name.endswith(" " + title)):
            return True
    return False


def chunk_document(
    doc: Document,
    config: ChunkingConfig = ChunkingConfig(),
    count: Callable[[str], int] | None = None,
) -> list[Chunk]:
    """Cut one document into chunks, in document order.

    Args:
        doc: the document; its ``text`` follows the convention in ``openbook.types``, and is read by its
            markdown-it parse when ``doc.format`` is a Markdown format, else line by line (module docstring, 1).
        config: ``target_words``, ``overlap_words`` and ``max_words``, in the units of ``count``.
        count: counts the size units of a string (default ``count_words``: words, one per CJK character); an
            embedding model's word-piece counter may be passed instead.

    Returns:
        Chunks ordered by ``start``, each at most ``config.max_words`` units as measured by ``count``, with
        ``doc.text[start:end]`` equal to the chunk text (for a table continuation the text is the header row,
        separator, newline and ``doc.text[start:end]``; for a part of a code block cut at a line, the block's
        opening fence line and a newline before it, and a newline and the closing fence after it where the part
        is cut from the rest: module docstring, 6). A document whose text yields nothing (empty, or
        headings without text) but that has a title of its own (not merely its file's name, the loaders'
        fallback) gets one chunk whose text is the title, with
        ``start == end == 0`` (cut like any text if the title exceeds ``max``). An empty list only for a
        document with neither text nor title. A lone surrogate (text decoded with ``surrogateescape``) is
        replaced by U+FFFD in the chunk text and title, one code point for one, so offsets stay exact. Units that count as zero (a run of full-width punctuation
        "！！！", or any text under a counter that returns 0) are chunked like any other text.

    Raises:
        ChunkingError: if the sizes are inconsistent (``0 < target <= max``, ``0 <= overlap < target``).
    """
    target, overlap, mx = config.target_words, config.overlap_words, config.max_words
    if not (0 < target <= mx) or not (0 <= overlap < target):
        raise ChunkingError(
            f"bad chunk sizes target={target}, overlap={overlap}, max={mx} for document {doc.doc_id!r}: "
            "need 0 < target_words <= max_words and 0 <= overlap_words < target_words; fix [chunking] in "
            "openbook.toml"
        )
    count = count or count_words
    if _SURROGATE_RE.search(doc.text) or _SURROGATE_RE.search(doc.title):  # one code point for one: offsets hold
        doc = replace(doc, text=_SURROGATE_RE.sub("\ufffd", doc.text), title=_SURROGATE_RE.sub("\ufffd", doc.title))
    parsed = parse_blocks(doc.text) if doc.format in MARKDOWN_FORMATS else None  # the one parse of its Markdown
    spans = _Chunker(doc, config, count).run(parsed)
    if not spans and doc.title.strip() and not _names_the_file(doc):
        # A title-only record (a catalogue entry, a BEIR title with empty text): the title is its text.
        title = doc.title.strip()
        pieces = _split_span(title, 0, len(title), mx, lambda a, b: count(title[a:b]))
        spans = [(0, 0, (), title[s:e], "") for s, e in pieces]
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    index = _block_index(parsed or [], doc.text)
    for start, end, headings, prefix, suffix in spans:
        text = _with_fences(prefix, doc.text[start:end], suffix)
        occurrence = seen.get(text, 0)
        seen[text] = occurrence + 1
        chunks.append(
            Chunk(
                chunk_id=make_chunk_id(doc.doc_id, text, occurrence),
                doc_id=doc.doc_id,
                text=text,
                title=doc.title,
                headings=headings,
                start=start,
                end=end,
                page=doc.page_at(start),
                metadata=doc.metadata,
                format=doc.format,
                blocks=_chunk_blocks(index, doc.text, start, end, prefix, suffix, text),
            )
        )
    return chunks
