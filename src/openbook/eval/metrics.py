"""Ranking metrics with trec_eval semantics: nDCG@k, Recall@k, MRR@k, MAP@k.

Each metric is a small pure function of one query's ranked document ids and its qrels, picked by name through
``METRICS``; ``evaluate_run`` averages them over every judged query. The definitions follow trec_eval 9.x
(``ndcg_cut``, ``recall``, ``recip_rank``, ``map_cut``) so that the numbers equal ``pytrec_eval``'s:

- a document is relevant when its qrels grade is >= 1 (trec_eval's default ``relevance_level``);
- nDCG uses trec_eval's *linear* gain (the grade itself, so Cranfield's 1-4 grades count 1-4) and the
  ``1 / log2(rank + 1)`` discount of Järvelin & Kekäläinen (2002); the ideal ranking sorts every judged
  document of the query by grade, cut at ``k``;
- Recall@k and AP@k divide by the number of relevant documents of the query, retrieved or not;
- MRR@k is the reciprocal rank of the first relevant document within the top ``k`` (0 when none);
- a query with qrels but no retrieved documents scores 0 (trec_eval's ``-c``), and queries without qrels are
  ignored.

When a run is given as scores (``{doc_id: score}``), ``rank_by_score`` orders it as trec_eval does: score
descending, ties broken by document id descending.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
"""query id -> document id -> graded relevance (0 = judged non-relevant)."""

Ranking = Sequence[str]
"""Document ids, best first, each at most once."""


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Document ids ordered as trec_eval orders a run: score descending, then doc id descending.

    Args:
        scores: document id -> retrieval score (higher is better).

    Returns:
        Every document id of ``scores`` once, best first.
    """
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def ndcg_at(ranking: Ranking, judged: Mapping[str, int], k: int) -> float:
    """nDCG@k with linear gain (trec_eval ``ndcg_cut``); 0 when the query has no relevant document."""
    dcg = sum(max(judged.get(doc, 0), 0) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]))
    ideal_gains = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_gains))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranking: Ranking, judged: Mapping[str, int], k: int) -> float:
    """Relevant documents in the top k / relevant documents of the query (trec_eval ``recall_k``)."""
    n_rel = sum(1 for g in judged.values() if g >= 1)
    if n_rel == 0:
        return 0.0
    return sum(1 for doc in ranking[:k] if judged.get(doc, 0) >= 1) / n_rel


def mrr_at(ranking: Ranking, judged: Mapping[str, int], k: int) -> float:
    """1 / rank of the first relevant document within the top k, else 0 (trec_eval ``recip_rank`` on a cut run)."""
    for i, doc in enumerate(ranking[:k]):
        if judged.get(doc, 0) >= 1:
            return 1.0 / (i + 1)
    return 0.0


def ap_at(ranking: Ranking, judged: Mapping[str, int], k: int) -> float:
    """Average precision over the top k, divided by all relevant documents (trec_eval ``map_cut_k``)."""
    n_rel = sum(1 for g in judged.values() if g >= 1)
    if n_rel == 0:
        return 0.0
    hits = 0
    total = 0.0
    for i, doc in enumerate(ranking[:k]):
        if judged.get(doc, 0) >= 1:
            hits += 1
            total += hits / (i + 1)
    return total / n_rel


MetricFn = Callable[[Ranking, Mapping[str, int], int], float]

METRICS: dict[str, tuple[MetricFn, int]] = {
    "ndcg@10": (ndcg_at, 10),
    "recall@10": (recall_at, 10),
    "recall@100": (recall_at, 100),
    "mrr@10": (mrr_at, 10),
    "map@100": (ap_at, 100),
}
"""The metrics a retrieval report shows: name -> (function, cutoff k)."""


def full_support_recall_at(ranking: Ranking, judged: Mapping[str, int], k: int) -> float:
    """1.0 when every relevant document of the query is in the top k, else 0.0 (0.0 with none relevant).

    The multi-hop measure of HotpotQA-style sets ("both supporting documents retrieved"); for a query with one
    relevant document it equals hit@k. Not a trec_eval measure.
    """
    relevant = {d for d, g in judged.items() if g > 0}
    return float(bool(relevant) and relevant <= set(ranking[:k]))


SUPPORT_METRICS: dict[str, tuple[MetricFn, int]] = {
    "full_recall@2": (full_support_recall_at, 2),
    "full_recall@5": (full_support_recall_at, 5),
    "full_recall@10": (full_support_recall_at, 10),
}
"""Full-support recall, reported for sets whose queries have several relevant documents."""


def per_query(run: Mapping[str, Ranking], qrels: Qrels, metrics: Sequence[str] = tuple(METRICS)) -> dict[str, dict[str, float]]:
    """Each metric for each judged query.

    Args:
        run: query id -> ranked document ids, best first (missing queries count as empty rankings).
        qrels: query id -> document id -> grade; queries absent from qrels are not evaluated.
        metrics: names from ``METRICS``.

    Returns:
        query id -> metric name -> value in [0, 1], for every query of ``qrels``, in qrels order.

    Raises:
        KeyError: for a metric name not in ``METRICS``.
    """
    table = METRICS | SUPPORT_METRICS
    chosen = [(name, *table[name]) for name in metrics]
    return {
        qid: {name: fn(run.get(qid, ()), judged, k) for name, fn, k in chosen}
        for qid, judged in qrels.items()
    }


def evaluate_run(run: Mapping[str, Ranking], qrels: Qrels, metrics: Sequence[str] = tuple(METRICS)) -> dict[str, float]:
    """Mean of each metric over every judged query (see ``per_query``).

    Returns:
        metric name -> mean over the queries of ``qrels`` (0.0 for each metric when ``qrels`` is empty).
    """
    table = per_query(run, qrels, metrics)
    n = len(table)
    return {name: (sum(row[name] for row in table.values()) / n if n else 0.0) for name in metrics}
