"""The analyzer: one function from text to index terms, the same for documents and queries.

Steps, in order:

1. Unicode NFKC normalisation and case folding (full-width ``ＡＢＣ１２３`` becomes ``abc123``); digit-group
   commas are removed (``1,200`` -> ``1200``).
2. Tokenisation into runs of letters/digits. A run joined by ``-``, ``_``, ``.`` or ``/`` that holds a digit
   is a *code-like* token (``E-2043``, ``SL-PRO-500``, ``v5.2``, ``2.5``): it is emitted whole, unstemmed, so an
   exact code matches exactly and never a look-alike (``e-2043`` is a different term from ``e-2403``), and its
   parts are emitted as well, so ``SL PRO 500`` typed with spaces still matches.
3. CJK runs (Han, Hiragana, Katakana, Hangul) are cut into overlapping character bigrams (a one-character run
   stays a unigram), the classic approach of Lucene's CJKAnalyzer.
4. English stop words (Lucene's ``EnglishAnalyzer`` list) and one-letter Latin tokens are dropped; words without
   digits are stemmed with the Snowball English stemmer (PyStemmer).

``Analyzer.settings()`` is stored in the index manifest so that a store analysed differently is detected.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import chain
from typing import Iterable, Sequence

import Stemmer

ANALYZER_VERSION = 1

# Lucene EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)

_CJK = (
    "\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
)
_WORD = rf"[^\W_{_CJK}]+"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|{_WORD}(?:[-_./]{_WORD})*")
_JOINER_RE = re.compile(r"[-_./]")
_DIGIT_COMMA_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CJK_START_RE = re.compile(rf"[{_CJK}]")
_DIGIT_RE = re.compile(r"\d")
_CACHE_LIMIT = 2_000_000


class Analyzer:
    """Turns text into index terms (see the module docstring for the exact steps).

    Args:
        language: Snowball stemmer language, or ``None`` for no stemming.
        stopwords: drop Lucene's English stop words.

    The same instance must analyse documents and queries. Instances cache per-token results; they are not
    shared across threads.
    """

    def __init__(self, language: str | None = "english", stopwords: bool = True) -> None:
        self.language = language
        self.stopwords = stopwords
        self._stemmer = Stemmer.Stemmer(language) if language else None
        self._stop = ENGLISH_STOP_WORDS if stopwords else frozenset()
        self._cache = _TermCache(self._analyze_token)

    def settings(self) -> dict[str, object]:
        """Settings recorded in the index manifest; two analyzers with equal settings give equal terms."""
        return {"version": ANALYZER_VERSION, "language": self.language, "stopwords": self.stopwords,
                "cjk": "bigram"}

    def analyze(self, text: str) -> list[str]:
        """Index terms of ``text``, in text order (duplicates kept: they are term frequencies)."""
        text = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()
        if "," in text:
            text = _DIGIT_COMMA_RE.sub("", text)
        # token -> terms through a dict whose misses compute and remember: the common path stays in C
        return list(chain.from_iterable(map(self._cache.__getitem__, _TOKEN_RE.findall(text))))

    def analyze_batch(self, texts: Iterable[str]) -> list[list[str]]:
        """``[analyze(t) for t in texts]``."""
        return [self.analyze(t) for t in texts]

    def _analyze_token(self, raw: str) -> tuple[str, ...]:
        if _CJK_START_RE.match(raw):
            if len(raw) == 1:
                return (raw,)
            return tuple(raw[i : i + 2] for i in range(len(raw) - 1))
        parts = _JOINER_RE.split(raw)
        out: list[str] = []
        if len(parts) > 1 and _DIGIT_RE.search(raw):
            out.append(raw)
        for part in parts:
            term = self._term(part)
            if term:
                out.append(term)
        return tuple(out)

    def _term(self, word: str) -> str | None:
        if word in self._stop:
            return None
        if _DIGIT_RE.search(word):
            return word
        if len(word) == 1:
            return None
        return self._stemmer.stemWord(word) if self._stemmer else word


class _TermCache(dict):
    """Raw token -> analyzer terms, computed on first sight (bounded at ``_CACHE_LIMIT`` entries)."""

    def __init__(self, compute) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, raw: str) -> tuple[str, ...]:
        terms = self._compute(raw)
        if len(self) < _CACHE_LIMIT:
            self[raw] = terms
        return terms


def unique_terms(terms: Sequence[str]) -> list[str]:
    """Distinct terms in first-seen order."""
    return list(dict.fromkeys(terms))
