"""Retrieval evaluation on a BEIR folder: ingest, run every judged query, score, write a run file and a report.

``run_retrieval_eval`` is what ``openbook eval retrieval`` calls; ``evaluate_retrieval`` does the work on an
open engine; ``compare_to_baseline`` and ``format_retrieval_report`` handle the saved report and the human
table. Metrics come from ``openbook.eval.metrics`` (trec_eval semantics).
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from openbook.config import Config
from openbook.errors import EvaluationError

from .beir import BeirDataset, doc_ranking, load_beir, write_trec_run
from .metrics import METRICS, SUPPORT_METRICS, evaluate_run

DOCS_PER_QUERY = 100
"""Documents kept per query in the run (the deepest cutoff of ``METRICS``)."""

CHUNKS_PER_QUERY = 300
"""Chunk hits asked for per query, so that ``DOCS_PER_QUERY`` distinct documents survive the collapse."""

DEFAULT_TOLERANCE = 0.005
"""Largest drop of a metric against a baseline that still passes (absolute, metric units 0-1)."""


@dataclass
class RetrievalRun:
    """The raw outcome of ``evaluate_retrieval``.

    Attributes:
        run: query id -> ``(doc_id, score)`` pairs, best first, at most ``DOCS_PER_QUERY``.
        metrics: metric name -> mean over the judged queries.
        latencies_ms: wall time of each query's search, milliseconds, in query order.
        failed: ids of queries with empty text, not searched (scored as empty rankings).
    """

    run: dict[str, list[tuple[str, float]]]
    metrics: dict[str, float]
    latencies_ms: list[float]
    failed: list[str] = field(default_factory=list)


@dataclass
class RetrievalReport:
    """What ``run_retrieval_eval`` measured; ``to_dict()`` is the JSON report.

    Attributes:
        dataset: the dataset folder's name; ``dataset_path`` its path.
        mode: retrieval mode used (``bm25``, ``dense``, ``hybrid``).
        queries: judged queries; ``failed_queries``: those with empty text, scored as empty rankings.
        metrics: ``ndcg@10``, ``recall@10``, ``recall@100``, ``mrr@10``, ``map@100`` (0-1).
        latency_ms: ``p50``, ``p95``, ``mean`` of single-query search time in milliseconds.
        ingest_s: seconds spent ingesting (near 0 when a named store was unchanged).
        ingest_notes: one line per corpus problem the ingest reported (a failed or empty document, a loader
            warning such as a malformed corpus line), so a score is never read without them.
        chunks: chunks in the store after ingest.
        run_file, report_file: where the TREC run and the JSON report were written.
        baseline: the baseline report compared against, if any; ``tolerance`` the allowed drop.
        deltas: metric -> current minus baseline (only with a baseline).
        regressions: metrics that dropped by more than ``tolerance``; non-empty means failure.
    """

    dataset: str
    dataset_path: str
    mode: str
    queries: int
    metrics: dict[str, float]
    latency_ms: dict[str, float]
    ingest_s: float
    chunks: int
    run_file: str
    report_file: str
    failed_queries: list[str] = field(default_factory=list)
    ingest_notes: list[str] = field(default_factory=list)
    baseline: str | None = None
    tolerance: float = DEFAULT_TOLERANCE
    deltas: dict[str, float] = field(default_factory=dict)
    regressions: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no metric dropped below the baseline by more than the tolerance."""
        return not self.regressions

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable report (what ``report_file`` holds)."""
        return asdict(self)


def latency_summary(latencies_ms: list[float]) -> dict[str, float]:
    """p50, p95 (linear interpolation, as ``numpy.percentile``) and mean, in milliseconds; zeros when empty."""
    if not latencies_ms:
        return {"p50": 0.0, "p95": 0.0, "mean": 0.0}
    arr = np.asarray(latencies_ms, dtype=np.float64)
    return {
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "mean": float(arr.mean()),
    }


def evaluate_retrieval(engine: Any, dataset: BeirDataset, mode: str | None = None,
                       docs_per_query: int = DOCS_PER_QUERY,
                       chunks_per_query: int = CHUNKS_PER_QUERY) -> RetrievalRun:
    """Run every judged query one at a time on an open engine and score the document ranking.

    Each query asks for ``chunks_per_query`` chunk hits; a document scores as its best chunk and appears
    once; the ranking is cut to ``docs_per_query`` documents.

    Args:
        engine: an open ``openbook.api.Engine`` whose store holds the dataset's corpus.
        dataset: from ``load_beir``.
        mode: retrieval mode, None for the configured one.
        docs_per_query: documents kept per query.
        chunks_per_query: chunk hits asked for per query.

    Returns:
        The run, the mean metrics over every judged query and each searched query's latency.

    Raises:
        QueryError: an unknown mode. StoreError: an empty store.
    """
    run: dict[str, list[tuple[str, float]]] = {}
    latencies: list[float] = []
    failed: list[str] = []
    for qid, text in dataset.queries.items():
        if not text.strip():  # the engine rejects empty queries; score them as empty rankings
            failed.append(qid)
            run[qid] = []
            continue
        start = time.perf_counter()
        hits = engine.search_batch([text], k=chunks_per_query, mode=mode, load_chunks=False)[0]
        latencies.append((time.perf_counter() - start) * 1000.0)
        run[qid] = doc_ranking(hits, docs_per_query)
    rankings = {qid: [doc for doc, _ in ranked] for qid, ranked in run.items()}
    metrics = evaluate_run(rankings, dataset.qrels)
    if any(sum(g > 0 for g in judged.values()) > 1 for judged in dataset.qrels.values()):
        metrics |= evaluate_run(rankings, dataset.qrels, tuple(SUPPORT_METRICS))
    return RetrievalRun(run=run, metrics=metrics, latencies_ms=latencies,
                        failed=failed)


def load_baseline(path: Path) -> dict[str, float]:
    """Metric values of a saved report (``{"metrics": {...}}``) or of a flat ``{metric: value}`` JSON file.

    Raises:
        EvaluationError: missing file, bad JSON, or no known metric in it.
    """
    if not path.is_file():
        raise EvaluationError(f"baseline report {path} not found; save one with 'openbook eval retrieval --json'")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvaluationError(f"baseline report {path} is not valid JSON: {exc}") from None
    metrics = data.get("metrics", data) if isinstance(data, dict) else None
    if not isinstance(metrics, dict):
        raise EvaluationError(f"baseline report {path} has no 'metrics' object")
    known = {k: float(v) for k, v in metrics.items() if k in METRICS and isinstance(v, (int, float))}
    if not known:
        raise EvaluationError(
            f"baseline report {path} holds none of the metrics {', '.join(METRICS)}; "
            "pass a report written by 'openbook eval retrieval'"
        )
    return known


def compare_to_baseline(metrics: Mapping[str, float], baseline: Mapping[str, float],
                        tolerance: float = DEFAULT_TOLERANCE) -> tuple[dict[str, float], list[str]]:
    """Deltas against a baseline and the metrics that dropped by more than ``tolerance``.

    Args:
        metrics: current metric values.
        baseline: saved metric values; metrics missing on either side are skipped.
        tolerance: largest allowed drop (absolute).

    Returns:
        ``(deltas, regressions)``: metric -> current minus baseline, in ``METRICS`` order; names whose delta
        is below ``-tolerance``.
    """
    deltas = {name: metrics[name] - baseline[name] for name in METRICS if name in metrics and name in baseline}
    regressions = [name for name, delta in deltas.items() if delta < -tolerance - 1e-12]
    return deltas, regressions


def run_retrieval_eval(dataset: Path, store: str | Path | None, config: Config, mode: str | None, out_dir: Path,
                       baseline: Path | None = None, tolerance: float = DEFAULT_TOLERANCE,
                       progress: bool = False) -> RetrievalReport:
    """Evaluate retrieval on a BEIR folder end to end (what ``openbook eval retrieval`` runs).

    Ingests ``corpus.jsonl`` into ``store`` (created if missing, reused when unchanged) or into a throw-away
    store when ``store`` is None, runs every judged query of ``qrels/test.tsv`` retrieving 100 documents,
    and writes ``<out_dir>/<dataset>.<mode>.run`` (TREC run) and ``<out_dir>/<dataset>.<mode>.json``.

    Args:
        dataset: the BEIR folder.
        store: store folder, or None for a temporary one deleted afterwards.
        config: settings for the engine.
        mode: retrieval mode, None for ``config.retrieval.mode``.
        out_dir: folder for the run file and the report (created).
        baseline: a saved JSON report to compare against, or None.
        tolerance: largest allowed drop of any metric against the baseline (absolute).

    Returns:
        The report; ``report.ok`` is False when a metric regressed beyond ``tolerance``.

    Raises:
        EvaluationError: bad dataset folder, qrels or baseline file.
        StoreError, IngestError, QueryError: from the engine.
    """
    from openbook.api import Engine

    data = load_beir(dataset)
    base = load_baseline(baseline) if baseline is not None else None
    mode_name = mode or config.retrieval.mode
    with tempfile.TemporaryDirectory(prefix="openbook-eval-") as tmp:
        store_dir = store if store is not None else Path(tmp) / "store"  # a folder or a URL
        engine = Engine.open(store_dir, config, create=True)
        try:
            start = time.perf_counter()
            # a mode that needs no vectors computes none (a store that has them keeps them up to date)
            embed = None if mode_name != "bm25" or engine.has_embeddings else False
            ingest = engine.ingest([data.corpus], sync=True, progress=progress, embed=embed)
            ingest_s = time.perf_counter() - start
            if not ingest.ok:
                reasons = "; ".join(f"{p}: {r}" for p, r in ingest.failed[:3])
                raise EvaluationError(f"could not ingest {data.corpus}: {reasons}")
            mode_name = engine.effective_mode(mode)
            result = evaluate_retrieval(engine, data, mode_name)
        finally:
            engine.close()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    run_file = out_dir / f"{data.name}.{mode_name}.run"
    report_file = out_dir / f"{data.name}.{mode_name}.json"
    write_trec_run(run_file, result.run, tag=f"openbook-{mode_name}")
    report = RetrievalReport(
        dataset=data.name,
        dataset_path=str(data.root),
        mode=mode_name,
        queries=len(data.queries),
        metrics=result.metrics,
        latency_ms=latency_summary(result.latencies_ms),
        ingest_s=ingest_s,
        ingest_notes=[f"failed: {r}" for _, r in ingest.failed] + [f"warning: {p}: {w}" for p, w in ingest.warnings]
        + ([f"{len(ingest.empty)} documents with no text to index (not stored)"] if ingest.empty else []),
        chunks=ingest.chunks_total,
        run_file=str(run_file),
        report_file=str(report_file),
        failed_queries=result.failed,
        baseline=str(baseline) if baseline is not None else None,
        tolerance=tolerance,
    )
    if base is not None:
        report.deltas, report.regressions = compare_to_baseline(result.metrics, base, tolerance)
    report_file.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return report


def format_retrieval_report(report: RetrievalReport) -> str:
    """A human-readable table of the report: metrics (with deltas against the baseline), latency, files."""
    lines = [f"{report.dataset} ({report.queries} judged queries, mode {report.mode}, {report.chunks} chunks)"]
    with_base = bool(report.deltas)
    lines.append(f"  {'metric':<14} {'value':>7}" + (f" {'delta':>8}" if with_base else ""))
    for name, value in report.metrics.items():
        row = f"  {name:<14} {value:>7.4f}"
        if with_base and name in report.deltas:
            flag = "  REGRESSION" if name in report.regressions else ""
            row += f" {report.deltas[name]:>+8.4f}{flag}"
        lines.append(row)
    lat = report.latency_ms
    lines.append(f"  latency     p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms per query")
    lines.append(f"  ingest      {report.ingest_s:.1f} s")
    for note in report.ingest_notes[:10]:
        lines.append(f"    {note}")
    if len(report.ingest_notes) > 10:
        lines.append(f"    ... and {len(report.ingest_notes) - 10} more (see the JSON report)")
    if report.failed_queries:
        lines.append(f"  failed      {len(report.failed_queries)} queries have empty text (scored 0)")
    lines.append(f"  run file    {report.run_file}")
    lines.append(f"  report      {report.report_file}")
    if report.baseline is not None:
        verdict = "OK" if report.ok else f"FAILED: {', '.join(report.regressions)} dropped more than"
        lines.append(f"  baseline    {report.baseline}: {verdict} tolerance {report.tolerance}")
    return "\n".join(lines)
