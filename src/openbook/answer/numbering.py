"""Citation numbers as a reader sees them: 1, 2, 3 ... in the order the answer first cites its sources.

An answerer cites passages by their number in the context (``[4]``, ``[1]``, ``[3]``). What the answer shows is
renumbered here, once, for every surface (the ``Answer``, ``--json``, the CLI, the chat reply, the web page):

- a *source* is what one line of the sources list names: a document with its section and page
  (``source_key``); two passages of one source (two chunks of one section) are one source with one number;
- sources are numbered from 1 without gaps in the order the answer text first cites them (a citation the text
  does not show, which no answerer writes, follows in its listed order);
- every ``[n]`` marker of the text, the unsupported sentences and the notes is rewritten with the new numbers
  (``[1, 3]`` of one source becomes ``[1]``; a number that names no passage is left as it is);
- ``Answer.citations`` holds one entry per source, numbered 1..m; ``Answer.passages`` is renumbered to match:
  the first passage of source k is passage k, the other passages follow (m + 1, ...) in their context order, so
  that ``[k]`` opens passage k.

``StreamNumbering`` applies the same numbering to an answer's tokens as they stream, so that a streamed text and
its sources list agree; a streamed answer whose unsupported sentences are removed afterwards is numbered again on
its checked text (the final answer).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Sequence

from ..types import Answer, Citation, Passage
from .cite import _CITE, citation_ids, parse_citation_ids

_MAX_MARKER = 64  # characters: an opened "[" this far back that has not closed is not a marker being streamed
_OPENERS = "[［【"
_REPEAT = re.compile(r"\[(\d+)\](?:[ \t]*\[\1\])+")


def source_key(doc_id: str, section: str | None, page: int | None) -> tuple[str, str, int]:
    """What makes two citations one source (one line of the sources list): document, section and page."""
    return doc_id, section or "", page or 0


def _passage_key(p: Passage) -> tuple[str, str, int]:
    return source_key(p.chunk.doc_id, p.chunk.section, p.chunk.page)


def renumber_markers(text: str, mapping: dict[int, int]) -> str:
    """``text`` with every citation marker's passage numbers replaced through ``mapping`` (old -> new).

    A marker becomes one ``[k]`` per distinct new number, in its order (``[4, 1]`` -> ``[1][2]`` for
    ``{4: 1, 1: 2}``); a marker with no number ``mapping`` holds is kept as written; a new number repeated right
    after itself (``[1] [1]``) is written once.
    """
    if not mapping:
        return text

    def fix(m: re.Match[str]) -> str:
        ids = parse_citation_ids(m.group(1))
        if not any(n in mapping for n in ids):
            return m.group(0)
        return "".join(f"[{n}]" for n in dict.fromkeys(mapping.get(n, n) for n in ids))

    return _REPEAT.sub(r"[\1]", _CITE.sub(fix, text))


def _source_numbers(order: Iterable[int], cited: dict[int, Citation]) -> dict[int, int]:
    """Old passage number -> source number (1, 2, ...) for the citations of ``order`` (first use first)."""
    numbers: dict[tuple[str, str, int], int] = {}
    out: dict[int, int] = {}
    for n in order:
        if n not in out and n in cited:
            c = cited[n]
            out[n] = numbers.setdefault(source_key(c.doc_id, c.section, c.page), len(numbers) + 1)
    return out


def number_sources(answer: Answer) -> Answer:
    """``answer`` with its sources numbered densely in first-use order (see the module docstring).

    Returns:
        A new ``Answer``: ``text``, ``unsupported`` and ``notes`` with markers renumbered; ``citations`` one per
        source, ``n`` = 1..m in first-use order; ``passages`` renumbered 1..len(passages) (source k's first
        passage is k), sorted by their new number. An answer without citations is returned as it is.
    """
    if not answer.citations:
        return answer
    cited = {c.n: c for c in answer.citations}
    sources = _source_numbers([*citation_ids(answer.text), *cited], cited)
    firsts: dict[int, int] = {}  # source number -> the old number of its first-cited passage
    for old, new in sources.items():
        firsts.setdefault(new, old)
    passages = _renumber_passages(answer.passages, firsts)
    everywhere = {old.n: new.n for old, new in zip(answer.passages, passages)} | sources
    return replace(
        answer,
        text=renumber_markers(answer.text, sources),
        citations=tuple(replace(cited[old], n=new) for new, old in sorted(firsts.items())),
        passages=tuple(sorted(passages, key=lambda p: p.n)),
        unsupported=tuple(renumber_markers(s, everywhere) for s in answer.unsupported),
        notes=tuple(renumber_markers(s, everywhere) for s in answer.notes),
    )


def _renumber_passages(passages: Sequence[Passage], firsts: dict[int, int]) -> list[Passage]:
    """``passages`` (context order) with new numbers: source k's first passage (``firsts``: k -> old number)
    is k, every other passage follows from len(firsts) + 1 in context order."""
    first_of = {old: new for new, old in firsts.items()}
    out: list[Passage] = []
    nxt = len(firsts) + 1
    for p in passages:
        if p.n in first_of:
            out.append(replace(p, n=first_of[p.n]))
        else:
            out.append(replace(p, n=nxt))
            nxt += 1
    return out


class StreamNumbering:
    """Renumbers the citation markers of a streamed answer as its pieces arrive (first use first, one number per
    source, as ``number_sources`` numbers the final answer).

    ``feed(piece)`` returns the text that can be shown now (a marker still open at the end of a piece is held
    back until it closes, at most ``_MAX_MARKER`` characters); ``flush()`` returns what is left at the end.
    """

    def __init__(self, passages: Sequence[Passage]) -> None:
        self._by_n = {p.n: p for p in passages}
        self._numbers: dict[tuple[str, str, int], int] = {}
        self._mapping: dict[int, int] = {}
        self._held = ""

    def _rewrite(self, text: str) -> str:
        for n in citation_ids(text):
            if n in self._by_n and n not in self._mapping:
                key = _passage_key(self._by_n[n])
                self._mapping[n] = self._numbers.setdefault(key, len(self._numbers) + 1)
        return renumber_markers(text, self._mapping)

    def feed(self, piece: str) -> str:
        text = self._held + piece
        cut = max(text.rfind(o) for o in _OPENERS)
        if cut >= 0 and not any(c in text[cut:] for c in "]］】") and len(text) - cut <= _MAX_MARKER:
            text, self._held = text[:cut], text[cut:]
        else:
            self._held = ""
        return self._rewrite(text)

    def flush(self) -> str:
        text, self._held = self._held, ""
        return self._rewrite(text)


__all__ = ["StreamNumbering", "number_sources", "renumber_markers", "source_key"]
