"""Fenced code blocks of ``Document.text``, read one way by every stage (CommonMark 0.31.2, 4.5).

The Markdown loader leaves a fenced block's lines uncleaned, the chunker reads its ``#`` lines as code, not as
headings, and the extractive answerer keeps a block whole (quoted for a how-to question, left out of a fact's
answer). All three call ``fenced_blocks``, so a line is code for all of them or for none. The loaders that write
code (indented Markdown code, HTML ``<pre>``) choose their fence with ``fence_for``.

The blocks are those ``blocks.parse_blocks`` reads (markdown-it-py, CommonMark 0.31.2), the one parse of Markdown
the stages share, less the blocks inside a block quote (``> ```...`` is no fence here). CommonMark's rules, in short:

- An opening fence is at most 3 spaces of indentation, a run of at least 3 backticks or at least 3 tildes, and an
  info string (its first word usually names the language). A backtick fence's info string holds no backtick: a
  line such as "```a`b" is inline code, not a fence.
- A closing fence is the opening fence's character, at least as many of it (a block opened by four backticks is
  closed by four or more, never by three), at most 3 spaces of indentation and nothing after it but spaces and
  tabs. Every line in between, fence-like or not, is code: a "```python" line closes nothing.
- A block that is never closed runs to the end of the text, or of the list item holding it. A fence line inside
  an HTML block (``<div>`` up to a blank line) is HTML, no fence.
- Indentation counts columns, a tab moving to the next multiple of 4. Inside a list item it counts from the item's
  content column (``1. Step`` -> column 3, ``- Step`` -> column 2), so a block written under a step is a fence
  however deep the list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .blocks import parse_blocks

__all__ = ["FencedBlock", "fence_for", "fenced_blocks"]

_FENCE_RE = re.compile(r"(`{3,}|~{3,})(.*)")  # matched after a line's indentation


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


def fenced_blocks(lines: Sequence[str]) -> list[FencedBlock]:
    """The fenced code blocks of ``lines`` (a text split at its line breaks, without them), in order.

    Args:
        lines: the lines of a ``Document.text``, a chunk's text or a Markdown body; a trailing ``\\r`` is read as
            part of the line break.

    Returns:
        The blocks in text order, disjoint; ``[]`` when no line holds ```` ``` ```` or ``~~~``. Rules: the module
        docstring; the blocks are those ``blocks.parse_blocks`` reads, less the ones inside a block quote.
    """
    if not any("```" in line or "~~~" in line for line in lines):
        return []
    text = "\n".join(line.rstrip("\r").replace("\n", " ") for line in lines)
    return [FencedBlock(b.lines[0], b.lines[1], b.info, b.closed) for b in parse_blocks(text)
            if b.kind == "code" and b.fence and not b.quoted]


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
