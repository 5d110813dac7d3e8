"""The PostgreSQL store: one database shared by many processes and hosts (``--store postgresql://...``).

Needs ``pip install 'openbook[postgresql]'`` (psycopg 3 and the pgvector adapter) and a PostgreSQL server with the
``vector`` extension (pgvector >= 0.8). Everything lives in the schema ``openbook`` of the database::

    schema_version   one row per applied schema migration (openbook refuses a database newer than it knows)
    meta             key -> JSON: the index manifest (analyzer, BM25 k1/b, chunking, embedding model/dim)
    documents        doc_id, source, root, format, title, metadata (jsonb), pages, content_hash, text,
                     acl (the access roles, case-folded: the access rule in SQL)
    chunks           chunk_id, doc_id (-> documents, cascade), ord, text, headings, start, end, page, blocks
    versions         older doc_id -> superseding doc_id
    index_rows       row (identity: insertion order, the tie-break), chunk_id, doc_id, length (analyzed terms),
                     embedding (pgvector; NULL in a BM25-only index), block (its postings block); an HNSW
                     index on the embedding from ``ann_threshold`` rows on (built after the ingest that
                     crosses it), exact search below
    terms            term_id, term (analyzed), df (chunks containing it)
    postings         (term_id, block) -> rows[], tfs[], lengths[]: one term's postings among one block of at most
                     ``BLOCK_ROWS`` rows written together, with each row's length (a query reads postings only);
                     16 bytes a posting instead of ~100 as one table row and index entry each
    index_stats      rows, total_length, generation (bumped by every write: caches key on it)

The lexical leg is BM25 computed inside the database over the postings table, exactly openbook's scoring
(``openbook.index.sparse``: Lucene idf ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over documents and
``tf / (tf + k1 * (1 - b + b * |d| / avgdl))`` over rows, times the query term's weight; a term's document count is
taken from its postings once per index generation), with openbook's analyzer: the
terms are analyzed by openbook and stored as they are (CJK bigrams, stems and codes included), so the database
never tokenises. Why not ParadeDB ``pg_search`` or Timescale ``pg_textsearch``: neither lets a query weight its
terms (glossary expansions), ``pg_search`` fixes k1/b and quantises lengths, and ``pg_textsearch`` filters after
its index scan; BENCHMARKS.md ("Store backends", BM25 extensions) has the measurement.

Visibility is applied in SQL before ranking: the access rule as ``documents.acl`` (empty = public, else one of
the caller's case-folded roles), ``--where`` clauses as the set of document ids ``Visibility.allows`` admits
(computed once per index generation from ``get_document_metadata``; the clause grammar's date/number/string
comparison stays in one place), excluded documents as ``NOT doc_id = ANY(...)``.

Concurrency: writers take a session-level advisory lock (``write_lock``) for a whole ingest, so a second ingest
waits (and is told so) instead of racing; a process that dies drops its connection and with it the lock.
Every batch is one transaction (``begin``/``commit``); readers use ``snapshot()`` (``REPEATABLE READ``, read only)
and so see whole batches or nothing.

Bulk writes: ``put_document`` buffers and writes documents and chunks with binary COPY; ``put_index`` COPYs the
rows and one term array per chunk and lets the database count tf and df and pack the postings. The HNSW graph is
not maintained vector by vector during a large ingest: it is built once when the writer lock is released (see
``ANN_REBUILD_FRACTION``); dropping an existing graph in a batch's transaction blocks readers of ``index_rows``
until that batch commits.

Vector precision (``IndexSettings.vector_precision``, recorded as the manifest's ``embedding.precision``): the
``embedding`` column always holds the float32 vectors; the precision decides what the HNSW graph, the part that
must stay in memory, is built on (``PG_PRECISIONS``): ``f32`` the column itself (``vector_cosine_ops``), ``f16``
the expression ``embedding::halfvec(dim)`` (``halfvec_cosine_ops``), ``binary`` ``binary_quantize(embedding)::
bit(dim)`` (``bit_hamming_ops``), taken about the vectors' mean when the graph is built (meta
``graph_centre``; learned embeddings share a direction that would set most bits alike in every vector). With
``f16`` and ``binary`` the graph picks ``OVERSAMPLE`` times ``k``
candidates and they are re-ranked by the exact cosine of the column, pgvector's documented recipe. pgvector has
no int8 type, so ``int8`` is refused here (``f16`` halves the graph's vectors, ``binary`` divides them by 32).
Exact search (below ``ann_threshold``) scans the float32 column whatever the precision. Another precision than
the recorded one drops the graph at the next index write; it is built again at the session's end.
"""

from __future__ import annotations

import json
import re
import zlib
from contextlib import contextmanager
from typing import Any, Callable, Collection, ContextManager, Iterable, Iterator, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

import numpy as np

try:
    import psycopg
    from psycopg import sql
    from pgvector.psycopg import register_vector
except ImportError as exc:  # pragma: no cover - the optional extra is missing
    from .._extras import install_command

    raise ImportError(f"the postgresql store needs psycopg and pgvector: {install_command('postgresql')} "
                      f"({exc})", name=exc.name) from None

from ..errors import StoreError, StoreVersionError
from ..index.dense import OVERSAMPLE
from ..blocks import decode_blocks, encode_blocks
from ..types import Chunk, Document, Hit
from .filters import acl_roles
from .base import (CorpusStats, EmbeddingInfo, IndexSettings, QueryTerms, StoredDocument, VectorSource,
                   Visibility, analyzer_mismatch_error, empty_store_error, write_transaction)

SCHEMA = "openbook"
SCHEMA_VERSION = 3
"""The schema this openbook writes. ``MIGRATIONS[v]`` turns version ``v - 1`` into ``v``."""

INDEX_FORMAT = 1
BUILTIN_FIELDS = ("doc_id", "title", "format", "path")

_CREATE = """
CREATE SCHEMA IF NOT EXISTS openbook;
CREATE TABLE openbook.schema_version (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now(),
    openbook text NOT NULL
);
CREATE TABLE openbook.meta (key text PRIMARY KEY, value jsonb);
CREATE TABLE openbook.documents (
    doc_id text PRIMARY KEY,
    source text NOT NULL,
    root text NOT NULL,
    format text NOT NULL,
    title text NOT NULL,
    metadata jsonb NOT NULL,
    pages jsonb NOT NULL,
    content_hash text NOT NULL,
    text text NOT NULL,
    acl text[] NOT NULL
);
CREATE INDEX documents_source ON openbook.documents (source);
CREATE TABLE openbook.chunks (
    chunk_id text PRIMARY KEY,
    doc_id text NOT NULL REFERENCES openbook.documents (doc_id) ON DELETE CASCADE,
    ord integer NOT NULL,
    text text NOT NULL,
    headings jsonb NOT NULL,
    start_char integer NOT NULL,
    end_char integer NOT NULL,
    page integer
);
CREATE INDEX chunks_doc ON openbook.chunks (doc_id, ord);
CREATE TABLE openbook.versions (doc_id text PRIMARY KEY, superseded_by text NOT NULL);
CREATE TABLE openbook.index_rows (
    row bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chunk_id text NOT NULL UNIQUE,
    doc_id text NOT NULL,
    length integer NOT NULL,
    embedding vector
);
CREATE INDEX index_rows_doc ON openbook.index_rows (doc_id);
CREATE TABLE openbook.terms (
    term_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    term text NOT NULL UNIQUE,
    df integer NOT NULL
);
CREATE TABLE openbook.postings (
    term_id integer NOT NULL,
    row bigint NOT NULL,
    tf integer NOT NULL,
    length integer NOT NULL,
    PRIMARY KEY (term_id, row) INCLUDE (tf, length)
);
CREATE INDEX postings_row ON openbook.postings (row);
CREATE TABLE openbook.index_stats (
    id integer PRIMARY KEY CHECK (id = 1),
    rows bigint NOT NULL,
    total_length bigint NOT NULL,
    generation bigint NOT NULL
);
INSERT INTO openbook.index_stats VALUES (1, 0, 0, 0);
"""

BLOCK_ROWS = 4096
"""Index rows per postings block: the postings of one term among (at most) this many rows of one write are one
table row of arrays. Larger blocks: fewer bytes and tuples per posting; smaller: cheaper deletes (a delete
rewrites the blocks of its rows)."""

_PACKED_POSTINGS = f"""
CREATE SEQUENCE openbook.blocks;
ALTER TABLE openbook.index_rows ADD COLUMN block bigint;
UPDATE openbook.index_rows SET block = -1 - row / {BLOCK_ROWS};
ALTER TABLE openbook.index_rows ALTER COLUMN block SET NOT NULL;
CREATE TABLE openbook.postings_packed (
    term_id integer NOT NULL,
    block bigint NOT NULL,
    rows bigint[] NOT NULL,
    tfs integer[] NOT NULL,
    lengths integer[] NOT NULL,
    PRIMARY KEY (term_id, block)
);
ALTER TABLE openbook.postings_packed ALTER COLUMN rows SET STORAGE EXTERNAL,
    ALTER COLUMN tfs SET STORAGE EXTERNAL, ALTER COLUMN lengths SET STORAGE EXTERNAL;
INSERT INTO openbook.postings_packed
    SELECT p.term_id, r.block, array_agg(p.row ORDER BY p.row), array_agg(p.tf ORDER BY p.row),
           array_agg(p.length ORDER BY p.row)
    FROM openbook.postings p JOIN openbook.index_rows r ON r.row = p.row GROUP BY p.term_id, r.block;
DROP TABLE openbook.postings;
ALTER TABLE openbook.postings_packed RENAME TO postings;
ALTER INDEX openbook.postings_packed_pkey RENAME TO postings_pkey;
CREATE INDEX postings_block ON openbook.postings (block);
"""

_CHUNK_BLOCKS = "ALTER TABLE openbook.chunks ADD COLUMN blocks text;"

MIGRATIONS: dict[int, str] = {1: _CREATE, 2: _PACKED_POSTINGS, 3: _CHUNK_BLOCKS}
"""Schema version -> the SQL that reaches it from the previous one (1: create everything; 2: postings packed in
blocks of arrays, ``index_rows.block``; 3: ``chunks.blocks``, a chunk's Markdown blocks as
``openbook.blocks.encode_blocks`` writes them, NULL for a chunk written before: read as no blocks). An older store
is converted when a newer openbook opens it."""

_LOCK_KEY = zlib.crc32(b"openbook.store.write") - 2**31
"""The advisory lock id of a store's writer lock (one store per database)."""

HNSW_INDEX = "index_rows_hnsw"

PG_PRECISIONS = ("f32", "f16", "binary")
"""The vector precisions this store builds its HNSW graph at (module docstring)."""

VACUUM_AFTER_ROWS = 1000
"""A commit that added at least this many index rows is followed by ``VACUUM (ANALYZE)`` of the index tables."""

PUT_BUFFER = 2000
"""Documents ``put_document`` buffers before writing them with one COPY (fewer when a read comes first)."""

HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64
"""pgvector HNSW build parameters (pgvector's defaults)."""

ANN_REBUILD_FRACTION = 0.125
"""One ingest (a writer-lock session) that adds more vectors than this fraction of an existing HNSW graph's rows
drops the graph and builds it anew when it releases the lock, instead of inserting each vector into it.
Measured here (BENCHMARKS.md, "Store backends"): inserting one vector into pgvector's on-disk graph costs 8-15 ms,
a bulk build 1.2 ms a vector of the whole graph; at 1/8 the rebuild costs what the inserts it replaces would, so
an ingest never pays more than twice the cheaper of the two."""

ANN_BUILD_MEMORY_MAX = 4 << 30
"""Upper bound of the ``maintenance_work_mem`` (bytes) an HNSW build asks for: enough for 1.5 M vectors of
dimension 384 to be built in memory; a larger graph is finished on disk, more slowly. The server's own setting is
used when it is larger."""


def _redact(url: str) -> str:
    """The URL without its password (what messages and ``location`` show)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + "@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=user + netloc[-1]))


class PostgresStore:
    """``openbook.store.base.Store`` on PostgreSQL + pgvector; see the module docstring for the schema.

    Open with ``PostgresStore.open(url, create=...)``; one object per thread.
    """

    backend = "postgresql"

    def __init__(self, url: str, conn: psycopg.Connection) -> None:
        self.url = url
        self.location = _redact(url)
        self.conn = conn
        self.settings: IndexSettings | None = None
        self.read_only = bool(conn.execute(
            "SELECT pg_is_in_recovery() OR NOT has_table_privilege('openbook.documents', 'INSERT')").fetchone()[0])
        self._locks = 0
        self._snapshots = 0
        self._write_tx = False
        self._dirty = False
        self._added = 0
        self._graph_base: int | None = None  # rows of the HNSW graph when this writer session first added to it
        self._graph_added = 0  # vectors this writer session inserted into the graph
        self._wrote_index = False
        self._pending: list[tuple[str, Any]] = []  # buffered ("put", row) / ("delete", ids), written by _flush
        self._savepoints: list[list[Any]] = []  # open savepoints: [buffer mark, SAVEPOINT issued]
        self._snap_stats: tuple[int, int, int] | None = None
        self._cache: dict[str, tuple[int, Any]] = {}
        self._checked_gen = -1

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, location: str, create: bool = False) -> "PostgresStore":
        """Connect to the database at ``location`` (a ``postgresql://`` URL) and check its schema.

        Args:
            create: create the ``openbook`` schema (and the ``vector`` extension) when the database has none.

        Raises:
            StoreError: the server is unreachable, the database holds no openbook store (and ``create`` is
                False), or pgvector is not installed on the server.
            StoreVersionError: the schema was written by a newer openbook.
        """
        url = "postgresql://" + location.split("://", 1)[1] if location.startswith("postgres://") else location
        shown = _redact(url)
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the PostgreSQL store {shown}: {' '.join(str(exc).split())}; check that the "
                             f"server runs and the URL (postgresql://USER@HOST:PORT/DATABASE)") from None
        try:
            conn.execute("SET search_path = openbook, public")
            conn.execute("SET application_name = 'openbook'")
            version = _schema_version(conn)
            if version is None and not create:
                raise StoreError(f"{shown} holds no openbook store: run `openbook ingest PATH --store {shown}` "
                                 f"first")
            if version is None or version < SCHEMA_VERSION:
                _migrate(conn, shown)
            elif version > SCHEMA_VERSION:
                raise StoreVersionError(
                    f"the store {shown} has schema version {version}, written by a newer openbook; this openbook "
                    f"knows versions up to {SCHEMA_VERSION}: upgrade openbook (pip install -U openbook)")
            register_vector(conn)
        except BaseException:
            conn.close()
            raise
        return cls(url, conn)

    def configure(self, settings: IndexSettings) -> None:
        """BM25 parameters, analyzer settings and ANN threshold for later queries and writes."""
        self.settings = settings
        self._checked_gen = -1

    def _settings(self) -> IndexSettings:
        if self.settings is None:
            from ..index.analyzer import Analyzer

            self.settings = IndexSettings(analyzer=Analyzer().settings())
        return self.settings

    def close(self) -> None:
        """Close the connection (a held writer lock goes with it)."""
        self.conn.close()

    def schema_version(self) -> int:
        """The applied schema version."""
        return int(_schema_version(self.conn) or 0)

    def info(self) -> dict[str, Any]:
        """``backend``, ``location``, ``schema_version``, ``server_version``, ``generation``, ``manifest``,
        ``read_only``, ``ingest_running``."""
        with self.snapshot():
            return {"backend": self.backend, "location": self.location, "schema_version": self.schema_version(),
                    "server_version": self.conn.info.server_version, "generation": self._generation(),
                    "manifest": self._manifest_with_counts(), "read_only": self.read_only,
                    "ingest_running": self.writer_active()}

    # ------------------------------------------------------------------ writers and transactions
    @contextmanager
    def write_lock(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the store's advisory writer lock (re-entrant); a second writer waits and hears one line."""
        if self.read_only:
            raise StoreError(f"the store {self.location} is read-only for this database user (or a standby); "
                             f"connect as a user with INSERT rights on the openbook schema to write")
        if self._locks == 0:
            got = self.conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK_KEY,)).fetchone()[0]
            if not got:
                if on_wait is not None:
                    on_wait(f"waiting for another openbook ingest or delete on {self.location} to finish ...")
                self.conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        self._locks += 1
        try:
            yield
            if self._locks == 1:
                self._end_session()  # a graph deferred by this ingest is built while other writers still wait
        finally:
            self._locks -= 1
            if self._locks == 0 and not self.conn.closed:
                self.conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))

    def writer_active(self) -> bool:
        """Whether another session holds the writer lock."""
        hi, lo = (_LOCK_KEY >> 32) & 0xFFFFFFFF, _LOCK_KEY & 0xFFFFFFFF
        row = self.conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND classid::bigint = %s AND objid::bigint = %s", (hi, lo)).fetchone()
        return bool(row[0])

    def begin(self) -> None:
        """Start the write transaction (``READ COMMITTED``; the writer lock keeps other writers out)."""
        if self.read_only:
            raise StoreError(f"the store {self.location} is read-only: it can be searched, not written")
        if self._write_tx:
            raise StoreError(f"a write transaction is already open on {self.location}")
        if self._in_tx():
            self.conn.execute("COMMIT")  # a snapshot left open by a caller: writes must not run inside it
        self.conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        self._write_tx = True

    def commit(self) -> None:
        """Publish the transaction's documents, versions and index at once."""
        if self._write_tx:
            self._flush()
            if self._dirty:
                self.conn.execute("UPDATE index_stats SET generation = generation + 1 WHERE id = 1")
            self._write_tx = self._dirty = False
            self.conn.execute("COMMIT")
            added, self._added = self._added, 0
            if added >= VACUUM_AFTER_ROWS:
                # mark the new pages all-visible and refresh the planner's statistics now rather than whenever
                # autovacuum comes by; it reads only new pages
                self.conn.execute("VACUUM (ANALYZE) openbook.postings, openbook.index_rows, openbook.terms")
            if self._locks == 0:
                self._end_session()  # a transaction without the writer lock is a session of its own

    def rollback(self) -> None:
        """Undo the open write transaction, if any."""
        if self._write_tx:
            self._write_tx = self._dirty = False
            self._added = 0
            self._pending.clear()
            self._savepoints.clear()
            if not self.conn.closed:
                self.conn.execute("ROLLBACK")

    def transaction(self) -> ContextManager[None]:
        """``begin``; ``commit`` on success, ``rollback`` on any exception (re-raised)."""
        return write_transaction(self)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit inside the write transaction: an exception undoes only its own writes."""
        if not self._write_tx:
            yield
            return
        # buffered writes are undone by truncating the buffer; the SQL SAVEPOINT is issued only when something
        # is written to the database inside (by _flush), so a savepoint per document costs no round trip
        level = [len(self._pending), False]
        self._savepoints.append(level)
        name = f"openbook_sp{len(self._savepoints)}"
        try:
            yield
        except BaseException:
            self._savepoints.pop()
            del self._pending[level[0]:]
            if level[1] and not self.conn.closed:
                self.conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            raise
        self._savepoints.pop()
        if level[1]:
            self.conn.execute(f"RELEASE SAVEPOINT {name}")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Pin one committed state (``REPEATABLE READ``, read only) for every read inside; re-entrant; inside a
        write transaction it reads that transaction's state."""
        self._flush(read=True)
        if self._snapshots or self._write_tx:
            self._snapshots += 1
            try:
                yield
            finally:
                self._snapshots -= 1
            return
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        self._snapshots += 1
        try:
            yield
        finally:
            self._snapshots -= 1
            self._snap_stats = None
            if self._in_tx() and not self.conn.closed:
                self.conn.execute("COMMIT")

    def _in_tx(self) -> bool:
        return self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def _require_write(self) -> None:
        if not self._write_tx:
            raise StoreError(f"write to {self.location} outside a transaction: call begin() (under write_lock) "
                             f"first")
        self._flush()

    def _flush(self, read: bool = False) -> None:
        """Write the buffered documents and chunks (``put_document``, ``delete_documents``) with COPY, and issue
        the SAVEPOINT of every open ``savepoint()`` at its place in the buffer; called before every read and
        write of the write transaction, so the transaction sees its own writes (``read``: only when something
        is buffered)."""
        if not self._write_tx or (not self._pending and (read or all(sp[1] for sp in self._savepoints))):
            return
        start = 0
        for depth, sp in enumerate(self._savepoints, 1):
            if not sp[1]:
                self._write_pending(self._pending[start:sp[0]])
                self.conn.execute(f"SAVEPOINT openbook_sp{depth}")
                sp[1], start = True, sp[0]
        self._write_pending(self._pending[start:])
        self._pending.clear()
        for sp in self._savepoints:
            sp[0] = 0

    def _write_pending(self, ops: list[tuple[str, Any]]) -> None:
        """One DELETE and two COPYs for buffered operations, applied in order (a later put of a document
        replaces an earlier one; a delete drops earlier puts)."""
        if not ops:
            return
        gone: set[str] = set()
        puts: dict[str, Any] = {}
        for kind, value in ops:
            if kind == "delete":
                gone.update(value)
                for doc_id in value:
                    puts.pop(doc_id, None)
            else:
                puts.pop(value[0][0], None)
                puts[value[0][0]] = value
        with self.conn.cursor() as cur:
            cur.execute("DELETE FROM documents WHERE doc_id = ANY(%s)", (sorted(gone | puts.keys()),))
            if not puts:
                return
            with cur.copy("COPY documents FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text", "text", "text", "text", "jsonb", "jsonb", "text", "text", "text[]"])
                for doc_row, _ in puts.values():
                    copy.write_row(doc_row)
            with cur.copy("COPY chunks (chunk_id, doc_id, ord, text, headings, start_char, end_char, page, blocks) "
                          "FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text", "int4", "text", "jsonb", "int4", "int4", "int4", "text"])
                for _, chunk_rows in puts.values():
                    for row in chunk_rows:
                        copy.write_row(row)

    def _bump(self) -> None:
        """Note a change: the generation (which caches key on) moves on once, at ``commit``."""
        self._dirty = True

    # ------------------------------------------------------------------ documents and chunks
    def get_documents(self) -> dict[str, StoredDocument]:
        self._flush(read=True)
        rows = self.conn.execute("SELECT doc_id, source, root, content_hash FROM documents")
        return {r[0]: StoredDocument(*r) for r in rows}

    def count_stored(self, roles: Sequence[str] | None = None) -> tuple[int, int]:
        """(documents, chunks) stored; with ``roles``, only those the roles may see (the access rule on
        ``documents.acl`` in SQL, as searches apply it)."""
        self._flush(read=True)
        with self.snapshot():
            if roles is None:
                d = self.conn.execute("SELECT count(*) FROM documents").fetchone()[0]
                c = self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
                return int(d), int(c)
            d, c = self.conn.execute(
                "SELECT count(*), COALESCE(sum((SELECT count(*) FROM chunks c WHERE c.doc_id = d.doc_id)), 0) "
                "FROM documents d WHERE cardinality(d.acl) = 0 OR d.acl && %s::text[]",
                (sorted({r.casefold() for r in roles}),)).fetchone()
        return int(d), int(c)

    def put_document(self, doc: Document, root: str, chunks: Sequence[Chunk], digest: str) -> None:
        """*Write.* Insert or replace a document and its chunks.

        Buffered: written with COPY (``PUT_BUFFER`` documents at a time, or before the transaction's next read
        or index write); what the database would refuse (a NUL character, two chunks with one id) is refused
        here, so one bad document fails alone.

        Raises:
            StoreError: a text holds a NUL character (PostgreSQL text cannot), or two chunks share an id.
        """
        if not self._write_tx:
            self._require_write()
        meta = dict(doc.metadata)
        acl = sorted({r.casefold() for r in acl_roles(meta.get("acl"))})
        doc_row = (doc.doc_id, doc.source, root, doc.format, doc.title, _json(meta), _json(list(doc.pages)), digest,
                   doc.text, acl)
        chunk_rows = [(c.chunk_id, doc.doc_id, i, c.text, _json(list(c.headings)), c.start, c.end, c.page,
                       encode_blocks(c.blocks) if c.blocks else None) for i, c in enumerate(chunks)]
        texts = [v for v in doc_row if isinstance(v, str)] + acl + [r[3] for r in chunk_rows] + \
            [h for c in chunks for h in c.headings] + [json.dumps(meta, ensure_ascii=False, default=str)]
        if any("\x00" in t for t in texts):
            raise StoreError(f"document {doc.doc_id!r} ({doc.source}) holds a NUL character, which PostgreSQL "
                             f"cannot store; remove it from the file (or its metadata) and ingest again")
        if len({r[0] for r in chunk_rows}) != len(chunk_rows):
            raise StoreError(f"document {doc.doc_id!r} ({doc.source}): two chunks share one chunk id; give "
                             f"identical chunk texts different occurrence numbers (make_chunk_id)")
        self._pending.append(("put", (doc_row, chunk_rows)))
        if len(self._pending) >= PUT_BUFFER:
            self._flush(read=True)
        self._bump()

    def delete_documents(self, doc_ids: Iterable[str]) -> None:
        """*Write.* Remove documents and their chunks (index rows go through ``put_index``)."""
        if not self._write_tx:
            self._require_write()
        ids = list(doc_ids)
        if ids:
            self._pending.append(("delete", ids))  # buffered like put_document
            self._bump()

    def set_digests(self, digests: Mapping[str, str]) -> None:
        """*Write.* Replace documents' stored digests (after the buffered puts and deletes)."""
        if not self._write_tx:
            self._require_write()
        if digests:
            self._flush()
            with self.conn.cursor() as cur:
                cur.executemany("UPDATE documents SET content_hash = %s WHERE doc_id = %s",
                                [(digest, doc_id) for doc_id, digest in digests.items()])
            self._bump()

    def get_chunk_ids(self, doc_ids: Iterable[str]) -> set[str]:
        ids = list(doc_ids)
        if not ids:
            return set()
        self._flush(read=True)
        return {r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ANY(%s)", (ids,))}

    def get_document(self, doc_id: str) -> Document | None:
        self._flush(read=True)
        r = self.conn.execute("SELECT doc_id, text, title, source, format, metadata, pages FROM documents "
                              "WHERE doc_id = %s", (doc_id,)).fetchone()
        if r is None:
            return None
        return Document(doc_id=r[0], text=r[1], title=r[2], source=r[3], format=r[4], metadata=r[5],
                        pages=tuple(r[6]))

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        self._flush(read=True)
        rows = self.conn.execute(
            "SELECT c.chunk_id, c.doc_id, c.text, c.headings, c.start_char, c.end_char, c.page, d.title, "
            "d.metadata, d.format, c.blocks FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
            "WHERE c.chunk_id = ANY(%s)", (ids,))
        meta: dict[str, Mapping[str, Any]] = {}
        out: dict[str, Chunk] = {}
        for r in rows:
            m = meta.setdefault(r[1], r[8])
            out[r[0]] = Chunk(chunk_id=r[0], doc_id=r[1], text=r[2], title=r[7], headings=tuple(r[3]),
                              start=r[4], end=r[5], page=r[6], metadata=m, format=r[9] or "",
                              blocks=decode_blocks(r[10]))
        return out

    def get_document_chunks(self, doc_id: str) -> list[Chunk]:
        self._flush(read=True)
        ids = [r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = %s ORDER BY ord",
                                               (doc_id,))]
        chunks = self.get_chunks(ids)
        return [chunks[c] for c in ids if c in chunks]

    def get_document_rows(self) -> list[tuple[str, str, str, dict[str, Any], int]]:
        self._flush(read=True)
        rows = self.conn.execute(
            "SELECT d.doc_id, d.title, d.source, d.metadata, "
            "(SELECT count(*) FROM chunks c WHERE c.doc_id = d.doc_id) FROM documents d ORDER BY d.doc_id COLLATE \"C\"")
        return [(r[0], r[1], r[2], r[3], int(r[4])) for r in rows]

    def get_sources(self) -> dict[str, list[str]]:
        self._flush(read=True)
        out: dict[str, list[str]] = {}
        for doc_id, source in self.conn.execute("SELECT doc_id, source FROM documents ORDER BY doc_id COLLATE \"C\""):
            out.setdefault(source, []).append(doc_id)
        return out

    # ------------------------------------------------------------------ metadata and versions
    def get_document_metadata(self) -> dict[str, dict[str, Any]]:
        self._flush(read=True)
        rows = self.conn.execute("SELECT doc_id, metadata, title, format, source FROM documents")
        return {r[0]: {"doc_id": r[0], "title": r[2], "format": r[3], "path": r[4], **r[1]} for r in rows}

    def get_metadata_fields(self) -> set[str]:
        self._flush(read=True)
        keys = self.conn.execute("SELECT DISTINCT jsonb_object_keys(metadata) FROM documents")
        return {*BUILTIN_FIELDS, *(r[0] for r in keys)}

    def get_titles_and_metadata(self, versioned_only: bool = False) -> dict[str, tuple[str, dict[str, Any]]]:
        self._flush(read=True)
        query = "SELECT doc_id, title, metadata FROM documents"
        if versioned_only and not self.conn.execute(
                "SELECT 1 FROM documents WHERE metadata ? 'supersedes' LIMIT 1").fetchone():
            query += " WHERE metadata ? 'updated'"
        return {r[0]: (r[1], r[2]) for r in self.conn.execute(query)}

    def put_versions(self, links: Mapping[str, str]) -> None:
        """*Write.* Replace the recorded version links."""
        self._require_write()
        self.conn.execute("DELETE FROM versions")
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO versions VALUES (%s, %s)", sorted(links.items()))

    def get_versions(self) -> dict[str, str]:
        self._flush(read=True)
        return dict(self.conn.execute("SELECT doc_id, superseded_by FROM versions").fetchall())

    # ------------------------------------------------------------------ the index: writes
    def put_index(self, removed: Collection[str], chunks: Sequence[Chunk], terms: Sequence[Sequence[str]], *,
                    reuse: Collection[str] = (), embedder: VectorSource | None = None,
                    reembed: bool = False, defer: bool = False) -> int:
        """*Write.* Drop the rows of ``removed``, append ``chunks`` with their analyzed ``terms`` (in the order
        given: the insertion order that breaks score ties), and maintain df, lengths and vectors as
        ``Store.put_index`` describes (a pending row is one whose ``embedding`` is NULL while the manifest
        names a model). Visible to readers at ``commit``."""
        self._require_write()
        if len(chunks) != len(terms):
            raise StoreError(f"put_index: {len(chunks)} chunks but {len(terms)} term lists")
        settings = self._settings()
        manifest = self._manifest() or {}
        old_emb = manifest.get("embedding")
        precision = self._precision(old_emb)  # before any vector is computed: int8 is refused at once
        new_ids = [c.chunk_id for c in chunks]
        reused: dict[str, np.ndarray] = {}
        reuse_set = set(reuse)
        wanted = [c for c in new_ids if c in reuse_set]
        if embedder is not None and old_emb and not reembed and wanted:
            reused = {r[0]: _vec(r[1]) for r in self.conn.execute(
                "SELECT chunk_id, embedding FROM index_rows WHERE chunk_id = ANY(%s) AND embedding IS NOT NULL",
                (wanted,))}
        self._delete_rows(set(removed) | set(new_ids))
        kept = self._stats()[0]
        if kept and manifest and manifest.get("analyzer") != dict(settings.analyzer):
            # rows analysed otherwise would stay beside the new ones; only a whole replacement (reindex) may
            raise analyzer_mismatch_error(self.location, manifest.get("analyzer"), settings.analyzer)

        # vectors: which rows get one, and which must be computed (or, deferred, are left NULL: pending)
        embedded = 0
        vectors: list[np.ndarray | None] | None = None
        model = None
        if embedder is None:
            if old_emb:
                self._set_dim(None)
        elif not reembed and kept and not old_emb:
            pass  # a BM25-only store stays so until `ingest --reembed`
        else:
            model = embedder
            todo = [i for i, c in enumerate(new_ids) if c not in reused]
            if defer:
                dim = int(embedder.dim)
                if reembed or (old_emb or {}).get("dim") != dim:
                    self._set_dim(None)  # every kept row becomes pending
                computed = None
            else:
                if reembed or not old_emb:
                    embedded += self._reembed_kept(embedder)
                computed = None
                if todo:
                    computed = _unit(np.asarray(embedder.embed_passages([chunks[i].indexed_text() for i in todo]),
                                                dtype=np.float32))
                    embedded += len(todo)
                    dim = computed.shape[1]
                else:
                    dim = next(iter(reused.values())).shape[0] if reused else (old_emb or {}).get("dim", 0)
            vectors = [reused.get(c) for c in new_ids]
            if computed is not None:
                for j, i in enumerate(todo):
                    vectors[i] = computed[j]
            if dim and (not old_emb or old_emb.get("dim") != dim or reembed):
                self._set_dim(dim)

        graph = self._hnsw_exists()
        if graph and precision != (old_emb or {}).get("precision", "f32"):
            self.conn.execute(f"DROP INDEX {HNSW_INDEX}")  # re-indexed at the new precision by _end_session
            graph = False
        if graph and vectors is not None and any(v is not None for v in vectors):
            # a bulk ingest: drop the graph rather than insert every vector into it; rebuilt at the session's end
            if self._graph_base is None:
                self._graph_base = kept
            self._graph_added += len(chunks)
            if self._graph_added > ANN_REBUILD_FRACTION * max(self._graph_base, 1):
                self.conn.execute(f"DROP INDEX {HNSW_INDEX}")
                graph = False
        self._wrote_index = True
        self._append_rows(chunks, terms, vectors)
        # N and the total length change by what was added and removed (no scan of the whole index)
        self.conn.execute("UPDATE index_stats SET rows = rows + %s, total_length = total_length + %s",
                          (len(chunks), sum(len(t) for t in terms)))
        self._added += len(chunks)
        stats = self._stats()
        self._bump()
        has_vectors = bool(self.conn.execute("SELECT EXISTS (SELECT 1 FROM index_rows WHERE embedding IS NOT "
                                             "NULL)").fetchone()[0])
        pending = 0
        if model is not None:
            pending = int(self.conn.execute("SELECT count(*) FROM index_rows WHERE embedding IS NULL").fetchone()[0])
        # the HNSW graph: kept (with this batch's vectors inserted) when it exists and is still wanted; one that is
        # wanted but missing is built by _end_session, after the whole ingest; until then readers search exactly
        ann = False
        if graph and not (has_vectors and stats[0] >= settings.ann_threshold):
            self.conn.execute(f"DROP INDEX {HNSW_INDEX}")
        elif graph:
            ann = True
        if model is not None and has_vectors:
            dim = int(self.conn.execute("SELECT vector_dims(embedding) FROM index_rows WHERE embedding IS NOT "
                                        "NULL LIMIT 1").fetchone()[0])
            emb = {"model": model.name, "dim": dim, "normalized": bool(model.normalized), "ann": ann,
                   "pending": pending, "precision": precision}
        elif model is not None and pending:  # deferred: no vector computed yet, the model is recorded
            dim = int(getattr(model, "dim", 0) or (old_emb or {}).get("dim", 0))
            emb = {"model": model.name, "dim": dim, "normalized": bool(model.normalized), "ann": ann,
                   "pending": pending, "precision": precision}
        elif has_vectors and old_emb:
            emb = {**old_emb, "ann": ann, "precision": precision}
        else:
            emb = None
        manifest = {"format_version": INDEX_FORMAT, "analyzer": dict(settings.analyzer),
                    "bm25": {"k1": settings.k1, "b": settings.b, "idf": "lucene"},
                    "chunking": dict(settings.chunking), "rows": int(stats[0]),
                    "embedding": emb}
        self.conn.execute("INSERT INTO meta VALUES ('manifest', %s) ON CONFLICT (key) DO UPDATE SET value = "
                          "EXCLUDED.value", (_json(manifest),))
        return embedded

    def _precision(self, old_emb: Mapping[str, Any] | None) -> str:
        """The precision the index is written at: ``IndexSettings.vector_precision``, else the recorded one, else
        ``f32``.

        Raises:
            StoreError: a precision this store cannot build (``int8``: pgvector has no int8 type).
        """
        precision = self._settings().vector_precision or (old_emb or {}).get("precision", "f32")
        if precision not in PG_PRECISIONS:
            hint = " (pgvector has no int8 type: f16 halves the graph's memory, binary divides it by 32)" \
                if precision == "int8" else ""
            raise StoreError(f"store {self.location}: vector precision {precision!r} is not available on "
                             f"PostgreSQL{hint}; choose one of {', '.join(PG_PRECISIONS)} ([embedding] "
                             f"vector_precision, or `openbook ingest --vector-precision`)")
        return precision

    def _graph_centre(self, gen: int) -> str | None:
        """The mean vector the binary HNSW graph's codes are taken about, as pgvector text (cached per
        generation); None for a graph built without one."""
        def read() -> str | None:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'graph_centre'").fetchone()
            return None if row is None else str(row[0])

        return self._cached("graph_centre", gen, read)

    def _end_session(self) -> None:
        """After an ingest (the writer lock released, or a commit without it): build the HNSW graph when the index
        holds ``ann_threshold`` rows with vectors and has none (a new store that grew past the threshold, or a
        graph dropped by a bulk ingest). One transaction: the graph and ``ann`` in the manifest appear together;
        readers search exactly until then and are not blocked by the build (it locks out writers only). Under the
        writer lock a graph that is wanted and missing is built even when this session wrote nothing: an ingest
        interrupted during the build (or after a bulk ingest dropped the graph) is resumed by the same command,
        which finds every file unchanged."""
        wrote, self._wrote_index = self._wrote_index, False
        self._graph_base, self._graph_added = None, 0
        if not (wrote or self._locks) or self._write_tx or self.conn.closed:
            return
        emb = (self._manifest() or {}).get("embedding")
        rows = self._stats()[0]
        if not emb or emb.get("ann") or rows < self._settings().ann_threshold:
            return
        dim = int(emb["dim"])
        need = int(rows * (4 * dim + 32 * HNSW_M + 256) * 1.2)  # pgvector's in-memory graph: vector + neighbours
        if self._in_tx():
            self.conn.execute("COMMIT")  # a read snapshot left open by a caller
        self.conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        try:
            have = int(self.conn.execute("SELECT setting::bigint * 1024 FROM pg_settings "
                                         "WHERE name = 'maintenance_work_mem'").fetchone()[0])
            if need > have:
                self.conn.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(
                    sql.Literal(f"{min(need, ANN_BUILD_MEMORY_MAX) // 1024}kB")))
            if not self._hnsw_exists():
                centre = None
                if emb.get("precision") == "binary":  # the sign bits are taken about the vectors' mean
                    centre = self.conn.execute("SELECT avg(embedding)::text FROM index_rows WHERE embedding IS "
                                               "NOT NULL").fetchone()[0]
                    self.conn.execute("INSERT INTO meta VALUES ('graph_centre', %s) ON CONFLICT (key) DO UPDATE "
                                      "SET value = EXCLUDED.value", (_json(centre),))
                self.conn.execute(f"CREATE INDEX {HNSW_INDEX} ON index_rows USING hnsw "
                                  f"({_graph_operand(emb.get('precision', 'f32'), dim, centre=centre)}) "
                                  f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})")
            self.conn.execute("UPDATE meta SET value = jsonb_set(value, '{embedding,ann}', 'true') "
                              "WHERE key = 'manifest'")
            self.conn.execute("UPDATE index_stats SET generation = generation + 1 WHERE id = 1")
        except BaseException:
            if not self.conn.closed:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _delete_rows(self, chunk_ids: set[str]) -> int:
        """Remove these chunks' index rows and postings (df and N/total length follow); returns how many."""
        if not chunk_ids:
            return 0
        found = self.conn.execute("SELECT row, length, block FROM index_rows WHERE chunk_id = ANY(%s)",
                                  (list(chunk_ids),)).fetchall()
        rows = [r[0] for r in found]
        if not rows:
            return 0
        # rewrite each (term, block) that holds a removed row without it (or drop it when nothing is left)
        self.conn.execute("""
            WITH gone AS (SELECT DISTINCT unnest(%(rows)s::bigint[]) AS row),
            hit AS (
                SELECT p.term_id, p.block,
                       array_agg(u.row ORDER BY u.ord) FILTER (WHERE g.row IS NULL) AS rows,
                       array_agg(u.tf ORDER BY u.ord) FILTER (WHERE g.row IS NULL) AS tfs,
                       array_agg(u.length ORDER BY u.ord) FILTER (WHERE g.row IS NULL) AS lengths,
                       count(g.row) AS removed
                FROM postings p
                CROSS JOIN LATERAL unnest(p.rows, p.tfs, p.lengths) WITH ORDINALITY AS u(row, tf, length, ord)
                LEFT JOIN gone g ON g.row = u.row
                WHERE p.block = ANY(%(blocks)s)
                GROUP BY p.term_id, p.block
                HAVING count(g.row) > 0
            ), upd AS (
                UPDATE postings p SET rows = h.rows, tfs = h.tfs, lengths = h.lengths FROM hit h
                WHERE p.term_id = h.term_id AND p.block = h.block AND h.rows IS NOT NULL
            ), del AS (
                DELETE FROM postings p USING hit h
                WHERE p.term_id = h.term_id AND p.block = h.block AND h.rows IS NULL
            )
            UPDATE terms t SET df = t.df - n.c
            FROM (SELECT term_id, sum(removed) AS c FROM hit GROUP BY term_id) n WHERE t.term_id = n.term_id""",
                          {"rows": rows, "blocks": sorted({r[2] for r in found})})
        self.conn.execute("DELETE FROM terms WHERE df <= 0")
        self.conn.execute("DELETE FROM index_rows WHERE row = ANY(%s)", (rows,))
        self.conn.execute("UPDATE index_stats SET rows = rows - %s, total_length = total_length - %s",
                          (len(rows), sum(r[1] for r in found)))
        return len(rows)

    def _reembed_kept(self, embedder: VectorSource) -> int:
        ids = [r[0] for r in self.conn.execute("SELECT chunk_id FROM index_rows ORDER BY row")]
        if not ids:
            return 0
        texts = {cid: c.indexed_text() for cid, c in self.get_chunks(ids).items()}
        ids = [c for c in ids if c in texts]
        vecs = _unit(np.asarray(embedder.embed_passages([texts[c] for c in ids]), dtype=np.float32))
        self._set_dim(vecs.shape[1])
        with self.conn.cursor() as cur:
            cur.executemany("UPDATE index_rows SET embedding = %s WHERE chunk_id = %s",
                            [(v, c) for v, c in zip(vecs, ids)])
        return len(ids)

    def _set_dim(self, dim: int | None) -> None:
        """Type the embedding column ``vector(dim)`` (HNSW needs a fixed dimension), or clear every vector."""
        if self._hnsw_exists():
            self.conn.execute(f"DROP INDEX {HNSW_INDEX}")
        if dim is None:
            self.conn.execute("UPDATE index_rows SET embedding = NULL WHERE embedding IS NOT NULL")
            self.conn.execute("ALTER TABLE index_rows ALTER COLUMN embedding TYPE vector")
            return
        current = self.conn.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'openbook.index_rows'::regclass "
            "AND attname = 'embedding'").fetchone()[0]
        if current != dim:
            self.conn.execute("UPDATE index_rows SET embedding = NULL WHERE embedding IS NOT NULL AND "
                              "vector_dims(embedding) <> %s", (dim,))
            self.conn.execute(sql.SQL("ALTER TABLE index_rows ALTER COLUMN embedding TYPE vector({})").format(
                sql.Literal(int(dim))))

    def _hnsw_exists(self) -> bool:
        return self.conn.execute("SELECT to_regclass('openbook.index_rows_hnsw') IS NOT NULL").fetchone()[0]

    def _append_rows(self, chunks: Sequence[Chunk], terms: Sequence[Sequence[str]],
                     vectors: Sequence[np.ndarray | None] | None) -> None:
        """COPY the rows (with their vectors) and the analyzed terms; the database counts tf and df and packs
        each term's postings per block of ``BLOCK_ROWS`` rows."""
        if not chunks:
            return
        blocks = [r[0] for r in self.conn.execute("SELECT nextval('blocks') FROM generate_series(1, %s)",
                                                  (-(-len(chunks) // BLOCK_ROWS),))]
        with self.conn.cursor() as cur:
            with cur.copy("COPY index_rows (chunk_id, doc_id, length, embedding, block) FROM STDIN (FORMAT BINARY)"
                          ) as copy:
                copy.set_types(["text", "text", "int4", "vector", "int8"])
                for i, (c, t) in enumerate(zip(chunks, terms)):
                    copy.write_row((c.chunk_id, c.doc_id, len(t), None if vectors is None else vectors[i],
                                    blocks[i // BLOCK_ROWS]))
            # the terms travel as one array per chunk; tf and df are counted by the database
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS stage_terms (chunk_id text, terms text[]) "
                        "ON COMMIT DELETE ROWS")
            cur.execute("TRUNCATE stage_terms")
            with cur.copy("COPY stage_terms FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text[]"])
                for c, t in zip(chunks, terms):
                    copy.write_row((c.chunk_id, list(t)))
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS stage_postings (row bigint, block bigint, term text, "
                        "tf integer, length integer) ON COMMIT DELETE ROWS")
            cur.execute("TRUNCATE stage_postings")
            cur.execute("INSERT INTO stage_postings SELECT r.row, r.block, x.term, count(*), r.length "
                        "FROM stage_terms s JOIN index_rows r ON r.chunk_id = s.chunk_id, unnest(s.terms) AS x(term) "
                        "GROUP BY r.row, r.block, x.term, r.length")
            cur.execute("INSERT INTO terms (term, df) SELECT DISTINCT term, 0 FROM stage_postings "
                        "ON CONFLICT (term) DO NOTHING")
            cur.execute("WITH new AS (INSERT INTO postings (term_id, block, rows, tfs, lengths) "
                        "SELECT t.term_id, s.block, array_agg(s.row ORDER BY s.row), array_agg(s.tf ORDER BY s.row), "
                        "array_agg(s.length ORDER BY s.row) FROM stage_postings s JOIN terms t ON t.term = s.term "
                        "GROUP BY t.term_id, s.block RETURNING term_id, cardinality(rows) AS n) "
                        "UPDATE terms t SET df = t.df + c.n "
                        "FROM (SELECT term_id, sum(n) AS n FROM new GROUP BY term_id) c WHERE t.term_id = c.term_id")
            cur.execute("TRUNCATE stage_terms, stage_postings")

    # ------------------------------------------------------------------ the index: reads
    def get_index_manifest(self) -> dict[str, Any] | None:
        """The manifest in ``meta`` as written, unchecked; None before the first index write."""
        self._flush(read=True)
        return self._manifest()

    def get_indexed_chunk_ids(self) -> list[str]:
        """``index_rows`` chunk ids by ``row`` (insertion order), unchecked."""
        self._flush(read=True)
        return [r[0] for r in self.conn.execute("SELECT chunk_id FROM index_rows ORDER BY row")]

    def _generation(self) -> int:
        return int(self.conn.execute("SELECT generation FROM index_stats WHERE id = 1").fetchone()[0])

    def _manifest(self) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'manifest'").fetchone()
        return row[0] if row else None

    def _manifest_with_counts(self) -> dict[str, Any] | None:
        manifest = self._manifest()
        stats = self.get_corpus_stats()
        if manifest is not None and stats is not None:
            manifest = {**manifest, "rows": stats.chunks, "documents": stats.documents}
        return manifest

    def _cached(self, name: str, gen: int, compute: Callable[[], Any]) -> Any:
        hit = self._cache.get(name)
        if hit is not None and hit[0] == gen and not self._write_tx:
            return hit[1]
        value = compute()
        if not self._write_tx:
            self._cache[name] = (gen, value)
        return value

    def _stats(self) -> tuple[int, int, int]:
        """``(rows, total_length, generation)`` of the current snapshot."""
        pinned = self._snapshots > 0 and not self._write_tx  # a read snapshot: read it once
        if pinned and self._snap_stats is not None:
            return self._snap_stats
        r = self.conn.execute("SELECT rows, total_length, generation FROM index_stats WHERE id = 1").fetchone()
        stats = int(r[0]), int(r[1]), int(r[2])
        if pinned:
            self._snap_stats = stats
        return stats

    def _require_index(self) -> tuple[int, float, int]:
        """``(N, avgdl, generation)``, refusing an empty store and an index built with other analyzer settings."""
        rows, total, gen = self._stats()
        if rows == 0:
            raise empty_store_error(self)
        if gen != self._checked_gen:
            manifest = self._manifest() or {}
            if manifest.get("format_version") != INDEX_FORMAT:
                raise StoreVersionError(
                    f"the index in {self.location} was built by an incompatible openbook (index format "
                    f"{manifest.get('format_version')}, this openbook reads {INDEX_FORMAT}); re-ingest into a new "
                    f"database, or `openbook store copy` from a store built with these settings")
            if manifest.get("analyzer") != dict(self._settings().analyzer):
                raise analyzer_mismatch_error(self.location, manifest.get("analyzer"), self._settings().analyzer)
            self._checked_gen = gen
        return rows, total / rows, gen

    def get_corpus_stats(self) -> CorpusStats | None:
        with self.snapshot():
            rows, total, gen = self._stats()
            if rows == 0 and gen == 0:
                return None

            def compute() -> CorpusStats:
                docs, terms = self.conn.execute(
                    "SELECT (SELECT count(DISTINCT doc_id) FROM index_rows), (SELECT count(*) FROM terms)").fetchone()
                return CorpusStats(documents=int(docs), chunks=rows, avgdl=total / rows if rows else 0.0,
                                   terms=int(terms))

            return self._cached("stats", gen, compute)

    def get_embedding(self) -> EmbeddingInfo | None:
        with self.snapshot():
            manifest = self._cached("manifest", self._stats()[2], self._manifest)
        emb = (manifest or {}).get("embedding")
        if not emb:
            return None
        return EmbeddingInfo(model=emb["model"], dim=int(emb["dim"]), normalized=bool(emb["normalized"]),
                             ann=bool(emb.get("ann")), pending=int(emb.get("pending", 0)),
                             precision=str(emb.get("precision", "f32")))

    def _visibility_sql(self, visibility: Visibility, gen: int) -> tuple[str, dict[str, Any]] | None:
        """A SQL condition on ``r`` (index_rows) and ``d`` (documents) for the chunks ``visibility`` allows,
        with its parameters; None when it allows everything."""
        conds: list[str] = []
        params: dict[str, Any] = {}
        roles = sorted({r.casefold() for r in visibility.roles})
        conds.append(_ACCESS_SQL)
        params["roles"] = roles
        if visibility.clauses:
            def allowed() -> list[str]:
                meta = self.get_document_metadata()
                return [d for d, fields in meta.items() if all(c.matches(fields) for c in visibility.clauses)]

            params["allowed"] = self._cached(f"where:{visibility.clauses!r}", gen, allowed)
            conds.append("r.doc_id = ANY(%(allowed)s)")
        if visibility.exclude_docs:
            params["excluded"] = sorted(visibility.exclude_docs)
            conds.append("NOT r.doc_id = ANY(%(excluded)s)")
        if not visibility.clauses and not visibility.exclude_docs and not self._has_acl(gen):
            return None
        return " AND ".join(conds), params

    def _access_stats(self, roles: Sequence[str], gen: int) -> tuple[int, int] | None:
        """``(rows, total_length)`` of the index rows these roles may see under the access rule, or None when
        they see every row (the whole index's statistics apply); cached per generation and role set."""
        if not self._has_acl(gen):
            return None
        folded = sorted({r.casefold() for r in roles})

        def compute() -> tuple[int, int] | None:
            n, total = self.conn.execute(
                f"SELECT count(*), coalesce(sum(r.length), 0) FROM index_rows r "
                f"JOIN documents d ON d.doc_id = r.doc_id WHERE {_ACCESS_SQL}", {"roles": folded}).fetchone()
            return None if int(n) == self._stats()[0] else (int(n), int(total))

        return self._cached(f"access:{folded!r}", gen, compute)

    def _documents(self, gen: int) -> int:
        """How many documents have indexed rows (BM25's ``N``: its idf counts documents); cached per generation."""
        return self._cached("documents", gen, lambda: int(self.conn.execute(
            "SELECT count(DISTINCT doc_id) FROM index_rows").fetchone()[0]))

    def _documents_seen(self, roles: Sequence[str], gen: int) -> int:
        """How many documents with indexed rows these roles may see under the access rule; cached per
        generation and role set."""
        folded = sorted({r.casefold() for r in roles})
        return self._cached(f"documents:{folded!r}", gen, lambda: int(self.conn.execute(
            f"SELECT count(DISTINCT r.doc_id) FROM index_rows r JOIN documents d ON d.doc_id = r.doc_id "
            f"WHERE {_ACCESS_SQL}", {"roles": folded}).fetchone()[0]))

    def _document_frequency(self, terms: Sequence[str], gen: int) -> dict[str, int]:
        """Term -> how many documents have a row holding it (BM25's ``df``; absent: none), for ``terms``; the
        counts are kept per generation, so a term is counted once per index state."""
        known: dict[str, int] = self._cached("document_frequency", gen, dict)
        todo = [t for t in dict.fromkeys(terms) if t not in known]
        if todo:
            found = dict(self.conn.execute(
                "SELECT t.term, count(DISTINCT r.doc_id) FROM terms t JOIN postings p ON p.term_id = t.term_id "
                "CROSS JOIN LATERAL unnest(p.rows) AS u(row) JOIN index_rows r ON r.row = u.row "
                "WHERE t.term = ANY(%s) GROUP BY t.term", (todo,)).fetchall())
            known.update((t, int(found.get(t, 0))) for t in todo)
        return known

    def _has_acl(self, gen: int) -> bool:
        return self._cached("has_acl", gen, lambda: bool(self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM documents WHERE cardinality(acl) > 0)").fetchone()[0]))

    def bm25_top_k(self, queries: Sequence[QueryTerms], k: int, visibility: Visibility) -> list[list[Hit]]:
        """BM25 top ``k`` per query, computed in SQL over the postings (see the module docstring)."""
        settings = self._settings()
        k1, b = float(settings.k1), float(settings.b)
        out: list[list[Hit]] = []
        with self.snapshot():
            n, avgdl, gen = self._require_index()
            where = self._visibility_sql(visibility, gen)
            seen = self._access_stats(visibility.roles, gen)
            if seen is not None:  # statistics of the rows these roles may see
                n, avgdl = seen[0], (seen[1] / seen[0] if seen[0] else 0.0)
            n_docs = self._documents_seen(visibility.roles, gen) if seen is not None else self._documents(gen)
            for q in queries:
                pairs = [(t, float(w)) for t, w in q if w > 0 and _storable(t)]
                if k <= 0 or not pairs or n == 0:
                    out.append([])
                    continue
                params: dict[str, Any] = {"terms": [t for t, _ in pairs], "weights": [w for _, w in pairs],
                                          "n": n_docs, "avgdl": avgdl or 1.0, "k1": k1, "b": b, "k": k,
                                          "flat": 1.0 if avgdl > 0 else 0.0}
                join, cond = "", ""
                if where is not None:
                    join = ("JOIN index_rows r ON r.row = u.row JOIN documents d ON d.doc_id = r.doc_id")
                    cond = "WHERE " + where[0]
                    params.update(where[1])
                if seen is not None:
                    assert where is not None  # some document has an acl
                    params["roles"] = sorted({r.casefold() for r in visibility.roles})
                    query = _BM25_SEEN_SQL.format(join=join, access=_ACCESS_SQL, cond=where[0])
                    rows = self.conn.execute(query, params).fetchall()
                    out.append([Hit(chunk_id=r[1], doc_id=r[2], score=float(r[3]),
                                    legs={"bm25": (i, float(r[3]))}) for i, r in enumerate(rows, 1) if r[3] > 0])
                    continue
                # float4 steps as in openbook.index.sparse: idf, the length norm and each term's weight are
                # float32, summed in float8 (exact for a query's few terms, so in any order) and rounded once;
                # idf over documents (N documents, df the documents holding the term: _document_frequency)
                known = self._document_frequency([t for t, _ in pairs], gen)
                params["dfs"] = [known.get(t, 0) for t, _ in pairs]
                query = f"""
                    WITH q AS MATERIALIZED (
                        SELECT t.term_id, x.w::float4 AS w,
                               ln(1.0::float8 + (%(n)s::float8 - x.df + 0.5::float8) / (x.df + 0.5::float8))::float4
                               AS idf
                        FROM unnest(%(terms)s::text[], %(weights)s::float8[], %(dfs)s::int8[]) AS x(term, w, df)
                        JOIN terms t ON t.term = x.term
                    ), scored AS (
                        SELECT u.row, sum((q.idf * u.tf::float4 / (u.tf::float4 + (%(k1)s::float8 * (1.0::float8
                                   - %(b)s::float8 + %(b)s::float8 * %(flat)s::float8 * u.length / %(avgdl)s::float8)
                                   )::float4) * q.w)::float8)::float4 AS score
                        FROM q JOIN postings p ON p.term_id = q.term_id
                        CROSS JOIN LATERAL unnest(p.rows, p.tfs, p.lengths) AS u(row, tf, length) {join}
                        {cond}
                        GROUP BY u.row
                        ORDER BY score DESC, u.row
                        LIMIT %(k)s
                    )
                    SELECT s.row, r2.chunk_id, r2.doc_id, s.score FROM scored s
                    JOIN index_rows r2 ON r2.row = s.row ORDER BY s.score DESC, s.row"""
                rows = self.conn.execute(query, params).fetchall()
                out.append([Hit(chunk_id=r[1], doc_id=r[2], score=float(r[3]), legs={"bm25": (i, float(r[3]))})
                            for i, r in enumerate(rows, 1) if r[3] > 0])
        return out

    def vector_top_k(self, queries: np.ndarray, k: int, visibility: Visibility) -> list[list[Hit]]:
        """Top ``k`` per query vector by cosine (pgvector ``<=>``); HNSW with iterative scans when the index
        has one (filtered in the scan, so a hidden chunk never takes a slot), exact otherwise."""
        q = np.asarray(queries, dtype=np.float32)
        out: list[list[Hit]] = []
        with self.snapshot():
            _, _, gen = self._require_index()
            emb = self.get_embedding()
            if emb is None:
                raise StoreError(f"store {self.location} holds no vectors: run `openbook ingest --reembed PATH "
                                 f"--store {self.location}`")
            if q.ndim != 2 or q.shape[1] != emb.dim:
                from ..errors import IndexError_

                raise IndexError_(f"query vectors have shape {q.shape}, the store's {emb.model} vectors have "
                                  f"dimension {emb.dim}")
            q = _unit(q)
            where = self._visibility_sql(visibility, gen)
            quantized = emb.ann and emb.precision != "f32"
            pool = k * OVERSAMPLE.get(emb.precision, 1) if quantized else k  # candidates the graph picks
            if emb.ann:
                self.conn.execute("SET LOCAL hnsw.ef_search = %s" % max(40, min(1000, 2 * pool)))
                self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            for vec in q:
                if k <= 0:
                    out.append([])
                    continue
                params: dict[str, Any] = {"q": vec, "k": k}
                join, cond = "", ""
                if where is not None:
                    join = "JOIN documents d ON d.doc_id = r.doc_id"
                    cond = "AND " + where[0]
                    params.update(where[1])
                if quantized:  # the graph's candidates, re-ranked by the float32 column's exact cosine
                    params["pool"] = pool
                    centre = self._graph_centre(gen) if emb.precision == "binary" else None
                    graph = _graph_operand(emb.precision, emb.dim, "r.embedding", with_ops=False, centre=centre)
                    probe = _graph_operand(emb.precision, emb.dim, "%(q)s", with_ops=False, centre=centre)
                    distance = "<~>" if emb.precision == "binary" else "<=>"
                    rows = self.conn.execute(
                        f"SELECT c.row, c.chunk_id, c.doc_id, c.embedding <=> %(q)s AS dist FROM (SELECT r.row, "
                        f"r.chunk_id, r.doc_id, r.embedding FROM index_rows r {join} WHERE r.embedding IS NOT NULL "
                        f"{cond} ORDER BY {graph} {distance} {probe} LIMIT %(pool)s) c "
                        f"ORDER BY c.embedding <=> %(q)s, c.row LIMIT %(k)s", params).fetchall()
                else:
                    rows = self.conn.execute(
                        f"SELECT r.row, r.chunk_id, r.doc_id, r.embedding <=> %(q)s AS dist FROM index_rows r {join} "
                        f"WHERE r.embedding IS NOT NULL {cond} ORDER BY r.embedding <=> %(q)s, r.row LIMIT %(k)s",
                        params).fetchall()
                rows.sort(key=lambda r: (r[3], r[0]))  # relaxed_order scans may return near-ties out of order
                out.append([Hit(chunk_id=r[1], doc_id=r[2], score=float(np.float32(1.0 - r[3])),
                                legs={"dense": (i, float(np.float32(1.0 - r[3])))}) for i, r in enumerate(rows, 1)])
        return out

    def get_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        emb = self.get_embedding()
        if emb is None:
            raise StoreError(f"store {self.location} holds no vectors: run `openbook ingest --reembed PATH "
                             f"--store {self.location}`")
        ids = list(chunk_ids)
        found = {r[0]: r[1] for r in self.conn.execute(
            "SELECT chunk_id, embedding FROM index_rows WHERE chunk_id = ANY(%s)", (ids,))}
        out = np.zeros((len(ids), emb.dim), dtype=np.float32)
        for i, c in enumerate(ids):
            if c not in found:
                raise StoreError(f"chunk {c!r} is not indexed in store {self.location}")
            if found[c] is None:
                raise StoreError(f"chunk {c!r} has no vector yet in store {self.location} ({emb.pending} chunks "
                                 f"pending): `openbook embed --store {self.location}` computes them")
            out[i] = _vec(found[c])
        return out

    def get_pending_vectors(self, limit: int | None = None) -> list[str]:
        self._flush(read=True)
        if self.get_embedding() is None:
            return []
        rows = self.conn.execute("SELECT chunk_id FROM index_rows WHERE embedding IS NULL ORDER BY row LIMIT %s",
                                 (limit,)).fetchall()
        return [r[0] for r in rows]

    def put_vectors(self, chunk_ids: Sequence[str], vectors: np.ndarray) -> None:
        """*Write.* COPY the vectors into a staging table and set them on their rows in one UPDATE; a bulk
        update drops the HNSW graph as a bulk ingest does (``ANN_REBUILD_FRACTION``), rebuilt at the session's
        end."""
        self._require_write()
        manifest = self._manifest() or {}
        emb = manifest.get("embedding")
        if not emb:
            raise StoreError(f"store {self.location} records no embedding model (a BM25-only index): run `openbook "
                             f"ingest --reembed PATH --store {self.location}` to embed it")
        ids = list(chunk_ids)
        shape = np.shape(vectors)
        if shape != (len(ids), int(emb["dim"])):
            raise StoreError(f"put_vectors: vectors of shape {shape} for {len(ids)} chunks; store "
                             f"{self.location} holds {emb['model']} vectors of dimension {emb['dim']}")
        if not ids:
            return
        vecs = _unit(np.asarray(vectors, dtype=np.float32))
        if self._hnsw_exists():
            if self._graph_base is None:
                self._graph_base = self._stats()[0]
            self._graph_added += len(ids)
            if self._graph_added > ANN_REBUILD_FRACTION * max(self._graph_base, 1):
                self.conn.execute(f"DROP INDEX {HNSW_INDEX}")
                self.conn.execute("UPDATE meta SET value = jsonb_set(value, '{embedding,ann}', 'false') "
                                  "WHERE key = 'manifest'")
        with self.conn.cursor() as cur:
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS stage_vectors (chunk_id text, embedding vector) "
                        "ON COMMIT DELETE ROWS")
            cur.execute("TRUNCATE stage_vectors")
            with cur.copy("COPY stage_vectors FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "vector"])
                for c, v in zip(ids, vecs):
                    copy.write_row((c, v))
            found = {r[0] for r in cur.execute("SELECT s.chunk_id FROM stage_vectors s JOIN index_rows r "
                                               "ON r.chunk_id = s.chunk_id").fetchall()}
            missing = [c for c in ids if c not in found]
            if missing:
                raise StoreError(f"chunk {missing[0]!r} is not indexed in store {self.location}")
            cur.execute("UPDATE index_rows r SET embedding = s.embedding FROM stage_vectors s "
                        "WHERE r.chunk_id = s.chunk_id")
            cur.execute("TRUNCATE stage_vectors")
            pending = int(cur.execute("SELECT count(*) FROM index_rows WHERE embedding IS NULL").fetchone()[0])
        self.conn.execute("UPDATE meta SET value = jsonb_set(value, '{embedding,pending}', %s) WHERE key = "
                          "'manifest'", (_json(pending),))
        self._wrote_index = True
        self._bump()

    def get_document_frequency(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        terms = list(terms)
        asked = [t for t in terms if _storable(t)]
        with self.snapshot():
            seen = None if roles is None or not asked else self._access_stats(roles, self._stats()[2])
            if not asked:
                df = {}
            elif seen is None:
                df = dict(self.conn.execute("SELECT term, df FROM terms WHERE term = ANY(%s)", (asked,)).fetchall())
            else:
                df = dict(self.conn.execute(
                    f"SELECT t.term, count(*) FROM terms t JOIN postings p ON p.term_id = t.term_id "
                    f"CROSS JOIN LATERAL unnest(p.rows) AS u(row) JOIN index_rows r ON r.row = u.row "
                    f"JOIN documents d ON d.doc_id = r.doc_id WHERE t.term = ANY(%(terms)s) AND {_ACCESS_SQL} "
                    f"GROUP BY t.term", {"terms": asked, "roles": sorted({r.casefold() for r in roles})}).fetchall())
        return np.array([df.get(t, 0) for t in terms], dtype=np.int64)

    def get_idf(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        with self.snapshot():
            n = self._stats()[0]
            if roles is not None:
                seen = self._access_stats(roles, self._stats()[2])
                n = n if seen is None else seen[0]
            df = self.get_document_frequency(terms, roles).astype(np.float64)
        return np.log1p((n - df + 0.5) / (df + 0.5))

    def get_vocabulary(self) -> Mapping[str, int]:
        with self.snapshot():
            gen = self._stats()[2]
            return self._cached("vocabulary", gen, lambda: dict(
                self.conn.execute("SELECT term, term_id FROM terms").fetchall()))

    def local_index(self) -> None:
        """None: the index is in the database, not a local folder (no RAPTOR tree, no context cache)."""
        return None

    # ------------------------------------------------------------------ bulk reads for `openbook store copy`
    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"


def _storable(term: str) -> bool:
    """Whether ``term`` can be a row of ``terms``: PostgreSQL text holds no NUL character, so a term with one is
    in no document (df 0, no hit) and is never sent to the database (where it would raise ``DataError``)."""
    return "\x00" not in term


_ACCESS_SQL = "(cardinality(d.acl) = 0 OR d.acl && %(roles)s::text[])"
"""The access rule on ``d`` (documents) for the case-folded roles ``%(roles)s``: no acl, or one of its roles."""

_BM25_SEEN_SQL = """
    WITH q AS MATERIALIZED (
        SELECT t.term_id, x.w::float4 AS w
        FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS x(term, w)
        JOIN terms t ON t.term = x.term
    ), seen AS MATERIALIZED (
        SELECT q.term_id, u.row, u.tf, u.length, r.doc_id, ({cond}) AS wanted
        FROM q JOIN postings p ON p.term_id = q.term_id
        CROSS JOIN LATERAL unnest(p.rows, p.tfs, p.lengths) AS u(row, tf, length) {join}
        WHERE {access}
    ), qi AS (
        SELECT q.term_id, q.w,
               ln(1.0::float8 + (%(n)s::float8 - count(DISTINCT s.doc_id) + 0.5::float8)
                  / (count(DISTINCT s.doc_id) + 0.5::float8))::float4 AS idf
        FROM q JOIN seen s ON s.term_id = q.term_id GROUP BY q.term_id, q.w
    ), scored AS (
        SELECT s.row, sum((qi.idf * s.tf::float4 / (s.tf::float4 + (%(k1)s::float8 * (1.0::float8
                   - %(b)s::float8 + %(b)s::float8 * %(flat)s::float8 * s.length / %(avgdl)s::float8)
                   )::float4) * qi.w)::float8)::float4 AS score
        FROM seen s JOIN qi ON qi.term_id = s.term_id
        WHERE s.wanted
        GROUP BY s.row
        ORDER BY score DESC, s.row
        LIMIT %(k)s
    )
    SELECT s.row, r2.chunk_id, r2.doc_id, s.score FROM scored s
    JOIN index_rows r2 ON r2.row = s.row ORDER BY s.score DESC, s.row"""
"""BM25 top k with ``N`` (``%(n)s``, documents), ``avgdl`` (rows) and each term's ``df`` (documents) over the rows
the caller's roles may see (``{access}``; df counted in the query over the postings it reads anyway), ranking the rows of ``{cond}`` (the
whole visibility); the same float4 steps and float8 sum as the query over the whole index's statistics."""


def _json(value: Any) -> psycopg.types.json.Jsonb:
    return psycopg.types.json.Jsonb(value, dumps=lambda v: json.dumps(v, ensure_ascii=False, default=str))


def _vec(value: Any) -> np.ndarray:
    """A pgvector value as float32 numpy (the adapter returns ``Vector`` objects)."""
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)


def _graph_operand(precision: str, dim: int, column: str = "embedding", with_ops: bool = True,
                   centre: str | None = None) -> str:
    """What the HNSW graph is built on at ``precision`` (module docstring), as SQL on ``column``; ``with_ops``
    adds the operator class (for ``CREATE INDEX``). ``centre``: pgvector's text of the vectors' mean, which
    binary codes are taken about (the same literal in the index and in every query, so the planner matches them).

    Raises:
        StoreError: ``centre`` is not a vector literal.
    """
    dim = int(dim)
    shifted = column
    if precision == "binary" and centre is not None:
        if not re.fullmatch(r"\[[0-9eE+\-.,]*\]", centre):
            raise StoreError(f"the recorded graph centre is not a vector ({centre[:40]!r}); run `openbook ingest` "
                             f"again to rebuild the HNSW graph")
        shifted = f"{column} - '{centre}'::vector({dim})"
    expr, ops = {"f32": (column, "vector_cosine_ops"),
                 "f16": (f"({column})::halfvec({dim})", "halfvec_cosine_ops"),
                 "binary": (f"binary_quantize({shifted})::bit({dim})", "bit_hamming_ops")}[precision]
    if precision != "f32" and column != "%(q)s":
        expr = f"({expr})"
    return f"{expr} {ops}" if with_ops else expr


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), float32."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _schema_version(conn: psycopg.Connection) -> int | None:
    """The highest applied schema version, or None when the database has no openbook schema."""
    exists = conn.execute("SELECT to_regclass('openbook.schema_version') IS NOT NULL").fetchone()[0]
    if not exists:
        return None
    row = conn.execute("SELECT max(version) FROM openbook.schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _migrate(conn: psycopg.Connection, shown: str) -> None:
    """Apply the missing ``MIGRATIONS`` in one transaction, under the writer lock (two processes opening a new
    database at once: the second finds the work done)."""
    from importlib.metadata import PackageNotFoundError, version as package_version

    try:
        openbook_version = package_version("openbook")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        openbook_version = "unknown"
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
        except psycopg.Error as exc:
            raise StoreError(f"{shown}: the pgvector extension is missing or may not be created by this user "
                             f"({str(exc).strip()}); ask the database owner to run CREATE EXTENSION vector") from None
        with conn.transaction():
            current = _schema_version(conn) or 0
            for version in range(current + 1, SCHEMA_VERSION + 1):
                conn.execute(MIGRATIONS[version])
                conn.execute("INSERT INTO openbook.schema_version (version, openbook) VALUES (%s, %s)",
                             (version, openbook_version))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
