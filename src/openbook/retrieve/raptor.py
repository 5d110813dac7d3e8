"""RAPTOR summaries at search time (``[index] raptor = true``); the tree is built after an ingest by
``openbook.ingest.raptor``.

Collapsed-tree retrieval (Sarthi et al. 2024, section 3): summary nodes compete with chunks on each leg's own
scale. The BM25 leg scores every visible summary with the chunk index's statistics (its idf, k1, b and average
row length, as if the summary were one more row; ``RaptorSearch.bm25_scores``); the dense leg with the cosine
of the summary's embedding. The best ``NODES_PER_LEG`` summaries of a leg are inserted into it by score, so a
summary ranks above a chunk only when it matches the query better (a broad question), and legs are fused as
usual. In the final ranking a summary is then replaced by its leaves (chunks), at most ``LEAVES_PER_SUMMARY``
of them, most central first, skipping chunks already ranked above (``expand_summaries``). So a summary never
reaches a reader or an answerer as a passage: its children do, and the answer cites them.

A summary is visible to a query only when every chunk under it is visible (roles, ``--where``, hidden
documents); a chunk no longer in the index (the tree is older than the index) hides it too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..index.raptor import FOLDER, RaptorNode, RaptorTree
from ..types import Hit

__all__ = ["SummaryHit", "RaptorSearch", "insert_summaries", "expand_summaries", "NODES_PER_LEG",
           "LEAVES_PER_SUMMARY"]

NODES_PER_LEG = 3
"""Summaries inserted into each leg's ranking at most."""

LEAVES_PER_SUMMARY = 3
"""Chunks a summary is replaced by in the final ranking, at most (its most central leaves)."""


@dataclass(frozen=True)
class SummaryHit:
    """A summary node matched by a query: the node, its score on the leg's scale, and its rank (1-based)."""

    node: RaptorNode
    score: float
    rank: int

    def to_dict(self) -> dict[str, Any]:
        n = self.node
        return {"node_id": n.node_id, "level": n.level, "score": self.score, "text": n.text,
                "children": list(n.children), "chunk_ids": list(n.leaves), "doc_ids": list(n.doc_ids)}


class RaptorSearch:
    """The tree of one store, loaded once, with the summaries' term frequencies for BM25 scoring."""

    def __init__(self, tree: RaptorTree, analyze: Callable[[str], list[str]]) -> None:
        self.tree = tree
        self.analyze = analyze
        self.by_id = {n.node_id: n for n in tree.nodes}
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths = []
        for i, n in enumerate(tree.nodes):
            terms = analyze(n.text)
            lengths.append(len(terms))
            counts: dict[str, int] = {}
            for t in terms:
                counts[t] = counts.get(t, 0) + 1
            for t, c in counts.items():
                rows, tfs = postings.setdefault(t, ([], []))
                rows.append(i)
                tfs.append(c)
        self.postings = {t: (np.array(r, dtype=np.int64), np.array(f, dtype=np.float64))
                         for t, (r, f) in postings.items()}
        self.lengths = np.array(lengths, dtype=np.float64)
        self._all_visible: np.ndarray | None = None  # visible() without roles or filters, once computed

    @classmethod
    def load(cls, store_path: Path, analyze: Callable[[str], list[str]]) -> "RaptorSearch | None":
        tree = RaptorTree.load(store_path / FOLDER)
        return cls(tree, analyze) if tree is not None else None

    def visible(self, is_visible: Callable[[str], bool], cache: bool = False) -> np.ndarray:
        """bool [nodes]: every leaf of the node is visible; ``cache`` keeps the answer (no roles or filters)."""
        if cache and self._all_visible is not None:
            return self._all_visible
        ok = np.fromiter((all(is_visible(c) for c in n.leaves) for n in self.tree.nodes), dtype=bool,
                           count=len(self.tree.nodes))
        if cache:
            self._all_visible = ok
        return ok

    def bm25_scores(self, query: str, idf: Callable[[Sequence[str]], np.ndarray], k1: float, b: float,
                    avgdl: float) -> np.ndarray:
        """float [nodes]: BM25 of each summary for ``query`` with the chunk index's idf, k1, b and avgdl
        (Lucene's formula, as ``openbook.index.sparse``), so the scores compare with the chunks' scores."""
        scores = np.zeros(len(self.tree.nodes), dtype=np.float64)
        terms = self.analyze(query)
        if not terms or not len(scores):
            return scores
        norm = k1 * (1.0 - b + b * self.lengths / (avgdl or 1.0))
        weights = dict(zip(terms, (float(x) for x in idf(terms))))
        for t in terms:  # a repeated query term counts once per occurrence
            if t in self.postings:
                rows, tf = self.postings[t]
                scores[rows] += weights[t] * tf / (tf + norm[rows])
        return scores

    def dense_scores(self, query_vector: np.ndarray | None) -> np.ndarray | None:
        """float [nodes]: cosine of each summary's embedding with the query's, or None without vectors."""
        v = self.tree.vectors
        if query_vector is None or v is None or v.shape[1] != np.asarray(query_vector).shape[-1]:
            return None
        return v @ np.asarray(query_vector, dtype=np.float32).ravel()

    def best(self, scores: np.ndarray, ok: np.ndarray, k: int = NODES_PER_LEG) -> list[SummaryHit]:
        """The ``k`` best visible nodes with a positive score, best first."""
        cand = np.flatnonzero(ok & (scores > 0))
        order = cand[np.argsort(-scores[cand], kind="stable")][:k]
        return [SummaryHit(self.tree.nodes[int(r)], float(scores[r]), i) for i, r in enumerate(order, start=1)]


def insert_summaries(hits: list[Hit], summaries: Sequence[SummaryHit], leg: str, depth: int) -> list[Hit]:
    """One leg's ranking with summary hits inserted by score (``Hit.chunk_id`` is the node id, ``doc_id``
    ``""``); ranks in ``Hit.legs[leg]`` renumbered; at most ``depth`` hits."""
    if not summaries:
        return hits
    extra = [Hit(s.node.node_id, "", s.score, {leg: (0, s.score)}) for s in summaries]
    merged = sorted([*hits, *extra], key=lambda h: -h.score)[:depth]
    return [replace(h, legs={**h.legs, leg: (i, h.legs.get(leg, (0, h.score))[1])})
            for i, h in enumerate(merged, start=1)]


def expand_summaries(hits: list[Hit], by_id: dict[str, RaptorNode], doc_of: Callable[[str], str],
                     visible: Callable[[str], bool]) -> list[Hit]:
    """Replace each summary hit by its first ``LEAVES_PER_SUMMARY`` visible leaves not ranked above it (leaves
    that ``hits`` also holds first, in its order, then the most central); each
    leaf takes the summary's score, and ``legs`` ``{"raptor": (the summary's rank, score)}``. Chunk hits that repeat
    a leaf already placed are dropped."""
    out: list[Hit] = []
    seen: set[str] = set()
    position = {h.chunk_id: i for i, h in reversed(list(enumerate(hits)))}
    for rank, h in enumerate(hits, start=1):
        node = by_id.get(h.chunk_id) if h.chunk_id.startswith("raptor-") else None
        if node is None:
            if h.chunk_id not in seen:
                seen.add(h.chunk_id)
                out.append(h)
            continue
        added = 0
        # leaves the chunk ranking also found come first (in its order), then the most central ones
        leaves = sorted(node.leaves, key=lambda c: position.get(c, len(hits)))
        for c in leaves:
            if added >= LEAVES_PER_SUMMARY:
                break
            if c in seen or not visible(c):
                continue
            seen.add(c)
            out.append(Hit(c, doc_of(c), h.score, {"raptor": (rank, h.score)}))
            added += 1
    return out
