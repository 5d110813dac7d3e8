"""Fit the learned reranker (``openbook.retrieve.learned``) on public training splits and write it where the
package loads it (``src/openbook/data/reranker/learned.json``), with the fit's figures and the report splits'.

Splits, per BEIR folder (each searched on its own store, a copy of a prebuilt one):

- a folder with ``qrels/train.tsv`` (SciFact): fit on the train queries, report on ``qrels/test.tsv``;
- a SQuAD-style folder (queries with ``metadata.is_impossible``; ``fit_answerer.article_split``): fit on the
  answerable questions of the fit articles, report on those of the report articles (``eval answers``' seed-7
  sample of 200 of them);
- another QA folder (HotpotQA, CMRC 2018): report on ``eval answers --sample 200 --seed 7``'s sample
  (``sample_questions``), fit on the other questions;
- any other folder (Cranfield): report only, every test query.

Fit queries are shuffled by ``random.Random(11)`` and cut to ``--per-set``. Each fit query is searched one pass
(``hops=1``, no reranker) for the top ``RERANK_DEPTH`` chunks; each candidate's ``FEATURES`` are computed by the
package's own ``candidate_features`` and labelled with its document's qrels grade (with ``--labels document`` a
relevant document's pairs use its best-fused chunk only, ``best_chunk_rows``; BENCHMARKS.md gives its validation).
The model, per store kind (``bm25`` without vectors, else the store's embedder, with the dense features):
features standardised over the fit rows, then a linear scorer fitted pairwise (every (more relevant, less
relevant) candidate pair of a query; logistic loss on the score difference, RankNet with a linear scorer, Burges
et al. 2005; each query weighs 1, its pairs share it; L2 ``--l2``), by L-BFGS.

Report: every report query searched as ``openbook eval retrieval`` searches (the default config, two hops, 300
chunks, a document scoring as its best chunk), once without a reranker and once with ``--rerank learned``;
nDCG@10 and Recall@100 of both, and the p50 of the reranker's own time per query (``LearnedReranker.rerank``
on the fused candidates of the first ``TIMED`` queries) and of the whole search with and without it.

    python benchmarks/fit_reranker.py --pair ../shared/datasets/scifact /tmp/rr/scifact-bm25 \\
        --pair ../shared/datasets/hotpotqa_dev500 /tmp/rr/hotpotqa-bm25 ...   (BENCHMARKS.md has the full commands)

Each run writes (replaces) the models of the store kinds its pairs have and keeps the others in the file.
``--rows FILE`` keeps the collected fit rows (``.npz``, with the command that collected them); ``--load FILE``
(repeatable: the files' sets are pooled) refits from them, and the model's ``written.commands`` lists every
command of the sequence: those that collected the loaded rows, then this one.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_answerer import REPORT_SAMPLE, SPLIT_SEED, article_of, article_split  # noqa: E402

from openbook.api import Engine  # noqa: E402
from openbook.config import Config  # noqa: E402
from openbook.eval.answers import load_qa_questions, sample_questions  # noqa: E402
from openbook.eval.beir import doc_ranking, load_beir  # noqa: E402
from openbook.eval.metrics import evaluate_run  # noqa: E402
from openbook.eval.retrieval import CHUNKS_PER_QUERY, DOCS_PER_QUERY  # noqa: E402
from openbook.retrieve import learned  # noqa: E402
from openbook.retrieve.learned import (  # noqa: E402
    DENSE_FEATURES, FEATURES, MODEL_FILE, RERANK_DEPTH, candidate_features)

FIT_SEED = 11
TIMED = 100
"""Report queries (the first of each set) whose reranking alone is timed."""


# ---------------------------------------------------------------------- splits

Queries = dict[str, str]
Qrels = dict[str, dict[str, int]]


def splits(root: Path) -> tuple[Queries, Qrels, Queries, Qrels]:
    """``(fit queries, fit qrels, report queries, report qrels)`` of a BEIR folder (module docstring)."""
    test = load_beir(root)
    if (root / "qrels" / "train.tsv").is_file():
        train = load_beir(root, split="train")
        return train.queries, train.qrels, test.queries, test.qrels
    try:
        questions = load_qa_questions(root)
    except Exception:  # not a QA set: report only
        return {}, {}, test.queries, test.qrels
    answerable = [q for q in questions if not q.impossible and q.id in test.qrels]
    if any(q.impossible for q in questions):  # SQuAD-style: by article
        fit_articles, report_articles = article_split(root)
        fit = [q for q in answerable if all(article_of(d) in fit_articles for d in q.relevant)]
        reported = [q for q in sample_questions([q for q in questions if q.relevant and all(
            article_of(d) in report_articles for d in q.relevant)], REPORT_SAMPLE, SPLIT_SEED) if not q.impossible]
    else:
        reported = sample_questions(answerable, REPORT_SAMPLE, SPLIT_SEED)
        held = {q.id for q in reported}
        fit = [q for q in answerable if q.id not in held]
    fit_ids = [q.id for q in fit]
    report_ids = [q.id for q in reported]
    return ({i: test.queries[i] for i in fit_ids}, {i: test.qrels[i] for i in fit_ids},
            {i: test.queries[i] for i in report_ids}, {i: test.qrels[i] for i in report_ids})


def store_kind(engine: Engine) -> str:
    info = engine.retriever.store.get_embedding()
    return info.model if info is not None else "bm25"


# ---------------------------------------------------------------------- rows

def collect(engine: Engine, queries: dict[str, str], qrels: dict[str, dict[str, int]], per_set: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(features [rows, F], grades [rows], query index [rows], doc ids [rows])`` of the fit queries'
    candidates."""
    ids = sorted(queries)
    random.Random(FIT_SEED).shuffle(ids)
    ids = ids[:per_set]
    retriever = engine.retriever
    xs, ys, gs, ds = [], [], [], []
    for n, qid in enumerate(ids):
        hits = engine.search_batch([queries[qid]], k=RERANK_DEPTH, rerank="", hops=1, load_chunks=True)[0]
        if not hits:
            continue
        x = candidate_features(queries[qid], hits, retriever.analyzer, retriever.store.get_idf)
        grades = np.array([qrels[qid].get(h.doc_id, 0) for h in hits], dtype=np.float64)
        xs.append(x)
        ys.append(grades)
        gs.append(np.full(len(hits), n))
        ds.append(np.array([h.doc_id for h in hits], dtype=str))
    if not xs:
        return np.zeros((0, len(FEATURES))), np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=str)
    return np.vstack(xs), np.concatenate(ys), np.concatenate(gs), np.concatenate(ds)


# ---------------------------------------------------------------------- the model

def pair_matrix(x: np.ndarray, y: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(x_better - x_worse [pairs, F], weight [pairs])``: each query's pairs weigh 1 together."""
    diffs, weights = [], []
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        yy = y[rows]
        better, worse = np.nonzero(yy[:, None] > yy[None, :])
        if not len(better):
            continue
        diffs.append(x[rows[better]] - x[rows[worse]])
        weights.append(np.full(len(better), 1.0 / len(better)))
    return np.vstack(diffs), np.concatenate(weights)


def best_chunk_rows(y: np.ndarray, group: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Boolean mask ``[rows]`` keeping every candidate but the second and later chunks (rows are in fused order
    within a query) of each relevant document: a document ranks as its best chunk, so the fit learns to put one
    chunk of a relevant document above the others' chunks, not each of its chunks."""
    keep = np.ones(len(y), dtype=bool)
    seen: set[tuple[int, str]] = set()
    for i in range(len(y)):
        key = (int(group[i]), str(docs[i]))
        if y[i] > 0 and key in seen:
            keep[i] = False
        seen.add(key)
    return keep


def fit_linear(x: np.ndarray, y: np.ndarray, group: np.ndarray, columns: list[int], l2: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, scale, weights)`` over every feature (zero weight outside ``columns``)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    d, w = pair_matrix(z[:, columns], y, group)
    w = w / w.sum()

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        m = d @ beta
        value = float(w @ np.logaddexp(0.0, -m)) + l2 * float(beta @ beta)
        grad = -(d.T @ (w / (1.0 + np.exp(m)))) + 2 * l2 * beta
        return value, grad

    beta = minimize(loss, np.zeros(len(columns)), jac=True, method="L-BFGS-B").x
    weights = np.zeros(len(FEATURES))
    weights[columns] = beta
    mean_out = np.zeros(len(FEATURES))
    scale_out = np.ones(len(FEATURES))
    mean_out[columns] = mean[columns]
    scale_out[columns] = scale[columns]
    return mean_out, scale_out, weights


def ndcg_at_10(scores: np.ndarray, y: np.ndarray, group: np.ndarray, docs: np.ndarray | None = None) -> float:
    """Mean nDCG@10 over the queries with a relevant candidate: candidate-level, or with ``docs`` (each row's doc
    id) document-level, each document ranked as its best-scored candidate (as ``eval retrieval`` ranks them)."""
    out = []
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        if docs is not None:  # one row per document: its best-scored candidate
            _, first = np.unique(docs[rows[np.argsort(-scores[rows], kind="stable")]], return_index=True)
            rows = rows[np.argsort(-scores[rows], kind="stable")][np.sort(first)]
        yy = y[rows]
        if yy.max() <= 0:
            continue
        order = np.argsort(-scores[rows], kind="stable")[:10]
        ideal = np.sort(yy)[::-1][:10]
        disc = 1.0 / np.log2(np.arange(2, 12))
        gain = ((2 ** yy[order] - 1) * disc[: len(order)]).sum()
        out.append(float(gain / ((2 ** ideal - 1) * disc[: len(ideal)]).sum()))
    return float(np.mean(out)) if out else 0.0


# ---------------------------------------------------------------------- report

def report(engine: Engine, queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """nDCG@10 and Recall@100 without and with the learned reranker, and p50 costs in milliseconds."""
    runs: dict[str, dict[str, list[str]]] = {"none": {}, "learned": {}}
    times: dict[str, list[float]] = {"none": [], "learned": []}
    rerank_ms: list[float] = []
    retriever = engine.retriever
    for qid, text in queries.items():
        for name in ("none", "learned"):
            start = time.perf_counter()
            hits = engine.search_batch([text], k=CHUNKS_PER_QUERY, rerank="" if name == "none" else name,
                                       load_chunks=False)[0]
            times[name].append((time.perf_counter() - start) * 1000)
            runs[name][qid] = [d for d, _ in doc_ranking(hits, DOCS_PER_QUERY)]
        if len(rerank_ms) >= TIMED:
            continue
        # the reranker's own cost on this query's fused candidates (one pass, chunks loaded as the pipeline does)
        first = engine.search_batch([text], k=RERANK_DEPTH, rerank="", hops=1, load_chunks=True)[0]
        info = retriever.store.get_embedding()
        reranker = learned.LearnedReranker(retriever.analyzer, retriever.store.get_idf,
                                           embedder=info.model if info is not None else None)
        start = time.perf_counter()
        reranker.rerank(text, first)
        rerank_ms.append((time.perf_counter() - start) * 1000)
    out: dict[str, float] = {"queries": len(queries)}
    for name, run in runs.items():
        m = evaluate_run(run, qrels)
        out[f"ndcg@10_{name}"] = round(m["ndcg@10"], 4)
        out[f"recall@100_{name}"] = round(m["recall@100"], 4)
        out[f"search_p50_ms_{name}"] = round(float(np.percentile(times[name], 50)), 1)
    out["rerank_p50_ms"] = round(float(np.percentile(rerank_ms, 50)), 2)
    return out


# ---------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", nargs=2, action="append", default=[], metavar=("DATASET", "STORE"),
                    help="a BEIR folder and a store holding its corpus (a copy: searches write to it)")
    ap.add_argument("--per-set", type=int, default=600, help="fit queries per set (default 600)")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--out", default=str(MODEL_FILE))
    ap.add_argument("--rows", default=None, help="save the collected fit rows here (.npz)")
    ap.add_argument("--load", action="append", default=[],
                    help="refit from saved rows instead of searching (repeatable: the sets are pooled)")
    ap.add_argument("--labels", choices=("chunk", "document"), default="chunk",
                    help="chunk (default): every chunk of a relevant document is a relevant candidate; document: "
                         "its best-fused chunk only (best_chunk_rows; needs rows with doc ids, else chunk)")
    ap.add_argument("--no-report", action="store_true", help="fit only")
    args = ap.parse_args(argv)
    config = Config()  # the defaults, as `openbook eval retrieval` without a config file
    config = replace(config, retrieval=replace(config.retrieval, rerank=""))

    command = " ".join(["python", sys.argv[0] if argv is None else "benchmarks/fit_reranker.py",
                        *(sys.argv[1:] if argv is None else argv)])
    per_kind: dict[str, list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]] = {}
    commands: dict[str, list[str]] = {}  # kind -> the commands that collected its rows
    docs: dict[tuple[str, str], np.ndarray] = {}  # (kind, set) -> each row's doc id, when the rows have them
    if args.load:
        for path in args.load:
            saved = np.load(path, allow_pickle=False)
            wrote = str(saved["command"]) if "command" in saved.files else f"(rows {path}: command not recorded)"
            for key in saved.files:
                if key.endswith("__x"):
                    kind, name = key[: -3].split("__", 1)
                    if any(s[0] == name for s in per_kind.get(kind, [])):
                        raise SystemExit(f"{path}: set {name} ({kind}) is already in an earlier --load file")
                    per_kind.setdefault(kind, []).append((name, saved[key], saved[f"{kind}__{name}__y"],
                                                          saved[f"{kind}__{name}__g"]))
                    if f"{kind}__{name}__d" in saved.files:
                        docs[(kind, name)] = saved[f"{kind}__{name}__d"]
                    if wrote not in commands.setdefault(kind, []):
                        commands[kind].append(wrote)
    else:
        for dataset, store in args.pair:
            root = Path(dataset)
            fit_q, fit_rel, _, _ = splits(root)
            if not fit_q:
                continue
            with Engine.open(store, config) as engine:
                kind = store_kind(engine)
                t0 = time.perf_counter()
                x, y, g, d = collect(engine, fit_q, fit_rel, args.per_set)
                print(f"{root.name} ({kind}): {len(np.unique(g))} fit queries, {len(y)} candidates, "
                      f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
            per_kind.setdefault(kind, []).append((root.name, x, y, g))
            docs[(kind, root.name)] = d
        if args.rows:
            arrays = {}
            for kind, sets in per_kind.items():
                for name, x, y, g in sets:
                    arrays.update({f"{kind}__{name}__x": x, f"{kind}__{name}__y": y, f"{kind}__{name}__g": g,
                                   f"{kind}__{name}__d": docs[(kind, name)]})
            np.savez_compressed(args.rows, command=np.array(command), **arrays)

    out_path = Path(args.out)
    data = json.loads(out_path.read_text(encoding="utf-8")) if out_path.is_file() else {}
    data.setdefault("models", {})
    data.setdefault("fit", {})
    data.setdefault("report", {})
    data.setdefault("written", {})
    data["format"] = 1
    data["features"] = list(FEATURES)
    for kind, sets in per_kind.items():
        x = np.vstack([s[1] for s in sets])
        y = np.concatenate([s[2] for s in sets])
        offsets = np.cumsum([0] + [int(s[3].max()) + 1 if len(s[3]) else 0 for s in sets])
        g = np.concatenate([s[3] + off for s, off in zip(sets, offsets)])
        columns = [i for i, f in enumerate(FEATURES) if kind != "bm25" or f not in DENSE_FEATURES]
        labels = "document" if args.labels == "document" and all((kind, s[0]) in docs for s in sets) else "chunk"
        keep = np.ones(len(y), dtype=bool)
        if labels == "document":
            keep = best_chunk_rows(y, g, np.concatenate([docs[(kind, s[0])] for s in sets]))
        mean, scale, weights = fit_linear(x[keep], y[keep], g[keep], columns, args.l2)
        data["models"][kind] = {key: {f: round(float(v), 6) for f, v in zip(FEATURES, arr)}
                                for key, arr in (("mean", mean), ("scale", scale), ("weights", weights))}
        fit_figures = {}
        for name, xs, ys, gs in sets:
            scored = ((xs - mean) / scale) @ weights
            fit_figures[name] = {"queries": int(len(np.unique(gs))), "candidates": int(len(ys)),
                                 "ndcg@10_fused": round(ndcg_at_10(-xs[:, FEATURES.index("fused_log_rank")],
                                                                   ys, gs), 4),
                                 "ndcg@10_learned": round(ndcg_at_10(scored, ys, gs), 4)}
            if (kind, name) in docs:
                ds = docs[(kind, name)]
                fit_figures[name].update({
                    "doc_ndcg@10_fused": round(ndcg_at_10(-xs[:, FEATURES.index("fused_log_rank")], ys, gs, ds), 4),
                    "doc_ndcg@10_learned": round(ndcg_at_10(scored, ys, gs, ds), 4)})
        data["fit"][kind] = fit_figures
        data["written"][kind] = {"by": "benchmarks/fit_reranker.py", "date": _dt.date.today().isoformat(),
                                 "command": command, "commands": commands.get(kind, []) + [command],
                                 "l2": args.l2,
                                 "per_set": args.per_set, "pairs": "RankNet-linear, each query weighs 1",
                                 "labels": labels,
                                 "fit_note": "nDCG@10 of the fit queries' one-pass top "
                                             f"{RERANK_DEPTH} (fused order vs learned order), candidate-level "
                                             "and (doc_, when the rows have doc ids) document-level"}
        print(json.dumps({kind: fit_figures}, indent=1), file=sys.stderr)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    if not args.no_report and args.pair:
        learned.load_models.cache_clear()
        if out_path.resolve() != MODEL_FILE.resolve():
            print("report skipped: --out is not the package's model file", file=sys.stderr)
            return 0
        for dataset, store in args.pair:
            root = Path(dataset)
            _, _, rep_q, rep_rel = splits(root)
            with Engine.open(store, config) as engine:
                kind = store_kind(engine)
                figures = report(engine, rep_q, rep_rel)
            data["report"].setdefault(kind, {})[root.name] = figures
            print(f"report {root.name} ({kind}): {figures}", file=sys.stderr)
            out_path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
