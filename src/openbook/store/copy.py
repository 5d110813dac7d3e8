"""``openbook store copy SRC DST``: move a corpus between backends (embedded -> PostgreSQL and back) without
re-embedding.

Everything goes through the ``Store`` protocol, so any pair of backends works: documents with their chunks,
roots and content hashes, version links, and the index. Analyzed terms are recomputed from the chunk texts with
the analyzer the source index was built with (the analyzer is deterministic and its settings are checked against
the source manifest); vectors are read from the source (``Store.get_vectors``) and handed to the destination's
index write as a ``VectorSource`` that looks them up by the chunk's indexed text, so no embedder runs.

What is not the same afterwards: the destination's index rows are in document-id order, so two chunks with
exactly equal scores may swap places (ties break by insertion order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import StoreError, StoreVersionError
from ..index.analyzer import Analyzer
from .base import IndexSettings, Store

BATCH_DOCUMENTS = 500
"""Documents per destination transaction (each batch is committed: an interrupted copy keeps what it wrote)."""


@dataclass
class CopyReport:
    """What ``copy_store`` did: ``documents``, ``chunks`` and ``vectors`` copied (``vectors`` 0 for a BM25-only
    source), and the embedding model (or None)."""

    documents: int
    chunks: int
    vectors: int
    model: str | None


class StoredVectors:
    """A ``VectorSource`` that returns vectors already computed (by indexed text) instead of embedding.

    Raises:
        StoreError: asked for a text it has no vector for (the source changed during the copy).
    """

    def __init__(self, name: str, normalized: bool, dim: int = 0) -> None:
        self.name = name
        self.normalized = normalized
        self.dim = dim
        self.by_text: dict[str, np.ndarray] = {}

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.by_text]
        if missing:
            raise StoreError(f"store copy: no stored vector for a chunk starting {missing[0][:60]!r}; the source "
                             f"changed during the copy, run it again")
        if not texts:  # a batch that adds no chunk still asks (the embedded store's first generation does)
            dim = next(iter(self.by_text.values())).shape[-1] if self.by_text else 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self.by_text[t] for t in texts]).astype(np.float32)


def copy_store(src: Store, dst: Store, settings: IndexSettings | None = None,
               progress: Callable[[int, int], None] | None = None) -> CopyReport:
    """Copy every document, chunk, version link and index row (vectors included) from ``src`` into the empty
    store ``dst``.

    Args:
        settings: index settings for ``dst`` (BM25 k1/b, ANN threshold, vector precision); the analyzer and
            chunking settings are always the source manifest's. None: the source's k1/b and default ANN
            threshold. The vector precision is the source's unless ``settings`` names one.
        progress: called with ``(documents copied, documents total)`` after each committed batch.

    Raises:
        StoreError: ``dst`` is not empty, or ``src`` holds nothing indexed.
        StoreVersionError: the source index was built with analyzer settings this openbook cannot reproduce.
    """
    if dst.count_stored()[0]:
        raise StoreError(f"store copy: the destination {dst.location} already holds documents; copy into a new, "
                         f"empty store (a new folder, or an empty database)")
    manifest: dict[str, Any] = src.info().get("manifest") or {}
    if not manifest:
        raise StoreError(f"store copy: the source {src.location} has nothing indexed")
    analyzer = _analyzer_for(manifest.get("analyzer") or {}, src.location)
    bm25 = manifest.get("bm25") or {}
    base = settings or IndexSettings(k1=float(bm25.get("k1", 1.2)), b=float(bm25.get("b", 0.75)))
    precision = base.vector_precision or (manifest.get("embedding") or {}).get("precision", "")
    dst.configure(IndexSettings(k1=base.k1, b=base.b, analyzer=analyzer.settings(),
                                chunking=dict(manifest.get("chunking") or {}), ann_threshold=base.ann_threshold,
                                vector_precision=precision))
    src.configure(IndexSettings(k1=float(bm25.get("k1", 1.2)), b=float(bm25.get("b", 0.75)),
                                analyzer=analyzer.settings(), chunking=dict(manifest.get("chunking") or {})))
    info = src.get_embedding()
    vectors = StoredVectors(info.model, info.normalized, info.dim) if info is not None else None
    docs = chunks = copied_vectors = 0
    with src.snapshot():
        stored = src.get_documents()
        ids = sorted(stored)
        links = src.get_versions()
        pending = set(src.get_pending_vectors()) if info is not None and info.pending else set()
        with dst.write_lock():
            for start in range(0, len(ids), BATCH_DOCUMENTS):
                batch = []
                for doc_id in ids[start:start + BATCH_DOCUMENTS]:
                    doc = src.get_document(doc_id)
                    if doc is not None:
                        batch.append((doc, src.get_document_chunks(doc_id)))
                new_chunks = [c for _, cs in batch for c in cs]
                have = [c.chunk_id for c in new_chunks if c.chunk_id not in pending]
                vecs = src.get_vectors(have) if vectors is not None and have else None
                if vecs is not None and not pending:
                    vectors.by_text = {c.indexed_text(): v for c, v in zip(new_chunks, vecs)}
                with dst.transaction():
                    for doc, cs in batch:
                        meta = stored[doc.doc_id]
                        dst.put_document(doc, meta.root, cs, meta.content_hash)
                    # a source with chunks still waiting for their vectors: they wait in the copy too
                    dst.put_index((), new_chunks, analyzer.analyze_batch([c.indexed_text() for c in new_chunks]),
                                    embedder=vectors, defer=bool(pending))
                    if pending and vecs is not None:
                        dst.put_vectors(have, vecs)
                    if start + BATCH_DOCUMENTS >= len(ids):
                        dst.put_versions(links)
                docs += len(batch)
                chunks += len(new_chunks)
                copied_vectors += len(have) if vectors is not None else 0
                if progress is not None:
                    progress(docs, len(ids))
    return CopyReport(documents=docs, chunks=chunks, vectors=copied_vectors,
                      model=info.model if info is not None else None)


def _analyzer_for(settings: dict[str, Any], location: str) -> Analyzer:
    """The analyzer that reproduces ``settings`` (a manifest's), or StoreVersionError."""
    analyzer = Analyzer(language=settings.get("language", "english"), stopwords=bool(settings.get("stopwords", True)))
    if settings and analyzer.settings() != settings:
        raise StoreVersionError(f"store copy: the index in {location} was built with analyzer settings {settings}, "
                                f"which this openbook cannot reproduce ({analyzer.settings()}); re-ingest the "
                                f"documents instead")
    return analyzer
