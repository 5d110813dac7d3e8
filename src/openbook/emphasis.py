"""Markdown emphasis of ``Document.text``, read as CommonMark reads it (CommonMark 0.31.2, 6.2 and appendix A).

``strip_emphasis`` removes the ``*`` / ``_`` delimiters that a CommonMark renderer turns into ``<em>`` or
``<strong>`` and keeps every other character as written: a code span (```` `__init__.py` ````), a backslash
escape (``\\*``), an autolink or raw HTML tag (``<https://x/a__b__>``), a fenced code block, and a delimiter
that cannot open or close (intraword ``_``: ``snake_case``, ``a__b__c``; ``2 * 3 * 4``) are left alone.

Rules, as CommonMark states them:

- A delimiter run is a maximal run of ``*`` or of ``_`` not preceded by a backslash escape. It is
  *left-flanking* when the next character is not whitespace and either is not punctuation or the previous one is
  whitespace or punctuation; *right-flanking* the other way round. The start and end of a line count as
  whitespace; punctuation is Unicode P* or S* (ASCII punctuation included).
- ``*`` opens when left-flanking and closes when right-flanking. ``_`` opens when left-flanking and (not
  right-flanking or preceded by punctuation), and closes when right-flanking and (not left-flanking or followed
  by punctuation): an underscore between two letters or digits never makes emphasis.
- A closer pairs with the nearest earlier opener of the same character; when either of them can both open and
  close, the sum of their lengths must not be a multiple of 3 unless both are. Two characters of each are used
  when both have two (``<strong>``), else one (``<em>``); what is left of a run stays literal or pairs again.
- Emphasis does not cross a block: blocks are read apart (a blank line, a heading, a list item or a table row
  starts one; a table cell is read alone).

Checked against markdown-it-py (a CommonMark parser): ``tests/test_emphasis.py``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .fences import fenced_blocks

__all__ = ["MARKDOWN_FORMATS", "strip_emphasis"]

# Loader names (``Document.format``) whose text keeps the author's inline Markdown; "" is a chunk whose format is
# not known (built without a store), read as the Markdown-like text that ``Document.text`` is by convention. Every
# other loader writes what the source says literally (``Lib/json/__init__.py`` in an HTML page is no emphasis).
MARKDOWN_FORMATS = frozenset({"", "markdown"})

_BLOCK_START = re.compile(r"^[ \t]{0,3}(?:#{1,6}(?:[ \t]|$)|[-*+][ \t]|\d{1,9}[.)][ \t]|\|)")
_SINGLE_LINE = re.compile(r"^[ \t]{0,3}(?:#{1,6}(?:[ \t]|$)|\|)")  # a heading or a table row: one line
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>|<[\w.!#$%&'*+/=?^`{|}~-]+@[\w.-]+>")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*"
                       r"(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch)[0] in "PS"


def _is_space(ch: str) -> bool:
    return ch == "" or ch.isspace()


@dataclass
class _Run:
    char: str
    start: int  # offset of the run's first character in the inline text
    length: int  # characters of the run not yet used
    original: int
    can_open: bool
    can_close: bool
    used: int = 0  # characters paired as emphasis (an opener's last ones, a closer's first ones)


def _runs(text: str) -> list[_Run]:
    """The delimiter runs of one block's inline text, outside code spans, escapes, autolinks and HTML tags."""
    runs: list[_Run] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in _ASCII_PUNCT:
            i += 2
            continue
        if ch == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            ticks = j - i
            k = j
            end = -1
            while k < n:  # the next backtick run of exactly the same length closes the span
                if text[k] == "`":
                    m = k
                    while m < n and text[m] == "`":
                        m += 1
                    if m - k == ticks:
                        end = m
                        break
                    k = m
                else:
                    k += 1
            i = end if end >= 0 else j  # an unclosed run is literal backticks
            continue
        if ch == "<":
            m = _AUTOLINK.match(text, i) or _HTML_TAG.match(text, i)
            if m:
                i = m.end()
                continue
        if ch in "*_":
            j = i
            while j < n and text[j] == ch:
                j += 1
            before = text[i - 1] if i > 0 else ""
            after = text[j] if j < n else ""
            left = not _is_space(after) and (not _is_punct(after) or _is_space(before) or _is_punct(before))
            right = not _is_space(before) and (not _is_punct(before) or _is_space(after) or _is_punct(after))
            if ch == "*":
                can_open, can_close = left, right
            else:
                can_open = left and (not right or _is_punct(before))
                can_close = right and (not left or _is_punct(after))
            runs.append(_Run(ch, i, j - i, j - i, can_open, can_close))
            i = j
            continue
        i += 1
    return runs


def _strip_inline(text: str) -> str:
    """One block's inline text without the delimiters CommonMark's "process emphasis" pairs."""
    runs = _runs(text)
    if not any(r.can_close for r in runs):
        return text
    stack: list[_Run] = []  # the delimiter stack: runs still able to open, in text order
    for closer in runs:
        if closer.can_close:
            while closer.length:
                at = None
                for k in range(len(stack) - 1, -1, -1):
                    o = stack[k]
                    if o.char != closer.char or not o.length:
                        continue
                    if (o.can_close or closer.can_open) and (o.original + closer.original) % 3 == 0 and \
                            not (o.original % 3 == 0 and closer.original % 3 == 0):
                        continue
                    at = k
                    break
                if at is None:
                    break
                opener = stack[at]
                used = 2 if opener.length >= 2 and closer.length >= 2 else 1
                opener.length -= used
                opener.used += used
                closer.length -= used
                closer.used += used
                del stack[at + 1:]  # delimiters between them can no longer pair
                if not opener.length:
                    stack.pop()
        if closer.can_open and closer.length:
            stack.append(closer)
    out: list[str] = []
    last = 0
    for r in runs:
        if not r.used:
            continue
        out.append(text[last:r.start])
        out.append(r.char * (r.original - r.used))  # a run's characters are alike: drop as many as were used
        last = r.start + r.original
    out.append(text[last:])
    return "".join(out)


def _strip_block(lines: list[str]) -> list[str]:
    """Lines of one block (a paragraph, a heading, a list item with its continuation lines, a table row) with
    emphasis stripped; a heading's or a list item's marker is no emphasis, a table cell is read alone."""
    marker = _BLOCK_START.match(lines[0])
    if marker and marker.group(0).endswith("|"):
        return ["|".join(_strip_inline(cell) for cell in _CELL_SPLIT.split(line)) for line in lines]
    lead = marker.group(0) if marker else ""
    return (lead + _strip_inline("\n".join([lines[0][len(lead):], *lines[1:]]))).split("\n")


def strip_emphasis(text: str) -> str:
    """``text`` without the Markdown emphasis markers (``*x*``, ``**x**``, ``_x_``, ``__x__`` -> ``x``) that
    CommonMark renders as emphasis; every other character kept (see the module docstring).

    ``text``: Markdown-like text (a chunk, a sentence, a table cell), any number of lines; fenced code blocks
    are kept as written."""
    if "*" not in text and "_" not in text:
        return text
    lines = text.split("\n")
    code = {k for b in fenced_blocks(lines) for k in range(b.start, b.end)}
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            out.extend(_strip_block(block))
            block.clear()

    for k, line in enumerate(lines):
        if k in code or not line.strip():
            flush()
            out.append(line)
            continue
        if _BLOCK_START.match(line) or block and _SINGLE_LINE.match(block[0]):
            flush()
        block.append(line)
    flush()
    return "\n".join(out)
