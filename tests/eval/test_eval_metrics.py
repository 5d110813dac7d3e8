"""Our metrics equal trec_eval's (through pytrec_eval) on real runs over SciFact and Cranfield."""

from __future__ import annotations

import json
from pathlib import Path

import bm25s
import pytest
import Stemmer

pytrec_eval = pytest.importorskip("pytrec_eval")

from openbook.eval.beir import load_beir, strictly_decreasing
from openbook.eval.metrics import METRICS, ap_at, evaluate_run, mrr_at, ndcg_at, per_query, rank_by_score, recall_at

TREC_NAMES = {
    "ndcg@10": "ndcg_cut_10",
    "recall@10": "recall_10",
    "recall@100": "recall_100",
    "map@100": "map_cut_100",
}


def _bm25s_run(root: Path, k: int = 100) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """A real BM25 run (bm25s, title + text) over a BEIR folder: query id -> doc id -> score."""
    data = load_beir(root)
    ids, texts = [], []
    with (root / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            ids.append(obj["_id"])
            texts.append(f"{obj.get('title', '')} {obj.get('text', '')}")
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(texts, stemmer=stemmer, show_progress=False), show_progress=False)
    qids = list(data.queries)
    qtok = bm25s.tokenize([data.queries[q] for q in qids], stemmer=stemmer, show_progress=False)
    rows, scores = retriever.retrieve(qtok, k=min(k, len(ids)), show_progress=False)
    run = {
        qid: {ids[int(r)]: float(s) for r, s in zip(rows[i], scores[i])}
        for i, qid in enumerate(qids)
    }
    return data.qrels, run


@pytest.fixture(scope="module")
def scifact_run(scifact_dir):
    return _bm25s_run(scifact_dir)


@pytest.fixture(scope="module")
def cranfield_run(cranfield_dir):
    return _bm25s_run(cranfield_dir)


def _reference(qrels, run) -> dict[str, float]:
    """Means over every judged query from pytrec_eval (trec_eval 9), MRR@10 from recip_rank on a cut run."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10,100", "map_cut.100"})
    per_q = evaluator.evaluate(run)
    cut = {q: dict(sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)[:10]) for q, docs in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    out = {name: sum(per_q.get(q, {}).get(trec, 0.0) for q in qrels) / len(qrels) for name, trec in TREC_NAMES.items()}
    out["mrr@10"] = sum(rr.get(q, {}).get("recip_rank", 0.0) for q in qrels) / len(qrels)
    return out


def _ours(qrels, run) -> dict[str, float]:
    return evaluate_run({q: rank_by_score(docs) for q, docs in run.items()}, qrels)


@pytest.mark.parametrize("fixture", ["scifact_run", "cranfield_run"])
def test_metrics_equal_pytrec_eval(fixture, request):
    qrels, run = request.getfixturevalue(fixture)
    ours, ref = _ours(qrels, run), _reference(qrels, run)
    assert set(ours) == set(METRICS)
    for name in METRICS:
        assert round(ours[name], 4) == round(ref[name], 4), name
        assert ours[name] == pytest.approx(ref[name], abs=1e-9), name


def test_scifact_bm25_is_in_the_published_range(scifact_run):
    # bm25s with Lucene BM25 on SciFact scores about 0.68 nDCG@10 (BEIR/Pyserini report 0.665-0.679).
    qrels, run = scifact_run
    assert 0.62 < _ours(qrels, run)["ndcg@10"] < 0.72


def test_ties_are_broken_like_trec_eval(scifact_run):
    # Rounding scores creates many ties; trec_eval breaks them by doc id descending, and so must we.
    qrels, run = scifact_run
    tied = {q: {d: round(s) for d, s in docs.items()} for q, docs in run.items()}
    ours, ref = _ours(qrels, tied), _reference(qrels, tied)
    for name in METRICS:
        assert ours[name] == pytest.approx(ref[name], abs=1e-9), name


def test_strictly_decreasing_scores_keep_the_run_order_under_trec_eval(scifact_run):
    qrels, run = scifact_run
    # Reverse doc-id order inside each tie group would be trec_eval's order; ours keeps the original order.
    ranked = {q: sorted(docs, key=lambda d: (-round(docs[d]), d)) for q, docs in run.items()}
    nudged = {
        q: dict(zip(docs, strictly_decreasing([round(run[q][d]) for d in docs]))) for q, docs in ranked.items()
    }
    assert all(rank_by_score(nudged[q]) == ranked[q] for q in ranked)
    ours = evaluate_run(ranked, qrels)
    ref = _reference(qrels, nudged)
    for name in METRICS:
        assert ours[name] == pytest.approx(ref[name], abs=1e-9), name


def test_graded_gain_is_linear():
    judged = {"a": 4, "b": 1, "c": 0}
    # DCG = 1/log2(2) + 4/log2(3); ideal = 4 + 1/log2(3).
    import math

    expected = (1 + 4 / math.log2(3)) / (4 + 1 / math.log2(3))
    assert ndcg_at(["b", "a", "c"], judged, 10) == pytest.approx(expected)


def test_small_cases_by_hand():
    judged = {"a": 1, "b": 1, "z": 1}
    ranking = ["x", "a", "y", "b"]
    assert recall_at(ranking, judged, 2) == pytest.approx(1 / 3)
    assert mrr_at(ranking, judged, 10) == 0.5
    assert mrr_at(ranking, judged, 1) == 0.0
    assert ap_at(ranking, judged, 100) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert ndcg_at([], judged, 10) == 0.0
    assert ndcg_at(["a"], {"a": 0}, 10) == 0.0


def test_missing_queries_count_as_zero_and_unjudged_are_ignored():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q3": ["c"]}
    table = per_query(run, qrels)
    assert list(table) == ["q1", "q2"]
    assert table["q2"]["ndcg@10"] == 0.0
    assert evaluate_run(run, qrels)["ndcg@10"] == pytest.approx(0.5)


def test_full_support_recall_needs_every_relevant_document() -> None:
    from openbook.eval.metrics import SUPPORT_METRICS, full_support_recall_at

    judged = {"a": 1, "b": 1, "n": 0}
    assert full_support_recall_at(["a", "x", "b"], judged, 2) == 0.0
    assert full_support_recall_at(["a", "x", "b"], judged, 3) == 1.0
    assert full_support_recall_at(["n"], {"n": 0}, 5) == 0.0  # nothing relevant: never "fully supported"
    table = per_query({"q": ["b", "a"]}, {"q": judged}, tuple(SUPPORT_METRICS))
    assert table["q"] == {"full_recall@2": 1.0, "full_recall@5": 1.0, "full_recall@10": 1.0}
