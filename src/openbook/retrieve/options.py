"""Option entries: a query naming a command-line option as written finds the option's own manual entry.

"What does grep -v do?" reaches BM25 as ``doe grep v do``: the analyzer drops the dash and folds the case, so
``-v`` and ``-V`` are one term, and "ls -a" loses its option altogether (``a`` is a stop word). In a manual the
letter is in nearly every chunk of the option list ("When the -v or --invert-match option is also used ..."),
so the chunk holding the entry ``-v, --invert-match`` ranked 5th-10th or below among its own manual's chunks.
The entry is told by its layout, which the index does not see: a line that *opens* with the option, alone or
after its aliases (``-v, --invert-match``, ``-R, -r, --recursive``, ``-e PATTERNS, --regexp=PATTERNS``,
``--exclude=PATTERN``, ``-p port``; a list bullet, backticks or emphasis around them allowed).

Three steps, the first two only for a query that names options (``openbook.question.command_options``):

- ``option_terms``: the option's own terms join the BM25 query even when they are stop words (the ``a`` of
  ``-a``, the ``no`` of ``--no-clobber``): written as an option, the word is what is asked about.
- ``promote_entries``: among the candidates (the retrieval depth, ``[retrieval] candidates``, not only the top
  ``k``), the chunk with an entry line for each option the query names, with the same case, comes first: the
  one in a manual whose title names a query word (the command: "sort" in "What does sort -u do?"), an entry
  head rather than a wrapped line that opens with the option, then the best ranked; the others follow in their
  order. The index and its analyzer are unchanged.
- ``promote_keyword_entries``, for a query naming no option: the same for a manual's keywords ("Which port does
  ssh use by default?" and ssh_config's ``Port`` entry), but only inside a document: its entry chunk takes the
  place of its first chunk, so documents keep their ranks and a corpus of one chunk per document is never
  changed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Callable, Sequence

from ..question import command_options
from ..types import Hit

# an option on its entry line, with its argument: "-e PATTERNS", "--regexp=PATTERNS", "-o <file>", "-L [addr:]port"
_ITEM = r"[`*_]*--?[A-Za-z0-9][\w-]*(?:(?:=| (?=[<\[A-Za-z]))(?:<[^>\n]*>|\[[^\]\n]*\]|[^\s,]+))?[`*_]*"
# what may follow the entry's options on their line: nothing, a colon, a dash, or the description after a gap
_TAIL = r"(?:[ \t]*$|[ \t]*:|[ \t]+[-\u2013\u2014][ \t]|[ \t]{2,}\S)"


@lru_cache(maxsize=256)
def _entry_res(option: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(strict, loose) patterns of a line opening with ``option`` (case kept), perhaps as a list item: strict,
    the line is an entry's head (the option among its aliases, each with its argument, then nothing, a colon, a
    dash or a gap before the description); loose, the option opens the line, after aliases or not."""
    opt = rf"[`*_]*{re.escape(option)}(?![\w-])"
    head = r"^[ \t]*(?:[-*+][ \t]+)?"
    strict = rf"{head}(?:{_ITEM},[ \t]*)*{opt}(?:(?:=| (?=[<\[A-Za-z]))(?:<[^>\n]*>|\[[^\]\n]*\]|[^\s,]+))?[`*_]*" \
             rf"(?:,[ \t]*{_ITEM})*{_TAIL}"
    loose = rf"{head}(?:{_ITEM},[ \t]*)*{opt}"
    return re.compile(strict, re.M), re.compile(loose, re.M)


def entry_kind(text: str, options: Sequence[str]) -> int:
    """2 when a line of ``text`` is the manual entry of one of ``options`` as written (``-v, --invert-match``,
    ``-R, -r, --recursive``, ``-e PATTERNS, --regexp=PATTERNS``, ``-p port``, ``-X      Enables X11 forwarding``;
    not ``-V, --version`` for ``-v``); 1 when a line only opens with one (a wrapped sentence: ``-z) was used
    ...``, ``-mtime 0, a file will ...``); 0 otherwise."""
    return max((_entry_kind(text, o) for o in options), default=0)


@lru_cache(maxsize=8192)
def _entry_kind(text: str, option: str) -> int:
    """``entry_kind`` for one option (remembered: two-hop retrieval reads the same chunks for several queries)."""
    if option not in text:  # most chunks: no regex at all
        return 0
    strict, loose = _entry_res(option)
    if not loose.search(text):
        return 0
    return 2 if strict.search(text) else 1


def option_terms(query: str, analyze_document: Callable[[str], list[str]], terms: Sequence[str]) -> list[str]:
    """``terms`` (the query's analyzer terms) plus the index terms of each option ``query`` names that they
    lack, in order; ``terms`` unchanged for a query naming none.

    Args:
        query: the query as typed.
        analyze_document: the analyzer's document side (``Analyzer.analyze_document``), which keeps stop words.
        terms: the query's terms (``Analyzer.analyze``).
    """
    options = command_options(query)
    if not options:
        return list(terms)
    have = set(terms)
    extra = [t for o in options for t in analyze_document(o) if t not in have]
    return [*terms, *dict.fromkeys(extra)]


def promote_entries(query: str, hits: Sequence[Hit], terms: Callable[[str], Sequence[str]]) -> list[Hit]:
    """``hits`` with the chunk holding the manual entry of each option ``query`` names moved first.

    Args:
        query: the query as typed (options are read with their case: ``-v`` is not ``-V``).
        hits: candidates, best first, chunks loaded (a hit without its chunk is never promoted).
        terms: the analyzer's query terms of a text (``Analyzer.analyze``).

    Returns:
        The same hits, best first: for each named option, the one chunk that best holds its entry, then the
        others in their given order. A chunk holds an option's entry when one of its lines opens with it
        (``entry_kind`` 1 or 2); the best is, in this order, in a document whose title shares a query term other
        than the options' ("sort" in "What does sort -u do?" and "SORT(1) User Commands"), an entry head (kind
        2) rather than a line that only opens with the option, then the best ranked. One chunk per option, not
        every manual's entry of ``-s``: those would push the asked manual's other chunks out of the answer's
        passages. Each moved hit is scored above the best given score (``top + spread * (n - rank + 1) / n``,
        strictly decreasing) and gains an ``option`` leg (its rank among them, 1.0). ``hits`` as given when the
        query names no option or no hit has a line opening with one.
    """
    options = command_options(query)
    if not options or not hits:
        return list(hits)
    words = set(terms(query)) - set(terms(" ".join(options)))
    named: dict[str, bool] = {}

    def names(h: Hit) -> bool:
        if h.doc_id not in named:
            named[h.doc_id] = bool(words & set(terms(h.chunk.title))) if h.chunk is not None else False
        return named[h.doc_id]

    best: list[tuple[tuple[bool, int, int], int]] = []
    for option in options:
        kinds = [entry_kind(h.chunk.text, [option]) if h.chunk is not None else 0 for h in hits]
        keys = [((not names(hits[i])), -kind, i) for i, kind in enumerate(kinds) if kind]
        if keys:
            key = min(keys)
            if all(i != key[2] for _, i in best):
                best.append((key, key[2]))
    if not best:
        return list(hits)
    order = [i for _, i in sorted(best)]
    # scores: above every other hit, strictly decreasing in the new order, spaced by the given spread
    top, low = max(h.score for h in hits), min(h.score for h in hits)
    spread, n = (top - low) or 1.0, len(order)
    promoted = [replace(hits[i], score=top + 1e-6 + spread * (n - r) / n, legs={**hits[i].legs, "option": (r, 1.0)})
                for r, i in enumerate(order, 1)]
    chosen = {hits[i].chunk_id for i in order}
    return promoted + [h for h in hits if h.chunk_id not in chosen]


# a keyword entry's head: after a blank line (or at the start), a capitalised word opening its line (``Port``,
# ``GatewayPorts``, ``GREP_COLORS``), then its description after a gap of two or more spaces or a tab, or alone on
# its line with the next line indented deeper (a justified line of prose, "Do  not  ignore ...", follows a line)
_KEYWORD_ENTRY = re.compile(r"(?:\A|\n[ \t]*\n)([ \t]*)([A-Z][\w-]*|[a-z][\w-]*[A-Z][\w-]*)"
                            r"(?:(?:[ \t]{2,}|\t)\S|[ \t]*\n(?=\1[ \t]+\S))")


def keyword_entries(text: str) -> list[str]:
    """The headwords of the keyword entries in ``text``, in order: ``["Port", "ProxyCommand"]`` for a manual's
    ``Port    Specifies the port number ...`` and ``ProxyCommand`` alone on its line above its indented
    description (``ssh_config(5)``, environment variables, a plain-text glossary), each after a blank line or
    at the start of ``text``."""
    return list(_keyword_entries(text))


@lru_cache(maxsize=4096)
def _keyword_entries(text: str) -> tuple[str, ...]:
    """``keyword_entries`` remembered (each sub-query of a two-hop search reads the same chunks again)."""
    return tuple(m.group(2) for m in _KEYWORD_ENTRY.finditer(text))


def promote_keyword_entries(query: str, hits: Sequence[Hit], k: int, terms: Callable[[str], Sequence[str]]
                            ) -> list[Hit]:
    """Within each document of the top ``k``, the chunk holding the keyword entry whose headword is a query term
    takes the place of the document's first chunk: "Which port does ssh use by default?" reads ssh_config's
    ``Port    Specifies the port number ... The default is 22.``, not its first chunk that says "port" often
    (``GatewayPorts``). Documents keep their places: a corpus of one chunk per document is never changed.

    A keyword entry opens its paragraph (``keyword_entries``) with a headword of one query term that is not a
    term of the document's title; a query that names a command-line option is left to ``promote_entries``.

    Args:
        query: the query as typed.
        hits: candidates, best first (the retrieval depth); the chunks of the top ``k``'s documents loaded.
        k: hits returned; only documents with a hit in ``hits[:k]`` are looked at.
        terms: the analyzer's query terms of a text (``Analyzer.analyze``).

    Returns:
        The same hits, each document's entry chunk (its best-ranked one, when its first hit holds none) moved to
        the position of the document's first hit, the others after it in their order; scores stay with the
        positions (still decreasing), the moved hit gains an ``entry`` leg (1, 1.0). ``hits`` as given when no
        document changes.
    """
    if command_options(query):
        return list(hits)  # an option's entry is promote_entries' (a keyword entry would displace it)
    wanted = set(terms(query))
    top_docs = list(dict.fromkeys(h.doc_id for h in hits[:k]))
    if not wanted or not top_docs:
        return list(hits)
    heads: dict[str, str] = {}  # headword -> its query term, or ""
    titles: dict[str, set[str]] = {}

    def is_entry(h: Hit) -> bool:
        if h.chunk is None:
            return False
        if h.doc_id not in titles:
            titles[h.doc_id] = set(terms(h.chunk.title))
        for word in keyword_entries(h.chunk.text):
            if word not in heads:
                found = terms(word)
                heads[word] = found[0] if len(found) == 1 and found[0] in wanted else ""
            if heads[word] and heads[word] not in titles[h.doc_id]:  # not the page's footer "TAR   July 2020"
                return True
        return False

    order = list(hits)
    moved = False
    for doc in top_docs:
        at = next(i for i, h in enumerate(order) if h.doc_id == doc)
        if is_entry(order[at]):
            continue
        j = next((i for i in range(at + 1, len(order)) if order[i].doc_id == doc and is_entry(order[i])), None)
        if j is None:
            continue
        h = order.pop(j)
        order.insert(at, replace(h, legs={**h.legs, "entry": (1, 1.0)}))
        moved = True
    if not moved:
        return list(hits)
    return [replace(h, score=g.score) for h, g in zip(order, hits)]
