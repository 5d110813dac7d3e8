"""BEIR loading, chunk-to-document collapse and TREC run files."""

from __future__ import annotations

import pytest

from openbook.errors import EvaluationError
from openbook.eval.beir import doc_ranking, load_beir, load_qrels, read_trec_run, strictly_decreasing, write_trec_run
from openbook.eval.metrics import evaluate_run, rank_by_score
from openbook.types import Hit


def test_load_scifact(scifact_dir):
    data = load_beir(scifact_dir)
    assert data.name == "scifact"
    assert len(data.qrels) == 300
    assert sum(len(d) for d in data.qrels.values()) == 339
    assert list(data.queries) == list(data.qrels)
    assert "0" not in data.queries


def test_load_cranfield_keeps_grades(cranfield_dir):
    qrels = load_qrels(cranfield_dir / "qrels" / "test.tsv")
    assert len(qrels) == 225
    assert {g for docs in qrels.values() for g in docs.values()} == {1, 2, 3, 4}


def test_bad_folder_and_bad_qrels(tmp_path):
    with pytest.raises(EvaluationError, match="not found"):
        load_beir(tmp_path / "nope")
    (tmp_path / "corpus.jsonl").write_text("{}\n")
    with pytest.raises(EvaluationError, match="qrels"):
        load_beir(tmp_path)
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(EvaluationError, match=":2:"):
        load_beir(tmp_path)
    (tmp_path / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "q2", "text": "x"}\n')
    with pytest.raises(EvaluationError, match="missing from queries.jsonl"):
        load_beir(tmp_path)


def test_doc_ranking_keeps_each_documents_best_chunk():
    hits = [Hit("c1", "a", 5.0), Hit("c2", "b", 4.0), Hit("c3", "a", 3.0), Hit("c4", "c", 4.0), Hit("c5", "d", 1.0)]
    assert doc_ranking(hits, k=3) == [("a", 5.0), ("b", 4.0), ("c", 4.0)]


def test_strictly_decreasing_survives_float32():
    import numpy as np

    out = strictly_decreasing([3.0, 3.0, 3.0, 2.0, 2.5, 1e-3])
    assert all(a > b for a, b in zip(out, out[1:]))
    assert all(float(np.float32(x)) == x for x in out)
    assert out[0] == 3.0 and out[-1] == pytest.approx(1e-3)


def test_run_file_round_trip_keeps_order_under_trec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    # Ties whose doc ids trec_eval would order the other way round.
    run = {"q1": [("a", 2.0), ("b", 2.0), ("c", 1.0)], "q2": [("x", 0.5), ("y", 0.5)]}
    qrels = {"q1": {"a": 1}, "q2": {"y": 1}}
    path = tmp_path / "r.run"
    write_trec_run(path, run, tag="t")
    lines = path.read_text().splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "a", "1"] and lines[0].endswith(" t")
    back = read_trec_run(path)
    assert {q: rank_by_score(d) for q, d in back.items()} == {q: [d for d, _ in r] for q, r in run.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(back)
    ours = evaluate_run({q: [d for d, _ in r] for q, r in run.items()}, qrels, ["mrr@10"])
    assert ours["mrr@10"] == pytest.approx((ref["q1"]["recip_rank"] + ref["q2"]["recip_rank"]) / 2)
    assert ref["q1"]["recip_rank"] == 1.0 and ref["q2"]["recip_rank"] == 0.5


def test_a_malformed_query_line_skips_only_that_query_and_is_reported(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n', encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": \n{"_id": "q3", "text": "third"}\n', encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\nq3\td1\t1\n",
                                                 encoding="utf-8")
    data = load_beir(tmp_path)
    assert list(data.queries) == ["q1", "q3"] and list(data.qrels) == ["q1", "q3"]
    assert len(data.warnings) == 2
    assert "queries.jsonl:2:" in data.warnings[0] and "1 judged queries left out" in data.warnings[1]
