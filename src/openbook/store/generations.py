"""The embedded store's index format: immutable, memory-mapped index generations, and their incremental writes.

Layout of one generation (``STORE/gen-000007/``, written completely before the SQLite commit that names it)::

    manifest.json     format version, generation, analyzer and BM25 settings, chunking, rows, documents,
                      embedding model/dim/normalized/ann (null when BM25-only)
    chunk_ids.npy     S20 [rows]: the chunk id of each row
    doc_ord.npy       int32 [rows]: the document ordinal of each row (an index into docs.json)
    doc_df.npy        int64 [terms]: how many documents have a row holding each BM25 term (the idf's df, kept so
                      that opening a generation reads no posting; computed from the postings when absent)
    docs.json         document ids by ordinal
    acl.json          {ordinal: [roles]} of the documents that have an ``acl``
    bm25/             see openbook.index.sparse
    dense/            see openbook.index.dense (when embeddings are on)
    pending.npy       bool [rows]: rows whose vector is not computed yet (see below)

The vector precision (``openbook.index.dense.PRECISIONS``) is recorded in ``dense/dense.json`` and the manifest's
``embedding``; a later write keeps it unless ``IndexSettings.vector_precision`` names another, and then indexes
every row at the new one (the float32 vectors are kept in every generation, so nothing is re-embedded).

Rows are positions: a write keeps the previous generation's rows that were not removed, in order, then appends
the new chunks, so BM25 ties (broken by lower row) keep insertion order. Term frequencies and vectors of kept
rows are reused, never recomputed; only new chunks are analyzed (by the caller) and embedded.

Pending vectors: a deferred write (``Store.put_index(..., defer=True)``) indexes chunks before their vectors
exist; ``pending.npy`` (bool [rows], absent when every row has its vector) marks them, their rows in ``dense/``
are zero and the dense leg never returns them. A generation that only adds vectors (``write_vectors_generation``)
hard-links every file but ``dense/``, ``pending.npy`` and the manifest from the previous generation (a
generation's files never change once written, so a link is as good as a copy) and writes those anew.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np

from ..files import write_json_atomic
from ..index.dense import VectorIndex
from ..index.sparse import BM25Index
from ..types import Chunk, Hit
from .base import IndexSettings, VectorSource, Visibility
from .filters import access_allows

INDEX_FORMAT = 1
MANIFEST = "manifest.json"
CHUNK_IDS = "chunk_ids.npy"
DOC_ORD = "doc_ord.npy"
DOC_DF = "doc_df.npy"
DOCS = "docs.json"
ACL = "acl.json"
BM25_DIR = "bm25"
DENSE_DIR = "dense"
PENDING = "pending.npy"
STATS_VIEWS = 8
"""BM25 views with per-access statistics (``LoadedIndex.bm25_for``) kept per loaded generation; each holds two
float32 arrays per row and, on indexes of ``_bm25_kernels.MIN_ROWS`` rows or more, one float32 per posting."""


class LoadedIndex:
    """One generation's index files, loaded (memory-mapped) once per process."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        # plain ndarray views of the maps: np.memmap's __getitem__ costs about 1 us a read (one per hit)
        self.chunk_ids = np.asarray(np.load(folder / CHUNK_IDS, mmap_mode="r"))
        self.doc_ord = np.asarray(np.load(folder / DOC_ORD, mmap_mode="r"))
        # idf over documents, tf and length norms over chunks (openbook.index.sparse, with_documents)
        bm25 = BM25Index.load(folder / BM25_DIR)
        document_df = np.asarray(np.load(folder / DOC_DF, mmap_mode="r")) if (folder / DOC_DF).is_file() else None
        if document_df is not None and document_df.shape != (len(bm25.vocab),):
            document_df = None  # not this index's: computed from the postings instead
        self.bm25 = bm25.with_documents(np.asarray(self.doc_ord), document_df)
        self.doc_ids: list[str] = json.loads((folder / DOCS).read_text(encoding="utf-8"))
        acl = json.loads((folder / ACL).read_text(encoding="utf-8"))
        self.acl: dict[int, list[str]] = {int(k): v for k, v in acl.items()}
        self.chars: frozenset[str] | None = None  # characters of the vocabulary, built on first use
        self.row_of: dict[str, int] | None = None  # chunk id -> row, built on first use (rerankers)
        self.doc_ord_of: dict[str, int] | None = None  # doc id -> ordinal, built on first use (exclusions)
        self.stats_views: dict[frozenset[int], BM25Index] = {}  # hidden ordinals -> BM25 view (bm25_for)
        self.hidden_for: dict[frozenset[str], frozenset[int]] = {}  # case-folded roles -> hidden ordinals
        self.dense: VectorIndex | None = None
        if (folder / DENSE_DIR).is_dir():
            self.dense = VectorIndex.load(folder / DENSE_DIR)
        self.pending: np.ndarray | None = None  # bool [rows]: no vector yet; None when every row has one
        if self.dense is not None and (folder / PENDING).is_file():
            self.pending = np.load(folder / PENDING)
        self.pending_count = int(self.pending.sum()) if self.pending is not None else 0
        """Rows without their vector yet (0 when every row has one, or the index holds no vectors)."""

    def dense_mask(self, mask: np.ndarray | None) -> np.ndarray | None:
        """``mask`` (visible rows, or None for all) without the pending rows: the rows the dense leg may return."""
        if self.pending is None:
            return mask
        return ~self.pending if mask is None else mask & ~self.pending

    def chunk_id(self, row: int) -> str:
        return self.chunk_ids[row].decode("ascii")

    def doc_id(self, row: int) -> str:
        return self.doc_ids[int(self.doc_ord[row])]

    def rows_of(self, chunk_ids: Sequence[str]) -> list[int]:
        """Rows of these chunk ids, in order. Raises ``KeyError`` naming an id that is not indexed."""
        if self.row_of is None:
            self.row_of = {self.chunk_id(r): r for r in range(len(self.chunk_ids))}
        return [self.row_of[c] for c in chunk_ids]

    def hits(self, rows: np.ndarray, scores: np.ndarray, leg: str) -> list[list[Hit]]:
        """``[nq, k]`` rows and scores (row -1: no more hits) as hit lists, ``legs = {leg: (rank, score)}``."""
        out: list[list[Hit]] = []
        for qi in range(rows.shape[0]):
            hits = []
            for rank, (row, score) in enumerate(zip(rows[qi], scores[qi]), start=1):
                if row < 0:
                    break
                hits.append(Hit(chunk_id=self.chunk_id(row), doc_id=self.doc_id(row), score=float(score),
                                legs={leg: (rank, float(score))}))
            out.append(hits)
        return out

    def bm25_for(self, roles: Sequence[str]) -> BM25Index:
        """The BM25 index scored with the corpus statistics (``N``, ``df``, ``avgdl``) of the rows these roles may
        see under the access rule: ``bm25`` itself when they see every row, else a ``BM25Index.with_stats_of``
        view, built once per set of hidden documents and kept while this generation is loaded (the last
        ``STATS_VIEWS`` sets). Search it with a mask that hides at least what the roles may not see."""
        if not self.acl:
            return self.bm25
        key = frozenset(r.casefold() for r in roles)
        hidden = self.hidden_for.get(key)
        if hidden is None:
            hidden = frozenset(o for o, acl in self.acl.items() if not access_allows(acl, roles))
            if len(self.hidden_for) < 1024:  # role sets seen (a server's keys; bounded against arbitrary --role)
                self.hidden_for[key] = hidden
        if not hidden:
            return self.bm25
        view = self.stats_views.pop(hidden, None)
        if view is None:
            doc_ok = np.ones(len(self.doc_ids), dtype=bool)
            doc_ok[list(hidden)] = False
            view = self.bm25.with_stats_of(doc_ok[np.asarray(self.doc_ord)])
            while len(self.stats_views) >= STATS_VIEWS:
                self.stats_views.pop(next(iter(self.stats_views)))
        self.stats_views[hidden] = view  # most recently used last
        return view

    def mask(self, visibility: Visibility,
             metadata: Callable[[], Mapping[str, Mapping[str, Any]]]) -> np.ndarray | None:
        """Visible rows (bool [rows]) under ``visibility``; None when every row is visible.

        Roles alone use the generation's ``acl.json`` (no database read); ``--where`` clauses read every
        document's fields through ``metadata()`` and decide with ``Visibility.allows``.
        """
        mask = self._filter_mask(visibility, metadata)
        if not visibility.exclude_docs:
            return mask
        if self.doc_ord_of is None:
            self.doc_ord_of = {d: i for i, d in enumerate(self.doc_ids)}
        hidden = [self.doc_ord_of[d] for d in visibility.exclude_docs if d in self.doc_ord_of]
        doc_ok = np.ones(len(self.doc_ids), dtype=bool)
        doc_ok[hidden] = False
        rows_ok = doc_ok[np.asarray(self.doc_ord)]
        return rows_ok if mask is None else mask & rows_ok

    def _filter_mask(self, visibility: Visibility,
                     metadata: Callable[[], Mapping[str, Mapping[str, Any]]]) -> np.ndarray | None:
        if not visibility.clauses:
            if not self.acl:
                return None
            doc_ok = np.ones(len(self.doc_ids), dtype=bool)
            for ordinal, acl in self.acl.items():
                doc_ok[ordinal] = access_allows(acl, visibility.roles)
            return doc_ok[np.asarray(self.doc_ord)]
        meta = metadata()
        plain = Visibility(visibility.roles, visibility.clauses)  # exclusions are applied by ``mask``
        doc_ok = np.fromiter((plain.allows(d, meta.get(d, {})) for d in self.doc_ids),
                             dtype=bool, count=len(self.doc_ids))
        return doc_ok[np.asarray(self.doc_ord)]


@dataclass
class GenerationWrite:
    """What ``write_generation`` needs besides the previous generation: the folder to fill and its number, the
    settings, and every document's ``acl`` (doc id -> roles)."""

    folder: Path
    generation: int
    settings: IndexSettings
    access_lists: Mapping[str, list[str]]


def write_generation(target: GenerationWrite, old: LoadedIndex | None, removed: Collection[str],
                     new_chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]], *, reuse: Collection[str] = (),
                     embedder: VectorSource | None = None, reembed: bool = False, defer: bool = False,
                     chunk_texts: Callable[[list[str]], dict[str, str]] | None = None) -> int:
    """Write the next generation into ``target.folder``: ``old``'s rows minus ``removed`` chunk ids, then
    ``new_chunks`` (``tokens``: their analyzed terms). See ``Store.put_index`` for the vector rules
    (``defer``: rows to embed are written pending).

    Args:
        chunk_texts: chunk id -> indexed text of kept chunks (needed when their vectors are recomputed).

    Returns:
        How many chunk vectors were computed.
    """
    settings, folder = target.settings, target.folder
    if old is not None:
        keep = np.fromiter((cid.decode("ascii") not in removed for cid in old.chunk_ids), dtype=bool,
                           count=len(old.chunk_ids))
        kept_rows = np.flatnonzero(keep)
        chunk_ids = [old.chunk_ids[r].decode("ascii") for r in kept_rows]
        row_docs = [old.doc_ids[int(old.doc_ord[r])] for r in kept_rows]
    else:
        keep = np.zeros(0, dtype=bool)
        kept_rows = np.zeros(0, dtype=np.int64)
        chunk_ids, row_docs = [], []
    k1, b = settings.k1, settings.b
    extra = {"analyzer": dict(settings.analyzer)}
    if old is not None and keep.any():  # an update; a write that replaces every row builds afresh (a reindex)
        bm25 = old.bm25.updated(keep, tokens)
        bm25 = bm25.with_params(k1, b) if (bm25.k1, bm25.b) != (k1, b) else bm25
    else:
        bm25 = BM25Index.build(tokens, k1=k1, b=b, extra=extra)
    dense, pending, embedded = dense_rows(old, kept_rows, chunk_ids, new_chunks, reuse, embedder, reembed, defer,
                                          settings, chunk_texts)
    chunk_ids += [c.chunk_id for c in new_chunks]
    row_docs += [c.doc_id for c in new_chunks]
    doc_ids = list(dict.fromkeys(row_docs))
    ordinal = {d: i for i, d in enumerate(doc_ids)}
    acl = {ordinal[d]: roles for d, roles in target.access_lists.items() if d in ordinal}
    bm25.save(folder / BM25_DIR)
    np.save(folder / CHUNK_IDS, np.array(chunk_ids, dtype="S20") if chunk_ids else np.zeros(0, "S20"))
    doc_ord = np.array([ordinal[d] for d in row_docs], dtype=np.int32)
    np.save(folder / DOC_ORD, doc_ord)
    np.save(folder / DOC_DF, bm25.document_frequencies(doc_ord))
    write_json_atomic(folder / DOCS, doc_ids)
    write_json_atomic(folder / ACL, {str(k): v for k, v in acl.items()})
    if dense is not None:
        dense.save(folder / DENSE_DIR)
        if pending is not None:
            np.save(folder / PENDING, pending)
    manifest = {
        "format_version": INDEX_FORMAT,
        "generation": target.generation,
        "analyzer": dict(settings.analyzer),
        "bm25": {"k1": k1, "b": b, "idf": "lucene"},
        "chunking": dict(settings.chunking),
        "rows": len(chunk_ids),
        "documents": len(doc_ids),
        "embedding": _embedding_manifest(dense, pending),
    }
    write_json_atomic(folder / MANIFEST, manifest)
    return embedded


def _embedding_manifest(dense: VectorIndex | None, pending: np.ndarray | None) -> dict[str, Any] | None:
    if dense is None:
        return None
    return {"model": dense.model, "dim": dense.dim, "normalized": dense.normalized, "ann": dense.uses_ann,
            "pending": int(pending.sum()) if pending is not None else 0, "precision": dense.precision}


def vector_precision(settings: IndexSettings, old: VectorIndex | None) -> str:
    """The precision the next generation's vectors are indexed at: ``settings.vector_precision`` when set (a
    change re-indexes: codes and graph are rebuilt from the kept float32 vectors), else the previous
    generation's, else ``f32``."""
    return settings.vector_precision or (old.precision if old is not None else "f32")


def _ann_threshold(settings: IndexSettings, pending: np.ndarray | None) -> int:
    """No HNSW graph while rows are pending: their zero vectors must not enter it, and the graph would be built
    again at every commit of vectors; exact search serves until the last vector is in."""
    return settings.ann_threshold if pending is None else sys.maxsize


def dense_rows(old: LoadedIndex | None, kept_rows: np.ndarray, kept_ids: list[str], new_chunks: Sequence[Chunk],
               reuse: Collection[str], embedder: VectorSource | None, reembed: bool, defer: bool,
               settings: IndexSettings, chunk_texts: Callable[[list[str]], dict[str, str]] | None
               ) -> tuple[VectorIndex | None, np.ndarray | None, int]:
    """Vectors for the next generation, its pending rows (bool [rows], None when none) and how many vectors were
    computed: kept rows keep theirs (and stay pending if they were), new chunks in ``reuse`` take the vector of
    their committed row unless it is pending; the rest are embedded, or with ``defer`` left pending."""
    if embedder is None:
        return None, None, 0
    old_dense = old.dense if old is not None else None
    if not reembed and old is not None and len(kept_rows) and old_dense is None:
        return None, None, 0  # a BM25-only store stays so until `ingest --reembed`
    embedded = 0
    old_pending = old.pending if old is not None and old_dense is not None else None
    reusable: dict[str, int] = {}
    if reembed or old_dense is None:
        if defer:
            kept_vecs = np.zeros((len(kept_ids), embedder.dim), np.float32)
            kept_pending = np.ones(len(kept_ids), dtype=bool)
        else:
            kept = chunk_texts(kept_ids) if chunk_texts is not None and kept_ids else {}
            texts = [kept[c] for c in kept_ids if c in kept]
            kept_vecs = embedder.embed_passages(texts)
            embedded += len(texts)
            kept_pending = np.zeros(len(kept_vecs), dtype=bool)
    else:
        assert old is not None
        kept_vecs = np.asarray(old_dense.vectors[kept_rows], dtype=np.float32)
        kept_pending = (np.asarray(old_pending[kept_rows]) if old_pending is not None
                        else np.zeros(len(kept_rows), dtype=bool))
        wanted = {c.chunk_id for c in new_chunks if c.chunk_id in reuse}
        reusable = {cid: r for r, raw in enumerate(old.chunk_ids) if (cid := raw.decode("ascii")) in wanted
                    and not (old_pending is not None and old_pending[r])}
    dim = kept_vecs.shape[1]
    new_vecs = np.zeros((len(new_chunks), dim), np.float32)
    new_pending = np.zeros(len(new_chunks), dtype=bool)
    todo = []
    for i, c in enumerate(new_chunks):
        if c.chunk_id in reusable:
            assert old_dense is not None
            new_vecs[i] = old_dense.vectors[reusable[c.chunk_id]]
        else:
            todo.append(i)
    if todo and defer:
        new_pending[todo] = True
    elif todo:
        computed = embedder.embed_passages([new_chunks[i].indexed_text() for i in todo])
        if new_vecs.shape[1] != computed.shape[1]:
            new_vecs = np.zeros((len(new_chunks), computed.shape[1]), np.float32)
        new_vecs[todo] = computed
        embedded += len(todo)
    vectors = np.vstack([kept_vecs, new_vecs]) if len(kept_vecs) else new_vecs
    pending = np.concatenate([kept_pending, new_pending])
    pending_rows = pending if pending.any() else None
    return VectorIndex.build(vectors, model=embedder.name, normalized=embedder.normalized,
                             ann_threshold=_ann_threshold(settings, pending_rows),
                             precision=vector_precision(settings, old_dense)), pending_rows, embedded


def write_vectors_generation(target: GenerationWrite, old: LoadedIndex, chunk_ids: Sequence[str],
                             vectors: np.ndarray) -> None:
    """Write the next generation into ``target.folder``: ``old`` with these chunks' vectors set (pending ones
    no longer pending). Everything but the vectors is hard-linked from ``old`` (copied where links fail).

    Raises:
        KeyError: a chunk id is not indexed in ``old`` (the caller names it).
        ValueError: ``old`` holds no vectors, or ``vectors`` is not ``[len(chunk_ids), dim]``.
    """
    if old.dense is None:
        raise ValueError("the index holds no vectors")
    new = np.asarray(vectors, dtype=np.float32)
    if new.shape != (len(chunk_ids), old.dense.dim):
        raise ValueError(f"vectors of shape {new.shape}, expected {(len(chunk_ids), old.dense.dim)}")
    rows = old.rows_of(chunk_ids)
    matrix = np.array(old.dense.vectors, dtype=np.float32)  # a copy: the old generation's file stays as it is
    matrix[rows] = new
    pending = None
    if old.pending is not None:
        pending = np.array(old.pending, dtype=bool)
        pending[rows] = False
        pending = pending if pending.any() else None
    folder = target.folder
    for name in (BM25_DIR, CHUNK_IDS, DOC_ORD, DOCS, ACL):
        _link(old.folder / name, folder / name)
    if (old.folder / DOC_DF).is_file():
        _link(old.folder / DOC_DF, folder / DOC_DF)
    dense = VectorIndex.build(matrix, model=old.dense.model, normalized=old.dense.normalized,
                              ann_threshold=_ann_threshold(target.settings, pending),
                              precision=vector_precision(target.settings, old.dense))
    dense.save(folder / DENSE_DIR)
    if pending is not None:
        np.save(folder / PENDING, pending)
    manifest = {**old.manifest, "generation": target.generation, "embedding": _embedding_manifest(dense, pending)}
    write_json_atomic(folder / MANIFEST, manifest)


def _link(source: Path, dest: Path) -> None:
    """Hard-link a file, or every file of a folder, from ``source`` to ``dest``; copy where linking fails (a file
    system without hard links)."""
    if source.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        for child in source.iterdir():
            _link(child, dest / child.name)
        return
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)

