"""Highlighted snippets: the window of a chunk that holds the most query terms, terms marked ``**like this**``."""

from __future__ import annotations

import re
from typing import Collection

from ..emphasis import MARKDOWN_FORMATS, strip_emphasis
from ..index.analyzer import Analyzer

__all__ = ["highlight", "strip_emphasis"]

_WORD_RE = re.compile(r"\S+")
_EDGES_RE = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)  # punctuation around a word stays outside its marks


def _marked(word: str) -> str:
    """``word`` wrapped in ``**``, its leading and trailing punctuation left outside (``**Jekyll**.``)."""
    m = _EDGES_RE.match(word)
    if m is None or not m[2]:
        return f"**{word}**"
    return f"{m[1]}**{m[2]}**{m[3]}"


def highlight(text: str, query_terms: Collection[str], analyzer: Analyzer, width: int = 40,
              format: str = "") -> str:
    """A window of about ``width`` words of ``text`` around the densest run of query terms.

    Words whose analyzer terms meet ``query_terms`` are wrapped in ``**``, the punctuation around them outside
    the marks. Leading/trailing ``…`` mark a cut.
    CJK words (no spaces) are highlighted whole when any of their bigrams matches. ``format``: the loader name of
    the text's document (``Chunk.format``); Markdown text loses its own emphasis markers first, which would
    collide with the highlight marks, other text is kept as written (``openbook.emphasis``).
    """
    if format in MARKDOWN_FORMATS:
        text = strip_emphasis(text)
    words = [(m.start(), m.end()) for m in _WORD_RE.finditer(text)]
    if not words:
        return ""
    terms = set(query_terms)
    hit = [bool(terms.intersection(analyzer.analyze(text[s:e]))) for s, e in words]
    n = len(words)
    if n <= width:
        lo, hi = 0, n
    else:
        cur = sum(hit[:width])
        best, best_at = cur, 0
        for i in range(1, n - width + 1):
            cur += hit[i + width - 1] - hit[i - 1]
            if cur > best:
                best, best_at = cur, i
        inside = [i for i in range(best_at, best_at + width) if hit[i]]
        if inside:  # centre the window on its first and last match
            slack = width - (inside[-1] - inside[0] + 1)
            lo = max(0, min(n - width, inside[0] - slack // 2))
        else:
            lo = 0
        hi = min(n, lo + width)
    parts = []
    for i in range(lo, hi):
        s, e = words[i]
        w = text[s:e]
        parts.append(_marked(w) if hit[i] else w)
    out = " ".join(parts)
    return ("… " if lo > 0 else "") + out + (" …" if hi < n else "")
