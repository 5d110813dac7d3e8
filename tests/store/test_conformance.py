"""The ``Store`` protocol's conformance suite: every backend runs every test here.

A backend joins by appending the name of one pytest fixture to ``BACKENDS``: the fixture (defined here or in a
``conftest.py``; it may depend on others, e.g. a session-scoped server) returns the location of a fresh, empty
store (a folder, or a URL such as ``postgresql://user@127.0.0.1:5432/db_for_this_test``) that
``openbook.store.open_store(location, create=True)`` opens; several handles on one location must see one store.
Test ids are the fixture names without ``_location``.

The corpus is real: the first documents of SciFact (BEIR), chunked and analyzed by openbook's own chunker and
analyzer, with access and metadata fields assigned by position so that every kind of ``--where`` clause and
``acl`` shape occurs. Rankings are checked against a brute-force reference (BM25 as in Lucene's BM25Similarity:
Robertson et al. with Lucene idf; cosine similarity for vectors) computed here in float64.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from collections import Counter
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from openbook.chunking import chunk_document
from openbook.config import ChunkingConfig
from openbook.errors import ConfigError, StoreError
from openbook.index.analyzer import Analyzer
from openbook.store import (IndexSettings, LocalIndex, Store, Visibility, open_store, require_local_index,
                            weighted_terms)
from openbook.store.base import ROLES, protocol_members
from openbook.types import Chunk, Document

SCIFACT = (Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "scifact").resolve()
N_DOCS = 120
K1, B = 1.2, 0.75


@pytest.fixture
def embedded_location(tmp_path: Path) -> str:
    """A fresh embedded store: a folder that does not exist yet."""
    return str(tmp_path / "store")


BACKENDS: list[str] = ["embedded_location", "postgresql_location"]
"""One fixture name per backend; each fixture returns the location of a fresh store. Append yours."""

ANALYZER = Analyzer()
SETTINGS = IndexSettings(k1=K1, b=B, analyzer=ANALYZER.settings(), chunking={}, ann_threshold=200_000)


# ---------------------------------------------------------------------- the corpus
def _metadata(i: int) -> dict:
    meta: dict = {"updated": f"202{i % 5}-0{1 + i % 9}-15", "year": 2000 + i % 25}
    if i % 3 == 0:
        meta["status"] = "archived"
    elif i % 3 == 1:
        meta["status"] = "current"  # i % 3 == 2: no status at all
    if i % 4 == 0:
        meta["tags"] = ["biology", "cells"] if i % 8 == 0 else ["clinical"]
    if i % 5 == 0:
        meta["acl"] = ["staff", "Finance"]
    elif i % 7 == 0:
        meta["acl"] = "legal"  # a single role as a string
    return meta


def _load_corpus() -> list[Document]:
    docs = []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= N_DOCS:
                break
            row = json.loads(line)
            docs.append(Document(doc_id=f"scifact/{row['_id']}", text=row["text"], title=row["title"],
                                 source=f"/corpus/{row['_id']}.json", format="beir", metadata=_metadata(i)))
    return docs


@pytest.fixture(scope="module")
def corpus() -> list[tuple[Document, list[Chunk], list[list[str]]]]:
    out = []
    for doc in _load_corpus():
        chunks = chunk_document(doc, ChunkingConfig())
        out.append((doc, chunks, [ANALYZER.analyze_document(c.indexed_text()) for c in chunks]))
    return out


@pytest.fixture(scope="module")
def queries() -> list[list[tuple[str, float]]]:
    texts = []
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            texts.append(json.loads(line)["text"])
            if len(texts) == 25:
                break
    out = [weighted_terms(ANALYZER.analyze(t)) for t in texts]
    out.append(weighted_terms(ANALYZER.analyze("cells cells cells therapy")))  # a repeated term weighs 3.0
    out.append(weighted_terms([*ANALYZER.analyze("protein"), ("cancer", 0.5)]))  # an expansion's weight
    out.append(weighted_terms(["zzzunknownzzz"]))  # no indexed term: no hits
    return out


class HashingVectors:
    """A deterministic ``VectorSource`` from the text itself (hashed analyzer terms, 48 dimensions): the store is
    tested on storing, keeping and ranking the vectors it is given; which embedder made them does not matter."""

    name = "hashing-48"
    normalized = True
    dim = 48

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.calls.extend(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for term in ANALYZER.analyze_document(text):
                h = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return (out / norms).astype(np.float32)


@pytest.fixture(params=BACKENDS, ids=lambda name: name.removesuffix("_location"))
def location(request) -> str:
    return request.getfixturevalue(request.param)


def _open(location: str) -> Store:
    store = open_store(location, create=True)
    store.configure(SETTINGS)
    return store


@pytest.fixture
def store(location) -> Iterator[Store]:
    s = _open(location)
    yield s
    s.close()


def write(store: Store, items, embedder=None, removed=(), reuse=()) -> int:
    """Put documents and index their chunks in one transaction, as ingest does."""
    with store.write_lock(), store.transaction():
        for doc, chunks, _ in items:
            store.put_document(doc, "/corpus", chunks, doc.content_hash)
        return store.put_index(set(removed), [c for _, cs, _ in items for c in cs],
                                 [t for _, _, ts in items for t in ts], reuse=reuse, embedder=embedder)


@pytest.fixture
def filled(store, corpus) -> Store:
    write(store, corpus, embedder=HashingVectors())
    return store


# ---------------------------------------------------------------------- references
_TABLES: dict[int, tuple] = {}


def _table(corpus) -> tuple:
    """(rows, avgdl, df, chunks, vectors) of the corpus, computed once."""
    if id(corpus) not in _TABLES:
        rows = [(c.chunk_id, c.doc_id, Counter(t), len(t)) for _, cs, ts in corpus for c, t in zip(cs, ts)]
        chunks = [c for _, cs, _ in corpus for c in cs]
        vecs = HashingVectors().embed_passages([c.indexed_text() for c in chunks]).astype(np.float64)
        _TABLES[id(corpus)] = (rows, sum(r[3] for r in rows) / len(rows),
                               Counter(term for r in rows for term in r[2]), chunks, vecs)
    return _TABLES[id(corpus)]


def bm25_reference(corpus, query: list[tuple[str, float]], allowed: set[str],
                   counted: set[str] | None = None) -> dict[str, float]:
    """Lucene BM25 of every allowed chunk with a positive score, float64 (Robertson et al.; Lucene idf), with
    ``avgdl`` over the chunks and ``N``, ``df`` over the documents (a document holds a term when one of its chunks
    does) of the ``counted`` documents (None: every document)."""
    rows, avgdl = _table(corpus)[:2]
    if counted is not None:
        rows = [r for r in rows if r[1] in counted]
        avgdl = sum(r[3] for r in rows) / len(rows)
    terms_of: dict[str, set[str]] = {}
    for _, doc_id, tf, _ in rows:
        terms_of.setdefault(doc_id, set()).update(tf)
    df = Counter(term for terms in terms_of.values() for term in terms)
    n = len(terms_of)
    out = {}
    for chunk_id, doc_id, tf, dl in rows:
        if doc_id not in allowed:
            continue
        score = 0.0
        for term, w in query:
            if term in tf:
                idf = math.log1p((n - df[term] + 0.5) / (df[term] + 0.5))
                score += w * idf * tf[term] / (tf[term] + K1 * (1 - B + B * dl / avgdl))
        if score > 0:
            out[chunk_id] = score
    return out


def assert_top_k(hits, reference: dict[str, float], k: int, leg: str, rtol: float) -> None:
    """``hits`` are a correct top ``k`` of ``reference`` (chunk id -> score) up to ties and float32 rounding."""
    assert len(hits) == min(k, len(reference))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for rank, h in enumerate(hits, start=1):
        assert h.chunk_id in reference, f"{h.chunk_id} must not be returned"
        assert h.score == pytest.approx(reference[h.chunk_id], rel=rtol, abs=1e-6)
        assert h.legs[leg][0] == rank and h.legs[leg][1] == pytest.approx(h.score) and h.chunk is None
    if hits:
        best_left_out = max((s for c, s in reference.items() if c not in {h.chunk_id for h in hits}), default=-9)
        assert best_left_out <= hits[-1].score * (1 + rtol) + 1e-6


def visible_docs(store: Store, visibility: Visibility) -> set[str]:
    fields = store.get_document_metadata()
    return {d for d, f in fields.items() if visibility.allows(d, f)}


VISIBILITIES = [
    Visibility(),
    Visibility.of(roles=["staff"]),
    Visibility.of(roles=["LEGAL"]),  # roles compare case-insensitively; "legal" is a one-string acl
    Visibility.of(roles=["finance", "legal"]),
    Visibility.of(where=["status!=archived"]),  # a document without status passes a negative clause
    Visibility.of(where=["status=current"], roles=["staff"]),
    Visibility.of(where=["tags in [cells]"]),
    Visibility.of(where=["tags not in [clinical]"]),
    Visibility.of(where=["updated>=2023-01-01", "year<2015"]),
    Visibility.of(where=["format=beir", "title!=nothing"]),  # builtin document fields
    Visibility.of(where=["nosuchfield=1"]),  # matches nothing
    Visibility.of(exclude_docs=["scifact/4983"]),
]


# ---------------------------------------------------------------------- the roles
def test_store_is_exactly_its_roles():
    """``Store`` adds nothing to its roles, and no member belongs to two roles (each has one home)."""
    members = [protocol_members(role) for role in ROLES]
    assert set().union(*members) == protocol_members(Store)
    assert sum(map(len, members)) == len(protocol_members(Store))
    assert {"bm25_top_k", "vector_top_k", "put_index", "get_documents", "begin", "configure"} <= protocol_members(Store)


@pytest.mark.parametrize("role", ROLES, ids=lambda role: role.__name__)
def test_the_backend_provides_every_member_of_each_role(store, role):
    """Every attribute and method of each role protocol exists on the backend, methods with the protocol's
    parameter names in its order (so keyword callers work); a failure names the role and what is missing."""
    missing = sorted(m for m in protocol_members(role) if not hasattr(store, m))
    assert not missing, f"{type(store).__name__} lacks {role.__name__} members: {', '.join(missing)}"
    for name in sorted(protocol_members(role)):
        wanted = getattr(role, name, None)
        if not inspect.isfunction(wanted):
            continue  # an attribute or a property: presence is what the protocol asks
        got = getattr(store, name)
        assert callable(got), f"{type(store).__name__}.{name} must be a method ({role.__name__})"
        want_params = list(inspect.signature(wanted).parameters)[1:]  # without self
        assert list(inspect.signature(got).parameters) == want_params, \
            f"{type(store).__name__}.{name} takes {inspect.signature(got)}, {role.__name__} says {want_params}"
    assert isinstance(store, role) and isinstance(store, Store)


# ---------------------------------------------------------------------- documents, chunks, metadata, versions
def test_documents_and_chunks_round_trip(store, corpus):
    write(store, corpus[:5])
    doc, chunks, _ = corpus[0]
    assert store.get_document(doc.doc_id) == Document(doc.doc_id, doc.text, doc.title, doc.source, doc.format,
                                                      dict(doc.metadata))
    assert store.get_document("nope") is None
    got = store.get_chunks([c.chunk_id for c in chunks] + ["nope"])
    assert set(got) == {c.chunk_id for c in chunks}
    for c in chunks:
        g = got[c.chunk_id]
        assert (g.text, g.doc_id, g.headings, g.start, g.end, g.page) == (c.text, c.doc_id, c.headings, c.start,
                                                                          c.end, c.page)
        assert g.title == doc.title and dict(g.metadata) == dict(doc.metadata)
    assert [c.chunk_id for c in store.get_document_chunks(doc.doc_id)] == [c.chunk_id for c in chunks]
    stored = store.get_documents()
    assert set(stored) == {d.doc_id for d, _, _ in corpus[:5]}
    assert stored[doc.doc_id].content_hash == doc.content_hash and stored[doc.doc_id].root == "/corpus"
    assert store.count_stored() == (5, sum(len(cs) for _, cs, _ in corpus[:5]))
    rows = store.get_document_rows()
    assert [r[0] for r in rows] == sorted(stored) and rows[0][4] == len(store.get_document_chunks(rows[0][0]))
    assert store.get_sources()[doc.source] == [doc.doc_id]
    fields = store.get_document_metadata()[doc.doc_id]
    assert fields["doc_id"] == doc.doc_id and fields["format"] == "beir" and fields["path"] == doc.source
    assert fields["acl"] == ["staff", "Finance"] and fields["status"] == "archived"
    assert {"doc_id", "title", "format", "path", "status", "acl", "updated"} <= store.get_metadata_fields()
    assert store.get_chunk_ids([doc.doc_id]) == {c.chunk_id for c in chunks}
    with store.write_lock(), store.transaction():
        store.delete_documents([doc.doc_id, "nope"])
    assert store.get_document(doc.doc_id) is None and store.get_document_chunks(doc.doc_id) == []
    assert store.count_stored()[0] == 4


MARKDOWN = ("# Plans\n\nEvery plan has limits.\n\n| Plan | Limit |\n| --- | --- |\n| basic | 10 \\| 20 |\n\n"
            "## Install\n\n1. Run:\n\n   ~~~sh\n   make install\n   ~~~\n\n> ```\n> quoted, never closed\n")


def test_a_chunks_markdown_blocks_round_trip(store, corpus):
    """``Chunk.blocks`` comes back as written, every field (a table row's header and cells, a fence's info, an
    unclosed quoted fence); a chunk without blocks (other loaders' text) comes back without; replacing the
    document replaces its chunks' blocks, and deleting it deletes them."""
    doc = Document("guide.md", MARKDOWN, "Plans", "/corpus/guide.md", "markdown")
    chunks = chunk_document(doc, ChunkingConfig())
    assert any(b.kind == "table_row" and b.header for c in chunks for b in c.blocks)
    assert any(b.kind == "code" and b.info == "sh" for c in chunks for b in c.blocks)
    assert any(b.kind == "code" and b.quoted and not b.closed for c in chunks for b in c.blocks)
    item = (doc, chunks, [ANALYZER.analyze_document(c.indexed_text()) for c in chunks])
    write(store, [item, corpus[0]])
    got = store.get_chunks([c.chunk_id for c in chunks] + [c.chunk_id for c in corpus[0][1]])
    assert [got[c.chunk_id].blocks for c in chunks] == [c.blocks for c in chunks]
    assert [c.blocks for c in store.get_document_chunks(doc.doc_id)] == [c.blocks for c in chunks]
    assert all(got[c.chunk_id].blocks == () for c in corpus[0][1])  # a BEIR text: no blocks
    plain = Document("guide.md", "Plain words only, no table and no code.", "Plans", "/corpus/guide.md", "markdown")
    (bare,) = [c for c in chunk_document(plain, ChunkingConfig())]
    bare = Chunk(bare.chunk_id, bare.doc_id, bare.text, bare.title, start=bare.start, end=bare.end)  # no blocks
    with store.write_lock(), store.transaction():
        store.put_document(plain, "/corpus", [bare], plain.content_hash)
        store.put_index({c.chunk_id for c in chunks}, [bare], [ANALYZER.analyze_document(bare.indexed_text())])
    assert store.get_chunks([bare.chunk_id])[bare.chunk_id].blocks == ()
    assert store.get_chunks([c.chunk_id for c in chunks]) == {}
    with store.write_lock(), store.transaction():
        store.put_document(doc, "/corpus", chunks, doc.content_hash)
    assert [c.blocks for c in store.get_document_chunks(doc.doc_id)] == [c.blocks for c in chunks]
    with store.write_lock(), store.transaction():
        store.delete_documents([doc.doc_id])
    assert store.get_document_chunks(doc.doc_id) == []


def test_versions_are_replaced_as_a_whole(store, corpus):
    write(store, corpus[:3])
    with store.write_lock(), store.transaction():
        store.put_versions({"a": "b", "c": "b"})
    assert store.get_versions() == {"a": "b", "c": "b"}
    with store.write_lock(), store.transaction():
        store.put_versions({"c": "d"})
    assert store.get_versions() == {"c": "d"}


def test_titles_and_metadata(store, corpus):
    write(store, corpus[:4])
    everything = store.get_titles_and_metadata()
    assert everything[corpus[1][0].doc_id] == (corpus[1][0].title, dict(corpus[1][0].metadata))
    assert set(store.get_titles_and_metadata(versioned_only=True)) <= set(everything)


def test_info_names_backend_and_schema_version(store, corpus, location):
    info = store.info()
    assert info["backend"] == store.backend and isinstance(info["schema_version"], int)
    assert info["manifest"] is None and info["read_only"] is False and info["ingest_running"] is False
    write(store, corpus[:2])
    manifest = store.info()["manifest"]
    assert manifest["bm25"]["k1"] == K1 and manifest["analyzer"] == ANALYZER.settings()


# ---------------------------------------------------------------------- transactions and snapshots
def test_a_failed_write_leaves_the_previous_state_readable(store, corpus, location, queries):
    write(store, corpus[:30], embedder=HashingVectors())
    before = (store.count_stored(), store.bm25_top_k(queries[:5], 5, Visibility()), store.get_corpus_stats())
    with pytest.raises(RuntimeError):
        with store.write_lock(), store.transaction():
            store.delete_documents([corpus[0][0].doc_id])
            write_index_of = corpus[30:40]
            for doc, chunks, _ in write_index_of:
                store.put_document(doc, "/corpus", chunks, doc.content_hash)
            store.put_index(store.get_chunk_ids([corpus[0][0].doc_id]) | {c.chunk_id for c in corpus[0][1]},
                              [c for _, cs, _ in write_index_of for c in cs],
                              [t for _, _, ts in write_index_of for t in ts], embedder=HashingVectors())
            raise RuntimeError("the process fails before commit")
    after = (store.count_stored(), store.bm25_top_k(queries[:5], 5, Visibility()), store.get_corpus_stats())
    assert after == before
    other = _open(location)
    try:
        assert (other.count_stored(), other.bm25_top_k(queries[:5], 5, Visibility()),
                other.get_corpus_stats()) == before
    finally:
        other.close()
    write(store, corpus[30:31], embedder=HashingVectors())  # the next writer works
    assert store.count_stored()[0] == 31


def test_a_savepoint_undoes_only_its_own_writes(store, corpus):
    with store.write_lock(), store.transaction():
        store.put_document(corpus[0][0], "/corpus", corpus[0][1], "h0")
        with pytest.raises(ValueError):
            with store.savepoint():
                store.put_document(corpus[1][0], "/corpus", corpus[1][1], "h1")
                raise ValueError("this document fails")
    assert set(store.get_documents()) == {corpus[0][0].doc_id}


def test_a_read_snapshot_does_not_see_a_commit_made_during_it(store, corpus, location):
    write(store, corpus[:20])
    reader = _open(location)
    probe = [weighted_terms(ANALYZER.analyze(corpus[51][0].title))]
    late = {corpus[51][0].doc_id}
    try:
        with reader.snapshot():
            counts = reader.count_stored()
            first = reader.bm25_top_k(probe, 1000, Visibility())
            write(store, corpus[20:60])  # another handle commits meanwhile
            assert reader.count_stored() == counts
            assert reader.bm25_top_k(probe, 1000, Visibility()) == first
            assert reader.get_corpus_stats().chunks == sum(len(cs) for _, cs, _ in corpus[:20])
            assert not late & {h.doc_id for h in first[0]}
            assert reader.get_document(corpus[51][0].doc_id) is None
        assert reader.count_stored()[0] == 60
        assert late & {h.doc_id for h in reader.bm25_top_k(probe, 1000, Visibility())[0]}
    finally:
        reader.close()


def test_an_empty_store_refuses_index_reads_with_how_to_fill_it(store):
    assert store.get_corpus_stats() is None and store.get_embedding() is None
    with pytest.raises(StoreError, match="ingest"):
        store.bm25_top_k([[("cell", 1.0)]], 3, Visibility())


# ---------------------------------------------------------------------- the index
@pytest.mark.parametrize("k", [1, 10, 200])
def test_bm25_top_k_equals_the_reference(filled, corpus, queries, k):
    everyone = {d.doc_id for d, _, _ in corpus}
    results = filled.bm25_top_k(queries, k, Visibility.of(roles=["staff", "legal"]))
    assert len(results) == len(queries)
    for q, hits in zip(queries, results):
        assert_top_k(hits, bm25_reference(corpus, q, everyone), k, "bm25", rtol=2e-5)
    assert results[-1] == []


@pytest.mark.parametrize("visibility", VISIBILITIES, ids=range(len(VISIBILITIES)))
def test_visibility_is_applied_before_ranking(filled, corpus, queries, visibility):
    allowed = visible_docs(filled, visibility)
    fields = filled.get_document_metadata()
    reference_docs = {d.doc_id for d, _, _ in corpus if visibility.allows(d.doc_id, fields[d.doc_id])}
    assert allowed == reference_docs
    seen = visible_docs(filled, Visibility.of(roles=visibility.roles))  # what the statistics count: access only
    for q, hits in zip(queries[:12], filled.bm25_top_k(queries[:12], 5, visibility)):
        assert_top_k(hits, bm25_reference(corpus, q, allowed, seen), 5, "bm25", rtol=2e-5)  # a hidden chunk
        # never takes a slot: the 5 hits are the best 5 visible ones
    vectors = HashingVectors().embed_passages([c.indexed_text() for _, cs, _ in corpus[:6] for c in cs])
    for hits, qv in zip(filled.vector_top_k(vectors, 5, visibility), vectors):
        assert {h.doc_id for h in hits} <= allowed
        assert_top_k(hits, cosine_reference(corpus, qv, allowed), 5, "dense", rtol=1e-4)


def test_scores_are_the_same_with_and_without_the_documents_a_caller_may_not_see(filled, corpus, queries):
    """BM25's corpus statistics (N, df, avgdl) count only what the caller may see: deleting every document an
    anonymous caller (or one with role ``legal``) may not see changes none of its scores, whether the query's
    words occur in the hidden documents or not."""
    def acl_of(doc) -> tuple:
        acl = doc.metadata.get("acl")
        return () if acl is None else tuple([acl] if isinstance(acl, str) else acl)

    public = {d.doc_id for d, _, _ in corpus if not acl_of(d)}
    staff_only = {d.doc_id for d, _, _ in corpus if "staff" in acl_of(d)}
    legal_only = {d.doc_id for d, _, _ in corpus if "legal" in acl_of(d)}
    assert public and staff_only and legal_only
    hidden_terms = Counter(t for d, _, ts in corpus if d.doc_id in staff_only for tt in ts for t in tt)
    public_terms = {t for d, _, ts in corpus if d.doc_id in public for tt in ts for t in tt}
    only_hidden = next(t for t, _ in hidden_terms.most_common() if t not in public_terms)
    both = next(t for t, _ in hidden_terms.most_common() if t in public_terms)
    lacking = next(t for t in sorted(public_terms) if t not in hidden_terms)
    probes = queries + [weighted_terms([only_hidden, both]), weighted_terms([both]), weighted_terms([lacking])]
    anonymous, legal = Visibility.of(), Visibility.of(roles=["legal"])
    filtered = Visibility.of(where=["status!=archived"])

    def scores() -> tuple:
        return (filled.bm25_top_k(probes, 20, anonymous), filled.bm25_top_k(probes, 20, filtered),
                filled.bm25_top_k(probes, 20, legal))

    before = scores()
    assert all(before[0][-3:])  # each probe finds public chunks
    with filled.write_lock(), filled.transaction():
        filled.delete_documents(sorted(staff_only))
        filled.put_index({c.chunk_id for d, cs, _ in corpus if d.doc_id in staff_only for c in cs}, [], [])
    assert filled.count_stored()[0] == len(corpus) - len(staff_only)
    assert scores() == before  # anonymous and legal callers see the same scores without the staff documents
    with filled.write_lock(), filled.transaction():
        filled.delete_documents(sorted(legal_only))
        filled.put_index({c.chunk_id for d, cs, _ in corpus if d.doc_id in legal_only for c in cs}, [], [])
    assert scores()[:2] == before[:2]


@pytest.mark.parametrize("roles", [[], ["LEGAL"], ["staff"]])
def test_idf_and_document_frequency_for_roles_count_what_they_may_see(filled, corpus, roles):
    seen = visible_docs(filled, Visibility.of(roles=roles))
    rows = [t for d, _, ts in corpus if d.doc_id in seen for t in ts]
    df = Counter(term for t in rows for term in set(t))
    everywhere = Counter(term for _, _, ts in corpus for t in ts for term in set(t))
    hidden_only = sorted(t for t in everywhere if t not in df)[:5]
    terms = ["cell", "protein", "zzzunknownzzz", *hidden_only, *list(df)[:20]]
    assert hidden_only and filled.get_document_frequency(terms).tolist() == [everywhere.get(t, 0) for t in terms]
    assert filled.get_document_frequency(terms, roles=roles).tolist() == [df.get(t, 0) for t in terms]
    expected = [math.log1p((len(rows) - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms]
    np.testing.assert_allclose(filled.get_idf(terms, roles=roles), expected, rtol=1e-9)


@pytest.mark.parametrize("roles", [None, ["staff"]])
def test_a_term_no_document_can_hold_is_counted_as_absent(filled, roles):
    """A term with a NUL character (no analyzer writes one; PostgreSQL text cannot hold one) is asked like any
    term the index lacks: df 0, that term's idf, no BM25 hit, and no error."""
    odd = ["\x00", "cell\x00protein"]
    kw = {} if roles is None else {"roles": roles}
    assert filled.get_document_frequency([*odd, "cell"], **kw).tolist()[:2] == [0, 0]
    np.testing.assert_allclose(filled.get_idf(odd, **kw), filled.get_idf(["zzzunknownzzz"] * 2, **kw), rtol=1e-12)
    assert filled.bm25_top_k([weighted_terms(odd)], 5, Visibility.of(roles=roles or ())) == [[]]


def test_access_rule_on_roles(filled, corpus):
    public = visible_docs(filled, Visibility())
    staff = visible_docs(filled, Visibility.of(roles=["Staff"]))
    legal = visible_docs(filled, Visibility.of(roles=["legal"]))
    by_index = [d.doc_id for d, _, _ in corpus]
    assert by_index[0] not in public and by_index[0] in staff and by_index[0] not in legal  # acl list
    assert by_index[7] not in public and by_index[7] in legal and by_index[7] not in staff  # acl string
    assert by_index[1] in public and public < staff
    probe = [weighted_terms(ANALYZER.analyze(corpus[0][0].title))]  # doc 0 (acl staff) ranks first for it
    [[top]] = filled.bm25_top_k(probe, 1, Visibility.of(roles=["staff"]))
    assert top.doc_id == by_index[0]
    [[top]] = filled.bm25_top_k(probe, 1, Visibility())  # hidden: the one slot goes to the best visible chunk
    assert top.doc_id != by_index[0] and top.doc_id in public
    [[top]] = filled.vector_top_k(filled.get_vectors([corpus[0][1][0].chunk_id]), 1, Visibility())
    assert top.doc_id != by_index[0] and top.doc_id in public


@pytest.mark.parametrize("roles", [None, [], ["staff"], ["LEGAL"], ["finance", "legal"], ["nobody"]])
def test_counts_are_of_what_the_roles_may_search(filled, corpus, roles):
    # a count given to a caller must not tell how much is hidden from them: it equals what they can search
    visibility = Visibility() if roles is None else Visibility.of(roles=roles)
    allowed = {d.doc_id for d, _, _ in corpus} if roles is None else visible_docs(filled, visibility)
    every_term = [[(t, 1.0) for t in filled.get_vocabulary()]]  # every chunk holds one of them
    searchable = filled.bm25_top_k(every_term, 10_000, visibility)[0] if roles is not None else \
        filled.bm25_top_k(every_term, 10_000, Visibility.of(roles=["staff", "finance", "legal"]))[0]
    assert filled.count_stored(roles) == (len(allowed), sum(len(cs) for d, cs, _ in corpus if d.doc_id in allowed))
    assert filled.count_stored(roles) == (len({h.doc_id for h in searchable}), len(searchable))
    if roles == []:
        assert filled.count_stored(roles)[0] < filled.count_stored()[0]  # the corpus has hidden documents


def cosine_reference(corpus, qv: np.ndarray, allowed: set[str]) -> dict[str, float]:
    chunks, vecs = _table(corpus)[3:]
    q = qv.astype(np.float64) / max(np.linalg.norm(qv), 1e-12)
    sims = vecs @ q / np.maximum(np.linalg.norm(vecs, axis=1), 1e-12)
    return {c.chunk_id: float(s) for c, s in zip(chunks, sims) if c.doc_id in allowed}


def test_vector_top_k_equals_the_reference(filled, corpus):
    rng = np.random.default_rng(7)
    queries = rng.standard_normal((6, HashingVectors.dim)).astype(np.float32)
    everyone = {d.doc_id for d, _, _ in corpus}
    info = filled.get_embedding()
    assert info is not None and (info.model, info.dim, info.normalized) == ("hashing-48", 48, True)
    for hits, qv in zip(filled.vector_top_k(queries, 10, Visibility.of(roles=["staff", "legal"])), queries):
        assert_top_k(hits, cosine_reference(corpus, qv, everyone), 10, "dense", rtol=1e-4)


def test_vectors_by_chunk_id(filled, corpus):
    ids = [c.chunk_id for _, cs, _ in corpus[3:6] for c in cs][::-1]
    got = filled.get_vectors(ids)
    expected = HashingVectors().embed_passages([c.indexed_text() for _, cs, _ in corpus[3:6] for c in cs][::-1])
    assert got.shape == (len(ids), 48) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    with pytest.raises(StoreError, match="nope"):
        filled.get_vectors(["nope"])


def test_corpus_statistics(filled, corpus):
    rows = [t for _, _, ts in corpus for t in ts]
    stats = filled.get_corpus_stats()
    assert stats.chunks == len(rows) and stats.documents == len(corpus)
    assert stats.avgdl == pytest.approx(sum(map(len, rows)) / len(rows))
    df = Counter(term for t in rows for term in set(t))
    assert stats.terms == len(df) and set(filled.get_vocabulary()) == set(df)
    terms = ["cell", "protein", "zzzunknownzzz", *list(df)[:20]]
    assert filled.get_document_frequency(terms).tolist() == [df.get(t, 0) for t in terms]
    expected = [math.log1p((len(rows) - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms]
    np.testing.assert_allclose(filled.get_idf(terms), expected, rtol=1e-9)


def test_index_updates_keep_and_reuse_vectors(store, corpus):
    first = HashingVectors()
    assert write(store, corpus[:10], embedder=first) == len(first.calls) == sum(len(cs) for _, cs, _ in corpus[:10])
    kept = [c.chunk_id for _, cs, _ in corpus[1:10] for c in cs]
    before = store.get_vectors(kept)
    gone = {c.chunk_id for c in corpus[0][1]}
    again = HashingVectors()
    doc, chunks, terms = corpus[10]
    with store.write_lock(), store.transaction():
        store.delete_documents([corpus[0][0].doc_id])
        store.put_document(doc, "/corpus", chunks, doc.content_hash)
        computed = store.put_index(gone, chunks, terms, embedder=again, reuse=set())
    assert computed == len(again.calls) == len(chunks)  # only the new chunks were embedded
    np.testing.assert_array_equal(store.get_vectors(kept), before)
    assert store.get_corpus_stats().chunks == len(kept) + len(chunks)
    with pytest.raises(StoreError):
        store.get_vectors(sorted(gone))
    everyone = Visibility.of(roles=["staff", "legal"])
    assert not {h.chunk_id for h in store.bm25_top_k([weighted_terms(corpus[0][2][0])], 500, everyone)[0]} & gone
    same = HashingVectors()  # a changed document whose chunks kept their ids and text: vectors are reused
    doc1, chunks1, terms1 = corpus[1]
    ids = {c.chunk_id for c in chunks1}
    with store.write_lock(), store.transaction():
        store.put_document(doc1, "/corpus", chunks1, "changed")
        assert store.put_index(ids, chunks1, terms1, embedder=same, reuse=ids) == 0 and same.calls == []
    np.testing.assert_array_equal(store.get_vectors(sorted(ids)), before[[kept.index(c) for c in sorted(ids)]])
    redo = HashingVectors()
    with store.write_lock(), store.transaction():
        assert store.put_index(set(), [], [], embedder=redo, reembed=True) == len(kept) + len(chunks)
    np.testing.assert_allclose(store.get_vectors(kept), before, rtol=1e-6, atol=1e-7)


def test_a_bm25_only_index_has_no_vectors(store, corpus):
    write(store, corpus[:5], embedder=None)
    assert store.get_embedding() is None
    with pytest.raises(StoreError, match="reembed"):
        store.vector_top_k(np.ones((1, 48), np.float32), 3, Visibility())


def test_local_index_capability_agrees_with_the_store(filled, corpus):
    """``local_index()`` is None (RAPTOR and contextual retrieval then fail with a ConfigError naming the
    feature) or a ``LocalIndex`` over the committed generation whose row mask is the access rule's."""
    local = filled.local_index()
    if local is None:
        with pytest.raises(ConfigError, match=r"RAPTOR summaries \(\[index\] raptor\) needs the embedded store"):
            require_local_index(filled, "RAPTOR summaries ([index] raptor)")
        return
    assert isinstance(local, LocalIndex) and require_local_index(filled, "x") is local
    assert Path(local.path).is_dir() and local.generation > 0 and local.has_contexts() is False
    index = local.require_index()
    assert local.loaded() is index
    rows = len(index.chunk_ids)
    assert sorted(index.chunk_id(r) for r in range(rows)) == sorted(c.chunk_id for _, cs, _ in corpus for c in cs)
    assert local.visible_rows(index, Visibility.of(roles=["staff"], where=["status!=archived"])) is not None
    for visibility in VISIBILITIES:
        allowed = visible_docs(filled, visibility)
        mask = local.visible_rows(index, visibility)
        seen = {index.doc_id(r) for r in range(rows) if mask is None or mask[r]}
        assert seen == allowed


# ---------------------------------------------------------------------- deferred vectors
def write_deferred(store: Store, items, removed=(), reuse=(), reembed=False) -> int:
    """As ``write``, with the vectors deferred: the chunks are indexed pending, as ingest's first phase does."""
    with store.write_lock(), store.transaction():
        for doc, chunks, _ in items:
            store.put_document(doc, "/corpus", chunks, doc.content_hash)
        return store.put_index(set(removed), [c for _, cs, _ in items for c in cs],
                                 [t for _, _, ts in items for t in ts], reuse=reuse, embedder=HashingVectors(),
                                 reembed=reembed, defer=True)


def test_deferred_vectors_are_pending_until_written(store, corpus, queries, location, tmp_path, request):
    """A deferred write indexes the chunks for BM25 at once and records the model; the dense leg returns only
    chunks whose vector has been committed by ``put_vectors``; once every vector is in, the store equals one
    written with its vectors at once (the same rows and vectors, the same dense ranking)."""
    items = corpus[:20]
    assert write_deferred(store, items) == 0
    ids = [c.chunk_id for _, cs, _ in items for c in cs]
    info = store.get_embedding()
    assert info is not None and (info.model, info.dim, info.pending) == ("hashing-48", 48, len(ids))
    assert store.get_pending_vectors() == ids and store.get_pending_vectors(limit=3) == ids[:3]
    everyone = Visibility.of(roles=["staff", "legal"])
    assert store.bm25_top_k(queries[:1], 5, everyone)[0]  # BM25 finds pending chunks
    probe = HashingVectors().embed_passages([c.indexed_text() for _, cs, _ in items[:3] for c in cs])
    assert store.vector_top_k(probe, 5, everyone) == [[] for _ in probe]
    with pytest.raises(StoreError, match="no vector yet"):
        store.get_vectors(ids[:1])

    chunks = {c.chunk_id: c for _, cs, _ in items for c in cs}
    first = ids[: len(ids) // 3]
    with store.write_lock(), store.transaction():
        store.put_vectors(first, HashingVectors().embed_passages([chunks[c].indexed_text() for c in first]))
    assert store.get_embedding().pending == len(ids) - len(first)
    assert store.get_pending_vectors() == ids[len(first):]
    for hits in store.vector_top_k(probe, 500, everyone):
        assert hits and {h.chunk_id for h in hits} <= set(first)  # never a pending chunk

    # a stopped writer's vectors are not seen: the transaction rolls back, the chunks stay pending
    rest = ids[len(first):]
    with pytest.raises(RuntimeError), store.write_lock(), store.transaction():
        store.put_vectors(rest, HashingVectors().embed_passages([chunks[c].indexed_text() for c in rest]))
        raise RuntimeError("stopped")
    assert store.get_pending_vectors() == rest

    # a later deferred write keeps the pending rows pending and adds its own
    more = corpus[20:23]
    write_deferred(store, more)
    more_ids = [c.chunk_id for _, cs, _ in more for c in cs]
    assert store.get_pending_vectors() == rest + more_ids
    chunks.update({c.chunk_id: c for _, cs, _ in more for c in cs})
    todo = store.get_pending_vectors()
    with store.write_lock(), store.transaction():
        store.put_vectors(todo, HashingVectors().embed_passages([chunks[c].indexed_text() for c in todo]))
    assert store.get_embedding().pending == 0 and store.get_pending_vectors() == []

    eager = _open(_other_location(location, tmp_path, request))
    try:
        write(eager, items + more, embedder=HashingVectors())
        assert store.get_indexed_chunk_ids() == eager.get_indexed_chunk_ids()
        np.testing.assert_allclose(store.get_vectors(ids + more_ids), eager.get_vectors(ids + more_ids), atol=1e-6)
        assert [[h.chunk_id for h in hs] for hs in store.vector_top_k(probe, 10, everyone)] == \
            [[h.chunk_id for h in hs] for hs in eager.vector_top_k(probe, 10, everyone)]
    finally:
        eager.close()


def _other_location(location: str, tmp_path: Path, request) -> str:
    """A second fresh store of the same backend: a folder beside, or another database on the same server."""
    if "://" not in location:
        return str(tmp_path / "eager")
    return request.getfixturevalue("postgres_server").create_database(location.rsplit("/", 1)[1] + "_eager")


def test_deferred_reembed_makes_every_row_pending_and_write_vectors_checks_its_input(store, corpus):
    write(store, corpus[:5], embedder=HashingVectors())
    ids = store.get_indexed_chunk_ids()
    assert write_deferred(store, [], reembed=True) == 0
    assert store.get_pending_vectors() == ids and store.get_embedding().pending == len(ids)
    with store.write_lock(), store.transaction():
        with pytest.raises(StoreError, match="not indexed"):
            store.put_vectors(["nope"], np.ones((1, 48), np.float32))
        with pytest.raises(StoreError, match="dimension 48"):
            store.put_vectors(ids[:1], np.ones((1, 12), np.float32))


def test_a_bm25_only_index_has_nothing_pending(store, corpus):
    write(store, corpus[:5], embedder=None)
    assert store.get_pending_vectors() == []
    with store.write_lock(), store.transaction():
        with pytest.raises(StoreError, match="BM25-only"):
            store.put_vectors(store.get_indexed_chunk_ids()[:1], np.ones((1, 48), np.float32))


def test_a_copy_of_a_store_with_pending_vectors_keeps_them_pending(store, corpus, location, tmp_path, request):
    from openbook.store.copy import copy_store

    items = corpus[:12]
    write_deferred(store, items)
    ids = store.get_pending_vectors()
    chunks = {c.chunk_id: c for _, cs, _ in items for c in cs}
    some = ids[::2]
    with store.write_lock(), store.transaction():
        store.put_vectors(some, HashingVectors().embed_passages([chunks[c].indexed_text() for c in some]))
    dst = _open(_other_location(location, tmp_path, request))
    try:
        report = copy_store(store, dst)
        assert report.vectors == len(some) and report.chunks == len(ids)
        assert sorted(dst.get_indexed_chunk_ids()) == sorted(store.get_indexed_chunk_ids())  # (copied by doc id)
        assert sorted(dst.get_pending_vectors()) == sorted(store.get_pending_vectors()) == sorted(set(ids) - set(some))
        assert dst.get_embedding().pending == len(ids) - len(some)
        np.testing.assert_allclose(dst.get_vectors(some), store.get_vectors(some), atol=1e-6)
    finally:
        dst.close()
