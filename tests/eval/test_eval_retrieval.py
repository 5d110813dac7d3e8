"""Retrieval reports: baseline comparison, latency summary and the human table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from openbook.errors import EvaluationError
from openbook.eval.retrieval import (
    RetrievalReport,
    compare_to_baseline,
    format_retrieval_report,
    latency_summary,
    load_baseline,
)

METRICS = {"ndcg@10": 0.68, "recall@10": 0.80, "recall@100": 0.92, "mrr@10": 0.64, "map@100": 0.63}


def _report(**kw) -> RetrievalReport:
    base = dict(dataset="scifact", dataset_path="/d", mode="bm25", queries=300, metrics=dict(METRICS),
                latency_ms={"p50": 1.0, "p95": 2.0, "mean": 1.2}, ingest_s=3.0, chunks=5200,
                run_file="r.run", report_file="r.json")
    base.update(kw)
    return RetrievalReport(**base)


def test_baseline_within_tolerance_passes_and_a_drop_fails():
    base = dict(METRICS)
    now = dict(METRICS, **{"ndcg@10": 0.676, "mrr@10": 0.63})
    deltas, regressions = compare_to_baseline(now, base, tolerance=0.005)
    assert deltas["ndcg@10"] == pytest.approx(-0.004)
    assert regressions == ["mrr@10"]
    assert compare_to_baseline(now, base, tolerance=0.02)[1] == []


def test_load_baseline_reads_reports_and_flat_files(tmp_path):
    report = _report()
    (tmp_path / "a.json").write_text(json.dumps(report.to_dict()))
    assert load_baseline(tmp_path / "a.json") == METRICS
    (tmp_path / "b.json").write_text(json.dumps({"ndcg@10": 0.5}))
    assert load_baseline(tmp_path / "b.json") == {"ndcg@10": 0.5}
    (tmp_path / "c.json").write_text("{not json")
    with pytest.raises(EvaluationError, match="not valid JSON"):
        load_baseline(tmp_path / "c.json")
    (tmp_path / "d.json").write_text('{"metrics": {"p@5": 1}}')
    with pytest.raises(EvaluationError, match="none of the metrics"):
        load_baseline(tmp_path / "d.json")
    with pytest.raises(EvaluationError, match="not found"):
        load_baseline(tmp_path / "missing.json")


def test_latency_summary():
    s = latency_summary([float(i) for i in range(1, 101)])
    assert s["p50"] == pytest.approx(50.5) and s["p95"] == pytest.approx(95.05) and s["mean"] == 50.5
    assert latency_summary([]) == {"p50": 0.0, "p95": 0.0, "mean": 0.0}


def test_format_shows_deltas_and_verdict():
    report = _report(baseline="b.json", deltas={"ndcg@10": -0.01}, regressions=["ndcg@10"])
    text = format_retrieval_report(report)
    assert re.search(r"ndcg@10 +0\.6800 +-0\.0100  REGRESSION", text)
    assert "FAILED: ndcg@10" in text and not report.ok
    assert "p50 1.00 ms" in format_retrieval_report(_report())


@pytest.mark.slow
def test_scifact_end_to_end_matches_trec_eval_and_baseline(scifact_dir, tmp_path):
    """The engine's SciFact run scored by us equals pytrec_eval on the written run file, to 4 decimals."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from openbook.config import Config

    BM25_ONLY = Config().with_overrides({"embedding.enabled": False})  # embedding SciFact: ~50 min on 2 cores
    from openbook.eval.beir import load_qrels, read_trec_run
    from openbook.eval.retrieval import run_retrieval_eval

    store, out = tmp_path / "store", tmp_path / "out"
    report = run_retrieval_eval(scifact_dir, store, BM25_ONLY, None, out, None, 0.005)
    assert report.queries == 300 and report.mode == "bm25" and report.ok
    assert 0.64 < report.metrics["ndcg@10"] < 0.72  # published BM25: 0.665 (BEIR) - 0.679 (Pyserini)
    assert report.latency_ms["p50"] > 0

    run = read_trec_run(Path(report.run_file))
    assert len(run) == 300 and all(len(docs) <= 100 for docs in run.values())
    for line_block in _ranked_lines(Path(report.run_file)).values():
        scores = [s for _, s in line_block]
        assert all(a > b for a, b in zip(scores, scores[1:]))  # strictly decreasing by rank
    qrels = load_qrels(scifact_dir / "qrels" / "test.tsv")
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10,100", "map_cut.100"}).evaluate(run)
    cut = {q: dict(sorted(d.items(), key=lambda x: x[1], reverse=True)[:10]) for q, d in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)

    def mean(table, key):
        return sum(table.get(q, {}).get(key, 0.0) for q in qrels) / len(qrels)

    reference = {"ndcg@10": mean(ev, "ndcg_cut_10"), "recall@10": mean(ev, "recall_10"),
                 "recall@100": mean(ev, "recall_100"), "map@100": mean(ev, "map_cut_100"),
                 "mrr@10": mean(rr, "recip_rank")}
    for name, value in reference.items():
        assert round(report.metrics[name], 4) == round(value, 4), name

    saved = json.loads(Path(report.report_file).read_text())
    assert saved["metrics"] == report.metrics

    # The named store is reused, and an equal baseline passes; a better baseline fails.
    again = run_retrieval_eval(scifact_dir, store, BM25_ONLY, "bm25", out, Path(report.report_file), 0.005)
    assert again.ok and again.deltas["ndcg@10"] == pytest.approx(0.0, abs=1e-12)
    better = tmp_path / "better.json"
    better.write_text(json.dumps({"metrics": dict(report.metrics, **{"ndcg@10": report.metrics["ndcg@10"] + 0.01})}))
    worse = run_retrieval_eval(scifact_dir, store, BM25_ONLY, "bm25", out, better, 0.005)
    assert worse.regressions == ["ndcg@10"] and not worse.ok


def _ranked_lines(path: Path) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        out.setdefault(qid, []).append((doc, float(score)))
    return out


def test_bm25_evaluation_embeds_nothing(tmp_path):
    """``--mode bm25`` with embeddings enabled in the configuration computes no vectors."""
    from openbook.api import Engine
    from openbook.config import Config
    from openbook.eval.retrieval import run_retrieval_eval

    data = tmp_path / "tiny"
    (data / "qrels").mkdir(parents=True)
    docs = {"d1": "Zebras have black and white stripes.", "d2": "Kilns fire pottery at high heat.",
            "d3": "Glaze melts into glass on the pot."}
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n"
                                               for k, v in docs.items()))
    (data / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "zebra stripes"}) + "\n"
                                        + json.dumps({"_id": "q2", "text": "kiln heat"}) + "\n")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    store = tmp_path / "store"
    config = Config().with_overrides({"embedding.enabled": True})
    with open(data / "corpus.jsonl", "a") as fh:
        fh.write(json.dumps({"_id": "d4", "title": "", "text": ""}) + "\n")  # nothing to index: said, not hidden
    report = run_retrieval_eval(data, store, config, "bm25", tmp_path / "out")
    assert report.mode == "bm25" and report.metrics["ndcg@10"] == 1.0
    assert report.ingest_notes == ["1 documents with no text to index (not stored)"]
    assert "no text to index" in format_retrieval_report(report)
    with Engine.open(store, config) as engine:
        assert not engine.has_embeddings
