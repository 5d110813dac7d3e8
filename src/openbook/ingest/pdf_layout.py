"""Page layout for the PDF loader, from pdfplumber: ruled tables as pipe tables, columns in reading order.

For each page, pdfplumber (pdfminer.six underneath) gives the words with their boxes and the tables drawn
with ruling lines (``find_tables``, its default ``lines`` strategy). A page is laid out here only when it
needs it; otherwise ``page_layouts`` returns None for it and the loader keeps pypdf's text.

- **Tables**: a found table with at least 2 rows and 2 columns, and at least 2 cells that hold text in at
  least 2 rows, becomes a pipe table (``types`` module convention: first row is the header row). Leading
  rows with a single text cell across the table (a caption or title) become a line above it; a ruled band
  that holds several lines in every cell (rows drawn without lines between them) is split into one row per
  line; ``None`` cells of merged spans become empty cells. The page's other text is read around the tables,
  in vertical order. A table whose first row holds values (most cells with a digit), on a page after a
  table with the same number of columns whose first row held names, gets that header row
  (``carry_headers``: a table continued across a page break).
- **Columns**: lines of words are grouped top to bottom; a line that crosses the page's vertical gutter (a
  title or a full-width paragraph) is read as one line; a run of lines that do not is read left column first,
  then right column, so a block of columns under or over full-width text is read column by column. A gutter is
  a vertical strip at least ``_MIN_GUTTER`` points wide in the middle ``_GUTTER_ZONE`` of the page with a band
  of lines beside it (``_band``: from where both columns have begun to where the first ends) that at most
  ``_MAX_SPANNING`` of its lines cross, each crossing with room on both sides (``_clean``; text above or below
  the band does not count), and a column of prose on each side
  (``_column_of_prose``): at least ``_MIN_COLUMN_LINES`` lines of at least ``_MIN_WORDS_PER_LINE`` words
  (median), or lines that run on into each other (``_runs_on``: a short or narrow column), of words that read as
  prose (``_is_prose``), so that forms, menus and tables drawn without ruling lines are not read column-wise.
  Two columns at most (a third is read with its neighbour).
  A page where that finds no gutter but whose lines jump a gap of ``_MIN_GUTTER`` points (``_gapped``: narrow
  columns, a gutter off the middle) is given to pdfminer's layout analysis (``_miner_columns``): when its text
  boxes hold two columns of prose side by side, the page is read box by box in pdfminer's reading order, so
  columns drawn row by row in the content stream are read column by column.

- **Headings**: pdfium's character sizes and weights give each text line a size and a bold share
  (``FontLine``); ``heading_levels`` marks the short lines larger than the body text, or bold in a document
  whose body text is not, as headings with a level (the loader turns them into ``#`` heading lines).

Any pdfplumber failure on a page leaves that page to pypdf (logged at DEBUG on ``openbook.ingest``).
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any, Callable, NamedTuple

from ._common import logger

_MIN_GUTTER = 12.0  # points
_GUTTER_ZONE = (0.3, 0.7)  # fraction of the page width where a gutter may lie
_MIN_COLUMN_LINES = 5
_MIN_WORDS_PER_LINE = 4
_LINE_TOLERANCE = 3.0  # points: words whose tops differ by less are on one line
_RULE = 3.0  # points: a path this thin is a rule (line), thicker ones in both directions are boxes
_WORD_PAD = 2.0  # points added on each side of a word when looking for a gutter
_WORD_GAP = 0.6  # a gap wider than this share of the character height, with no space, starts a new word
_PROSE_WORDS = 0.7  # share of words with a letter in a column of prose
_PROSE_LOWER = 0.4  # share of cased words starting lower-case in a column of prose
_MAX_SPANNING = 0.25  # share of lines that may cross the gutter (titles, full-width paragraphs)
_MIN_RUN_ON = 2  # line breaks inside a sentence (the next line goes on in lower case) that make a column of prose
_MIN_SIDE_LINES = 2  # lines a column needs at the least (a shorter one must run on at every line break)
_BOLD_WEIGHT = 600  # pdfium font weight from which a character is bold
_BOLD_NAME = re.compile(rb"bold|black|heavy|demi", re.I)
_BIGGER = 1.12  # a line whose font is this much larger than the body text's may be a heading
_BOLD_LINE = 0.9  # share of bold characters that makes a line bold
_MAX_HEADING_WORDS = 12
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_MAX_HEADING_SHARE = 0.4  # at most this share of a document's characters in headings, else fonts tell nothing


class FontLine(NamedTuple):
    """One text line as pdfium reads it: text, median character size (points), share of bold characters and
    number of non-space characters."""

    text: str
    size: float
    bold: float
    chars: int


def heading_key(line: str) -> str:
    """How a heading line is matched between pdfium's and pypdf's text: letters and digits, case-folded."""
    return "".join(ch for ch in line.casefold() if ch.isalnum())


def _heading_shaped(text: str) -> bool:
    """Short (``_MAX_HEADING_WORDS``, a CJK character counting as a word), more letters than digits, not a
    table row, not starting lower-case, not ending like a sentence or clause."""
    letters = sum(ch.isalpha() for ch in text)
    digits = sum(ch.isdigit() for ch in text)
    wide = sum(1 for ch in text if _WIDE.match(ch))  # a CJK character reads as a word
    return (
        len(text.split()) + wide <= _MAX_HEADING_WORDS and len(text) <= 100 and letters >= 2 and digits <= letters
        and not text.startswith("|") and not text[:1].islower() and not text.endswith((".", ",", ";", ":", "。", "，"))
    )


def heading_levels(pages: list[list[FontLine]]) -> list[dict[str, int]] | None:
    """Headings that fonts show, per page: ``heading_key(text)`` -> level (1 = largest), or None for none.

    The body size is the size that most characters have. A heading-shaped line (``_heading_shaped``) is a
    heading when its size is at least ``_BIGGER`` times the body size (levels by size, largest first), or
    when it is bold at about the body size in a document whose body text is not bold (one level below the
    sized headings). When headings would hold more than ``_MAX_HEADING_SHARE`` of the characters (slides,
    a form in large print), the fonts are not telling headings from text and None is returned.
    """
    counts: Counter[float] = Counter()
    bold_chars: Counter[float] = Counter()
    for line in itertools.chain.from_iterable(pages):
        counts[round(line.size * 2) / 2] += line.chars
        bold_chars[round(line.size * 2) / 2] += line.bold * line.chars
    if not counts:
        return None
    body = counts.most_common(1)[0][0]
    if body <= 0:
        return None
    body_bold = bold_chars[body] > 0.5 * counts[body]
    marked: list[list[tuple[str, float | None]]] = []  # per page: (key, size, or None for a bold line)
    in_headings = 0
    for lines in pages:
        found = []
        for line in lines:
            if not _heading_shaped(line.text) or len(heading_key(line.text)) < 2:
                continue
            if line.size >= _BIGGER * body:
                found.append((heading_key(line.text), round(line.size * 2) / 2))
            elif not body_bold and line.bold >= _BOLD_LINE and line.size >= 0.95 * body:
                found.append((heading_key(line.text), None))
            else:
                continue
            in_headings += line.chars
        marked.append(found)
    if not in_headings or in_headings > _MAX_HEADING_SHARE * sum(counts.values()):
        return None
    sizes = sorted({size for found in marked for _, size in found if size is not None}, reverse=True)
    rank = {size: min(6, i + 1) for i, size in enumerate(sizes)}
    bold_level = min(6, len(sizes) + 1)
    return [{key: rank[size] if size is not None else bold_level for key, size in found} for found in marked]


def _cell(value: Any) -> str:
    return " ".join(str(value or "").split()).replace("|", "\\|")


def table_to_markdown(rows: list[list[Any]]) -> tuple[str, str] | None:
    """(caption, pipe table) for extracted table rows, or None when they do not form a real table."""
    rows = [list(r) for r in rows if any(c not in (None, "") and str(c).strip() for c in r)]
    caption: list[str] = []
    while rows and sum(1 for c in rows[0] if c is not None and str(c).strip()) == 1 and len(rows[0]) > 1:
        if len(rows) > 1 and sum(1 for c in rows[1] if c is not None and str(c).strip()) == 1:
            caption.append(_cell(next(c for c in rows[0] if c)))
            rows = rows[1:]
            continue
        if all(c is None for c in rows[0][1:]):
            caption.append(_cell(rows[0][0]))
            rows = rows[1:]
            continue
        break
    split: list[list[str]] = []
    for row in rows:
        cells = ["" if c is None else str(c) for c in row]
        counts = {len(c.split("\n")) for c in cells if c.strip()}
        if len(counts) == 1 and (k := counts.pop()) > 1 and sum(1 for c in cells if c.strip()) >= 2:
            parts = [c.split("\n") if c.strip() else [""] * k for c in cells]
            split.extend([p[i] for p in parts] for i in range(k))
        else:
            split.append(cells)
    width = max((len(r) for r in split), default=0)
    rich = [r for r in split if sum(1 for c in r if c.strip()) >= 2]
    if len(split) < 2 or width < 2 or len(rich) < 2:
        return None
    # drop columns that are empty in every row (merged spans)
    keep = [j for j in range(width) if any(j < len(r) and r[j].strip() for r in split)]
    lines = []
    for i, row in enumerate(split):
        cells = [_cell(row[j]) if j < len(row) else "" for j in keep]
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * len(keep))
    return " ".join(caption), "\n".join(lines)


def _lines_of(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    lines: list[list[dict[str, Any]]] = []
    for w in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
        if lines and abs(lines[-1][0]["top"] - w["top"]) < _LINE_TOLERANCE:
            lines[-1].append(w)
        else:
            lines.append([w])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def _line_text(line: list[dict[str, Any]]) -> str:
    return " ".join(w["text"] for w in line)


def _gutter(lines: list[list[dict[str, Any]]], width: float) -> tuple[float, int, int] | None:
    """x of the middle of a vertical gutter between two columns of prose, with the first and last index of the
    lines of its band (``_band``), or None for a one-column page.

    Every x in the gutter zone gets the number of lines with a word over it (words widened by
    ``_WORD_PAD`` so that spaces between words count as covered). The gutter is the widest strip at least
    ``_MIN_GUTTER`` wide of the least covered x positions with a column of prose on each side
    (``_prose_both_sides``); where none has, strips that more lines cross from side to side (titles and
    full-width paragraphs above, between or below the columns) are tried.
    """
    if len(lines) < _MIN_SIDE_LINES:
        return None
    lo, hi = int(_GUTTER_ZONE[0] * width), int(_GUTTER_ZONE[1] * width)
    diff = [0] * (hi - lo + 2)
    spans: list[list[tuple[int, int]]] = []  # per line, the x ranges its padded words cover
    for line in lines:  # each line adds 1 over the union of its (padded) words, clipped to the zone
        end = lo - 1
        mine: list[tuple[int, int]] = []
        for w in line:
            x0, x1 = math.floor(w["x0"] - _WORD_PAD), math.ceil(w["x1"] + _WORD_PAD)
            if mine and mine[-1][1] >= x0 - 1:  # the line's covered ranges, over the whole width
                mine[-1] = (mine[-1][0], max(mine[-1][1], x1))
            else:
                mine.append((x0, x1))
            a, b = max(lo, x0, end + 1), min(hi, x1)
            if a <= b:
                diff[a - lo] += 1
                diff[b - lo + 1] -= 1
                end = b
        spans.append(mine)
    coverage = list(itertools.accumulate(diff[:-1]))
    # the least covered strips first, widest first. A strip that lines cover must be crossed cleanly
    # (``_clean``). A strip with no column beside it (the margin right of a narrow right column) is passed over.
    for level in sorted(set(coverage)):
        if len(lines) - level < _MIN_SIDE_LINES:  # too few lines left beside it for a column
            break
        runs: list[tuple[int, int]] = []
        start = None
        for i, c in enumerate([*coverage, -1]):
            if c == level and start is None:
                start = i
            elif c != level and start is not None:
                if i - start >= _MIN_GUTTER:
                    runs.append((start, i))
                start = None
        for a, b in sorted(runs, key=lambda run: run[0] - run[1]):
            mid = lo + (a + b) / 2
            band = _band(lines, mid)
            if band is None or (level and not _clean(spans[band[0]:band[1] + 1], lo + a, lo + b - 1)):
                continue
            if _prose_both_sides(lines[band[0]:band[1] + 1], mid):
                return mid, band[0], band[1]
    return None


def _clean(spans: list[list[tuple[int, int]]], a: int, b: int) -> bool:
    """Whether every line's covered ranges (``spans``) either miss ``[a, b]`` or cross it with at least
    ``_MIN_GUTTER`` points to spare on each side, as a title or a full-width paragraph over both columns does
    (the labels of a hanging indent, which start at the strip's edge, do not)."""
    for mine in spans:
        for x0, x1 in mine:
            if x0 <= b and x1 >= a and not (x0 <= a - _MIN_GUTTER and x1 >= b + _MIN_GUTTER):
                return False
    return True


def _band(lines: list[list[dict[str, Any]]], mid: float) -> tuple[int, int] | None:
    """The first and last index of the lines where columns stand side by side about ``mid``: from where lines
    left of ``mid`` and lines right of it have both begun to where the first of them ends, with at most
    ``_MAX_SPANNING`` of those lines crossing ``mid`` (full-width text above or below the columns is not in the
    band); None when there is no such band."""
    crossing = [_crosses(line, mid) for line in lines]
    has_left = [not c and any(w["x1"] <= mid for w in line) for c, line in zip(crossing, lines)]
    has_right = [not c and any(w["x0"] >= mid for w in line) for c, line in zip(crossing, lines)]
    if not any(has_left) or not any(has_right):
        return None
    first = max(has_left.index(True), has_right.index(True))
    last = len(lines) - 1 - max(has_left[::-1].index(True), has_right[::-1].index(True))
    if last < first or sum(crossing[first:last + 1]) > _MAX_SPANNING * (last - first + 1):
        return None
    return first, last


def _crosses(line: list[dict[str, Any]], mid: float) -> bool:
    """Whether a line (words left to right) runs across ``mid``: a word over it, or words on both sides of it
    less than ``_MIN_GUTTER`` points apart (a space between two words of one line, not a gutter)."""
    if any(w["x0"] < mid < w["x1"] for w in line):
        return True
    left = [w["x1"] for w in line if w["x1"] <= mid]
    right = [w["x0"] for w in line if w["x0"] >= mid]
    return bool(left and right) and min(right) - max(left) < _MIN_GUTTER


def _prose_both_sides(lines: list[list[dict[str, Any]]], mid: float) -> bool:
    """Whether the lines that do not cross ``mid`` hold a column of prose on each side of it."""
    narrow = [line for line in lines if not _crosses(line, mid)]
    left = [part for line in narrow if (part := [w for w in line if w["x1"] <= mid])]
    right = [part for line in narrow if (part := [w for w in line if w["x0"] >= mid])]
    return _column_of_prose(left) and _column_of_prose(right)


def _column_of_prose(side: list[list[dict[str, Any]]]) -> bool:
    """Whether lines (each a list of words, top to bottom) read as a column of running text: words of prose
    (``_is_prose``), and either at least ``_MIN_COLUMN_LINES`` lines of ``_MIN_WORDS_PER_LINE`` words (median)
    or at least ``_MIN_RUN_ON`` sentences that run on from one line to the next (``_runs_on``); a column of
    ``_MIN_SIDE_LINES`` to ``_MIN_RUN_ON`` lines runs on at every line break."""
    if not side or not _is_prose([word for line in side for w in line for word in w["text"].split()]):
        return False
    texts = [_line_text(line) for line in side]
    if len(side) >= _MIN_COLUMN_LINES and statistics.median(len(t.split()) for t in texts) >= _MIN_WORDS_PER_LINE:
        return True
    return len(side) >= _MIN_SIDE_LINES and _runs_on(texts) >= min(_MIN_RUN_ON, len(side) - 1)


def _runs_on(texts: list[str]) -> int:
    """How many lines go on with the sentence of the line above: the line above holds two words or more (so that
    the letters of a word set vertically do not count), the line above ends in a word or a comma (no sentence end,
    no colon) and the line starts with a lower-case letter. A column's wrapped lines do; the rows of a table or
    a form, and the items of a menu, do not."""
    count = 0
    for above, line in zip(texts, texts[1:]):
        words = len(above.split()) >= 2 and len(line.split()) >= 1
        if words and above[-1] not in ".!?:;" and line[:1].islower():
            count += 1
    return count


def _is_prose(words: list[str]) -> bool:
    """Running text rather than table cells or a menu: mostly words of letters, mostly lower-case in
    scripts with case (a table's rows of numbers, codes or Capitalised Names are not)."""
    letters = [w for w in words if any(c.isalpha() for c in w)]
    if len(letters) < _PROSE_WORDS * len(words):
        return False
    cased = [w for w in letters if w[:1].isupper() or w[:1].islower()]
    return not cased or sum(w[:1].islower() for w in cased) >= _PROSE_LOWER * len(cased)


def _column_text(words: list[dict[str, Any]], width: float) -> list[str]:
    """Lines of text in reading order: full-width lines as they come, column runs left column first (in the
    band of lines where the columns stand, ``_gutter``)."""
    lines = _lines_of(words)
    return _reading_order(lines, _gutter(lines, width))


def _reading_order(lines: list[list[dict[str, Any]]], found: tuple[float, int, int] | None) -> list[str]:
    """``lines`` as text in reading order about the gutter ``found`` (``_gutter``; None: as they come)."""
    if found is None:
        return [_line_text(line) for line in lines]
    mid, first, last = found
    while first > 0 and not _crosses(lines[first - 1], mid):  # a column's lines above or below the other's
        first -= 1
    while last + 1 < len(lines) and not _crosses(lines[last + 1], mid):
        last += 1
    out: list[str] = [_line_text(line) for line in lines[:first]]
    run: list[list[dict[str, Any]]] = []

    def flush() -> None:
        left = [[w for w in line if w["x1"] <= mid] for line in run]
        right = [[w for w in line if w["x1"] > mid] for line in run]
        out.extend(_line_text(line) for line in left if line)
        if any(right):
            out.append("")
        out.extend(_line_text(line) for line in right if line)
        run.clear()

    for line in lines[first:last + 1]:
        if _crosses(line, mid):
            if run:
                flush()
            out.append(_line_text(line))
        else:
            run.append(line)
    if run:
        flush()
    out.extend(_line_text(line) for line in lines[last + 1:])
    return out


def _inside(word: dict[str, Any], bbox: tuple[float, float, float, float]) -> bool:
    x = (word["x0"] + word["x1"]) / 2
    y = (word["top"] + word["bottom"]) / 2
    return bbox[0] <= x <= bbox[2] and bbox[1] <= y <= bbox[3]


def layout_words(words: list[dict[str, Any]], tables: list[tuple[Any, tuple[str, str]]], width: float) -> list[str] | None:
    """Lines in reading order from positioned words and found tables, or None for a plain one-column page.

    ``words``: dicts with ``x0``, ``x1``, ``top``, ``bottom`` (points, from the top) and ``text``;
    ``tables``: (bbox, (caption, pipe table)) pairs; the words inside a table's bbox are left out.
    """
    words = [w for w in words if not any(_inside(w, bbox) for bbox, _ in tables)]
    if not tables:  # laid out only when it has columns; the gutter is looked for once
        lines = _lines_of(words)
        found = _gutter(lines, width)
        return None if found is None else _reading_order(lines, found)
    out: list[str] = []
    top = float("-inf")
    for bbox, (caption, md) in sorted(tables, key=lambda t: t[0][1]):
        above = [w for w in words if top <= w["top"] < bbox[1]]
        out.extend(_column_text(above, width))
        out.append("")
        if caption:
            out.extend([caption, ""])
        out.extend(md.split("\n"))
        out.append("")
        top = bbox[3]
    out.extend(_column_text([w for w in words if w["top"] >= top], width))
    return out


def layout_page(page: Any) -> list[str] | None:
    """``layout_words`` for one pdfplumber page: its ruled tables and its words."""
    tables = []
    for table in page.find_tables():
        md = table_to_markdown(table.extract())
        if md is not None:
            tables.append((table.bbox, md))
    words = page.extract_words(keep_blank_chars=False, use_text_flow=False)
    return layout_words(words, tables, float(page.width))


def _may_hold_ruled_table(paths: Any, pdfium_c: Any) -> bool:
    """Whether a page's path objects could form a ruled table: two horizontal and two vertical rules, or
    two boxes (a path of 8 or more segments, a whole grid, counts as two)."""
    horizontal = vertical = boxes = 0
    for obj in paths:
        left, bottom, right, top = obj.get_bounds()
        w, h = right - left, top - bottom
        if h <= _RULE and w > _RULE:
            horizontal += 1
        elif w <= _RULE and h > _RULE:
            vertical += 1
        elif w > _RULE and h > _RULE:
            boxes += 2 if pdfium_c.FPDFPath_CountSegments(obj.raw) >= 8 else 1
        if boxes >= 2 or (horizontal >= 2 and vertical >= 2):
            return True
    return False


def _font_lines(textpage: Any, pdfium_c: Any) -> list[FontLine]:
    """The page's text lines as pdfium breaks them, each with its median character size and bold share."""
    import ctypes

    raw = textpage.raw
    name = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    out: list[FontLine] = []
    chars: list[str] = []
    sizes: list[float] = []
    bold = 0

    def close() -> None:
        text = " ".join("".join(chars).split())
        if text and sizes:
            out.append(FontLine(text, statistics.median(sizes), bold / len(sizes), len(sizes)))

    for i in range(textpage.count_chars()):
        ch = chr(pdfium_c.FPDFText_GetUnicode(raw, i) or 32)
        if ch in "\r\n":
            close()
            chars, sizes, bold = [], [], 0
            continue
        chars.append(ch)
        if ch.isspace():
            continue
        sizes.append(round(pdfium_c.FPDFText_GetFontSize(raw, i), 1))
        # the weight pdfium reports is often a guess from the font descriptor (Chromium's bold: 380), so the
        # font's name counts too ("Helvetica-Bold", "Arial,BoldItalic")
        heavy = pdfium_c.FPDFText_GetFontWeight(raw, i) >= _BOLD_WEIGHT
        if not heavy:
            pdfium_c.FPDFText_GetFontInfo(raw, i, name, len(name), ctypes.byref(flags))
            heavy = bool(_BOLD_NAME.search(name.value))
        bold += heavy
    close()
    return out


def _char_words(textpage: Any, pdfium_c: Any, height: float) -> list[dict[str, Any]]:
    """The page's words from pdfium's character boxes, as ``layout_words`` takes them (points from the top).

    A word ends at a whitespace character, and where the next character starts more than ``_WORD_GAP`` of
    the taller character's height to the right of the previous one, or on another baseline: a text run that
    jumps across a column gutter (a ``TJ`` displacement, or a row written as one string padded with spaces)
    gives one word per column, not one segment spanning the gutter.
    """
    raw = textpage.raw
    words: list[dict[str, Any]] = []
    chars: list[str] = []
    box: list[float] = []  # x0, x1, top, bottom of the word so far
    last: tuple[float, float, float] | None = None  # the previous character's right, bottom and height

    def close() -> None:
        if chars:
            words.append({"x0": box[0], "x1": box[1], "top": box[2], "bottom": box[3], "text": "".join(chars)})
        chars.clear()

    for i in range(textpage.count_chars()):
        ch = chr(pdfium_c.FPDFText_GetUnicode(raw, i) or 32)
        if ch.isspace() or not ch.isprintable():
            close()
            last = None
            continue
        left, bottom, right, top = textpage.get_charbox(i, loose=True)  # the font's box, not the glyph's
        size = top - bottom
        if last is not None and chars:
            tall = max(size, last[2])
            if left - last[0] > _WORD_GAP * tall or abs(bottom - last[1]) > _WORD_GAP * tall:
                close()
        if not chars:
            box = [left, right, height - top, height - bottom]
        else:
            box = [min(box[0], left), max(box[1], right), min(box[2], height - top), max(box[3], height - bottom)]
        chars.append(ch)
        last = (right, bottom, size)
    close()
    return words


def _pdfium_pages(path: Path, n_pages: int, skip: frozenset[int] = frozenset(),
                  progress: Callable[[int], None] | None = None,
                  ) -> list[tuple[list[dict[str, Any]], bool, float, list[FontLine]]] | None:
    """Per page, from pypdfium2 (fast): positioned words (``_char_words``), whether its paths could form a
    ruled table (``_may_hold_ruled_table``), its width and its text lines with their fonts (``FontLine``;
    empty when pdfium cannot tell); None when pypdfium2 cannot read the file. The pages of ``skip`` (0-based)
    are not loaded (no words, no paths); ``progress(i)`` is called after page ``i``."""
    try:
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_c
    except ImportError:  # pragma: no cover - installed with pdfplumber
        return None
    out = []
    try:
        doc = pdfium.PdfDocument(str(path))
    except Exception as exc:  # noqa: BLE001 - pdfium's errors on odd files; pdfplumber is tried instead
        logger.debug("pypdfium2 could not open %s: %s", path, exc)
        return None
    try:
        for i in range(min(n_pages, len(doc))):
            if i in skip:
                out.append(([], False, 0.0, []))
                continue
            page = doc[i]
            textpage = page.get_textpage()
            try:
                height = page.get_height()
                words = _char_words(textpage, pdfium_c, height)
                paths = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=3)
                try:
                    fonts = _font_lines(textpage, pdfium_c)
                except Exception as exc:  # noqa: BLE001 - odd fonts: no heading hints for this page
                    logger.debug("no font sizes for page %d of %s: %s", i + 1, path, exc)
                    fonts = []
                out.append((words, _may_hold_ruled_table(paths, pdfium_c), page.get_width(), fonts))
            finally:
                textpage.close()
                page.close()
            if progress is not None:
                progress(i)
    except Exception as exc:  # noqa: BLE001
        logger.debug("pypdfium2 could not read %s: %s", path, exc)
        return None
    finally:
        doc.close()
    return out


def _gapped(words: list[dict[str, Any]]) -> bool:
    """Whether at least ``_MIN_COLUMN_LINES`` of a page's lines hold a gap of ``_MIN_GUTTER`` points or more
    between two neighbouring words: lines of two columns side by side (or a table's rows), which
    ``_miner_columns`` then looks at."""
    gapped = 0
    for line in _lines_of(words):
        if any(b["x0"] - a["x1"] >= _MIN_GUTTER for a, b in zip(line, line[1:])):
            gapped += 1
            if gapped >= _MIN_COLUMN_LINES:
                return True
    return False


def _side_by_side(a: Any, b: Any) -> bool:
    """Whether two pdfminer text boxes are columns beside each other: apart by at least ``_MIN_GUTTER`` points
    across, overlapping down the page by half of the shorter one."""
    apart = b.x0 - a.x1 >= _MIN_GUTTER or a.x0 - b.x1 >= _MIN_GUTTER
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return apart and overlap >= 0.5 * min(a.height, b.height)


def _miner_columns(path: Path, pages: list[int], progress: Callable[[int], None] | None = None,
                   ) -> dict[int, list[str]]:
    """Lines in reading order, for each of ``pages`` (0-based) where pdfminer's layout analysis (``LAParams``
    defaults: lines from characters by their positions, text boxes from lines, boxes in reading order) finds two
    text boxes of prose side by side, each of at least ``_MIN_COLUMN_LINES`` lines (``_is_prose``): a page of
    columns, whatever order its content stream draws them in. Boxes above the columns (a title, a running head)
    come first and boxes below them (a page number) last, top to bottom, so that page furniture stays at the
    page's edges; the others are read in pdfminer's order; a blank line between boxes. A page pdfminer cannot
    read is left out; ``progress(i)`` is called after page ``i``."""
    if not pages:
        return {}
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTTextBox, LTTextLine

    out: dict[int, list[str]] = {}
    try:
        for i, layout in zip(sorted(pages), extract_pages(str(path), page_numbers=sorted(pages),
                                                          laparams=LAParams())):
            if progress is not None:
                progress(i)
            boxes = [b for b in layout if isinstance(b, LTTextBox)]
            lines = [[" ".join(line.get_text().split()) for line in b if isinstance(line, LTTextLine)]
                     for b in boxes]
            columns = [b for b, ls in zip(boxes, lines)
                       if len(ls) >= _MIN_COLUMN_LINES and _is_prose(" ".join(ls).split())]
            if not any(_side_by_side(a, b) for a, b in itertools.combinations(columns, 2)):
                continue
            top, bottom = max(b.y1 for b in columns), min(b.y0 for b in columns)
            head = sorted((k for k, b in enumerate(boxes) if b.y0 >= top), key=lambda k: -boxes[k].y1)
            foot = sorted((k for k, b in enumerate(boxes) if b.y1 <= bottom), key=lambda k: -boxes[k].y1)
            body = [k for k in range(len(boxes)) if k not in head and k not in foot]
            text: list[str] = []
            for k in [*head, *body, *foot]:
                text.extend([*(line for line in lines[k] if line), ""])
            out[i] = text[:-1]
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types on odd pages; pypdf's text is kept
        logger.debug("pdfminer could not lay out %s: %s", path, exc)
    return out


def _cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _data_like(cells: list[str]) -> bool:
    """A row of values rather than column names: most non-empty cells hold a digit."""
    filled = [c for c in cells if c]
    return bool(filled) and sum(any(ch.isdigit() for ch in c) for c in filled) > len(filled) / 2


def carry_headers(pages: list[list[str] | None]) -> None:
    """Give a table that continues a previous page's table (same number of columns, a first row of values
    where the earlier table had names) the earlier table's header row, in place."""
    header: list[str] | None = None
    for lines in pages:
        if lines is None:
            continue
        i = 0
        while i < len(lines):
            if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("| ---"):
                first = _cells(lines[i])
                if header is not None and _data_like(first) and len(first) == len(_cells(header[0])):
                    lines[i:i] = header
                    i += len(header)
                elif not _data_like(first):
                    header = [lines[i], lines[i + 1]]
                i += 2
                while i < len(lines) and lines[i].startswith("|"):
                    i += 1
            else:
                i += 1


def page_layouts(path: Path, n_pages: int) -> list[list[str] | None]:
    """Laid-out lines for each page of the PDF at ``path``; None for plain pages and on any failure."""
    return analyse_pages(path, n_pages)[0]


def analyse_pages(path: Path, n_pages: int, skip: frozenset[int] = frozenset(),
                  progress: Callable[[int], None] | None = None,
                  ) -> tuple[list[list[str] | None], list[dict[str, int]] | None]:
    """Laid-out lines for each page (None for plain pages and on any failure) and the headings that fonts
    show (``heading_levels``: per page, ``heading_key(line)`` -> level 1-6; None when pdfium cannot read
    the file or the fonts show no headings).

    pypdfium2 reads every page quickly: a page whose paths cannot form a ruled table is laid out from
    pdfium's characters (columns only); pdfplumber parses only the pages that may hold a ruled table. The
    pages of ``skip`` (0-based) are read by neither (None); ``progress(i)`` is called after each page ``i`` of
    each pass.
    """
    result: list[list[str] | None] = [None] * n_pages
    fast = _pdfium_pages(path, n_pages, skip, progress)
    headings = heading_levels([f[3] for f in fast]) if fast is not None and len(fast) == n_pages else None
    wanted = [i for i in range(n_pages) if i not in skip]
    if fast is not None and len(fast) == n_pages:
        wanted = []
        for i, (words, has_paths, width, _) in enumerate(fast):
            if i in skip:
                continue
            if has_paths:
                wanted.append(i)
            else:
                try:
                    result[i] = layout_words(words, [], width)
                except Exception as exc:  # noqa: BLE001
                    logger.debug("could not lay out page %d of %s: %s", i + 1, path, exc)
    if fast is not None and len(fast) == n_pages:
        gapped = [i for i in range(n_pages) if i not in skip and i not in wanted and result[i] is None
                  and _gapped(fast[i][0])]
        for i, lines in _miner_columns(path, gapped, progress).items():
            result[i] = lines
    if not wanted:
        return result, headings
    import pdfplumber  # the pdf extra, required by pdf.load_pdf
    try:
        with pdfplumber.open(str(path)) as pdf:
            for i in wanted:
                if i >= len(pdf.pages):
                    break
                page = pdf.pages[i]
                try:
                    result[i] = layout_page(page)
                except Exception as exc:  # noqa: BLE001 - pdfminer raises many types on odd pages
                    logger.debug("pdfplumber could not lay out page %d of %s: %s", i + 1, path, exc)
                finally:
                    page.close()
                if progress is not None:
                    progress(i)
    except Exception as exc:  # noqa: BLE001 - the file opens in pypdf; keep its text
        logger.debug("pdfplumber could not open %s: %s", path, exc)
    carry_headers(result)
    return result, headings
