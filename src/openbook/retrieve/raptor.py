"""RAPTOR summaries at search time, and their (re)build after an ingest (``[index] raptor = true``).

``summary_hits`` scores the visible summary nodes of ``openbook.index.raptor`` against a query: BM25 over the
summary texts (the store's analyzer, Lucene idf over the summaries), fused by RRF with the cosine of the
summaries' own embeddings when the store and the tree have them. ``with_summaries`` then adds a ``raptor`` leg
to a chunk ranking: the leaves (chunks) of the best ``NODES_PER_QUERY`` summaries, taken in turn, most central
first; the two lists are fused by weighted RRF (the ``raptor`` leg weighs ``RAPTOR_WEIGHT``). So a summary
never reaches a reader or an answerer as a passage: its children do, and the answer cites them.

A summary is visible to a query only when every chunk under it is visible (roles, ``--where``, hidden
documents); a chunk no longer in the index (the tree is older than the index) hides it too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..index.raptor import RaptorNode, RaptorTree
from ..types import Hit

__all__ = ["SummaryHit", "RaptorSearch", "with_summaries", "rebuild", "NODES_PER_QUERY", "RAPTOR_WEIGHT",
           "FOLDER"]

FOLDER = "raptor"
"""The tree's folder inside the store folder."""

NODES_PER_QUERY = 3
"""Summaries whose leaves join a query's ranking."""

RAPTOR_WEIGHT = 0.5
"""Weight of the ``raptor`` leg in the weighted RRF with the chunk ranking (the chunk ranking weighs 1)."""

MAX_LEAVES = 30
"""Leaves per query the ``raptor`` leg holds at most."""


@dataclass(frozen=True)
class SummaryHit:
    """A summary node matched by a query: the node, its fused score (RRF of its legs) and its rank (1-based)."""

    node: RaptorNode
    score: float
    rank: int

    def to_dict(self) -> dict[str, Any]:
        n = self.node
        return {"node_id": n.node_id, "level": n.level, "score": self.score, "text": n.text,
                "children": list(n.children), "chunk_ids": list(n.leaves), "doc_ids": list(n.doc_ids)}


class RaptorSearch:
    """The tree of one store, loaded once, with a BM25 index over its summaries."""

    def __init__(self, tree: RaptorTree, analyze: Any) -> None:
        from ..index.sparse import BM25Index

        self.tree = tree
        self.bm25 = BM25Index.build([analyze(n.text) for n in tree.nodes]) if tree.nodes else None
        self.analyze = analyze

    @classmethod
    def load(cls, store_path: Path, analyze: Any) -> "RaptorSearch | None":
        tree = RaptorTree.load(store_path / FOLDER)
        return cls(tree, analyze) if tree is not None else None

    def search(self, query: str, visible: Any, k: int = NODES_PER_QUERY, query_vector: np.ndarray | None = None,
               rrf_k: int = 60) -> list[SummaryHit]:
        """At most ``k`` visible summary nodes for ``query``, best first.

        Args:
            visible: ``visible(chunk_id) -> bool``; a node shows only when all its leaves do.
            query_vector: float32 [dim] query embedding (same model as the tree's vectors), or None.
        """
        if self.bm25 is None:
            return []
        nodes = self.tree.nodes
        ok = np.fromiter((all(visible(c) for c in n.leaves) for n in nodes), dtype=bool, count=len(nodes))
        if not ok.any():
            return []
        scores: dict[int, float] = {}
        rows, vals = self.bm25.search_batch([self.analyze(query)], len(nodes), ok)
        for rank, (r, v) in enumerate(zip(rows[0], vals[0]), start=1):
            if r >= 0 and v > 0:
                scores[int(r)] = scores.get(int(r), 0.0) + 1.0 / (rrf_k + rank)
        vectors = self.tree.vectors
        if query_vector is not None and vectors is not None and vectors.shape[1] == query_vector.shape[-1]:
            cos = vectors @ np.asarray(query_vector, dtype=np.float32).ravel()
            cos[~ok] = -np.inf
            for rank, r in enumerate(np.argsort(-cos)[: max(k * 10, 50)], start=1):
                if np.isfinite(cos[r]):
                    scores[int(r)] = scores.get(int(r), 0.0) + 1.0 / (rrf_k + rank)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        return [SummaryHit(nodes[r], s, i) for i, (r, s) in enumerate(best, start=1)]


def leaf_hits(summaries: Sequence[SummaryHit], doc_of: Any, limit: int = MAX_LEAVES) -> list[Hit]:
    """The ``raptor`` leg: the summaries' leaves taken in turn (first leaf of each, then the second, ...),
    repeats dropped, at most ``limit``; each ``Hit.legs["raptor"]`` is (rank, its summary's score)."""
    out: list[Hit] = []
    seen: set[str] = set()
    depth = max((len(s.node.leaves) for s in summaries), default=0)
    for j in range(depth):
        for s in summaries:
            if j < len(s.node.leaves) and s.node.leaves[j] not in seen and len(out) < limit:
                c = s.node.leaves[j]
                seen.add(c)
                out.append(Hit(c, doc_of(c), s.score, {"raptor": (len(out) + 1, s.score)}))
    return out


def with_summaries(ranked: list[Hit], summaries: Sequence[SummaryHit], doc_of: Any, *, rrf_k: int, top_k: int
                   ) -> list[Hit]:
    """``ranked`` fused with the summaries' leaves (weighted RRF, ``raptor`` weighs ``RAPTOR_WEIGHT``); the
    ranking unchanged when no summary matched. Returns at most ``top_k`` hits, best first."""
    from .fusion import rrf

    leaves = leaf_hits(summaries, doc_of)
    if not leaves:
        return ranked
    return rrf({"chunks": ranked, "raptor": leaves}, k=rrf_k, weights={"raptor": RAPTOR_WEIGHT}, top_k=top_k)


def rebuild(engine: Any, generator: Any = None) -> dict[str, Any]:
    """Build the store's tree from its current index and save it under ``<store>/raptor``.

    Clusters on the stored chunk embeddings when the index has them (and embeds the summaries with the same
    embedder), else on LSA vectors; summaries by ``generator`` when given, else extractive.

    Returns:
        ``{"nodes", "levels", "chunks", "summarizer", "llm_calls", "llm_failed", "seconds"}``.
    """
    from ..index.raptor import ExtractiveSummarizer, LLMSummarizer, build_tree, lsa_vectors

    t0 = time.perf_counter()
    index = engine._require_index()
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
    if generator is not None:
        summarizer = LLMSummarizer(generator, summarizer)
    tree = build_tree(chunks, vectors, summarizer, generation=engine.store.generation,
                      cluster_size=cfg.raptor_cluster_size, levels=cfg.raptor_levels, embed=embed, model=model)
    tree.save(engine.store.path / FOLDER)
    return {"nodes": len(tree.nodes), "levels": max((n.level for n in tree.nodes), default=0),
            "chunks": len(chunks), "summarizer": summarizer.name,
            "llm_calls": getattr(summarizer, "calls", 0), "llm_failed": getattr(summarizer, "failed", 0),
            "seconds": round(time.perf_counter() - t0, 3)}
