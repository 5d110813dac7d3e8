"""Retrieval reports: baseline comparison, latency summary and the human table."""

from __future__ import annotations

import json

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
    assert "ndcg@10      0.6800  -0.0100  REGRESSION" in text
    assert "FAILED: ndcg@10" in text and not report.ok
    assert "p50 1.00 ms" in format_retrieval_report(_report())
