"""A copy of a store without some documents, so that an evaluation can ask questions as if those documents were
never ingested.

Hiding documents with a query-time filter (``Visibility.exclude_docs``) keeps every corpus statistic they
contributed: BM25's ``N``, ``avgdl`` and each term's document frequency (so idf), the vocabulary that decides
whether a query term is known at all, and their vectors in an approximate index. ``absent_store`` removes them
instead: it copies the store (no embedder runs) and deletes the documents in one write, which rebuilds the BM25
statistics and the vocabulary from the rows that remain (``BM25Index.updated``) and drops the removed chunks'
vectors from the dense index, keeping every other vector as stored.

How the copy is made (``openbook.store.copy_committed``):

- an embedded store (a folder): its SQLite database (SQLite's online backup, a consistent snapshot) and its
  current index generation folder are copied file for file, so row order, and with it BM25 tie order, stays the
  source's;
- any other backend (a ``postgresql://`` URL): ``openbook.store.copy.copy_store`` into a new embedded folder
  (documents, chunks, versions and stored vectors; rows in document-id order).

Artefacts kept beside the index (RAPTOR summary trees) are not copied: they summarise the documents being
removed. A measurement that needs them rebuilds them on the copy.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any, Collection

from ..errors import EvaluationError
from ..store import copy_committed, open_store
from ..store.base import IndexSettings, Store
from ..store.copy import StoredVectors
from ..versions import version_links


def absent_store(src: str | Path, doc_ids: Collection[str], dest: str | Path) -> Path:
    """Write a copy of the store at ``src`` without the documents ``doc_ids`` into the new folder ``dest``.

    Args:
        src: a store location (an embedded store folder, or a backend URL such as ``postgresql://...``); it is
            only read.
        doc_ids: documents to leave out (engine document ids); ids the store does not hold are ignored.
        dest: a folder that does not exist yet or is empty; it becomes an embedded store.

    Returns:
        ``dest`` as a ``Path``: open it with ``Engine.open(dest, config)``. Its corpus statistics
        (``get_corpus_stats``, ``get_idf``, ``get_vocabulary``) are those of the remaining documents; its
        vectors, when the source has any, are the source's for the remaining chunks (none recomputed).

    Raises:
        EvaluationError: ``dest`` is not empty, or the source has nothing indexed.
        StoreError, StoreVersionError: opening or reading the source, or writing the copy.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise EvaluationError(f"{dest} exists and is not an empty folder; the store without the documents "
                              f"needs a new folder")
    if not copy_committed(src, dest):
        raise EvaluationError(f"store {src} has nothing indexed; ingest the corpus first")
    with closing(open_store(dest)) as store:
        _delete_documents(store, doc_ids)
    return dest


def _delete_documents(store: Store, doc_ids: Collection[str]) -> None:
    """Delete ``doc_ids`` from ``store`` and rewrite its index without their chunks, keeping stored vectors."""
    manifest: dict[str, Any] = store.get_index_manifest() or {}
    if not manifest:
        raise EvaluationError(f"store {store.location} has nothing indexed; ingest the corpus first")
    bm25 = manifest.get("bm25") or {}
    store.configure(IndexSettings(k1=float(bm25.get("k1", 1.2)), b=float(bm25.get("b", 0.75)),
                                  analyzer=dict(manifest.get("analyzer") or {}),
                                  chunking=dict(manifest.get("chunking") or {})))
    with store.write_lock():
        stored = store.get_documents()
        present = [d for d in dict.fromkeys(doc_ids) if d in stored]
        if not present:
            return
        info = store.get_embedding()
        # kept rows keep their vectors and no chunk is added, so this source is never asked for a vector
        vectors = StoredVectors(info.model, info.normalized) if info is not None else None
        with store.transaction():
            removed = store.get_chunk_ids(present)
            store.delete_documents(present)
            store.put_versions(version_links(store.get_titles_and_metadata(versioned_only=True)))
            store.put_index(removed, [], [], embedder=vectors)
