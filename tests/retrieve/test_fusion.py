"""Reciprocal rank fusion: the formula of Cormack et al. (2009), weights, leg bookkeeping, ties, top_k."""

from __future__ import annotations

import pytest

from openbook.errors import QueryError
from openbook.retrieve.fusion import RRF_K, rrf, weighted_rrf
from openbook.types import Chunk, Hit


def hits(*ids: str, scores: list[float] | None = None) -> list[Hit]:
    scores = scores or [10.0 - i for i in range(len(ids))]
    return [Hit(chunk_id=c, doc_id=f"doc-{c}", score=s) for c, s in zip(ids, scores)]


def test_formula_with_k_60() -> None:
    fused = rrf({"bm25": hits("a", "b", "c"), "dense": hits("c", "a", "d")})
    got = {h.chunk_id: h.score for h in fused}
    assert RRF_K == 60
    assert got["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert got["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert got["b"] == pytest.approx(1 / 62)
    assert got["d"] == pytest.approx(1 / 63)
    assert [h.chunk_id for h in fused] == ["a", "c", "b", "d"]


def test_legs_record_rank_and_score_of_each_leg() -> None:
    fused = rrf({"bm25": hits("a", "b", scores=[7.5, 3.25]), "dense": hits("b", scores=[0.91])})
    by_id = {h.chunk_id: h for h in fused}
    assert by_id["a"].legs == {"bm25": (1, 7.5)}
    assert by_id["b"].legs == {"bm25": (2, 3.25), "dense": (1, 0.91)}
    assert by_id["b"].doc_id == "doc-b"


def test_earlier_legs_carried_by_input_hits_are_kept() -> None:
    reranked = [Hit("a", "d", 0.5, legs={"bm25": (4, 2.0)})]
    fused = rrf({"dense": reranked})
    assert fused[0].legs == {"bm25": (4, 2.0), "dense": (1, 0.5)}


def test_chunk_is_kept_from_whichever_leg_had_it() -> None:
    chunk = Chunk(chunk_id="a", doc_id="doc-a", text="body")
    fused = rrf({"bm25": [Hit("a", "doc-a", 1.0)], "dense": [Hit("a", "doc-a", 0.3, chunk=chunk)]})
    assert fused[0].chunk is chunk


def test_ties_are_broken_by_chunk_id() -> None:
    fused = rrf({"bm25": hits("z", "m"), "dense": hits("m", "z")})
    assert [h.chunk_id for h in fused] == ["m", "z"]
    assert fused[0].score == fused[1].score
    assert [h.chunk_id for h in rrf({"x": hits("q"), "y": hits("b")})] == ["b", "q"]


def test_weighted_variant() -> None:
    legs = {"bm25": hits("a", "b"), "dense": hits("b", "a")}
    fused = weighted_rrf(legs, {"bm25": 2.0, "dense": 0.5})
    got = {h.chunk_id: h.score for h in fused}
    assert got["a"] == pytest.approx(2 / 61 + 0.5 / 62)
    assert got["b"] == pytest.approx(2 / 62 + 0.5 / 61)
    assert fused[0].chunk_id == "a"
    # a weight of zero keeps the leg's bookkeeping but not its vote; weights for absent legs are ignored
    only_dense = rrf(legs, weights={"bm25": 0.0, "sparse2": 5.0})
    assert only_dense[0].chunk_id == "b" and only_dense[0].legs["bm25"] == (2, 9.0)


def test_other_k_and_top_k() -> None:
    fused = rrf({"bm25": hits("a", "b", "c")}, k=0, top_k=2)
    assert [(h.chunk_id, h.score) for h in fused] == [("a", 1.0), ("b", 0.5)]
    assert rrf({"bm25": hits("a")}, top_k=0) == []


def test_repeated_chunk_in_one_leg_counts_once_at_its_best_rank() -> None:
    fused = rrf({"bm25": hits("a", "b", "a")})
    assert fused[0].chunk_id == "a" and fused[0].score == pytest.approx(1 / 61)
    assert fused[0].legs == {"bm25": (1, 10.0)}


def test_fuses_deep_lists_not_only_the_top() -> None:
    bm25 = hits(*[f"b{i:03d}" for i in range(100)])
    dense = hits(*[f"d{i:03d}" for i in range(29)], "b030")
    fused = rrf({"bm25": bm25, "dense": dense}, top_k=10)
    assert fused[0].chunk_id == "b030"  # 31st by BM25 and 30th by dense beats every single-leg hit
    assert fused[0].legs == {"bm25": (31, bm25[30].score), "dense": (30, dense[29].score)}


def test_empty_inputs() -> None:
    assert rrf({}) == []
    assert rrf({"bm25": [], "dense": []}) == []


@pytest.mark.parametrize("kwargs", [{"k": -1}, {"top_k": -1}, {"weights": {"bm25": -1.0}},
                                    {"weights": {"bm25": float("nan")}}])
def test_bad_parameters_are_refused(kwargs: dict) -> None:
    with pytest.raises(QueryError):
        rrf({"bm25": hits("a")}, **kwargs)
