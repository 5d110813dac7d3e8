"""RAPTOR's tree (re)built after an ingest (``[index] raptor = true``): cluster the committed chunks, summarise,
save the tree beside the index generation it was built from (``openbook.index.raptor`` builds it,
``openbook.retrieve.raptor`` searches it).

The tree is a folder in the store's local index folder (``openbook.store.LocalIndex``); a store without one
(PostgreSQL) raises ``ConfigError`` naming the setting to turn off.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..index.raptor import FOLDER, ExtractiveSummarizer, LLMSummarizer, build_tree, lsa_vectors
from ..store.base import require_local_index
from ..types import content_hash
from .contextualize import CACHE_NAME, ContextCache

__all__ = ["CachedSummarizer", "RaptorHost", "rebuild", "tree_settings"]


class CachedSummarizer:
    """An LLM summarizer whose summaries are cached by (model, children's texts) in the store's context cache
    (``openbook.ingest.contextualize.ContextCache``): a rebuild that meets the same cluster again makes no call.
    ``cached`` counts the hits."""

    def __init__(self, inner: Any, model: str, cache: Any) -> None:
        self.inner, self.model, self.cache = inner, model, cache
        self.name = inner.name
        self.cached = 0

    @property
    def calls(self) -> int:
        return self.inner.calls

    @property
    def failed(self) -> int:
        return self.inner.failed

    def summarize(self, texts: Sequence[str]) -> tuple[str, list[int]]:
        key = content_hash("raptor-summary", self.model, *texts)
        found = self.cache.get(key)
        if found is not None:
            self.cached += 1
            return found, list(range(len(texts)))
        failed = self.inner.failed
        text, sources = self.inner.summarize(texts)
        if self.inner.failed == failed and text:  # a fallback summary after a failure is not cached
            self.cache.put(key, self.model, text)
        return text, sources


class RaptorHost:
    """What ``tree_settings`` and ``rebuild`` read of the engine: ``config``, ``store``, ``analyzer``,
    ``embedder()``, and the store's local index (``openbook.store.LocalIndex``: the folder the tree is saved in,
    the generation, the loaded index).

    Raises:
        ConfigError: the store has no local index folder (PostgreSQL).
    """

    def __init__(self, store: Any, config: Any, analyzer: Any, embedder: Callable[[], Any]) -> None:
        self.store = store
        self.local = require_local_index(store, "RAPTOR summaries ([index] raptor)")
        self.config = config
        self.analyzer = analyzer
        self.embedder = embedder

    @property
    def store_path(self) -> Path:
        return Path(self.local.path)

    @property
    def generation(self) -> int:
        return self.local.generation

    def loaded(self) -> Any:
        """The committed generation's index, or None before the first index write."""
        return self.local.loaded()

    def require_index(self) -> Any:
        """The committed generation's index; ``StoreError`` for an empty store."""
        return self.local.require_index()


def _host(engine: Any) -> RaptorHost:
    """``engine`` (an ``Engine``, an ``Ingester``) as a ``RaptorHost``."""
    if isinstance(engine, RaptorHost):
        return engine
    return RaptorHost(engine.store, engine.config, engine.analyzer, engine.embedder)


def tree_settings(engine: Any) -> dict[str, Any]:
    """What a tree built now would be built with (``[index]`` raptor settings, the summarizer, the vectors);
    a stored tree with other settings is rebuilt by the next ingest."""
    engine = _host(engine)
    cfg, llm = engine.config.index, engine.config.llm
    index = engine.loaded()
    return {"cluster_size": cfg.raptor_cluster_size, "levels": cfg.raptor_levels,
            "summarizer": f"llm:{llm.backend}:{llm.model}" if llm.backend else "extractive",
            "vectors": index.dense.model if index is not None and index.dense is not None else "lsa"}


def rebuild(engine: Any, generator: Any = None) -> dict[str, Any]:
    """Build the store's tree from its current index and save it under ``<store>/raptor``.

    ``engine``: anything with ``store`` (one with a local index folder; another backend raises ``ConfigError``),
    ``config``, ``analyzer`` and ``embedder()`` (an ``Engine``, an ``Ingester``).

    Clusters on the stored chunk embeddings when the index has them (and embeds the summaries with the same
    embedder), else on LSA vectors; summaries by ``generator`` when given, else extractive.

    LLM summaries are cached in the store's ``contexts.sqlite`` by (model, children's texts).

    Returns:
        ``{"nodes", "levels", "chunks", "summarizer", "llm_calls", "llm_cached", "llm_failed", "seconds"}``.
    """
    t0 = time.perf_counter()
    engine = _host(engine)
    index = engine.require_index()
    cfg = engine.config.index
    ids = [index.chunk_id(r) for r in range(len(index.chunk_ids))]
    found = engine.store.get_chunks(ids)
    rows = [r for r, c in enumerate(ids) if c in found]
    chunks = [found[ids[r]] for r in rows]
    analyze = engine.analyzer.analyze
    embed = None
    model = ""
    if index.dense is not None:
        vectors = np.asarray(index.dense.vectors[rows], dtype=np.float32)
        embedder = engine.embedder()
        model = embedder.name
        embed = lambda texts: np.asarray(embedder.embed(texts, kind="passage"), dtype=np.float32)  # noqa: E731
    else:
        vectors = lsa_vectors([c.indexed_text() for c in chunks], analyze)
    summarizer: Any = ExtractiveSummarizer(analyze)
    cache = None
    if generator is not None:
        cache = ContextCache(engine.store_path / CACHE_NAME)
        llm = engine.config.llm
        summarizer = CachedSummarizer(LLMSummarizer(generator, summarizer), f"{llm.backend}:{llm.model}", cache)
    try:
        tree = build_tree(chunks, vectors, summarizer, generation=engine.generation,
                          cluster_size=cfg.raptor_cluster_size, levels=cfg.raptor_levels, embed=embed, model=model)
    finally:
        if cache is not None:
            cache.close()
    tree.settings = tree_settings(engine)
    tree.save(engine.store_path / FOLDER)
    return {"nodes": len(tree.nodes), "levels": max((n.level for n in tree.nodes), default=0),
            "chunks": len(chunks), "summarizer": summarizer.name,
            "llm_calls": getattr(summarizer, "calls", 0), "llm_cached": getattr(summarizer, "cached", 0),
            "llm_failed": getattr(summarizer, "failed", 0), "seconds": round(time.perf_counter() - t0, 3)}
