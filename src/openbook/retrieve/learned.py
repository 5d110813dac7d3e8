"""The learned reranker (``--rerank learned``): a linear learning-to-rank model over what the legs already know.

The fused candidates' top ``RERANK_DEPTH`` are re-ordered by ``score = w . standardize(features)``: the linear
model is fitted pairwise (a relevant candidate should outscore a non-relevant one of the same query; logistic
loss on score differences, RankNet with a linear scorer, Burges et al. 2005) by
``benchmarks/fit_reranker.py`` on public training splits only, and loaded from ``MODEL_FILE`` (weights, the
standardisation, the fit's and the report splits' figures and the command that wrote it). Query time is numpy
and the analyzer: no model runtime, no extra dependency.

Features of one candidate (``FEATURES``; every one is computed here, at query time and for the fit alike):

- the legs: BM25 score over the best BM25 score among the candidates (``bm25_norm``), log of the BM25 rank
  (``bm25_log_rank``; ranks cap at ``RANK_CAP``), ``bm25_absent`` (the BM25 leg did not return it; its score is
  then imputed as the lowest the leg returned); the same for the dense leg (``dense_cos``, the cosine;
  ``dense_gap``, the cosine minus the best candidate's; ``dense_log_rank``, ``dense_absent``); the log of the
  incoming (fused) rank (``fused_log_rank``);
- the text, read with the index's analyzer (``Analyzer.analyze_document`` of the chunk's indexed text, which is
  what BM25 scored): the idf-weighted share of the query's terms the chunk holds (``coverage``), the share of
  its rare terms (idf at least ``RARE_SHARE`` of the query's highest idf) it holds (``rare_coverage``), whether
  it holds the query's rarest term (``rarest``), the idf-weighted share of the query's terms in the document
  title (``title_coverage``), the idf-weighted share of the title's terms the query holds (``title_named``: the
  query names the document, as a question about an entity names its article), the share of the query's
  consecutive term pairs found in that order within ``PAIR_WINDOW`` terms (``pairs``), the share of the
  query's literal codes (a word with a digit or an inner ``.``/``-``/``_``, "4.4.1", "utf-8", "x86_64") found
  verbatim, case-folded (``codes``);
- the chunk: log of its term count (``log_terms``), whether it opens its document (``first_chunk``).

It is not the default (``[retrieval] rerank = ""``): BENCHMARKS.md, "Learned reranker", gives its report-split
figures and cost and why.

A store without vectors uses the ``bm25`` model (the dense features are absent from it); a store with vectors
uses the model fitted for its embedder, and the ``bm25`` one when the file has none for that embedder.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import ConfigError, RetrievalError
from ..index.analyzer import Analyzer
from ..types import Hit

MODEL_FILE = Path(__file__).resolve().parent.parent / "data" / "reranker" / "learned.json"
"""The fitted models: ``{"format": 1, "features": [...], "models": {kind: {"mean", "scale", "weights"}},
"fit": ..., "report": ..., "written": ...}``; ``kind`` is ``bm25`` or an embedder's name. Written by
``benchmarks/fit_reranker.py``."""

FEATURES = ("bm25_norm", "bm25_log_rank", "bm25_absent", "dense_cos", "dense_gap", "dense_log_rank", "dense_absent",
            "fused_log_rank", "coverage", "rare_coverage", "rarest", "title_coverage", "title_named", "pairs", "codes",
            "log_terms", "first_chunk")
"""Every feature, in column order (see the module docstring)."""

DENSE_FEATURES = ("dense_cos", "dense_gap", "dense_log_rank", "dense_absent")
"""Features read from the dense leg; the ``bm25`` model has no weight on them."""

RERANK_DEPTH = 100
"""Candidates re-ordered (the fused list's first ``RERANK_DEPTH``; ``[retrieval] candidates`` is 100 per leg)."""

RANK_CAP = 101
"""A leg rank counts as at most this (a leg that did not return the candidate: ``RANK_CAP``)."""

RARE_SHARE = 0.75
"""A query term is rare when its idf is at least this share of the query's highest idf."""

PAIR_WINDOW = 3
"""Two consecutive query terms match as a pair when the second follows the first within this many terms
(stop words the query drops sit between them in the text: "check my ruby version")."""

_CODE = re.compile(r"\w+(?:[.\-_/]\w+)+|\w*\d\w*")


def query_codes(query: str) -> list[str]:
    """The query's literal codes, case-folded, in order: words with a digit ("v2", "2019") or joined by an inner
    ``.``, ``-``, ``_`` or ``/`` ("4.4.1", "utf-8", "x86_64", "and/or")."""
    return list(dict.fromkeys(m.group(0).casefold() for m in _CODE.finditer(query)))


def candidate_features(query: str, hits: Sequence[Hit], analyzer: Analyzer,
                       idf: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
    """The ``FEATURES`` of each candidate: float64 ``[len(hits), len(FEATURES)]``, rows in ``hits``' order.

    Args:
        query: the query as typed.
        hits: the candidates, best first, each with its chunk and its legs' ``(rank, score)`` (``bm25``,
            ``dense``; a missing leg counts as absent).
        analyzer: the analyzer the index was built with.
        idf: Lucene idf of analyzed terms over the index (``Store.get_idf``), float64 ``[len(terms)]``.

    Raises:
        RetrievalError: a hit without its chunk.
    """
    n = len(hits)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if not n:
        return out
    missing = [h.chunk_id for h in hits if h.chunk is None]
    if missing:
        raise RetrievalError(f"the learned reranker needs each hit's chunk, but {len(missing)} hit(s) have none "
                             f"(first: {missing[0]}); load chunks from the store before reranking")
    col = {name: i for i, name in enumerate(FEATURES)}
    for leg in ("bm25", "dense"):
        pairs = [h.legs.get(leg) for h in hits]
        present = [p for p in pairs if p is not None]
        low = min((p[1] for p in present), default=0.0)
        high = max((p[1] for p in present), default=0.0)
        scores = np.array([p[1] if p is not None else low for p in pairs], dtype=np.float64)
        ranks = np.array([min(p[0], RANK_CAP) if p is not None else RANK_CAP for p in pairs], dtype=np.float64)
        out[:, col[f"{leg}_log_rank"]] = np.log(ranks)
        out[:, col[f"{leg}_absent"]] = [p is None for p in pairs]
        if leg == "bm25":
            out[:, col["bm25_norm"]] = scores / high if high > 0 else 0.0
        else:
            out[:, col["dense_cos"]] = scores
            out[:, col["dense_gap"]] = scores - high
    out[:, col["fused_log_rank"]] = np.log(np.arange(1, n + 1, dtype=np.float64))

    terms = list(dict.fromkeys(analyzer.search_terms(query)))
    weights = np.asarray(idf(terms), dtype=np.float64) if terms else np.zeros(0)
    weights = np.maximum(weights, 0.0)
    total = float(weights.sum())
    top = float(weights.max()) if len(weights) else 0.0
    rare = [t for t, w in zip(terms, weights) if top > 0 and w >= RARE_SHARE * top]
    rarest = terms[int(np.argmax(weights))] if len(weights) else None
    weight_of = dict(zip(terms, weights.tolist()))
    codes = query_codes(query)
    ordered = analyzer.search_terms(query)
    pair_list = [(a, b) for a, b in zip(ordered, ordered[1:]) if a != b]
    titles: dict[str, set[str]] = {}
    named = _titles_named(hits, set(terms), analyzer, idf)
    for i, hit in enumerate(hits):
        chunk = hit.chunk
        assert chunk is not None
        doc_terms = _chunk_terms(analyzer, chunk.indexed_text())
        held = set(doc_terms)
        if total > 0:
            out[i, col["coverage"]] = sum(w for t, w in weight_of.items() if t in held) / total
        if rare:
            out[i, col["rare_coverage"]] = sum(t in held for t in rare) / len(rare)
        out[i, col["rarest"]] = rarest is not None and rarest in held
        if hit.doc_id not in titles:
            titles[hit.doc_id] = set(analyzer.analyze_document(chunk.title)) if chunk.title else set()
        if total > 0:
            out[i, col["title_coverage"]] = sum(w for t, w in weight_of.items() if t in titles[hit.doc_id]) / total
        out[i, col["title_named"]] = named[hit.doc_id]
        if pair_list:
            out[i, col["pairs"]] = _pairs_found(pair_list, doc_terms, held) / len(pair_list)
        if codes:
            text = chunk.indexed_text().casefold()
            out[i, col["codes"]] = sum(c in text for c in codes) / len(codes)
        out[i, col["log_terms"]] = math.log1p(len(doc_terms))
        out[i, col["first_chunk"]] = chunk.start == 0
    return out


@lru_cache(maxsize=8192)
def _chunk_terms(analyzer: Analyzer, text: str) -> tuple[str, ...]:
    """``analyzer.analyze_document(text)`` of a chunk's indexed text, remembered (a chunk is a candidate of many
    queries)."""
    return tuple(analyzer.analyze_document(text))


def _titles_named(hits: Sequence[Hit], query_terms: set[str], analyzer: Analyzer,
                  idf: Callable[[Sequence[str]], np.ndarray]) -> dict[str, float]:
    """Doc id -> the idf-weighted share of its title's search terms that the query holds (0 without a title)."""
    title_terms = {}
    for hit in hits:
        if hit.doc_id not in title_terms:
            title = hit.chunk.title if hit.chunk is not None else ""
            title_terms[hit.doc_id] = list(dict.fromkeys(analyzer.search_terms(title))) if title else []
    vocabulary = list(dict.fromkeys(t for ts in title_terms.values() for t in ts))
    weight = dict(zip(vocabulary, np.maximum(np.asarray(idf(vocabulary), dtype=np.float64), 0.0).tolist())) \
        if vocabulary else {}
    out = {}
    for doc, ts in title_terms.items():
        total = sum(weight[t] for t in ts)
        out[doc] = sum(weight[t] for t in ts if t in query_terms) / total if total > 0 else 0.0
    return out


def _pairs_found(pairs: Sequence[tuple[str, str]], doc_terms: Sequence[str], held: set[str]) -> int:
    """How many ``(a, b)`` of ``pairs`` occur in ``doc_terms`` with ``b`` within ``PAIR_WINDOW`` terms after ``a``."""
    wanted = [(a, b) for a, b in pairs if a in held and b in held]
    if not wanted:
        return 0
    positions: dict[str, list[int]] = {}
    needed = {t for p in wanted for t in p}
    for at, term in enumerate(doc_terms):
        if term in needed:
            positions.setdefault(term, []).append(at)
    found = 0
    for a, b in wanted:
        after = set(positions[b])
        if any(p + d in after for p in positions[a] for d in range(1, PAIR_WINDOW + 1)):
            found += 1
    return found


@lru_cache(maxsize=1)
def load_models(path: Path = MODEL_FILE) -> Mapping[str, Mapping[str, np.ndarray]]:
    """The fitted models of ``path``: kind -> ``{"mean", "scale", "weights"}`` as float64 ``[len(FEATURES)]``.

    Raises:
        ConfigError: the file is missing or malformed (a broken install), or it names a feature this code lacks.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        models = {}
        for kind, model in data["models"].items():
            unknown = set(model["weights"]) - set(FEATURES)
            if unknown:
                raise ValueError(f"unknown features {sorted(unknown)}")
            models[kind] = {key: np.array([float(model[key].get(f, default)) for f in FEATURES])
                            for key, default in (("mean", 0.0), ("scale", 1.0), ("weights", 0.0))}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"the learned reranker's model {path} is missing or malformed ({exc}); reinstall "
                          f"openbook, or rewrite it with benchmarks/fit_reranker.py") from None
    return models


def model_kind(models: Mapping[str, object], embedder: str | None) -> str:
    """The model a store uses: its embedder's when ``models`` has one, else ``bm25`` (no vectors, or none
    fitted for that embedder)."""
    return embedder if embedder and embedder in models else "bm25"


class LearnedReranker:
    """Re-order the top ``depth`` candidates by the fitted linear model (see the module docstring).

    Args:
        analyzer: the analyzer the index was built with.
        idf: Lucene idf of analyzed terms over the index (``Store.get_idf``).
        embedder: the store's embedder name (None: a store without vectors); picks the model (``model_kind``).
        model: ``{"mean", "scale", "weights"}`` arrays over ``FEATURES`` (None: the fitted one from ``MODEL_FILE``).
        depth: candidates re-ordered; those below keep their order after them.

    Raises:
        ConfigError: ``MODEL_FILE`` is missing or malformed.
    """

    name = "learned"

    def __init__(self, analyzer: Analyzer, idf: Callable[[Sequence[str]], np.ndarray], *,
                 embedder: str | None = None, model: Mapping[str, np.ndarray] | None = None,
                 depth: int = RERANK_DEPTH) -> None:
        if model is None:
            models = load_models()
            model = models[model_kind(models, embedder)]
        self.analyzer = analyzer
        self.idf = idf
        self.model = model
        self.depth = depth

    def scores(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        """The model's score of each hit, float64 ``[len(hits)]`` (higher: more relevant; a linear score, not a
        probability)."""
        x = candidate_features(query, hits, self.analyzer, self.idf)
        return ((x - self.model["mean"]) / self.model["scale"]) @ self.model["weights"]

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """The first ``depth`` hits best first by the model's score, each with ``legs["rerank"] = (rank, score)``
        and ``score`` = that score squashed to (0, 1) by the logistic function (the pairwise model's odds against
        an average candidate; the second hop divides scores by the best one, so they are positive); ties keep
        the incoming order. The rest follow in their order, scored below the last reranked one and above 0
        (legs unchanged). Returns every hit.

        Raises:
            RetrievalError: a hit among the first ``depth`` without its chunk.
        """
        hits = list(hits)
        if not hits:
            return []
        head, tail = hits[: self.depth], hits[self.depth :]
        p = 1.0 / (1.0 + np.exp(-self.scores(query, head)))
        order = sorted(range(len(head)), key=lambda i: (-p[i], i))
        out = [replace(head[i], score=float(p[i]), legs={**head[i].legs, "rerank": (rank, float(p[i]))})
               for rank, i in enumerate(order, start=1)]
        floor = float(p.min())
        out += [replace(h, score=floor * (len(tail) - i) / (len(tail) + 1)) for i, h in enumerate(tail)]
        return out
