"""The embedded store: one folder, no server.

Layout::

    STORE/
      openbook.sqlite     documents, chunks, metadata, content hashes, and the current index generation
      write.lock          held by the one process writing (ingest, delete); readers never take it
      gen-000007/         the index files of generation 7 (read-only once written; see openbook.store.generations)

Atomicity: an update writes a complete new ``gen-N`` folder first, then commits one SQLite transaction that
holds every document/chunk change *and* the new generation number. That commit is the only switch-over point:
a process killed before it leaves SQLite rolled back to the previous state, which still names the previous,
untouched generation folder; the half-written folder is deleted by the next writer. Readers open the
generation named in SQLite; older generation folders are removed after the commit (open memory maps stay
valid on POSIX).

Writers: one at a time. ``write_lock`` takes an exclusive lock on ``STORE/write.lock`` (``filelock``: ``fcntl``
on POSIX) for the whole of an ingest or delete, so a second writer waits (and is told so) instead of racing the
first or dying on SQLite's busy timeout. A long ingest commits in batches, each batch one transaction that
names a new generation, so an interrupted ingest keeps every batch committed before it.

Readers take no lock: WAL lets them read the last committed state while a writer works. A store whose folder
is not writable (read-only media, another user's files) is opened read-only (``mode=ro``, or ``immutable=1``
when SQLite cannot even create its shared-memory file there); it can be searched, not written.

This class implements ``openbook.store.base.Store``: the index operations (``bm25_top_k``, ``vector_top_k``,
``get_vectors``, ``get_idf``, ...) answer from the current generation's memory-mapped files, under a row mask built from
the ``Visibility`` before ranking.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
from contextlib import closing, contextmanager
from urllib.parse import quote
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, ContextManager, Iterable, Iterator, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # filelock is imported by the writers (write_lock, writer_active), not by a search
    import filelock

from ..blocks import decode_blocks, encode_blocks
from ..errors import IndexError_, StoreError, StoreVersionError
from ..types import Chunk, Document, Hit
from .filters import access_allows, acl_roles
from .base import analyzer_mismatch_error, empty_store_error, write_transaction
from .base import CorpusStats, EmbeddingInfo, IndexSettings, QueryTerms, StoredDocument, VectorSource, Visibility
from .generations import CHUNK_IDS, INDEX_FORMAT, MANIFEST, GenerationWrite, LoadedIndex, write_generation
from .generations import write_vectors_generation

FORMAT_VERSION = 1
DB_NAME = "openbook.sqlite"
LOCK_NAME = "write.lock"
BUILTIN_FIELDS = ("doc_id", "title", "format", "path")
"""Document fields every ``--where`` can use besides the metadata keys (``path``: the file's absolute path)."""


def _own_entry(name: str) -> bool:
    """Whether a folder entry is one a store (being created) writes, or hidden: the database and its SQLite
    side files, the writer lock, the generation folders, and what the server keeps in the store's folder (its
    ``keys.json``, which may be written before the first ingest, and ``uploads/``)."""
    return name.startswith((DB_NAME, LOCK_NAME, "gen-", ".")) or name in ("keys.json", "uploads")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    root TEXT NOT NULL,
    format TEXT NOT NULL,
    title TEXT NOT NULL,
    metadata TEXT NOT NULL,
    pages TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_root ON documents(root);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id),
    ord INTEGER NOT NULL,
    text TEXT NOT NULL,
    headings TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    page INTEGER
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS versions (doc_id TEXT PRIMARY KEY, superseded_by TEXT NOT NULL);
"""

_CONTEXTS_SCHEMA = ("CREATE TABLE IF NOT EXISTS chunk_contexts (chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
                    "context TEXT NOT NULL)")
"""Contextual retrieval's per-chunk contexts (``Chunk.context``), created by the first ingest that writes one."""

_BLOCKS_SCHEMA = ("CREATE TABLE IF NOT EXISTS chunk_blocks (chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, "
                  "blocks TEXT NOT NULL)")
"""Chunks' Markdown blocks (``Chunk.blocks``, as ``openbook.blocks.encode_blocks`` writes them), created by the first
ingest that writes some: a store without it (or a chunk without a row) reads as chunks without blocks."""


class EmbeddedStore:
    """SQLite + index generations in one folder. Use ``EmbeddedStore.open``.

    Not thread-safe; one writer process at a time (``write_lock``), any number of readers.
    """

    backend = "embedded"

    def __init__(self, path: Path, conn: sqlite3.Connection, read_only: bool = False) -> None:
        self.path = path
        self.conn = conn
        self.read_only = read_only
        self._lock: filelock.BaseFileLock | None = None
        self.settings: IndexSettings | None = None  # set by ``configure``; defaults on first use
        self._index: LoadedIndex | None = None
        self._index_gen = -1
        self._metadata: tuple[int, dict[str, dict[str, Any]]] | None = None  # (generation, fields by doc id)
        self._fields: tuple[int, set[str]] | None = None  # (generation, get_metadata_fields())
        self._wrote_generation = False  # the open transaction names a new generation
        self._committed_generation = 0  # the generation committed when the open transaction first wrote one
        self._snapshots = 0  # depth of open ``snapshot()`` blocks
        self._pinned: int | None = None  # the generation the outermost snapshot reads
        self._has_contexts: bool | None = None  # chunk_contexts table present; None: not checked yet
        self._has_blocks: bool | None = None  # chunk_blocks table present; None: not checked yet
        conn.create_function("openbook_access", 2, _sql_access, deterministic=True)  # the access rule, for count

    @property
    def location(self) -> str:
        """The store folder."""
        return str(self.path)

    # ------------------------------------------------------------------ open / create
    @classmethod
    def open(cls, path: str | Path, create: bool = False) -> "EmbeddedStore":
        """Open the store folder ``path``.

        Args:
            create: create the folder and database when missing (under the write lock).

        Without ``create`` nothing is written: a store in a folder this process cannot write is opened
        read-only and can still be searched.

        Raises:
            StoreError: the folder or database is missing (and ``create`` is False) or unreadable; with
                ``create``, the folder exists and holds files that are not a store's (a store never mixes its
                files with a user's).
            StoreVersionError: the store was written by an incompatible format version.
        """
        path = Path(path)
        db = path / DB_NAME
        if not db.is_file():
            if not create:
                raise StoreError(
                    f"no openbook store at {path}: run `openbook ingest PATH --store {path}` first"
                )
            foreign = sorted(c.name for c in path.iterdir() if not _own_entry(c.name)) if path.is_dir() else []
            if foreign:
                shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
                raise StoreError(f"{path} holds other files ({shown}) and is no openbook store: give --store a "
                                 f"new or empty folder, so that the store's files never mix with yours")
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store folder {path} ({exc.strerror or exc}); "
                                 f"choose a writable folder with --store") from None
        writable = os.access(path, os.W_OK) and (not db.exists() or os.access(db, os.W_OK))
        try:
            if writable:
                conn = sqlite3.connect(db, isolation_level=None, timeout=60)
                conn.execute("PRAGMA busy_timeout=60000")
                conn.execute("PRAGMA synchronous=NORMAL")
            else:
                conn = _connect_read_only(db)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db} is not a readable openbook database ({exc}); re-ingest the documents "
                             f"into a new store (`openbook ingest PATH --store NEW_FOLDER`)") from None
        store = cls(path, conn, read_only=not writable)
        try:
            if not store._has_schema():
                if not create or not writable:
                    busy = store.writer_active()
                    conn.close()
                    if busy:
                        raise StoreError(f"store {path} is being created by an ingest that is running; try again "
                                         f"when it has committed its first batch")
                    raise StoreError(f"{db} holds no openbook store: run `openbook ingest PATH --store {path}`")
                with store.write_lock():
                    store._create_schema()
            version = store.get_meta("format_version")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{db} is not a readable openbook database ({exc}); re-ingest the documents "
                             f"into a new store (`openbook ingest PATH --store NEW_FOLDER`)") from None
        if version is not None and int(version) != FORMAT_VERSION:
            conn.close()
            raise StoreVersionError(
                f"store {path} has format version {version}, this openbook reads version {FORMAT_VERSION}; "
                f"re-ingest the documents into a new store (`openbook ingest PATH --store NEW_FOLDER`), or "
                f"use the openbook version that wrote it"
            )
        return store

    def has_contexts(self) -> bool:
        """Whether the store holds a ``chunk_contexts`` table (some ingest used contextual retrieval)."""
        if self._has_contexts is None:
            self._has_contexts = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_contexts'").fetchone() is not None
        return bool(self._has_contexts)

    def _blocks_stored(self) -> bool:
        """Whether the store holds a ``chunk_blocks`` table (some ingest stored chunks' Markdown blocks)."""
        if self._has_blocks is None:
            self._has_blocks = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_blocks'").fetchone() is not None
        return bool(self._has_blocks)

    def _has_schema(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunks'"
                                 ).fetchone() is not None

    def _create_schema(self) -> None:
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(_SCHEMA)
        if self.get_meta("format_version") is None:
            self.set_meta("format_version", str(FORMAT_VERSION))

    def close(self) -> None:
        """Close the database connection."""
        self.conn.close()

    # ------------------------------------------------------------------ writers
    @contextmanager
    def write_lock(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the store's exclusive writer lock (re-entrant); ``on_wait`` hears one line if another writer
        holds it, then this call waits for it.

        Raises:
            StoreError: the store is read-only (it can be searched, not written).
        """
        if self.read_only:
            raise StoreError(f"store {self.path} is read-only here (no write permission): it can be searched, "
                             f"not written; copy it to a writable folder to change it")
        import filelock

        if self._lock is None:
            self._lock = filelock.FileLock(str(self.path / LOCK_NAME))
        try:
            try:
                self._lock.acquire(timeout=0)
            except filelock.Timeout:
                if on_wait is not None:
                    on_wait(f"waiting for another openbook ingest or delete on {self.path} to finish ...")
                self._lock.acquire()
        except OSError as exc:
            raise StoreError(f"cannot lock store {self.path} for writing ({exc.strerror or exc}); "
                             f"check the folder's permissions") from None
        try:
            yield
        finally:
            self._lock.release()

    def writer_active(self) -> bool:
        """Whether another process holds the writer lock right now (an ingest or delete is running)."""
        if self._lock is not None and self._lock.is_locked:
            return False
        if self.read_only or not (self.path / LOCK_NAME).exists():
            return False
        import filelock

        probe = filelock.FileLock(str(self.path / LOCK_NAME))
        try:
            probe.acquire(timeout=0)
        except filelock.Timeout:
            return True
        except OSError:
            return False
        probe.release()
        return False

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        """Current index generation (0: nothing indexed yet)."""
        return int(self.get_meta("generation") or 0)

    def generation_dir(self, generation: int | None = None) -> Path:
        gen = self.generation if generation is None else generation
        return self.path / f"gen-{gen:06d}"

    # ------------------------------------------------------------------ transactions
    def transaction(self) -> ContextManager[None]:
        """One write transaction (``BEGIN IMMEDIATE``): all or nothing."""
        return write_transaction(self)

    def begin(self) -> None:
        """Start a write transaction (``BEGIN IMMEDIATE``); hold ``write_lock`` first."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreError(f"store {self.path} is busy ({exc}): another program holds its database; "
                             f"try again when it finishes") from None
        self._has_contexts = self._has_blocks = None  # another process may have created them since the last check

    def commit(self) -> None:
        """Commit the open transaction; when it named a new generation, older generation folders are removed and
        the write-ahead log is folded into the database."""
        self.conn.execute("COMMIT")
        wrote, self._wrote_generation = self._wrote_generation, False
        self._metadata = self._fields = None
        if wrote:
            self.remove_stale_generations(keep=self.generation)
            self.checkpoint()

    def rollback(self) -> None:
        """Roll back the open transaction, if any (a generation folder it wrote is removed by the next writer)."""
        self._wrote_generation = False
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self._has_contexts = self._has_blocks = None  # a rolled-back ingest may have created them

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit inside a transaction: on an exception only its own writes are undone."""
        self.conn.execute("SAVEPOINT doc")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO doc")
            self.conn.execute("RELEASE doc")
            self._has_contexts = self._has_blocks = None
            raise
        else:
            self.conn.execute("RELEASE doc")

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (so a later read-only copy sees everything)."""
        try:
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # never waits for readers
        except sqlite3.OperationalError:
            pass  # a reader holds an old snapshot: the next writer or the last close checkpoints

    def new_generation_dir(self) -> tuple[int, Path]:
        """Number and empty folder for the next generation; stale unfinished folders are removed first. A second
        write in one transaction builds on the first's folder and keeps the committed generation's folder too
        (the one a rollback, or the process dying, returns to)."""
        if not self._wrote_generation:
            self._committed_generation = self.generation
            self.remove_stale_generations(keep=self.generation)
        else:
            self.remove_stale_generations(keep=self.generation, also=self._committed_generation)
        gen = self.generation + 1
        folder = self.generation_dir(gen)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        return gen, folder

    def _newer_generation_folder(self, gen: int) -> bool:
        """Whether a ``gen-M`` folder with M > ``gen`` exists (a writer wrote it; a committed one removes ``gen``)."""
        return any(child.name[4:].isdigit() and int(child.name[4:]) > gen for child in self.path.glob("gen-*"))

    def remove_stale_generations(self, keep: int, also: int | None = None) -> None:
        """Delete every ``gen-*`` folder except generation ``keep`` (and ``also``)."""
        kept = {f"gen-{keep:06d}"} | ({f"gen-{also:06d}"} if also is not None else set())
        for child in self.path.glob("gen-*"):
            if child.is_dir() and child.name not in kept:
                shutil.rmtree(child, ignore_errors=True)

    # ------------------------------------------------------------------ Store protocol: settings, info, snapshot
    def configure(self, settings: IndexSettings) -> None:
        """BM25 parameters, analyzer settings and ANN threshold for later queries and index writes."""
        self.settings = settings
        if self._index is not None:
            self._index, self._index_gen = None, -1  # reload with the new k1/b

    def _settings(self) -> IndexSettings:
        if self.settings is None:
            from ..index.analyzer import Analyzer

            self.settings = IndexSettings(analyzer=Analyzer().settings())
        return self.settings

    def info(self) -> dict[str, Any]:
        """``backend``, ``location``, ``schema_version`` (the SQLite format version), ``index_format``,
        ``generation``, ``manifest``, ``read_only``, ``ingest_running``."""
        index = self.loaded()
        return {"backend": self.backend, "location": self.location,
                "schema_version": int(self.get_meta("format_version") or FORMAT_VERSION),
                "index_format": INDEX_FORMAT, "generation": self.generation,
                "manifest": index.manifest if index else None, "read_only": self.read_only,
                "ingest_running": self.writer_active()}

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Pin one committed state: the generation loaded and a SQLite read transaction on the state that names
        it (WAL keeps it while writers commit). Re-entrant; inside a write transaction it adds nothing."""
        if self._snapshots or self.conn.in_transaction:
            self._snapshots += 1
            try:
                yield
            finally:
                self._snapshots -= 1
            return
        for attempt in range(3):
            self.conn.execute("BEGIN")
            gen = self.generation  # the first read pins the snapshot
            if gen == 0 or gen == self._index_gen:
                break
            try:
                self._load(gen)
                break
            except FileNotFoundError as exc:  # a writer committed a newer generation and removed this one
                self.conn.execute("COMMIT")
                if attempt == 2:
                    raise self._missing(exc) from None
            except BaseException:
                self.conn.execute("COMMIT")
                raise
        self._snapshots += 1
        self._pinned = gen
        try:
            yield
        finally:
            self._snapshots -= 1
            self._pinned = None
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ Store protocol: the index
    def loaded(self) -> LoadedIndex | None:
        """The current generation's index, loaded once per generation; None before the first index write.

        Raises:
            StoreError: the generation's files are missing. StoreVersionError: built by an incompatible openbook
                (format or analyzer settings).
        """
        if self._pinned is not None:  # inside a snapshot: its generation, already loaded
            if self._pinned == 0:
                return None
            if self._index_gen == self._pinned:
                return self._index
        for attempt in range(3):
            gen = self.generation
            if gen == 0:
                return None
            if self._index is not None and self._index_gen == gen:
                return self._index
            try:
                return self._load(gen)
            except FileNotFoundError as exc:
                if attempt < 2 and self.generation != gen:
                    continue  # a writer committed a newer generation and removed this one meanwhile
                raise self._missing(exc) from None
        return None  # pragma: no cover - the loop returns or raises

    def _missing(self, exc: FileNotFoundError) -> StoreError:
        return StoreError(f"index files of {self.path} are missing ({exc.filename}); re-ingest "
                          f"with `openbook ingest PATH --store {self.path}`")

    def _load(self, gen: int) -> LoadedIndex:
        """Load generation ``gen`` as the current index.

        Raises:
            FileNotFoundError: its folder is gone, or was being removed while its files were read (a newer
                generation is there: a writer committed it; the caller loads that one instead).
        """
        settings = self._settings()
        folder = self.generation_dir(gen)
        try:
            index = LoadedIndex(folder)
        except IndexError_ as exc:  # the index loaders report a file missing under them as IndexError_
            if folder.is_dir() and not self._newer_generation_folder(gen):
                raise
            raise FileNotFoundError(errno.ENOENT, f"generation {gen} was removed while it was read",
                                    str(folder)) from exc
        if index.manifest.get("format_version") != INDEX_FORMAT:
            raise StoreVersionError(
                f"index in {self.path} was built by an incompatible openbook (index format "
                f"{index.manifest.get('format_version')}, this openbook reads {INDEX_FORMAT}); re-ingest the "
                f"documents into a new store (`openbook ingest PATH --store NEW_FOLDER`)"
            )
        if index.manifest.get("analyzer") != dict(settings.analyzer):
            raise analyzer_mismatch_error(self.location, index.manifest.get("analyzer"), settings.analyzer)
        if (index.bm25.k1, index.bm25.b) != (settings.k1, settings.b):  # only the length norms change
            index.bm25 = index.bm25.with_params(settings.k1, settings.b)
        self._index, self._index_gen = index, gen
        self._metadata = None  # filters read metadata of this generation's documents, not a cached older one
        self._fields = None
        return index

    def require_index(self) -> LoadedIndex:
        """``loaded()``, refusing an empty store with how to fill it.

        Raises:
            StoreError: nothing indexed yet (says whether an ingest is running).
        """
        index = self.loaded()
        if index is None or index.bm25.rows == 0:
            raise empty_store_error(self)
        return index

    def put_index(self, removed: Collection[str], chunks: Sequence[Chunk], terms: Sequence[Sequence[str]], *,
                    reuse: Collection[str] = (), embedder: VectorSource | None = None,
                    reembed: bool = False, defer: bool = False) -> int:
        """Write the next generation (``openbook.store.generations``) and name it in the open transaction."""
        removed = set(removed)
        old = self._previous_index(removed)
        gen, folder = self.new_generation_dir()
        target = GenerationWrite(folder, gen, self._settings(), self.access_lists())

        def texts(ids: list[str]) -> dict[str, str]:
            return {cid: c.indexed_text() for cid, c in self.get_chunks(ids).items()}

        embedded = write_generation(target, old, removed, chunks, terms, reuse=set(reuse),
                                    embedder=embedder, reembed=reembed, defer=defer, chunk_texts=texts)
        self.set_meta("generation", str(gen))
        self._wrote_generation = True
        return embedded

    def _previous_index(self, removed: Collection[str]) -> LoadedIndex | None:
        """The committed index a write builds on: ``loaded()``, or, when its analyzer settings differ from
        ``configure``'s, the same generation loaded unchecked if ``removed`` names every one of its rows (a
        reindex replaces it whole and reuses only its vectors). Raises ``StoreVersionError`` otherwise."""
        try:
            return self.loaded()
        except StoreVersionError:
            gen = self.generation
            old = LoadedIndex(self.generation_dir(gen))
            if old.manifest.get("format_version") != INDEX_FORMAT or \
                    not all(cid.decode("ascii") in removed for cid in old.chunk_ids):
                raise
            return old

    def get_index_manifest(self) -> dict[str, Any] | None:
        """The current generation's ``manifest.json`` as written, unchecked; None before the first index write."""
        gen = self.generation
        if gen == 0:
            return None
        try:
            return json.loads((self.generation_dir(gen) / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise self._missing(exc) from None

    def get_indexed_chunk_ids(self) -> list[str]:
        """The current generation's ``chunk_ids.npy``, in row order, unchecked; empty before the first write."""
        gen = self.generation
        if gen == 0:
            return []
        try:
            ids = np.load(self.generation_dir(gen) / CHUNK_IDS)
        except FileNotFoundError as exc:
            raise self._missing(exc) from None
        return [c.decode("ascii") for c in ids]

    def get_corpus_stats(self) -> CorpusStats | None:
        index = self.loaded()
        if index is None:
            return None
        return CorpusStats(documents=len(index.doc_ids), chunks=index.bm25.rows, avgdl=index.bm25.avgdl,
                           terms=len(index.bm25.vocab))

    def get_embedding(self) -> EmbeddingInfo | None:
        index = self.loaded()
        if index is None or index.dense is None:
            return None
        d = index.dense
        return EmbeddingInfo(model=d.model, dim=d.dim, normalized=d.normalized, ann=d.uses_ann,
                             pending=index.pending_count, precision=d.precision)

    def local_index(self) -> EmbeddedStore:
        """This store: its index is a folder of generations (``openbook.store.base.LocalIndex``)."""
        return self

    def visible_rows(self, index: LoadedIndex, visibility: Visibility) -> np.ndarray | None:
        """bool ``[rows of index]``: the rows ``visibility`` may see, None when every row is visible; the
        documents' fields are read once per generation for ``--where`` clauses."""

        def metadata() -> dict[str, dict[str, Any]]:
            gen = self._index_gen
            if self._metadata is None or self._metadata[0] != gen:
                self._metadata = (gen, self.get_document_metadata())
            return self._metadata[1]

        return index.mask(visibility, metadata)

    def bm25_top_k(self, queries: Sequence[QueryTerms], k: int, visibility: Visibility) -> list[list[Hit]]:
        index = self.require_index()
        bm25 = index.bm25_for(visibility.roles)
        rows, scores = bm25.search_batch(queries, k, self.visible_rows(index, visibility))
        return index.hits(rows, scores, "bm25")

    def vector_top_k(self, queries: np.ndarray, k: int, visibility: Visibility) -> list[list[Hit]]:
        index = self.require_index()
        if index.dense is None:
            raise StoreError(f"store {self.path} holds no vectors: run `openbook ingest --reembed PATH --store "
                             f"{self.path}`")
        rows, scores = index.dense.search_batch(queries, k, index.dense_mask(self.visible_rows(index, visibility)))
        return index.hits(rows, scores, "dense")

    def get_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        index = self.require_index()
        if index.dense is None:
            raise StoreError(f"store {self.path} holds no vectors: run `openbook ingest --reembed PATH --store "
                             f"{self.path}`")
        try:
            rows = index.rows_of(chunk_ids)
        except KeyError as exc:
            raise StoreError(f"chunk {exc.args[0]!r} is not indexed in store {self.path}") from None
        if index.pending is not None:
            waiting = [c for c, r in zip(chunk_ids, rows) if index.pending[r]]
            if waiting:
                raise StoreError(f"chunk {waiting[0]!r} has no vector yet in store {self.path} ({index.pending_count} "
                                 f"chunks pending): `openbook embed --store {self.path}` computes them")
        return np.asarray(index.dense.vectors[rows], dtype=np.float32).reshape(len(rows), index.dense.dim)

    def get_pending_vectors(self, limit: int | None = None) -> list[str]:
        index = self.loaded()
        if index is None or index.pending is None:
            return []
        rows = np.flatnonzero(index.pending)
        return [index.chunk_id(int(r)) for r in (rows if limit is None else rows[:limit])]

    def put_vectors(self, chunk_ids: Sequence[str], vectors: np.ndarray) -> None:
        """Write the next generation with these vectors (``write_vectors_generation``: the BM25 files are
        hard-linked, not rewritten) and name it in the open transaction."""
        old = self.loaded()
        if old is None or old.dense is None:
            raise StoreError(f"store {self.path} records no embedding model (a BM25-only index): run `openbook "
                             f"ingest --reembed PATH --store {self.path}` to embed it")
        shape = np.shape(vectors)
        if shape != (len(chunk_ids), old.dense.dim):
            raise StoreError(f"put_vectors: vectors of shape {shape} for {len(chunk_ids)} chunks; store "
                             f"{self.path} holds {old.dense.model} vectors of dimension {old.dense.dim}")
        try:
            old.rows_of(chunk_ids)
        except KeyError as exc:
            raise StoreError(f"chunk {exc.args[0]!r} is not indexed in store {self.path}") from None
        gen, folder = self.new_generation_dir()
        write_vectors_generation(GenerationWrite(folder, gen, self._settings(), {}), old, chunk_ids, vectors)
        self.set_meta("generation", str(gen))
        self._wrote_generation = True

    def _bm25_of(self, roles: Sequence[str] | None):
        index = self.require_index()
        return index.bm25 if roles is None else index.bm25_for(roles)

    def get_idf(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        return self._bm25_of(roles).idf(terms)

    def get_document_frequency(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        return self._bm25_of(roles).document_frequency(terms)

    def get_vocabulary(self) -> Mapping[str, int]:
        return self.require_index().bm25.term_ids

    # ------------------------------------------------------------------ documents and chunks
    def get_documents(self) -> dict[str, StoredDocument]:
        """Every stored document by id."""
        rows = self.conn.execute("SELECT doc_id, source, root, content_hash FROM documents")
        return {r[0]: StoredDocument(*r) for r in rows}

    def count_stored(self, roles: Sequence[str] | None = None) -> tuple[int, int]:
        """(documents, chunks) stored; with ``roles``, only those the roles may see (one SQL query: the access
        rule runs inside SQLite on each document's ``acl``, as the index's ``acl.json`` holds it)."""
        if roles is None:
            d = self.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            c = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            return int(d), int(c)
        d, c = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM((SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id)), 0) "
            "FROM documents d WHERE json_extract(d.metadata, '$.acl') IS NULL "
            "OR openbook_access(json_extract(d.metadata, '$.acl'), ?)",
            (json.dumps(list(roles)),)).fetchone()
        return int(d), int(c)

    def put_document(self, doc: Document, root: str, chunks: Sequence[Chunk], digest: str) -> None:
        """Insert or replace a document and all its chunks (call inside ``transaction``).

        ``digest`` is the hash compared on the next ingest to decide whether the document changed.
        """
        self.delete_documents([doc.doc_id])
        self.conn.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc.doc_id, doc.source, root, doc.format, doc.title,
             json.dumps(dict(doc.metadata), ensure_ascii=False, default=str), json.dumps(list(doc.pages)),
             digest, doc.text),
        )
        self.conn.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(c.chunk_id, c.doc_id, i, c.text, json.dumps(list(c.headings), ensure_ascii=False), c.start,
              c.end, c.page) for i, c in enumerate(chunks)],
        )
        situated = [(c.chunk_id, c.doc_id, c.context) for c in chunks if c.context]
        if situated:  # contextual retrieval: the table exists only in stores that used it
            self.conn.execute(_CONTEXTS_SCHEMA)
            self._has_contexts = True
            self.conn.executemany("INSERT OR REPLACE INTO chunk_contexts VALUES (?, ?, ?)", situated)
        parsed = [(c.chunk_id, c.doc_id, encode_blocks(c.blocks)) for c in chunks if c.blocks]
        if parsed:  # Markdown chunks' blocks: the table exists only in stores that were given some
            self.conn.execute(_BLOCKS_SCHEMA)
            self._has_blocks = True
            self.conn.executemany("INSERT OR REPLACE INTO chunk_blocks VALUES (?, ?, ?)", parsed)

    def delete_documents(self, doc_ids: Iterable[str]) -> None:
        """Remove documents and their chunks (call inside ``transaction``)."""
        ids = [(d,) for d in doc_ids]
        if self.has_contexts():
            self.conn.executemany("DELETE FROM chunk_contexts WHERE doc_id = ?", ids)
        if self._blocks_stored():
            self.conn.executemany("DELETE FROM chunk_blocks WHERE doc_id = ?", ids)
        self.conn.executemany("DELETE FROM chunks WHERE doc_id = ?", ids)
        self.conn.executemany("DELETE FROM documents WHERE doc_id = ?", ids)

    def set_digests(self, digests: Mapping[str, str]) -> None:
        """Replace documents' stored digests (call inside ``transaction``)."""
        self.conn.executemany("UPDATE documents SET content_hash = ? WHERE doc_id = ?",
                              [(digest, doc_id) for doc_id, digest in digests.items()])

    def get_chunk_ids(self, doc_ids: Iterable[str]) -> set[str]:
        """Chunk ids currently stored for these documents."""
        out: set[str] = set()
        for d in doc_ids:
            out.update(r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (d,)))
        return out

    def get_titles_and_metadata(self, versioned_only: bool = False) -> dict[str, tuple[str, dict[str, Any]]]:
        """(title, metadata) of every document by id.

        ``versioned_only``: only what version linking can use: every document when some document names a
        ``supersedes``, otherwise only documents with an ``updated`` date (a BEIR corpus has none: no JSON parsed).
        """
        sql = "SELECT doc_id, title, metadata FROM documents"
        if versioned_only and not self.conn.execute(
                "SELECT 1 FROM documents WHERE json_extract(metadata, '$.supersedes') IS NOT NULL LIMIT 1").fetchone():
            sql += " WHERE json_extract(metadata, '$.updated') IS NOT NULL"
        return {r[0]: (r[1], json.loads(r[2])) for r in self.conn.execute(sql)}

    def access_lists(self) -> dict[str, list[str]]:
        """``acl`` of the documents that have one, by id, as ``openbook.store.filters.acl_roles`` reads it."""
        rows = self.conn.execute("SELECT doc_id, json_extract(metadata, '$.acl') FROM documents "
                                 "WHERE json_extract(metadata, '$.acl') IS NOT NULL")
        out: dict[str, list[str]] = {}
        for doc_id, raw in rows:
            roles = acl_roles(_stored_acl(raw))
            if roles:
                out[doc_id] = list(roles)
        return out

    def put_versions(self, links: dict[str, str]) -> None:
        """Replace the recorded version links (older doc id -> newer doc id); inside ``transaction``."""
        self.conn.execute("DELETE FROM versions")
        self.conn.executemany("INSERT INTO versions VALUES (?, ?)", sorted(links.items()))

    def get_versions(self) -> dict[str, str]:
        """Recorded version links: older doc id -> the doc id that supersedes it."""
        return dict(self.conn.execute("SELECT doc_id, superseded_by FROM versions"))

    def get_document_metadata(self) -> dict[str, dict[str, Any]]:
        """Filterable fields of every document by id: ``BUILTIN_FIELDS`` and then its metadata keys (a
        metadata key of the same name wins)."""
        rows = self.conn.execute("SELECT doc_id, metadata, title, format, source FROM documents")
        return {r[0]: {"doc_id": r[0], "title": r[2], "format": r[3], "path": r[4], **json.loads(r[1])}
                for r in rows}

    def get_metadata_fields(self) -> set[str]:
        """Every field some document has: ``BUILTIN_FIELDS`` plus the metadata keys in use (cached per
        generation)."""
        gen = self.generation
        if self._fields is None or self._fields[0] != gen or self.conn.in_transaction and not self._snapshots:
            rows = self.conn.execute("SELECT DISTINCT j.key FROM documents, json_each(documents.metadata) AS j")
            self._fields = (gen, {*BUILTIN_FIELDS, *(r[0] for r in rows)})
        return set(self._fields[1])

    def get_sources(self) -> dict[str, list[str]]:
        """Source path -> ids of the documents read from it."""
        out: dict[str, list[str]] = {}
        for doc_id, source in self.conn.execute("SELECT doc_id, source FROM documents ORDER BY doc_id"):
            out.setdefault(source, []).append(doc_id)
        return out

    def get_document_rows(self) -> list[tuple[str, str, str, dict[str, Any], int]]:
        """(doc_id, title, source, metadata, chunk count) of every document, by doc id."""
        rows = self.conn.execute(
            "SELECT d.doc_id, d.title, d.source, d.metadata, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) "
            "FROM documents d ORDER BY d.doc_id")
        return [(r[0], r[1], r[2], json.loads(r[3]), r[4]) for r in rows]

    def get_document_chunks(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document, in document order."""
        ids = [r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ? ORDER BY ord", (doc_id,))]
        chunks = self.get_chunks(ids)
        return [chunks[c] for c in ids if c in chunks]

    def get_document(self, doc_id: str) -> Document | None:
        """The stored document, text included, or None."""
        r = self.conn.execute(
            "SELECT doc_id, text, title, source, format, metadata, pages FROM documents WHERE doc_id = ?",
            (doc_id,),
        ).fetchone()
        if r is None:
            return None
        return Document(doc_id=r[0], text=r[1], title=r[2], source=r[3], format=r[4],
                        metadata=json.loads(r[5]), pages=tuple(json.loads(r[6])))

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id, with their document's title and metadata; unknown ids are absent."""
        out: dict[str, Chunk] = {}
        meta_cache: dict[str, tuple[str, Mapping[str, Any]]] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            situated = self.has_contexts()
            parsed = self._blocks_stored()
            rows = self.conn.execute(
                "SELECT c.chunk_id, c.doc_id, c.text, c.headings, c.start, c.end, c.page, d.title, d.metadata"
                + (", x.context" if situated else ", ''")
                + ", d.format" + (", b.blocks" if parsed else ", NULL")
                + " FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
                + ("LEFT JOIN chunk_contexts x ON x.chunk_id = c.chunk_id " if situated else "")
                + ("LEFT JOIN chunk_blocks b ON b.chunk_id = c.chunk_id " if parsed else "")
                + f"WHERE c.chunk_id IN ({marks})",
                part,
            )
            for r in rows:
                if r[1] not in meta_cache:
                    meta_cache[r[1]] = (r[7], json.loads(r[8]))
                title, meta = meta_cache[r[1]]
                out[r[0]] = Chunk(chunk_id=r[0], doc_id=r[1], text=r[2], title=title,
                                  headings=tuple(json.loads(r[3])), start=r[4], end=r[5], page=r[6],
                                  metadata=meta, context=r[9] or "", format=r[10] or "",
                                  blocks=decode_blocks(r[11]))
        return out


def remove_empty_store(path: str | Path, kept: Collection[str] | None) -> bool:
    """Remove the store a first ingest created at ``path`` when it holds no document (every file failed or had no
    text), so that nothing is left that later reads as a valid, empty store.

    Only what the ingest made goes: ``kept`` names the entries the folder held before it (None: the folder did
    not exist, and is removed too). The check and the removal hold the writer lock, so a concurrent ingest
    that has committed a document keeps its store. (One that opened the new store and waits for the lock
    meanwhile writes into the removed database: two first ingests into one new folder at once is not supported.)

    Returns:
        True when the store was removed; False when it holds a document, or is not there.

    Raises:
        StoreError: the store cannot be opened or locked.
    """
    path = Path(path)
    if not (path / DB_NAME).is_file():
        return False
    store = EmbeddedStore.open(path)
    try:
        with store.write_lock():
            if store.count_stored() != (0, 0):
                return False
            store.close()
            for entry in path.iterdir():
                if entry.name == LOCK_NAME or (kept is not None and entry.name in kept):
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink(missing_ok=True)
    finally:
        store.close()
    if kept is None or LOCK_NAME not in kept:
        (path / LOCK_NAME).unlink(missing_ok=True)
    if kept is None:
        try:
            path.rmdir()
        except OSError:  # something else appeared in it meanwhile: left as it is
            pass
    return True


def _stored_acl(raw: Any) -> Any:
    """A document's ``acl`` as SQLite's ``json_extract(metadata, '$.acl')`` returns it (a list as JSON text)."""
    try:
        return json.loads(raw) if isinstance(raw, str) and raw.startswith("[") else raw
    except ValueError:
        return raw


def _sql_access(raw: Any, roles_json: str) -> bool:
    """``openbook_access(acl, roles)`` inside SQLite: ``access_allows`` on a stored ``acl`` and a JSON role list."""
    return access_allows(_stored_acl(raw), json.loads(roles_json))


def _connect_read_only(db: Path) -> sqlite3.Connection:
    """A read-only connection: ``mode=ro``, or ``immutable=1`` where SQLite cannot create its ``-shm`` file."""
    uri = "file:" + quote(str(db.resolve()))
    try:
        conn = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None, timeout=60)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, isolation_level=None)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn


def copy_committed(src: str | Path, dest: Path) -> bool:
    """Copy the embedded store at ``src`` (its database and current generation folder) into the folder ``dest``
    under one read snapshot: a commit to ``src`` during the copy is not seen.

    Returns:
        True; False, writing nothing, when ``src`` has nothing indexed.

    Raises:
        StoreError, StoreVersionError: opening ``src``. OSError: writing ``dest``.
    """
    with closing(EmbeddedStore.open(src)) as source:
        with source.snapshot():
            generation = source.generation
            if not generation:
                return False
            dest.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(dest / DB_NAME)) as target:
                source.conn.backup(target)
            shutil.copytree(source.generation_dir(generation), dest / source.generation_dir(generation).name)
    return True
