"""``openbook store reindex``: rebuild a store's BM25 index with this openbook's analyzer, keeping everything else.

Why: BM25 terms depend on the analyzer (``Analyzer.settings()``, recorded in the index manifest; its
``version`` changes whenever the terms of some text change, and ``unicode`` with the Python upgrade that brings
new Unicode tables), and an index analysed otherwise is refused at query time (``analyzer_mismatch_error``). The
chunks, their ids, metadata, version links and vectors do not depend on the analyzer, so re-ingesting from the
source files (re-reading, re-chunking and, above all, re-embedding every chunk) is not needed: the stored chunks
are analysed again and the index is rewritten with their vectors reused by chunk id.

How: through the ``Store`` protocol, so both backends take one code path. Under the store's writer lock, one
write transaction calls ``Store.put_index`` with every indexed chunk id removed and every chunk added back in
the same row order (so BM25 ties still break by the original insertion order), ``reuse`` naming all of them, and
a ``VectorSource`` that refuses to embed anything: the vectors are the stored ones, byte for byte, and no
embedder is loaded. A backend allows this whole replacement of an index with other analyzer settings, and only
that (``Store.put_index``).

Atomicity is the write transaction's: the embedded store writes a complete new generation folder and names it in
one SQLite commit; PostgreSQL commits one transaction. A crash or Ctrl-C before the commit leaves the previous
index and everything else exactly as they were (the half-written generation folder is removed by the next
writer), and the command can simply be run again.

Not rebuilt: a RAPTOR summary tree (``[index] raptor``) is keyed on the index generation, so the next ingest
rebuilds it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import StoreError
from ..index.analyzer import Analyzer
from .base import IndexSettings, Store, settings_changed

BATCH_CHUNKS = 2000
"""Chunks read from the store per query while collecting them (bounds one query's size, not the memory: the
whole index is rewritten in one transaction)."""


@dataclass
class ReindexReport:
    """What ``reindex_store`` did.

    Attributes:
        chunks: indexed chunks whose terms were recomputed (0 when nothing had to be done).
        vectors: stored vectors carried over unchanged (0 for a BM25-only store); none is ever computed.
        model: the stored vectors' embedder, or None.
        before, after: the analyzer settings recorded in the index before and after.
        seconds: wall time of the rebuild.
        changed: False when the index already had this openbook's analyzer settings (nothing was written).
    """

    chunks: int
    vectors: int
    model: str | None
    before: dict[str, Any]
    after: dict[str, Any]
    seconds: float
    changed: bool

    def change(self) -> str:
        """The analyzer change in words: ``analyzer v2 -> v3``, or the settings that differ when the version is
        the same (``analyzer unicode '14.0.0' -> '15.0.0'`` after a Python upgrade)."""
        if self.before.get("version") != self.after.get("version"):
            return f"analyzer v{self.before.get('version')} -> v{self.after.get('version')}"
        return "analyzer " + (settings_changed(self.before, self.after) or f"v{self.after.get('version')} (unchanged)")


class StoredVectorsOnly:
    """The ``VectorSource`` a reindex hands to ``Store.put_index``: it names the stored vectors' embedder and
    refuses to compute any vector, so a reindex can never embed (every chunk is in ``reuse``).

    Raises:
        StoreError: asked to embed a text (a chunk's stored vector was missing: the store is inconsistent).
    """

    def __init__(self, name: str, normalized: bool, dim: int) -> None:
        self.name = name
        self.normalized = normalized
        self.dim = dim

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if texts:
            raise StoreError(f"store reindex: no stored vector for the chunk starting {texts[0][:60]!r}; the store "
                             f"is inconsistent, re-ingest the documents (`openbook ingest --reembed PATH`)")
        return np.zeros((0, self.dim), dtype=np.float32)


def reindex_store(store: Store, analyzer: Analyzer, settings: IndexSettings | None = None,
                  progress: Callable[[str], None] | None = None,
                  on_wait: Callable[[str], None] | None = None) -> ReindexReport:
    """Rebuild the BM25 index of ``store`` with ``analyzer``, keeping its chunks, chunk ids, documents, metadata,
    version links, row order and vectors (reused, never recomputed). A store already indexed with
    ``analyzer.settings()`` is left untouched (``changed`` False).

    Args:
        settings: BM25 k1/b and ANN threshold to record and use; the analyzer is always ``analyzer``'s and the
            chunking record the index's own (chunks are not cut again). None: the index's recorded k1/b and the
            default ANN threshold.
        progress: hears one line per stage (reading, analysing, writing).
        on_wait: hears one line if another writer holds the store's lock (this call then waits for it).

    Returns:
        A ``ReindexReport``.

    Raises:
        StoreError: nothing is indexed, the store is read-only or busy, or an indexed chunk is missing from the
            stored chunks (then the store must be re-ingested).
        StoreVersionError: the index has a format this openbook does not read (only the analyzer can be
            migrated this way).
    """
    say = progress or (lambda _line: None)
    t0 = time.perf_counter()
    current = analyzer.settings()
    with store.write_lock(on_wait):
        manifest = store.get_index_manifest()
        if not manifest:
            raise StoreError(f"store reindex: {store.location} has nothing indexed: run `openbook ingest PATH "
                             f"--store {store.location}` first")
        before = dict(manifest.get("analyzer") or {})
        emb = manifest.get("embedding") or None
        model = emb["model"] if emb else None
        if before == current:
            store.info()  # (the analyzer is current; an index format this openbook cannot read refuses, as search does)
            return ReindexReport(chunks=0, vectors=0, model=model, before=before, after=before,
                                 seconds=time.perf_counter() - t0, changed=False)
        bm25 = manifest.get("bm25") or {}
        base = settings or IndexSettings(k1=float(bm25.get("k1", 1.2)), b=float(bm25.get("b", 0.75)))
        store.configure(IndexSettings(k1=base.k1, b=base.b, analyzer=current,
                                      chunking=dict(manifest.get("chunking") or {}),
                                      ann_threshold=base.ann_threshold))
        ids = store.get_indexed_chunk_ids()
        say(f"reading {len(ids)} chunks from {store.location}")
        chunks = []
        for start in range(0, len(ids), BATCH_CHUNKS):
            part = ids[start:start + BATCH_CHUNKS]
            found = store.get_chunks(part)
            missing = [c for c in part if c not in found]
            if missing:
                raise StoreError(f"store reindex: chunk {missing[0]!r} is indexed in {store.location} but not "
                                 f"stored ({len(missing)} such in this batch); the store is damaged, re-ingest the "
                                 f"documents into a new store")
            chunks.extend(found[c] for c in part)
        say(f"analysing {len(chunks)} chunks with analyzer v{current.get('version')}")
        terms = analyzer.analyze_batch(c.indexed_text() for c in chunks)
        vectors = StoredVectorsOnly(emb["model"], bool(emb.get("normalized", True)), int(emb["dim"])) \
            if emb else None
        say("writing the new index (atomic: the previous one stays until the commit)")
        with store.transaction():
            # (chunks still waiting for their vectors stay pending: ``defer`` embeds nothing)
            store.put_index(ids, chunks, terms, reuse=ids, embedder=vectors, defer=True)
    kept = len(chunks) - int(emb.get("pending", 0)) if emb else 0  # vectors carried over (pending ones wait)
    return ReindexReport(chunks=len(chunks), vectors=kept, model=model, before=before,
                         after=current, seconds=time.perf_counter() - t0, changed=True)
