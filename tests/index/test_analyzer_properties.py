"""Property tests of the analyzer over arbitrary Unicode (Hypothesis): it never fails, is deterministic, and
its terms are clean, whatever the script, marks, format characters, surrogates or token length."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from openbook.index.analyzer import Analyzer

FAST = settings(max_examples=80, deadline=None)

# Pieces that stress the tokenizer: punctuation runs (ASCII and full-width), combining marks, format characters,
# lone surrogates, scripts without spaces, CJK, code-like tokens and symbol suffixes.
PIECES = st.sampled_from([
    "！！！", "？？？？", "...", "---", "!!!", "。", "、", "#", "++", "C#", "C++", "v2.3.1", "50GB", "E-2043",
    "\u0301", "\u0307", "\u094d", "\u093e", "\u064e", "\u05b8", "\u0e49", "\u00ad", "\u200b", "\u200c", "\u200d",
    "\ufeff", "\u2060", "\ud800", "\udfff", "İ", "ß", "ﬁ", "Ω", "ภาษาไทย", "ລາວ", "ខ្មែរ", "မြန်မာ", "差旅政策",
    "한국어", "José", "the", "to be", " ", "\n", "\t", "1,200", "a", "x" * 5000,
])
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=20)), max_size=12).map("".join)

A = Analyzer()


@FAST
@given(TEXT)
def test_analysis_never_fails_and_terms_are_clean(text):
    for terms in (A.analyze(text), A.analyze_document(text)):
        assert all(isinstance(t, str) and t for t in terms)
        assert not any(ch.isspace() for t in terms for ch in t)
        assert not any(0xD800 <= ord(ch) <= 0xDFFF for t in terms for ch in t)  # lone surrogates never kept
        assert not any(ch in "\u00ad\u200b\u200c\u200d\u2060\ufeff" for t in terms for ch in t)


@FAST
@given(TEXT)
def test_analysis_is_deterministic_and_cache_free(text):
    fresh = Analyzer()
    assert A.analyze(text) == fresh.analyze(text) == A.analyze(text)
    assert A.analyze_document(text) == fresh.analyze_document(text)


@FAST
@given(TEXT)
def test_queries_find_their_own_text(text):
    doc = set(A.analyze_document(text))
    assert set(A.analyze(text)) <= doc  # a query typed as the text itself matches it


@FAST
@given(st.lists(TEXT, min_size=2, max_size=4))
def test_words_separated_by_spaces_analyze_independently(parts):
    # Adding a space between two texts never removes a term that either text has alone (cut points are stable)
    joined = A.analyze_document(" ".join(parts))
    for p in parts:
        for t in A.analyze_document(p):
            assert t in joined


def test_empty_and_blank_input():
    assert A.analyze("") == A.analyze_document("") == []
    assert A.analyze(" \n\t\u200b\u00ad ") == []
    assert A.analyze("！！！") == []


def test_a_huge_token_is_one_term():
    word = "x" * 200_000
    assert A.analyze(word) == [word]
