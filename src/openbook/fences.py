"""Fenced code blocks of ``Document.text``, read one way by every stage (CommonMark 0.31.2, 4.5).

The Markdown loader leaves a fenced block's lines uncleaned, the chunker reads its ``#`` lines as code, not as
headings, and the extractive answerer keeps a block whole (quoted for a how-to question, left out of a fact's
answer). All three call ``fenced_blocks``, so a line is code for all of them or for none. The loaders that write
code (indented Markdown code, HTML ``<pre>``) choose their fence with ``fence_for``.

Rules, as CommonMark states them:

- An opening fence is at most 3 spaces of indentation, a run of at least 3 backticks or at least 3 tildes, and an
  info string (its first word usually names the language). A backtick fence's info string holds no backtick: a
  line such as "```a`b" is inline code, not a fence.
- A closing fence is the opening fence's character, at least as many of it (a block opened by four backticks is
  closed by four or more, never by three), at most 3 spaces of indentation and nothing after it but spaces and
  tabs. Every line in between, fence-like or not, is code: a "```python" line closes nothing.
- A block that is never closed runs to the end of the text.
- Indentation counts columns, a tab moving to the next multiple of 4. Inside a list item it counts from the item's
  content column (``1. Step`` -> column 3, ``- Step`` -> column 2), so a block written under a step is a fence
  however deep the list; a non-blank line indented less than that column ends the item (unless it continues the
  item's paragraph lazily), and with it a block the item holds that is still open. List items follow CommonMark
  5.2-5.3 (a thematic break is no item; an empty item or one numbered other than 1 does not interrupt a
  paragraph; an empty item ends at a blank line). Block quotes and HTML blocks are not read: a fence inside a
  block quote (``> ```...``) is no fence here, and a fence line inside an HTML block (``<div>`` ... blank line)
  is one.

Checked against markdown-it-py (a CommonMark parser) on random texts made of such lines
(``tests/test_fences.py``): the same blocks on every text without list items, and on 120,000 texts with them;
texts that also mix tab-indented items and lazy continuation lines under nested items disagree on about 3 in
10,000.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["FencedBlock", "fence_for", "fenced_blocks"]

_FENCE_RE = re.compile(r"(`{3,}|~{3,})(.*)")  # matched after a line's indentation
_ITEM_RE = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)")  # a list item's marker, after the indentation
_HEADING_RE = re.compile(r"#{1,6}(?:[ \t]|\r?$)")  # an ATX heading's opening, after the indentation
_SETEXT_RE = re.compile(r"(?:=+|-+)[ \t]*\r?$")  # a setext heading's underline, under paragraph text
_BREAK_RE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})\r?$")  # a thematic break ("* * *")


@dataclass(frozen=True)
class FencedBlock:
    """One fenced code block: lines ``start`` (the opening fence) to ``end`` (exclusive) of the lines read.

    ``closed``: whether line ``end - 1`` is its closing fence (False: the text or the list item ended first).
    ``info``: the opening fence's info string, trimmed ("" when none). ``body`` is the range of its code lines."""

    start: int
    end: int
    info: str
    closed: bool

    @property
    def body(self) -> range:
        """Indices of the block's code lines, fences excluded, in order."""
        return range(self.start + 1, self.end - 1 if self.closed else self.end)


def _indent(line: str) -> tuple[int, int]:
    """(columns, characters) of ``line``'s leading spaces and tabs; characters == len(line) for a blank line."""
    col = 0
    for i, ch in enumerate(line):
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            return col, i
    return col, len(line)


def _content_column(line: str, col: int, at: int, marker_len: int) -> tuple[int, bool]:
    """(column where a list item's content starts, whether its first line is paragraph text): after the marker and
    1-4 columns of spaces (CommonMark 5.2); 1 column after the marker when 5 or more follow (the first line is
    then indented code) or the item is empty."""
    start = c = col + marker_len
    j = at + marker_len
    while j < len(line) and line[j] in " \t":
        c = c + 1 if line[j] == " " else c + 4 - c % 4
        j += 1
    if j == len(line.rstrip("\r")):
        return start + 1, False
    return (start + 1, False) if c - start > 4 else (c, True)


def _no_interruption(marker: str, rest: str) -> bool:
    """Whether a list item cannot start under paragraph text (CommonMark 5.2): an empty item, or an ordered
    one whose number is not 1."""
    return not rest.strip(" \t\r") or (marker[0].isdigit() and marker[:-1] != "1")


def _closing(lines: Sequence[str], i: int, fence: str, base: int) -> tuple[int, bool]:
    """(end, closed) of a block whose opening fence ``fence`` is line ``i - 1``, in a list item whose content
    starts at column ``base`` (0 outside lists)."""
    char = fence[0]
    for k in range(i, len(lines)):
        line = lines[k]
        col, at = _indent(line)
        if at == len(line.rstrip("\r")):
            continue
        if col < base:  # the list item ended, and the block with it (code is never a lazy continuation)
            return k, False
        if col - base <= 3 and line.startswith(fence, at):
            rest = line[at:]
            run = len(rest) - len(rest.lstrip(char))
            if not rest[run:].strip(" \t\r"):
                return k + 1, True
    return len(lines), False


def fenced_blocks(lines: Sequence[str]) -> list[FencedBlock]:
    """The fenced code blocks of ``lines`` (a text split at its line breaks, without them), in order.

    Args:
        lines: the lines of a ``Document.text``, a chunk's text or a Markdown body; a trailing ``\\r`` is read as
            part of the line break.

    Returns:
        The blocks in text order, disjoint; ``[]`` when no line holds ```` ``` ```` or ``~~~``. Rules: the module
        docstring.
    """
    if not any("```" in line or "~~~" in line for line in lines):
        return []
    blocks: list[FencedBlock] = []
    items: list[int] = []  # the content columns of the open list items, innermost last
    paragraph = False  # whether the line before is paragraph text, which a lazy continuation line may follow
    empty = False  # whether the line before is an empty list item ("-"), which a blank line ends
    i = 0
    while i < len(lines):
        line = lines[i]
        col, at = _indent(line)
        i += 1
        if at == len(line.rstrip("\r")):
            if empty:
                items.pop()
            paragraph = empty = False  # a blank line ends a paragraph, and an empty item only
            continue
        empty = False
        m = _FENCE_RE.match(line, at)
        fence = m is not None and not (m[1][0] == "`" and "`" in m[2])
        heading = line[at] == "#" and _HEADING_RE.match(line, at) is not None
        inside = not (items and col < items[-1])  # the line is in the innermost open item (or no list is open)
        brk = _BREAK_RE.match(line, at) is not None or (paragraph and inside and bool(_SETEXT_RE.match(line, at)))
        item = None if brk else _ITEM_RE.match(line, at)
        if item and paragraph and inside and _no_interruption(item[0], line[item.end():]):
            item = None  # "2. x" or an empty "-" under paragraph text continues the paragraph
        if not (paragraph and not inside and not (fence or brk or item or heading or line[at] == ">")):
            while items and col < items[-1]:  # (not a lazy continuation line: the items it is left of end)
                items.pop()
        base = items[-1] if items else 0
        if col - base > 3 or col < base:  # indented code, or a paragraph's (lazy) continuation line
            continue
        if m and fence:
            end, closed = _closing(lines, i, m[1], base)
            blocks.append(FencedBlock(i - 1, end, m[2].strip(" \t\r"), closed))
            i, paragraph = end, False
            continue
        if item:
            content, paragraph = _content_column(line, col, at, item.end() - at)
            items.append(content)
            empty = not line[item.end():].strip(" \t\r")
        else:
            paragraph = not (brk or heading)
    return blocks


def fence_for(lines: Sequence[str]) -> str:
    """A fence to write code ``lines`` between: ```` ``` ```` when no line starts like a fence, else a tilde fence
    (``~~~~``, or longer than the longest tilde line that would close it), so that no line of the code closes the
    block and every reader of ``fenced_blocks`` sees the code as written."""
    fence_like = False
    longest = 0
    for line in lines:
        col, at = _indent(line)
        if col > 3:
            continue
        m = _FENCE_RE.match(line, at)
        if m:
            fence_like = True
            if m[1][0] == "~" and not m[2].strip(" \t\r"):
                longest = max(longest, len(m[1]))
    if not fence_like:
        return "```"
    return "~" * max(4, longest + 1)
