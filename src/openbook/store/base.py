"""The store boundary: what a backend keeps (documents, chunks, metadata, versions, the index) and the index
operations it must answer. Retrieval (``openbook.retrieve.pipeline.Retriever``), ingest and answering talk to a
store only through the ``Store`` protocol below; nothing above ``store/`` knows files, SQL or generations.

Roles (``ROLES``; ``Store`` is their composition, and every backend implements all of them)::

    StoreHandle     backend, location, read_only; configure, close, info; local_index (optional capability)
    Transactions    the writer lock, begin / commit / rollback, savepoints, read snapshots
    DocumentStore   documents, chunks, their metadata, version links
    IndexWriter     index and vector writes, and the reads a rewrite of the index needs
    SearchIndex     BM25 and dense top-k, stored vectors, corpus statistics (N, df, idf, vocabulary)
    LocalIndex      optional: the index as a local folder of generations, with files kept beside a generation

Method names say what a call does: ``get_*`` reads (no side effect; each says what a missing id gives),
``put_*`` writes (insert or replace, *write*: inside a transaction), ``delete_*`` removals (*write*), ``count_*``
counts; ``*_top_k`` are the two searches. Lifecycle and transaction verbs (``configure``, ``close``, ``info``,
``begin``, ``commit``, ...) and the capability query ``local_index`` are named for their action.

Backends::

    embedded     openbook.store.embedded.EmbeddedStore   one folder: SQLite + memory-mapped index generations
    postgresql   openbook.store.postgres.PostgresStore    PostgreSQL + pgvector, BM25 computed in SQL

Division of work (who owns what):

- openbook's analyzer (``openbook.index.analyzer``) is the single source of analysis semantics (CJK bigrams,
  stemming, codes). A backend never tokenises: at write time it receives each chunk's analyzed terms, and at query
  time ``(term, weight)`` lists (``QueryTerms``). A backend whose database has its own tokenizer must index the
  terms it is given (e.g. as a space-joined string of terms under a whitespace tokenizer, or a term array).
- Scoring is BM25 as in Lucene's ``BM25Similarity`` (Robertson et al.'s BM25, Lucene idf
  ``ln(1 + (N - df + 0.5) / (df + 0.5))``, no ``(k1 + 1)`` factor), see ``openbook.index.sparse``. A chunk is
  scored by its own ``tf`` and length, but its idf counts documents: ``N`` is the number of documents with
  indexed chunks and ``df`` the number of documents with a chunk holding the term (so how a document is cut into
  chunks does not change a term's weight); ``avgdl`` is the mean number of analyzed terms per chunk. All three
  count only what the caller's roles may see (``Visibility.roles`` under the access rule; ``--where`` clauses
  and exclusions narrow what is searched, not the statistics): a caller's scores are those of a store holding
  only what it may see, so they tell nothing of hidden documents. A query term's weight
  multiplies its contribution (a term repeated in the query arrives once with weight 2.0; glossary expansions
  arrive with weights below 1). Ranking must equal the reference within float32 rounding; ties break by lower
  insertion order (embedded: row id) — conformance tests compare against a brute-force reference.
- Dense scores are cosine similarities in [-1, 1] of the stored chunk vectors and the query vector.
- Access and ``--where`` filters (``Visibility``) are applied BEFORE ranking: a chunk the caller may not see never
  takes a top-k slot of one it may see. The one definition of the rule is ``Visibility.allows`` (which calls
  ``openbook.store.filters.document_passes``); a backend may translate it (to SQL, to a row mask) but must agree
  with it on every document — the conformance suite checks this on roles, ``acl`` strings/lists, ``=``, ``!=``,
  ``in``, ``not in``, dates, numbers and missing fields. A backend that cannot translate a clause evaluates
  ``Visibility.allows`` over ``get_document_metadata()`` itself (what the embedded store does).
- Fusion (RRF), reranking, multi-hop, query transforms, glossary expansion and answering stay above the store, in
  ``openbook.retrieve`` and ``openbook.answer``; they are backend-independent.

Writes: one writer at a time per store (``write_lock``; a waiting writer is told so through ``on_wait``), inside
one transaction (``begin`` ... ``commit``): documents, chunks, versions and the index changes of a batch become
visible together at ``commit`` or not at all (``rollback``, or the process dying). Readers never see half an
ingest: ``snapshot()`` pins one committed state for several reads (a search and the chunk texts of its hits).

How a new backend plugs in (what the PostgreSQL helper implements):

1. A module ``openbook/store/NAME.py`` with a class that implements every member of ``Store``'s roles
   (structural typing: no base class to inherit; ``isinstance(obj, Store)`` works at run time because the
   protocols are ``runtime_checkable``, and the conformance suite names a missing member and its role), plus a classmethod ``open(location: str, create: bool = False) -> Self`` that raises
   ``StoreError`` (missing / unreachable, with how to fix it) or ``StoreVersionError`` (schema written by an
   incompatible openbook; a backend with migrations applies the known ones at open and raises for unknown).
2. One line in ``openbook.store.BACKENDS`` (``openbook/store/__init__.py``): the URL scheme (``postgresql``) and
   the ``"module:Class"`` path, imported on first use so that a missing optional dependency fails only for that
   backend, with an error naming the ``pip install openbook[EXTRA]`` extra. ``open_store(location)`` picks the
   backend from the location: a URL with a registered scheme, else a folder (embedded).
3. One fixture appended to ``BACKENDS`` in ``tests/store/test_conformance.py``; the suite then runs on it.

Nothing in ``retrieve/``, ``answer/`` or ``api.py`` changes for a new backend.

Errors (``openbook.errors``): ``StoreError`` for anything the user can fix about the store (missing, empty,
read-only, busy, unreachable), ``StoreVersionError`` for an incompatible format or schema, ``ModelMismatchError``
never from a store (the retriever checks ``get_embedding().model``). Messages name the store and the fix.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Callable, Collection, ContextManager, Generic, Iterable, Iterator, Mapping, Protocol,
                    Sequence, runtime_checkable)

import numpy as np

from ..errors import ConfigError, StoreError, StoreVersionError
from ..types import Chunk, Document, Hit
from .filters import Clause, document_passes, parse_filters

if TYPE_CHECKING:
    from .generations import LoadedIndex

QueryTerms = Sequence[tuple[str, float]]
"""One query's analyzed terms as ``(term, weight)`` pairs, each term once, in first-seen order; the weight is the
query term frequency (1.0 per occurrence) or a glossary expansion's weight (below 1). Build with
``weighted_terms``."""


def weighted_terms(terms: Iterable[str | tuple[str, float]]) -> list[tuple[str, float]]:
    """Merge analyzer output (strings, and ``(term, weight)`` pairs from glossary expansion) into ``QueryTerms``:
    one pair per distinct term in first-seen order, weights summed (a term seen twice weighs 2.0)."""
    out: dict[str, float] = {}
    for t in terms:
        term, weight = (t, 1.0) if isinstance(t, str) else t
        out[term] = out.get(term, 0.0) + float(weight)
    return list(out.items())


def settings_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """The keys whose values differ between two settings mappings, in words, sorted by key:
    ``"unicode '14.0.0' -> '15.0.0'"`` (comma-separated; "" when none differ)."""
    return ", ".join(f"{k} {before.get(k)!r} -> {after.get(k)!r}" for k in sorted({*before, *after})
                     if before.get(k) != after.get(k))


def analyzer_mismatch_error(location: str, recorded: Mapping[str, Any] | None,
                            current: Mapping[str, Any]) -> StoreVersionError:
    """The error for querying or extending an index whose recorded analyzer settings (``recorded``, from its
    manifest) differ from this openbook's (``current``, ``Analyzer.settings()``): it names what differs
    (``analyzer v2, this openbook analyzes with v3``; a Python upgrade changes ``unicode``) and the migration
    that rebuilds the BM25 index from the stored chunks, ``openbook store reindex``, which keeps every vector;
    the other way out is a new store (an ingest into this one is refused by the same error)."""
    recorded = dict(recorded or {})
    if recorded.get("version") != current.get("version"):
        what = f"analyzer v{recorded.get('version')} and this openbook analyzes with v{current.get('version')}"
    else:
        what = f"other analyzer settings than this openbook's ({settings_changed(recorded, current)})"
    return StoreVersionError(f"the index in {location} was built with {what}, so its BM25 terms would not match "
                             f"a query's: run `openbook store reindex --store {location}` (rebuilds the BM25 index "
                             f"from the stored chunks, keeps the embeddings) or re-ingest the documents into a new "
                             f"store (`openbook ingest PATH --store NEW_FOLDER_OR_DATABASE`)")


def empty_store_error(store: Any) -> StoreError:
    """The error for a search in a store with nothing indexed (``store``: any ``Store``)."""
    if store.writer_active():
        return StoreError(f"store {store.location} has no documents yet: an ingest into it is running; "
                          f"search again when it has committed its first batch")
    return StoreError(f"store {store.location} is empty: run `openbook ingest PATH --store {store.location}` first")


@dataclass(frozen=True)
class StoredDocument:
    """A document row without its text: what ingest needs to decide unchanged / changed / gone."""

    doc_id: str
    source: str
    root: str
    content_hash: str


@dataclass(frozen=True)
class Visibility:
    """Which documents a query may see: access ``roles``, parsed ``--where`` ``clauses`` (AND) and doc ids hidden
    outright (``exclude_docs``, used by answer evaluation). Applied by the store before ranking.

    The access rule (one home: ``openbook.store.filters.visible``): a document whose metadata has a
    non-empty ``acl`` (a role string or a list of them) is visible only to a caller holding one of those roles,
    compared case-insensitively; a caller with no roles sees only documents without ``acl``.
    """

    roles: tuple[str, ...] = ()
    clauses: tuple[Clause, ...] = ()
    exclude_docs: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, roles: Sequence[str] = (), where: Sequence[str] = (),
           exclude_docs: Collection[str] = ()) -> "Visibility":
        """Parse ``where`` clauses (``FIELD OP VALUE``).

        Raises:
            QueryError: a clause cannot be parsed.
        """
        return cls(tuple(roles), parse_filters(where), frozenset(exclude_docs))

    def allows(self, doc_id: str, fields: Mapping[str, Any]) -> bool:
        """The reference decision for one document; ``fields`` as in ``Store.get_document_metadata()`` (builtin
        fields ``doc_id``, ``title``, ``format``, ``path`` and the metadata keys, ``acl`` included)."""
        return doc_id not in self.exclude_docs and document_passes(fields, self.clauses, self.roles)


@dataclass(frozen=True)
class IndexSettings:
    """What a store needs to write and query its index; set once with ``Store.configure``.

    Attributes:
        k1, b: BM25 parameters (Robertson et al.; Lucene defaults 1.2 and 0.75). A change takes effect on the
            next query without re-indexing (the index keeps term frequencies and lengths, not weights).
        analyzer: ``Analyzer.settings()``; an index written with other settings is refused at read time
            (``StoreVersionError``: the stored terms would not match the query's).
        chunking: ``asdict(config.chunking)``, recorded with the index (informational).
        ann_threshold: from this many vectors on an approximate (HNSW) index may replace exact search.
        vector_precision: what the vectors are searched at (``openbook.index.dense.PRECISIONS``: the embedded
            store takes ``f32``, ``f16``, ``int8``, ``binary``; PostgreSQL ``f32``, ``f16``, ``binary``); "" keeps
            the store's recorded precision (``f32`` for a new store). Another value than the recorded one makes
            the next index write re-index the vectors at it; the float32 vectors are kept either way.
    """

    k1: float = 1.2
    b: float = 0.75
    analyzer: Mapping[str, Any] = field(default_factory=dict)
    chunking: Mapping[str, Any] = field(default_factory=dict)
    ann_threshold: int = 200_000
    vector_precision: str = ""


@dataclass(frozen=True)
class CorpusStats:
    """Statistics of the committed index (what BM25 and the answerer's idf weights use).

    Attributes:
        documents: documents with at least one indexed chunk.
        chunks: indexed chunks, BM25's ``N``.
        avgdl: mean analyzed terms per chunk (0.0 when empty).
        terms: distinct analyzed terms (vocabulary size).
    """

    documents: int
    chunks: int
    avgdl: float
    terms: int


@dataclass(frozen=True)
class EmbeddingInfo:
    """The vectors a store holds: the embedder's name, dimension, whether vectors are unit length, whether an
    approximate index (HNSW) answers ``vector_top_k``, and how many indexed chunks still wait for their vector.

    Attributes:
        pending: indexed chunks written without a vector (``put_index(..., defer=True)``) and not yet given one
            by ``put_vectors``; the dense leg does not see them, BM25 does. 0 when every chunk has its vector.
        precision: what the vectors are searched at (``IndexSettings.vector_precision``), ``f32`` by default.
    """

    model: str
    dim: int
    normalized: bool
    ann: bool = False
    pending: int = 0
    precision: str = "f32"


class VectorSource(Protocol):
    """The embedder as an index write sees it (``openbook.index.embedders``); ``dim`` is read by deferred writes
    (``put_index(..., defer=True)``), which record the model before any vector is computed."""

    name: str
    normalized: bool
    dim: int

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Passage vectors, float32 ``[len(texts), dim]`` in input order (``[0, dim]`` for no texts)."""
        ...


@runtime_checkable
class StoreHandle(Protocol):
    """What every open store is: its name, location and mode, its settings and its release.

    ``configure`` is called once, right after the backend's ``open``, before any other method; after ``close``
    no method may be called. ``local_index`` is the optional capability query: a backend whose index is a local
    folder of generations returns a ``LocalIndex``, any other returns None.
    """

    backend: str
    """Backend name, as in ``openbook.store.BACKENDS`` (``embedded``, ``postgresql``)."""

    location: str
    """Where the store is: a folder path, or a URL without its password (shown by ``openbook stats``)."""

    read_only: bool
    """Opened without write permission: it can be searched, not written (writes raise ``StoreError``)."""

    def configure(self, settings: IndexSettings) -> None:
        """Set BM25 parameters, analyzer settings and ANN threshold for later queries and writes (call once,
        right after ``open``)."""
        ...

    def close(self) -> None:
        """Release connections and file handles; the object is unusable afterwards."""
        ...

    def info(self) -> dict[str, Any]:
        """What ``openbook stats`` shows: at least ``backend``, ``location``, ``schema_version`` (int),
        ``read_only``, ``ingest_running`` (another writer holds the lock) and ``manifest`` (the index's recorded
        settings: analyzer, bm25 k1/b, embedding model/dim, rows; None before the first index write). A backend
        may add keys (the embedded store adds ``generation``)."""
        ...

    def local_index(self) -> LocalIndex | None:
        """This store as a ``LocalIndex`` (its index is a local folder of generations), or None for a backend
        without one. Features that keep files beside a generation ask for it (``require_local_index``)."""
        ...


@runtime_checkable
class Transactions(Protocol):
    """One writer at a time, all-or-nothing writes, and stable reads.

    A writer holds ``write_lock`` for its whole run, then writes between ``begin`` and ``commit`` (or inside
    ``transaction()``); every method marked *write* in the other roles must be called there, else the backend
    raises ``StoreError``. ``commit`` publishes the documents, chunks, versions and index changes of the
    transaction together; ``rollback`` (or the process dying) leaves the previous committed state. Readers use
    ``snapshot()`` to see one committed state across several reads. Errors: ``StoreError`` for a read-only store,
    a lock that cannot be taken, or a busy store.
    """

    def write_lock(self, on_wait: Callable[[str], None] | None = None) -> ContextManager[None]:
        """Hold the store's exclusive writer lock for a whole ingest or delete (re-entrant in one process).
        When another writer holds it, ``on_wait`` hears one line saying so and this call waits.

        Raises:
            StoreError: the store is read-only or cannot be locked.
        """
        ...

    def writer_active(self) -> bool:
        """Whether another process holds the writer lock right now."""
        ...

    def begin(self) -> None:
        """Start the write transaction (hold ``write_lock`` first). Raises ``StoreError`` when busy."""
        ...

    def commit(self) -> None:
        """Publish everything written since ``begin`` at once (documents, versions, index) to new readers."""
        ...

    def rollback(self) -> None:
        """Undo everything since ``begin``, if a transaction is open; the previous state stays readable."""
        ...

    def transaction(self) -> ContextManager[None]:
        """``begin``; ``commit`` on success, ``rollback`` on any exception (re-raised)."""
        ...

    def savepoint(self) -> ContextManager[None]:
        """A nested unit inside a transaction: an exception undoes only its own writes (one document)."""
        ...

    def snapshot(self) -> ContextManager[None]:
        """Pin one committed state for every read inside (index queries, chunks, metadata): a commit by another
        process during it is not seen. Re-entrant; inside a write transaction it reads that transaction's state."""
        ...


@runtime_checkable
class DocumentStore(Protocol):
    """The stored documents and their chunks, metadata and version links: what ingest writes, what answers cite.

    A missing id is absent from a returned mapping, or None for one id, never an error; ``put_*`` and
    ``delete_*`` are *write*. Orders: chunks in document
    order, document listings by doc id. Neither a put nor a delete touches the index (``IndexWriter``).
    """

    def get_documents(self) -> dict[str, StoredDocument]:
        """Every stored document by id (no text)."""
        ...

    def count_stored(self, roles: Sequence[str] | None = None) -> tuple[int, int]:
        """``(documents, chunks)`` stored: every one for ``roles`` None (a local administrator); for a role list
        (empty: a caller with no role) only the documents those roles may see under the access rule
        (``Visibility(roles).allows``: no ``acl`` or one of its roles) and their chunks, counted by a query
        the backend answers (no listing of documents), so that a count never reveals what is hidden."""
        ...

    def put_document(self, doc: Document, root: str, chunks: Sequence[Chunk], digest: str) -> None:
        """*Write.* Insert or replace a document and all its chunks (``chunks`` in document order; ``root``: the
        folder it was ingested from; ``digest``: the content hash compared by the next ingest). The index is
        changed separately, by ``put_index``."""
        ...

    def delete_documents(self, doc_ids: Iterable[str]) -> None:
        """*Write.* Remove documents and their chunks; unknown ids are ignored."""
        ...

    def set_digests(self, digests: Mapping[str, str]) -> None:
        """*Write.* Replace the stored digest (``StoredDocument.content_hash``) of documents, by id; text, chunks
        and index are untouched; unknown ids are ignored."""
        ...

    def get_chunk_ids(self, doc_ids: Iterable[str]) -> set[str]:
        """Chunk ids currently stored for these documents."""
        ...

    def get_document(self, doc_id: str) -> Document | None:
        """The stored document with its text, metadata and pages, or None."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id, each with its document's title and metadata; unknown ids are absent."""
        ...

    def get_document_chunks(self, doc_id: str) -> list[Chunk]:
        """One document's chunks in document order (empty when unknown)."""
        ...

    def get_document_rows(self) -> list[tuple[str, str, str, dict[str, Any], int]]:
        """``(doc_id, title, source, metadata, chunk count)`` of every document, ordered by doc id."""
        ...

    def get_sources(self) -> dict[str, list[str]]:
        """Source path -> ids of the documents read from it (ids in doc id order)."""
        ...

    def get_document_metadata(self) -> dict[str, dict[str, Any]]:
        """Filterable fields of every document by id: ``doc_id``, ``title``, ``format``, ``path`` (the source),
        then its metadata keys (a metadata key of the same name wins). What ``Visibility.allows`` reads."""
        ...

    def get_metadata_fields(self) -> set[str]:
        """Every field some document has: the four builtin fields plus the metadata keys in use."""
        ...

    def get_titles_and_metadata(self, versioned_only: bool = False) -> dict[str, tuple[str, dict[str, Any]]]:
        """``(title, metadata)`` by doc id; ``versioned_only`` may restrict it to what version linking uses
        (every document when some names ``supersedes``, else those with an ``updated`` date)."""
        ...

    def put_versions(self, links: Mapping[str, str]) -> None:
        """*Write.* Replace the recorded version links (older doc id -> newer doc id)."""
        ...

    def get_versions(self) -> dict[str, str]:
        """Recorded version links: older doc id -> the doc id that supersedes it."""
        ...


@runtime_checkable
class IndexWriter(Protocol):
    """Changes to the lexical and dense index, and the reads a rewrite of the index needs.

    ``put_index`` and ``put_vectors`` are *write*; they become visible at ``commit``. The reads here
    (``get_pending_vectors``, ``get_index_manifest``, ``get_indexed_chunk_ids``) do not check the recorded
    analyzer settings against ``configure``'s, so a migration (``openbook.store.reindex``) can read an index
    the search role refuses. Chunk ids come in row order (insertion order, the order that breaks BM25 ties).
    """

    def put_index(self, removed: Collection[str], chunks: Sequence[Chunk], terms: Sequence[Sequence[str]], *,
                    reuse: Collection[str] = (), embedder: VectorSource | None = None,
                    reembed: bool = False, defer: bool = False) -> int:
        """*Write.* Change the index: drop the rows of ``removed`` chunk ids, add ``chunks`` with their analyzed
        terms (``terms[i]`` for ``chunks[i]``, as ``Analyzer.analyze_document`` returns them, repeats kept).
        Visible to readers at ``commit``.

        An index built with other analyzer settings than ``configure``'s can only be replaced whole (``removed``
        names every row: ``openbook.store.reindex``); any other write to it raises ``StoreVersionError``, since
        its terms would not mix with the new chunks' terms.

        Vectors: ``embedder`` None writes a BM25-only index (vectors are dropped). Otherwise new chunks whose id
        is in ``reuse`` keep their committed vector (same id, same indexed text), the other new chunks are
        embedded (``embedder.embed_passages(chunk.indexed_text() ...)``), kept rows keep theirs; ``reembed``
        recomputes every row's vector. A store that holds rows but no vectors stays BM25-only unless ``reembed``.
        A kept row that is pending (see below) stays pending; a new chunk in ``reuse`` whose committed row is
        pending is not reused.

        ``defer``: compute no vector here. The chunks that would be embedded (with ``reembed``: every row) are
        indexed as *pending*: BM25 searches them at once, the dense leg once ``put_vectors`` has given them a
        vector (``get_pending_vectors`` lists them, ``get_embedding().pending`` counts them). The model
        (``embedder.name``, ``.dim``, ``.normalized``) is recorded now, so ``get_embedding()`` is not None.

        Returns:
            How many vectors were computed (0 with ``defer``).
        """
        ...

    def put_vectors(self, chunk_ids: Sequence[str], vectors: np.ndarray) -> None:
        """*Write.* Give indexed chunks their vectors (``vectors[i]`` for ``chunk_ids[i]``, float ``[n, dim]``,
        stored unit-normalised): a pending chunk joins the dense leg at ``commit``; a chunk that had a vector gets
        the new one. BM25 is unchanged.

        Raises:
            StoreError: the index records no embedding model (a BM25-only store), a chunk id is not indexed (the
                message names it), or ``vectors`` is not ``[len(chunk_ids), get_embedding().dim]``.
        """
        ...

    def get_pending_vectors(self, limit: int | None = None) -> list[str]:
        """Chunk ids of the committed index that wait for their vector (``put_index(..., defer=True)``), in row
        order, at most ``limit`` of them (None: all); empty for a BM25-only store and when every chunk has one."""
        ...

    def get_index_manifest(self) -> dict[str, Any] | None:
        """The committed index's manifest as recorded (``format_version``, ``analyzer``, ``bm25``, ``chunking``,
        ``embedding``), read without checking it against ``configure``'s settings: what a migration reads of an
        index this openbook refuses to query (``openbook.store.reindex``). None before the first index write."""
        ...

    def get_indexed_chunk_ids(self) -> list[str]:
        """Chunk ids of the committed index in row order (insertion order: the order that breaks BM25 ties), read
        without checking the analyzer settings; empty before the first index write."""
        ...


@runtime_checkable
class SearchIndex(Protocol):
    """Queries of the committed index: BM25 and dense top-k under a ``Visibility``, stored vectors, and the
    corpus statistics (N, df, idf, avgdl, vocabulary) that BM25 and the answerer's term weights use.

    Batch first: the top-k methods take a list of queries and return one ranked list per query, in query order,
    best first. Statistics for a role list count only what those roles may see (see the module docstring).
    Errors: ``StoreError`` for an empty store (nothing indexed; ``empty_store_error``), ``StoreVersionError``
    for an index written with other analyzer settings than ``configure``'s.
    """

    def get_corpus_stats(self) -> CorpusStats | None:
        """Statistics of the committed index; None when nothing was ever indexed."""
        ...

    def get_embedding(self) -> EmbeddingInfo | None:
        """The stored vectors' embedder, or None for a BM25-only index (dense and hybrid need vectors)."""
        ...

    def bm25_top_k(self, queries: Sequence[QueryTerms], k: int, visibility: Visibility) -> list[list[Hit]]:
        """BM25 top ``k`` chunks per query among the chunks ``visibility`` allows (filtered before ranking).

        Args:
            queries: ``QueryTerms`` per query (analyzed; terms the index lacks contribute nothing).
            k: hits wanted per query (>= 0).

        Returns:
            One list per query, in query order, of at most ``k`` hits, best first, ties by insertion order; only
            chunks with a positive score (at least one query term). ``Hit.score`` is the raw BM25 score (float32
            precision) with ``N`` and ``df`` over the documents and ``avgdl`` over the chunks ``visibility.roles``
            may see (the same score as in a store that holds only those), and ``Hit.legs == {"bm25": (rank, score)}`` with rank
            from 1; ``Hit.chunk`` is None.

        Raises:
            StoreError: the store is empty (nothing indexed yet; says whether an ingest is running).
        """
        ...

    def vector_top_k(self, queries: np.ndarray, k: int, visibility: Visibility) -> list[list[Hit]]:
        """Top ``k`` chunks per query vector by cosine similarity among the chunks ``visibility`` allows that have
        a vector (a pending chunk is never returned).

        Args:
            queries: float32 ``[nq, dim]`` query vectors (normalised by the store).
            k: hits wanted per query.

        Returns:
            One list per query of at most ``k`` hits, best first; ``Hit.score`` is the cosine in [-1, 1] and
            ``Hit.legs == {"dense": (rank, score)}``. An approximate index may miss a true neighbour, never
            return a hidden chunk.

        Raises:
            StoreError: empty store, or no vectors stored. IndexError_: wrong dimension.
        """
        ...

    def get_vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of these chunks: float32 ``[len(chunk_ids), dim]`` in the order given.

        Raises:
            StoreError: no vectors stored, or an id is not indexed or still pending (its message names it).
        """
        ...

    def get_idf(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        """Lucene idf of each analyzed term over the indexed chunks (``roles`` None), or over those these roles
        may see: float64 ``[len(terms)]``; a term absent from them gets the idf of df = 0. Counted in chunks (the
        answerer's term weights), not in documents as ``bm25_top_k``'s scores."""
        ...

    def get_document_frequency(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        """How many indexed chunks contain each term (``roles`` None: all; else those these roles may see):
        int64 ``[len(terms)]`` (0 when absent)."""
        ...

    def get_vocabulary(self) -> Mapping[str, int]:
        """Every indexed term -> a backend-defined integer id (callers use membership and ``len``)."""
        ...


@runtime_checkable
class Store(StoreHandle, Transactions, DocumentStore, IndexWriter, SearchIndex, Protocol):
    """Documents, chunks, metadata, versions and the lexical and dense index of one corpus: every role together.

    What a backend implements and what ingest, retrieval and answering are given. Code that needs only one
    role may annotate with that role (``SearchIndex``, ``DocumentStore``, ...). Not thread-safe: one object per
    thread.
    """


def protocol_members(protocol: type) -> set[str]:
    """The attributes and methods a class must have to satisfy ``protocol`` (its own and its bases', without
    ``Protocol``'s and ``object``'s): what the conformance suite checks each backend class for."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass in (Protocol, object, Generic):
            continue
        names.update(getattr(klass, "__annotations__", {}))
        names.update(n for n, v in vars(klass).items()
                     if not n.startswith("_") and (callable(v) or isinstance(v, (property, classmethod, staticmethod))))
    return names


ROLES: tuple[type, ...] = (StoreHandle, Transactions, DocumentStore, IndexWriter, SearchIndex)
"""The role protocols ``Store`` is made of, in the order a backend author reads them."""


@runtime_checkable
class LocalIndex(Protocol):
    """Optional store capability: the index lives in a local folder as numbered generations, each loaded once
    (``openbook.store.generations.LoadedIndex``). RAPTOR's summary tree and the contextual-retrieval cache are
    files in ``path`` that follow the generation; a backend offers it by returning itself (or a view) from
    ``Store.local_index()``. The embedded store has it; PostgreSQL does not."""

    path: Path
    """The store folder (files kept beside the index generations go here)."""

    @property
    def generation(self) -> int:
        """The committed generation (0: nothing indexed yet)."""
        ...

    def loaded(self) -> LoadedIndex | None:
        """The committed generation's index; None before the first index write. Raises ``StoreError`` /
        ``StoreVersionError`` for missing or incompatible files."""
        ...

    def require_index(self) -> LoadedIndex:
        """``loaded()``, raising ``StoreError`` (with how to fill it) for an empty store."""
        ...

    def visible_rows(self, index: LoadedIndex, visibility: Visibility) -> np.ndarray | None:
        """bool ``[rows of index]``: the rows ``visibility`` may see (``Visibility.allows``), None when all."""
        ...

    def has_contexts(self) -> bool:
        """Whether some ingest stored contextual-retrieval contexts with the chunks (``[ingest] contextualize``)."""
        ...


def require_local_index(store: Store, feature: str) -> LocalIndex:
    """``store.local_index()`` for ``feature`` (its name and config key, e.g. ``"RAPTOR summaries ([index]
    raptor)"``).

    Raises:
        ConfigError: the backend has no local index folder, naming the feature and how to turn it off.
    """
    local = store.local_index()
    if local is None:
        raise ConfigError(f"{feature} needs the embedded store (a folder), and store {store.location} is a "
                          f"{store.backend} store: turn it off in openbook.toml, or use a store folder")
    return local


@contextmanager
def write_transaction(store: Any) -> Iterator[None]:
    """``store.begin()``; ``store.commit()`` on success, ``store.rollback()`` on any exception (re-raised): the
    ``Store.transaction`` of every backend (what begin and commit mean is the backend's own)."""
    store.begin()
    try:
        yield
    except BaseException:
        store.rollback()
        raise
    store.commit()
