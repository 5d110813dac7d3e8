"""BM25 scores checked against reference implementations (bm25s' lucene method and rank_bm25)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from openbook.index.analyzer import Analyzer
from openbook.index.sparse import BM25Index, lucene_idf


@pytest.fixture(scope="module")
def scifact_sample(shared):
    docs = []
    with open(shared / "datasets" / "scifact" / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= 800:
                break
            d = json.loads(line)
            docs.append(d["title"] + "\n" + d["text"])
    a = Analyzer()
    return a, [a.analyze(d) for d in docs]


QUERIES = ["cancer cells in mice", "vitamin D deficiency risk", "protein folding", "DNA repair mechanisms"]


def test_scores_equal_bm25s_lucene(scifact_sample):
    a, toks = scifact_sample
    idx = BM25Index.build(toks, k1=1.2, b=0.75)
    ref = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    ref.index(bm25s.tokenization.Tokenized(ids=[[idx.term_ids[t] for t in d] for d in toks], vocab=idx.term_ids),
              show_progress=False)
    for q in QUERIES:
        terms = list(dict.fromkeys(a.analyze(q)))
        mine = idx.term_scores(terms)
        theirs = ref.get_scores([idx.term_ids[t] for t in terms if t in idx.term_ids])
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5)


def test_scores_equal_textbook_formula_and_rank_bm25_order(scifact_sample):
    a, toks = scifact_sample
    k1, b = 1.5, 0.6
    idx = BM25Index.build(toks, k1=k1, b=b)
    n = len(toks)
    avgdl = sum(map(len, toks)) / n
    df: dict[str, int] = {}
    for d in toks:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    okapi = BM25Okapi(toks, k1=k1, b=b)
    for q in QUERIES:
        terms = list(dict.fromkeys(a.analyze(q)))
        expect = np.zeros(n)
        for i, d in enumerate(toks):
            for t in terms:
                tf = d.count(t)
                if tf:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    expect[i] += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
        np.testing.assert_allclose(idx.term_scores(terms), expect, rtol=1e-5, atol=1e-6)
        # rank_bm25 uses another idf; the best document still agrees for these multi-term queries
        assert int(np.argmax(okapi.get_scores(terms))) == int(np.argmax(expect))


def test_search_topk_order_mask_and_ties():
    idx = BM25Index.build([["a1", "b1"], ["a1"], ["b1"], ["c1"], ["a1"]])
    rows, scores = idx.search(["a1"], k=10)
    valid = rows[rows >= 0]
    assert list(valid) == [1, 4, 0]  # shorter docs first; tie between 1 and 4 broken by row id
    assert all(scores[i] >= scores[i + 1] for i in range(len(valid) - 1))
    mask = np.array([True, False, True, True, True])
    rows, _ = idx.search(["a1"], k=2, mask=mask)
    assert list(rows) == [4, 0]  # the hidden row never pushes a visible one out of the top k
    rows, scores = idx.search(["zzz"], k=3)
    assert list(rows) == [-1, -1, -1] and not scores.any()


def test_save_load_mmap_and_update(tmp_path, scifact_sample):
    a, toks = scifact_sample
    idx = BM25Index.build(toks[:300])
    idx.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25", mmap=True)
    # memory-mapped (views of the maps, not copies read into memory)
    assert all(isinstance(a.base, np.memmap) and not a.flags.owndata for a in (loaded.tf, loaded.indices, loaded.indptr))
    q = a.analyze("cell biology")
    np.testing.assert_allclose(idx.term_scores(q), loaded.term_scores(q))
    keep = np.ones(300, dtype=bool)
    keep[10:20] = False
    upd = loaded.updated(keep, toks[300:400])
    fresh = BM25Index.build([t for i, t in enumerate(toks[:300]) if keep[i]] + toks[300:400])
    np.testing.assert_allclose(upd.term_scores(q), fresh.term_scores(q), rtol=1e-6)
    assert set(upd.vocab) == set(fresh.vocab)


def test_lucene_idf_positive():
    assert (lucene_idf(np.array([0, 1, 50, 100]), 100) > 0).all()


@pytest.mark.slow  # compiles the numba kernels in a fresh cache
def test_compiled_kernel_equals_numpy_path(scifact_sample, monkeypatch):
    from openbook.index import _bm25_kernels as kernels

    assert kernels.HAVE_NUMBA  # the accelerate extra (README command 2): the fast path must be the one tested
    monkeypatch.setattr(kernels, "MIN_ROWS", 0)  # the sample is small: force the compiled kernel
    a, toks = scifact_sample
    idx = BM25Index.build(toks)
    rng = np.random.default_rng(7)
    mask = rng.random(idx.rows) > 0.3
    queries = [a.analyze(q) for q in QUERIES] + [["zzz-none"], a.analyze("cell") * 3]
    # both compiled ways: postings under an eighth of the rows (rows touched listed) and over (every row read)
    rare, common = a.analyze("zebrafish"), a.analyze("cells patients study results")
    assert 0 < 8 * sum(np.diff(idx.indptr)[idx.term_ids[t]] for t in rare) < idx.rows
    assert 8 * sum(np.diff(idx.indptr)[idx.term_ids[t]] for t in common) >= idx.rows
    queries += [rare, common]
    fast = [idx.search_batch(queries, k, m) for k in (1, 10, 300) for m in (None, mask)]
    monkeypatch.setattr(kernels, "HAVE_NUMBA", False)
    slow = [idx.search_batch(queries, k, m) for k in (1, 10, 300) for m in (None, mask)]
    for (fr, fs), (sr, ss) in zip(fast, slow):
        np.testing.assert_array_equal(fr, sr)
        np.testing.assert_array_equal(fs, ss)  # the same float32 posting weights, summed in the same order
    # the accumulator is left clean between queries
    assert not idx._scores.any()


def test_changing_k1_b_needs_no_rebuild(scifact_sample):
    a, toks = scifact_sample
    q = a.analyze("cancer cells in mice")
    np.testing.assert_allclose(BM25Index.build(toks).with_params(0.9, 0.4).term_scores(q),
                               BM25Index.build(toks, k1=0.9, b=0.4).term_scores(q), rtol=1e-6)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_repeated_query_term_counts_each_occurrence_like_bm25s(scifact_sample, monkeypatch, compiled):
    from openbook.index import _bm25_kernels as kernels

    if compiled:
        monkeypatch.setattr(kernels, "MIN_ROWS", 0)  # the sample is small: force the compiled kernel
    else:  # the numpy path, even where an earlier test loaded the kernel into this process
        monkeypatch.setattr(kernels, "HAVE_NUMBA", False)
    a, toks = scifact_sample
    idx = BM25Index.build(toks, k1=1.2, b=0.75)
    ref = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    ref.index(bm25s.tokenization.Tokenized(ids=[[idx.term_ids[t] for t in d] for d in toks], vocab=idx.term_ids),
              show_progress=False)
    for q in ("cancer cells cancer", "protein protein protein folding", "mice and mice and more mice"):
        terms = a.analyze(q)
        assert len(set(terms)) < len(terms)
        theirs = ref.get_scores([idx.term_ids[t] for t in terms if t in idx.term_ids])  # duplicates kept
        np.testing.assert_allclose(idx.term_scores(terms), theirs, rtol=1e-5, atol=1e-5)
        rows, scores = idx.search(terms, k=5)  # the search path (numpy or compiled) agrees
        np.testing.assert_allclose(scores[rows >= 0], theirs[rows[rows >= 0]], rtol=1e-5)
        once = idx.term_scores(list(dict.fromkeys(terms)))
        assert not np.allclose(once, theirs)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_view_with_the_statistics_of_some_rows_scores_as_an_index_of_those_rows(scifact_sample, monkeypatch,
                                                                                  compiled):
    from openbook.index import _bm25_kernels as kernels

    if compiled:
        monkeypatch.setattr(kernels, "MIN_ROWS", 0)  # the sample is small: force the compiled kernel
    else:  # the numpy path, even where an earlier test loaded the kernel into this process
        monkeypatch.setattr(kernels, "HAVE_NUMBA", False)
    a, toks = scifact_sample
    counted = np.random.default_rng(3).random(len(toks)) > 0.4
    whole = BM25Index.build(toks)
    view = whole.with_stats_of(counted)
    alone = BM25Index.build([t for t, c in zip(toks, counted) if c])  # an index of the counted rows only
    rows_alone = np.flatnonzero(counted)
    queries = [a.analyze(q) for q in QUERIES] + [a.analyze("cells patients study results"), ["zzz-none"]]
    got_rows, got_scores = view.search_batch(queries, 50, counted)
    ref_rows, ref_scores = alone.search_batch(queries, 50)
    np.testing.assert_array_equal(got_rows, np.where(ref_rows >= 0, rows_alone[ref_rows], -1))
    np.testing.assert_array_equal(got_scores, ref_scores)  # identical: nothing of the other rows shows
    terms = [*a.analyze("cancer cells protein"), "zzz-none"]
    np.testing.assert_array_equal(view.idf(terms), alone.idf(terms))
    np.testing.assert_array_equal(view.document_frequency(terms), alone.document_frequency(terms))
    assert not np.array_equal(whole.idf(terms), view.idf(terms))  # the whole index's statistics differ
    assert view.with_params(0.9, 0.4).idf(terms).tolist() == view.idf(terms).tolist()  # k1/b keep the view
    with pytest.raises(Exception, match="row selection"):
        whole.with_stats_of(counted[:-1])



@pytest.mark.parametrize("compiled", [False, True])
def test_idf_over_documents_is_lucenes_over_the_documents_whatever_the_chunking(scifact_sample, monkeypatch,
                                                                                 compiled):
    """``with_documents``: a chunk's score takes tf and length from the chunk, idf from documents, so a
    document cut into more chunks does not make its terms look commoner. Reference: Lucene's idf over the
    documents (``ln(1 + (N - df + 0.5) / (df + 0.5))`` with each document one row), and the textbook formula
    for the chunk's tf part."""
    from openbook.index import _bm25_kernels as kernels

    if compiled:
        monkeypatch.setattr(kernels, "MIN_ROWS", 0)
    else:
        monkeypatch.setattr(kernels, "HAVE_NUMBA", False)
    a, toks = scifact_sample
    chunks, documents = [], []
    for d, tokens in enumerate(toks):  # documents cut into 1-3 consecutive chunks
        parts = 1 + d % 3
        size = -(-len(tokens) // parts)
        for i in range(parts):
            if tokens[i * size : (i + 1) * size]:
                chunks.append(tokens[i * size : (i + 1) * size])
                documents.append(d)
    documents = np.array(documents)
    index = BM25Index.build(chunks).with_documents(documents)
    terms = [*a.analyze("cancer cells protein mice"), "zzz-none"]
    docs_with = [sum(t in set(tokens) for tokens in toks) for t in terms]
    expected = lucene_idf(np.array(docs_with), len(toks))
    got = index.idf_by_term[[index.term_ids[t] for t in terms[:-1]]]
    np.testing.assert_allclose(got, expected[:-1], rtol=1e-6)
    assert not np.allclose(BM25Index.build(chunks).idf_by_term[[index.term_ids[t] for t in terms[:-1]]],
                           expected[:-1], rtol=1e-3)  # counted in chunks, the same terms weigh less
    avgdl = np.mean([len(c) for c in chunks])
    query = a.analyze("cancer cells in mice")
    rows, scores = index.search_batch([query], 20)
    for row, score in zip(rows[0], scores[0]):
        ref = 0.0
        for term in query:
            tf = chunks[row].count(term)
            if tf:
                idf = lucene_idf(np.array([sum(term in set(tokens) for tokens in toks)]), len(toks))[0]
                ref += idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * len(chunks[row]) / avgdl))
        assert score == pytest.approx(ref, rel=2e-5)
    counted = np.isin(documents, np.flatnonzero(np.random.default_rng(5).random(len(toks)) > 0.3))
    view = index.with_stats_of(counted)  # the access view: documents of the counted rows only
    seen = [tokens for d, tokens in enumerate(toks) if counted[documents == d].all()]
    np.testing.assert_allclose(view.idf_by_term[[index.term_ids[t] for t in terms[:2]]],
                               lucene_idf(np.array([sum(t in set(x) for x in seen) for t in terms[:2]]), len(seen)),
                               rtol=1e-6)
    again = index.with_params(0.9, 0.4)
    np.testing.assert_array_equal(again.idf_by_term, index.idf_by_term)  # k1/b keep the document idf
    with pytest.raises(Exception, match="document ordinals"):
        BM25Index.build(chunks).with_documents(documents[:-1])


def test_stored_document_frequencies_give_the_same_index(scifact_sample):
    """``with_documents(documents, document_frequencies(documents))`` (what a store opens, reading no posting)
    holds exactly the statistics of ``with_documents(documents)``, and ranks alike; a view's own counts win."""
    _, toks = scifact_sample
    chunks, documents = [], []
    for d, tokens in enumerate(toks):
        half = max(1, len(tokens) // 2)
        for part in (tokens[:half], tokens[half:]):
            if part:
                chunks.append(part)
                documents.append(d)
    documents = np.array(documents, dtype=np.int32)
    built = BM25Index.build(chunks)
    computed = built.with_documents(documents)
    stored = built.with_documents(documents, built.document_frequencies(documents))
    np.testing.assert_array_equal(stored.idf_by_term, computed.idf_by_term)
    np.testing.assert_array_equal(stored.norm, computed.norm)
    assert (stored.stats_rows, stored.stats_avgdl) == (computed.stats_rows, computed.stats_avgdl)
    queries = [chunks[i][:6] for i in range(0, len(chunks), 37)]
    for got, want in zip(stored.search_batch(queries, 10), computed.search_batch(queries, 10)):
        np.testing.assert_array_equal(got, want)
    counted = np.arange(built.rows) % 3 > 0
    view = built.with_stats_of(counted)
    np.testing.assert_array_equal(view.with_documents(documents, built.document_frequencies(documents)).idf_by_term,
                                  view.with_documents(documents).idf_by_term)
    with pytest.raises(Exception, match="document frequencies"):
        built.with_documents(documents, built.document_frequencies(documents)[:-1])


SWITCH = """
import sys, numpy as np
from openbook.index import _bm25_kernels as kernels
from openbook.index.analyzer import Analyzer
from openbook.index.sparse import BM25Index
texts = [line.strip() for line in sys.stdin if line.strip()]
a = Analyzer()
idx = BM25Index.build([a.analyze(t) for t in texts])
assert kernels.HAVE_NUMBA and idx.rows < kernels.MIN_ROWS
queries = [a.analyze(t) for t in texts[:40]]
first = idx.search_batch(queries, 10)
assert not kernels.loaded() and idx._numpy_s > 0
kernels.LOAD_COST_S = idx._numpy_s / 2  # numpy has now spent more than the kernel's load cost on this index
second = idx.search_batch(queries, 10)
assert kernels.loaded()
np.testing.assert_array_equal(first[0], second[0])
np.testing.assert_array_equal(first[1], second[1])
fresh = BM25Index.build([a.analyze(t) for t in texts[:50]])  # another small index: the loaded kernel at once
fresh.search_batch(queries[:1], 10)
assert fresh._numpy_s == 0.0
print("ok")
"""


def test_a_small_index_switches_to_the_kernel_once_numpy_has_spent_its_load_cost(shared):
    """Rent or buy: numpy scores a small index until it has spent LOAD_COST_S on it, then the compiled kernel,
    with the same rows and scores (a fresh process: one that has not loaded the kernel yet)."""
    lines = (shared / "datasets" / "scifact" / "corpus.jsonl").read_text().splitlines()[:400]
    texts = "\n".join(json.loads(line)["title"] + " " + json.loads(line)["text"] for line in lines)
    r = subprocess.run([sys.executable, "-c", SWITCH], input=texts, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


CONCURRENT_FIRST_USE = """
import sys, threading, numpy as np
from openbook.index import _bm25_kernels as kernels
from openbook.index.analyzer import Analyzer
from openbook.index.sparse import BM25Index
texts = [line.strip() for line in sys.stdin if line.strip()]
a = Analyzer()
analyzed = [a.analyze(t) for t in texts]
indexes = [BM25Index.build(analyzed) for _ in range(8)]  # one per thread, as each server thread opens its own
queries = analyzed[:20]
kernels.HAVE_NUMBA, have = False, kernels.HAVE_NUMBA
expected = indexes[0].search_batch(queries, 10)  # the numpy path
kernels.HAVE_NUMBA, kernels.MIN_ROWS = have, 0  # every thread's first query loads the kernel
assert kernels.HAVE_NUMBA and not kernels.loaded()
start = threading.Barrier(8)
results, errors = [], []
def reader(idx):
    start.wait()
    try:
        results.append(idx.search_batch(queries, 10))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=reader, args=(idx,)) for idx in indexes]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
assert len(results) == 8 and kernels.loaded()
for rows, scores in results:
    np.testing.assert_array_equal(rows, expected[0])
    np.testing.assert_array_equal(scores, expected[1])
print("ok")
"""


def test_threads_whose_first_queries_load_the_kernel_at_once_all_get_it(shared):
    """Reader threads of a server can all reach the kernel's first load together: each gets the compiled kernel
    and the numpy path's rows and scores, none an error (a fresh process: one that has not loaded the kernel)."""
    lines = (shared / "datasets" / "scifact" / "corpus.jsonl").read_text().splitlines()[:200]
    texts = "\n".join(json.loads(line)["title"] + " " + json.loads(line)["text"] for line in lines)
    r = subprocess.run([sys.executable, "-c", CONCURRENT_FIRST_USE], input=texts, capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
