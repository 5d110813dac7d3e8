"""Vector precision (``IndexSettings.vector_precision``) on both store backends: a real store written at each
precision, reopened, searched and compared with exact float32 cosine search over the stored vectors.

The corpus is SciFact's first documents and its real queries; the vectors are a random-indexing embedding of
their analyzed terms (each term a fixed random 384-dimensional direction, a text the normalised sum of its terms'),
so texts sharing terms are neighbours: the store, not the embedder, is under test, and the vectors are dense (every
sign bit carries information, as a learned embedding's do).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
import numpy as np
import pytest

from openbook.config import load_config
from openbook.errors import ConfigError, StoreError
from openbook.index.analyzer import Analyzer
from openbook.index.dense import VectorIndex
from openbook.store import IndexSettings, Store, Visibility, open_store
from openbook.types import Chunk, Document, make_chunk_id

ANALYZER = Analyzer()
DIM = 384
N_DOCS = 160


class RandomIndexingVectors:
    """A ``VectorSource``: the normalised sum of one fixed random direction per analyzed term (random indexing,
    Kanerva et al. 2000)."""

    name = "random-indexing-384"
    normalized = True
    dim = DIM

    def __init__(self) -> None:
        self._terms: dict[str, np.ndarray] = {}

    def _term(self, term: str) -> np.ndarray:
        if term not in self._terms:
            seed = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")
            self._terms[term] = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
        return self._terms[term]

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), np.float32)
        for i, text in enumerate(texts):
            for term in ANALYZER.analyze_document(text):
                out[i] += self._term(term)
        return (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def _scifact(shared: Path) -> tuple[list[Document], list[str]]:
    docs = []
    with open(shared / "datasets" / "scifact" / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= N_DOCS:
                break
            row = json.loads(line)
            docs.append(Document(doc_id=row["_id"], text=row["text"], title=row["title"], source=f"/c/{row['_id']}",
                                 format="beir", metadata={"lab": ["north", "south"][i % 2]}))
    with open(shared / "datasets" / "scifact" / "queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line, _ in zip(fh, range(40))]
    return docs, queries


def _chunks(doc: Document) -> list[Chunk]:
    """Two chunks per document (its halves by sentence)."""
    cut = doc.text.find(". ", len(doc.text) // 2)
    parts = [doc.text] if cut < 0 else [doc.text[: cut + 1], doc.text[cut + 2:]]
    return [Chunk(chunk_id=make_chunk_id(doc.doc_id, p), doc_id=doc.doc_id, text=p, title=doc.title,
                  metadata=doc.metadata) for p in parts if p.strip()]


def _write(store: Store, docs: list[Document]) -> list[Chunk]:
    chunks = [c for d in docs for c in _chunks(d)]
    with store.write_lock():
        with store.transaction():
            for d in docs:
                store.put_document(d, "/c", _chunks(d), d.content_hash)
            store.put_index((), chunks, [ANALYZER.analyze_document(c.indexed_text()) for c in chunks],
                              embedder=RandomIndexingVectors())
    return chunks


def _settings(precision: str = "", ann_threshold: int = 0) -> IndexSettings:
    return IndexSettings(analyzer=ANALYZER.settings(), ann_threshold=ann_threshold, vector_precision=precision)


def _open(location: str, settings: IndexSettings) -> Store:
    store = open_store(location, create=True)
    store.configure(settings)
    return store


@pytest.fixture(scope="module")
def corpus(shared) -> tuple[list[Document], np.ndarray]:
    docs, queries = _scifact(shared)
    return docs, RandomIndexingVectors().embed_passages(queries)


@pytest.fixture
def embedded_location(tmp_path: Path) -> str:
    return str(tmp_path / "store")


@pytest.fixture
def location(request) -> str:
    return request.getfixturevalue(request.param)


def _recall_against_exact(store: Store, chunks: list[Chunk], queries: np.ndarray, k: int = 10,
                          visibility: Visibility = Visibility()) -> float:
    """recall@k of ``vector_top_k`` against exact float32 cosine over the stored vectors; the scores of the hits
    found must be those exact cosines (candidates are rescored with the float32 vectors)."""
    ids = [c.chunk_id for c in chunks]
    matrix = store.get_vectors(ids)
    exact = queries @ matrix.T
    meta = store.get_document_metadata()
    allowed = np.array([visibility.allows(c.doc_id, meta[c.doc_id]) for c in chunks])
    exact[:, ~allowed] = -np.inf
    found = 0
    for qi, hits in enumerate(store.vector_top_k(queries, k, visibility)):
        assert len(hits) == k
        want = {ids[j] for j in np.argsort(-exact[qi], kind="stable")[:k]}
        found += len(want & {h.chunk_id for h in hits})
        for h in hits:
            assert h.score == pytest.approx(float(exact[qi, ids.index(h.chunk_id)]), abs=2e-4)
    return found / (k * len(queries))


CASES = [("embedded_location", "f16"), ("embedded_location", "int8"), ("embedded_location", "binary"),
         ("postgresql_location", "f16"), ("postgresql_location", "binary")]


@pytest.mark.parametrize("location, precision", CASES, indirect=["location"],
                         ids=[f"{b.removesuffix('_location')}-{p}" for b, p in CASES])
def test_a_store_written_at_a_precision_keeps_it_and_finds_the_exact_neighbours(location, precision, corpus):
    docs, queries = corpus
    store = _open(location, _settings(precision))
    try:
        chunks = _write(store, docs[:120])
        assert store.get_embedding().precision == precision and store.get_embedding().ann
    finally:
        store.close()
    # a reopened store, configured without a precision, knows its own and keeps it through a later ingest
    store = _open(location, _settings())
    try:
        assert store.get_embedding().precision == precision
        chunks += _write(store, docs[120:])
        info = store.get_embedding()
        assert info.precision == precision and info.ann
        assert _recall_against_exact(store, chunks, queries) >= 0.95
        assert _recall_against_exact(store, chunks, queries, visibility=Visibility.of(where=["lab=north"])) >= 0.95
    finally:
        store.close()


@pytest.mark.parametrize("precision", ["f16", "int8", "binary"])
def test_embedded_exact_search_scans_the_codes_and_rescores(embedded_location, precision, corpus):
    # below ann_threshold the embedded store scans the quantized codes and rescores the best with float32
    docs, queries = corpus
    store = _open(embedded_location, _settings(precision, ann_threshold=10**9))
    try:
        chunks = _write(store, docs)
        assert store.get_embedding().precision == precision and not store.get_embedding().ann
        dense = store.loaded().dense
        assert dense.precision == precision
        assert _recall_against_exact(store, chunks, queries) >= 0.95
    finally:
        store.close()
    files = {p.name for p in Path(embedded_location).glob("gen-*/dense/*")}
    assert "vectors.npy" in files and any(name.startswith("codes.") for name in files)


def test_quantized_recall_is_high_on_a_clustered_set_and_scans_fewer_bytes():
    # 20,000 clustered unit vectors: every precision's rescored search finds the exact top 10 (or nearly)
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((200, DIM)).astype(np.float32)
    data = centres[rng.integers(0, 200, 20_100)] + 1.5 * rng.standard_normal((20_100, DIM)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    queries, data = data[:100], data[100:]
    exact = VectorIndex.build(data, model="m", normalized=True, ann_threshold=10**9)
    want, _ = exact.search_batch(queries, 10)
    for precision, floor, ratio in [("f16", 0.999, 2), ("int8", 0.99, 4), ("binary", 0.95, 32)]:
        index = VectorIndex.build(data, model="m", normalized=True, ann_threshold=10**9, precision=precision)
        got, _ = index.search_batch(queries, 10)
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, want)])
        assert recall >= floor, (precision, recall)
        assert index._codes[0].nbytes * ratio == data.nbytes


def test_another_precision_re_indexes_the_store(embedded_location, postgresql_location, corpus):
    docs, queries = corpus
    for location, first, then in [(embedded_location, "int8", "f32"), (postgresql_location, "binary", "f16")]:
        store = _open(location, _settings(first))
        try:
            _write(store, docs[:80])
        finally:
            store.close()
        store = _open(location, _settings(then))
        try:
            chunks = _write(store, docs[80:])
            assert store.get_embedding().precision == then and store.get_embedding().ann
            if store.backend == "postgresql":
                definition = store.conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = "
                                                "'index_rows_hnsw'").fetchone()[0]
                assert "halfvec_cosine_ops" in definition
            assert _recall_against_exact(store, store_chunks(store, chunks), queries) >= 0.95
        finally:
            store.close()


def store_chunks(store: Store, later: list[Chunk]) -> list[Chunk]:
    """Every indexed chunk (the earlier ingest's too) as ``Chunk`` values, in index order."""
    ids = store.get_indexed_chunk_ids() if hasattr(store, "get_indexed_chunk_ids") else None
    if ids is None:
        ids = [r[0] for r in store.conn.execute("SELECT chunk_id FROM index_rows ORDER BY row").fetchall()]
    found = store.get_chunks(ids)
    return [found[c] for c in ids]


def test_postgresql_graph_is_built_on_the_quantized_expression_and_used(postgresql_location, corpus):
    docs, queries = corpus
    store = _open(postgresql_location, _settings("binary"))
    try:
        _write(store, docs)
        definition = store.conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'index_rows_hnsw'"
                                        ).fetchone()[0]
        assert "binary_quantize" in definition and "bit_hamming_ops" in definition
        # the codes are taken about the vectors' mean, recorded for the queries
        centre = store._graph_centre(-1)
        mean = np.mean(store.get_vectors([c.chunk_id for c in store_chunks(store, [])]), axis=0)
        np.testing.assert_allclose(np.array(json.loads(centre)), mean, atol=1e-5)
        # the search's ORDER BY matches the index expression, so the planner can scan the graph
        from openbook.store.postgres import _graph_operand

        graph = _graph_operand("binary", DIM, "r.embedding", with_ops=False, centre=centre)
        probe = _graph_operand("binary", DIM, "%s::vector", with_ops=False, centre=centre)
        with store.conn.transaction():
            store.conn.execute("SET LOCAL enable_seqscan = off")
            plan = "\n".join(r[0] for r in store.conn.execute(
                f"EXPLAIN SELECT r.row FROM openbook.index_rows r WHERE r.embedding IS NOT NULL ORDER BY "
                f"{graph} <~> {probe} LIMIT 100", (queries[0],)).fetchall())
        assert "index_rows_hnsw" in plan
    finally:
        store.close()


def test_int8_on_postgresql_is_refused_with_the_choices(postgresql_location, corpus):
    docs, _ = corpus
    store = _open(postgresql_location, _settings("int8"))
    try:
        with pytest.raises(StoreError, match="pgvector has no int8 type.*f32, f16, binary"):
            _write(store, docs[:5])
        assert store.count_stored() == (0, 0)  # nothing half-written
    finally:
        store.close()


def test_an_unknown_precision_is_a_config_error_naming_the_choices(tmp_path):
    with pytest.raises(ConfigError, match="vector_precision: 'int4' is not one of f32, f16, int8, binary"):
        load_config(flags={"embedding.vector_precision": "int4"})
    (tmp_path / "openbook.toml").write_text('[embedding]\nvector_precision = "binary"\n', encoding="utf-8")
    assert load_config(tmp_path / "openbook.toml").embedding.vector_precision == "binary"


def test_cli_ingest_records_the_precision(tmp_path):
    from click.testing import CliRunner

    from openbook.cli import cli

    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(["Ribosomes translate messenger RNA into proteins.",
                              "Mitochondria make most of the cell's ATP.",
                              "Chloroplasts capture light energy in plants."]):
        (folder / f"d{i}.md").write_text(f"# Note {i}\n\n{text}\n", encoding="utf-8")
    store = tmp_path / "store"
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", str(folder), "--store", str(store), "--vector-precision", "int8",
                                 "--json"])
    assert result.exit_code == 0, result.output
    reopened = open_store(store)
    try:
        assert reopened.get_embedding().precision == "int8"
    finally:
        reopened.close()
    result = runner.invoke(cli, ["ingest", str(folder), "--store", str(store), "--vector-precision", "int4"])
    assert result.exit_code != 0 and "int4" in result.output
    # another precision on the same, unchanged files: the vectors are re-indexed, not re-embedded
    result = runner.invoke(cli, ["ingest", str(folder), "--store", str(store), "--vector-precision", "binary",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert len(report["unchanged"]) == 3 and report["chunks_embedded"] == 0
    reopened = open_store(store)
    try:
        assert reopened.get_embedding().precision == "binary" and reopened.get_embedding().pending == 0
    finally:
        reopened.close()


@pytest.mark.parametrize("precision", ["f32", "int8", "binary"])
def test_one_query_through_the_hnsw_graph(precision):
    # a single query comes back from usearch as ``Matches``, a batch as ``BatchMatches``: both are read
    data = np.random.default_rng(4).standard_normal((600, DIM)).astype(np.float32)
    index = VectorIndex.build(data, model="m", normalized=True, ann_threshold=0, precision=precision)
    assert index.uses_ann
    one, _ = index.search_batch(data[7], 10)
    batch, _ = index.search_batch(data[6:8], 10)
    assert one.shape == (1, 10) and one[0, 0] == 7 and one[0].tolist() == batch[1].tolist()


def test_a_copy_keeps_the_source_precision(tmp_path, postgresql_location, corpus):
    from openbook.store.copy import copy_store

    docs, queries = corpus
    source = _open(str(tmp_path / "src"), _settings("binary"))
    try:
        _write(source, docs[:60])
        for location in (str(tmp_path / "dst"), postgresql_location):
            target = open_store(location, create=True)
            try:
                copy_store(source, target)
                assert target.get_embedding().precision == "binary"
                hits = target.vector_top_k(queries[:3], 5, Visibility())
                assert [[h.chunk_id for h in hs] for hs in hits] == \
                    [[h.chunk_id for h in hs] for hs in source.vector_top_k(queries[:3], 5, Visibility())]
            finally:
                target.close()
    finally:
        source.close()


def test_binary_codes_are_centred_so_a_shared_direction_does_not_drown_the_bits():
    # learned embeddings share a common direction; the sign bits are taken about the rows' mean
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((100, DIM)).astype(np.float32)
    data = centres[rng.integers(0, 100, 5_050)] + rng.standard_normal((5_050, DIM)).astype(np.float32)
    data += 4.0 * rng.standard_normal(DIM).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    queries, data = data[:50], data[50:]
    want, _ = VectorIndex.build(data, model="m", normalized=True, ann_threshold=10**9).search_batch(queries, 10)
    index = VectorIndex.build(data, model="m", normalized=True, ann_threshold=10**9, precision="binary")
    got, _ = index.search_batch(queries, 10)
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, want)]) >= 0.9
    def agreement(bits: np.ndarray) -> float:  # share of equal bits between rows, over 200 pairs
        u = np.unpackbits(bits[:400], axis=1)
        return float((u[:200] == u[200:]).mean())

    assert agreement(np.packbits(data > 0, axis=1)) > 0.8 > 0.6 > agreement(index._codes[0])
