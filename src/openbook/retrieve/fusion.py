"""Reciprocal rank fusion of ranked hit lists (Cormack, Clarke and Büttcher 2009), plain and weighted.

Fuse deep candidate lists (the top 100 of each leg, ``[retrieval] candidates``), not each leg's final top k: a chunk
ranked 30th by BM25 and 5th by dense retrieval should be able to win.
"""

from __future__ import annotations

import math
from typing import Collection, Mapping, Sequence

from ..errors import QueryError
from ..types import Chunk, Hit

RRF_K = 60


def rrf(legs: Mapping[str, Sequence[Hit]], k: int = RRF_K, weights: Mapping[str, float] | None = None,
        top_k: int | None = None, blind: Mapping[str, Collection[str]] | None = None) -> list[Hit]:
    """Fuse ranked lists by reciprocal rank: ``score(d) = sum over legs of w_leg / (k + rank_leg(d))``.

    Formula and ``k = 60`` from Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
    individual Rank Learning Methods", SIGIR 2009; ``weights`` gives the weighted variant (every leg weighs 1.0
    unless named there). Ranks are 1-based positions in each leg's list.

    Args:
        legs: leg name (``bm25``, ``dense``, ...) -> hits, best first. A chunk id repeated within one leg counts
            at its first (best) position only.
        k: the RRF constant, >= 0; larger values flatten the difference between top and lower ranks.
        weights: leg name -> weight >= 0 (names without a leg are ignored; a missing leg weighs 1.0).
        top_k: keep at most this many fused hits (None: all).
        blind: leg name -> chunk ids that leg cannot retrieve whatever their content (BM25 and a chunk in a
            script the query has no letter of: ``openbook.retrieve.blind``). Such a chunk, absent from that leg,
            counts there at the best rank another leg gave it, instead of nothing (an imputation beyond
            Cormack et al.; ``Hit.legs`` still lists only the legs that retrieved it).

    Returns:
        Hits keyed by chunk id, best first (fused score descending, then chunk id ascending), at most ``top_k``.
        Each hit's ``score`` is its fused score and ``legs`` holds ``(rank, score)`` for every leg that
        retrieved it (plus any legs the input hits already carried); ``chunk`` comes from whichever input had it.

    Raises:
        QueryError: negative ``k``, ``top_k`` or weight, or a non-finite weight.
    """
    if k < 0:
        raise QueryError(f"RRF k must be >= 0 (Cormack et al. use 60), got {k}")
    if top_k is not None and top_k < 0:
        raise QueryError(f"top_k must be >= 0, got {top_k}")
    weights = dict(weights or {})
    for leg, w in weights.items():
        if not (math.isfinite(w) and w >= 0):
            raise QueryError(f"RRF weight for leg {leg!r} must be a finite number >= 0, got {w!r}")

    fused: dict[str, float] = {}
    doc_ids: dict[str, str] = {}
    chunks: dict[str, Chunk] = {}
    leg_info: dict[str, dict[str, tuple[int, float]]] = {}
    for leg, hits in legs.items():
        w = float(weights.get(leg, 1.0))
        seen: set[str] = set()
        for position, hit in enumerate(hits):
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            rank = position + 1
            cid = hit.chunk_id
            fused[cid] = fused.get(cid, 0.0) + w / (k + rank)
            doc_ids.setdefault(cid, hit.doc_id)
            if hit.chunk is not None:
                chunks.setdefault(cid, hit.chunk)
            info = leg_info.setdefault(cid, {})
            for earlier, pair in hit.legs.items():
                info.setdefault(earlier, pair)
            info[leg] = (rank, float(hit.score))

    for leg, ids in (blind or {}).items():
        w = float(weights.get(leg, 1.0))
        for cid in ids:
            info = leg_info.get(cid)
            if info is None or leg in info or not any(name in legs for name in info):
                continue
            best = min(rank for name, (rank, _) in info.items() if name in legs)
            fused[cid] += w / (k + best)

    order = sorted(fused, key=lambda cid: (-fused[cid], cid))
    if top_k is not None:
        order = order[:top_k]
    return [Hit(chunk_id=cid, doc_id=doc_ids[cid], score=fused[cid], legs=leg_info[cid], chunk=chunks.get(cid))
            for cid in order]


def weighted_rrf(legs: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int = RRF_K,
                 top_k: int | None = None) -> list[Hit]:
    """Weighted reciprocal rank fusion: ``rrf`` with explicit per-leg weights (see ``rrf`` for the contract)."""
    return rrf(legs, k=k, weights=weights, top_k=top_k)
