"""The fast build paths give exactly the terms and the index of the reference path.

- ``Analyzer.analyze_document`` analyses whitespace-separated pieces (cached) instead of the whole text: its
  terms must equal the whole-text reference (tokenise the text, analyse each token) on real text of several
  scripts and on every Unicode whitespace character.
- ``BM25Index.from_texts`` with the compiled builder must give the same arrays (vocabulary order included) as
  ``BM25Index.build`` over ``analyze_document``, hence the same scores and the same rankings on SciFact.
"""

from __future__ import annotations

import json
import sys
from itertools import chain

import numpy as np
import pytest

from openbook.index.analyzer import Analyzer
from openbook.index.sparse import BM25Index


def _read(path, n):
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            out.append((d.get("title") or "") + "\n" + d.get("text", ""))
            if len(out) >= n:
                break
    return out


MIXED = [
    "",
    "   \n\t ",
    "E-2043 and e-2403 differ; SL-PRO-500, SL PRO 500, v2.3.1 vs 2.3.1, 50GB = 50 GB, 2.5GHz, 10mg, 1,200 rows",
    "C# and F# and C++ and Disney+; don't stop the patient's vitamin D; T cells",
    "ภาษาไทยเป็นภาษาที่ใช้ในประเทศไทย ລາວ ខ្មែរ မြန်မာ and Thai mixed: ระบบ E-2043 ทำงาน",
    "差旅政策：员工出差须提前申请。한국어 문장도 있습니다. カタカナとひらがな 漢字",
    "José café naïve İZMİR ıstanbul Łódź Ærø œuvre ＡＢＣ１２３ ﬁne ß Ω",
    "المَكْتَبَةُ العربية עִבְרִית हिन्दी में लिखा गया पाठ বাংলা",
    "soft\u00adhyphen zero\u200bwidth join\u200dner word\u2060joiner bom\ufeffmark rtl\u200fmark",
    "no\u00a0break\u2009thin\u3000ideographic\u2028line\u2029para\x1cfile\x1dgroup\x1erecord\x1funit\x85nel",
    "NUL\x00inside a text, and a lone surrogate \ud800 here \udfff and a pair \ud83d\ude00 emoji 😀",
    "a ´ b ¨ c ¯ d ⑴ ¼ ㎒ combining \u0301 after space, and x\u0301 y\u0307",
    "quote ' s and ’ t at the start; it's; rock'n'roll; O'Brien; 1,234,567 and 12,34",
    "trailing symbols: #hash +plus C#. C++, (C#) [C++] x## y+++ z#+",
    "dots and joiners: a.b.c 3.14.15 foo_bar /usr/local/bin e.g. i.e. U.S.A. -leading trailing- __x__",
    "x" * 5000 + " " + "long-" * 300 + "end",
]


@pytest.fixture(scope="module")
def varied(shared):
    data = shared / "datasets"
    return (_read(data / "scifact" / "corpus.jsonl", 300) + _read(data / "cmrc2018_dev" / "corpus.jsonl", 100)
            + MIXED)


def _reference_terms(analyzer: Analyzer, text: str) -> list[str]:
    """The whole-text path: tokenise the text once, then analyse each token."""
    return list(chain.from_iterable(analyzer._analyze_token(t, frozenset(), True) for t in analyzer._tokens(text)))


def test_document_terms_equal_the_whole_text_reference(varied):
    a = Analyzer()
    for text in varied:
        assert a.analyze_document(text) == _reference_terms(a, text), text[:80]
    # a second pass answers from the piece cache: still the same terms
    assert [a.analyze_document(t) for t in varied] == [_reference_terms(Analyzer(), t) for t in varied]


def test_every_whitespace_character_separates_like_a_space():
    a = Analyzer()
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()] + ["\x00"]
    for ws in spaces:
        for left, right in (("a", "b"), ("C#", "x"), ("it", "'s"), ("1,", "200"), ("E-", "2043"), ("日本", "語"),
                            ("ไทย", "ภาษา"), ("José", "\u0301x")):
            text = f"{left}{ws}{right}"
            assert a.analyze_document(text) == _reference_terms(a, text), repr(text)


def _assert_same_index(fast: BM25Index, ref: BM25Index) -> None:
    assert fast.vocab == ref.vocab
    for name in ("indptr", "indices", "tf", "doc_len"):
        x, y = getattr(fast, name), getattr(ref, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    assert (fast.k1, fast.b, fast.rows, fast.avgdl) == (ref.k1, ref.b, ref.rows, ref.avgdl)


def test_compiled_build_equals_reference_build_on_varied_text(varied):
    texts = varied * 3  # pieces seen before and new ones, over several batches of the builder
    ref = BM25Index.build([Analyzer().analyze_document(t) for t in texts], k1=1.2, b=0.75)
    _assert_same_index(BM25Index.from_texts(texts, Analyzer(), compiled=True), ref)
    _assert_same_index(BM25Index.from_texts(iter(texts), Analyzer(), compiled=False), ref)


def test_compiled_build_over_small_batches_and_edge_cases(monkeypatch):
    import openbook.index.sparse as sparse

    monkeypatch.setattr(sparse, "_FAST_BATCH", 3)  # many batches: ids and scratch arrays carried across them
    texts = ["", "word word WORD", "  ", "new terms here", "word", "\x00", "E-2043 e-2043", "", "x" * 300] * 7
    ref = BM25Index.build([Analyzer().analyze_document(t) for t in texts])
    _assert_same_index(BM25Index.from_texts(texts, Analyzer(), compiled=True), ref)
    for texts in ([], [""], ["   "], ["a " * 300]):  # no terms at all; one term with a frequency over 255
        ref = BM25Index.build([Analyzer().analyze_document(t) for t in texts])
        _assert_same_index(BM25Index.from_texts(texts, Analyzer(), compiled=True), ref)


@pytest.mark.slow  # the whole SciFact corpus
def test_compiled_build_ranks_scifact_exactly_as_the_reference(shared, monkeypatch):
    data = shared / "datasets" / "scifact"
    texts = _read(data / "corpus.jsonl", 2000)
    with open(data / "queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in fh][:300]
    a = Analyzer()
    ref = BM25Index.build([Analyzer().analyze_document(t) for t in texts])
    fast = BM25Index.from_texts(texts, Analyzer(), compiled=True)
    _assert_same_index(fast, ref)
    terms = [a.analyze(q) for q in queries]
    rows_ref, scores_ref = ref.search_batch(terms, 10)
    rows_fast, scores_fast = fast.search_batch(terms, 10)
    np.testing.assert_array_equal(rows_fast, rows_ref)
    np.testing.assert_array_equal(scores_fast, scores_ref)
    assert (rows_ref[:, 0] >= 0).mean() > 0.9  # the queries do find documents
