"""Iterative (two-hop) retrieval: full-support recall on HotpotQA halves and nDCG@10 on SciFact, hops 1 vs 2.

    python benchmarks/multihop.py [--hotpot-store DIR] [--scifact-store DIR] [--mode bm25|hybrid]

Builds BM25-only stores of ../shared/datasets/{hotpotqa_dev500,scifact} in a temporary folder unless given
(``--mode hybrid`` needs given stores with embeddings). The pair weights of ``openbook.retrieve.multihop``
were chosen on the even-indexed HotpotQA half, ``min_gain`` on that half and SciFact train; the odd half and
SciFact test are the held-out report.
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
from pathlib import Path

from openbook.api import Engine
from openbook.config import Config
from openbook.eval.metrics import full_support_recall_at, ndcg_at

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"


def load(name: str, split: str) -> tuple[list[tuple[str, str]], dict[str, dict[str, int]]]:
    folder = SHARED / name
    queries = [(q["_id"], q["text"]) for q in map(json.loads, open(folder / "queries.jsonl", encoding="utf-8"))]
    qrels: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in list(open(folder / "qrels" / f"{split}.tsv", encoding="utf-8"))[1:]:
        qid, doc, grade = line.rstrip("\n").split("\t")
        qrels[qid][doc] = int(grade)
    return [(i, t) for i, t in queries if i in qrels], qrels


def store(name: str, given: str | None, tmp: Path) -> Engine:
    cfg = Config().with_overrides({"store": given or str(tmp / name), "embedding.enabled": False})
    engine = Engine.open(cfg.store, cfg, create=True)
    if not given:
        engine.ingest([SHARED / name / "corpus.jsonl"])
    return engine


def ranked(engine: Engine, text: str, hops: int, mode: str) -> list[str]:
    return list(dict.fromkeys(h.doc_id for h in engine.search(text, k=30, mode=mode, hops=hops)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hotpot-store")
    ap.add_argument("--scifact-store")
    ap.add_argument("--mode", default="bm25", choices=("bm25", "hybrid"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hp = store("hotpotqa_dev500", args.hotpot_store, Path(tmp))
        queries, qrels = load("hotpotqa_dev500", "test")
        for hops in (1, 2):
            for half, name in ((0, "even (calibration)"), (1, "odd (held out)")):
                rec: dict[int, list[float]] = collections.defaultdict(list)
                start = time.perf_counter()
                part = queries[half::2]
                for qid, text in part:
                    docs = ranked(hp, text, hops, args.mode)
                    for k in (2, 5, 10):
                        rec[k].append(full_support_recall_at(docs, qrels[qid], k))
                ms = (time.perf_counter() - start) * 1000 / len(part)
                figures = ", ".join(f"@{k} {sum(v) / len(v):.3f}" for k, v in rec.items())
                print(f"hotpotqa {name:<19} hops {hops}: full-support recall {figures}  ({ms:.0f} ms/query)")
        sf = store("scifact", args.scifact_store, Path(tmp))
        for split in ("train", "test"):
            queries, qrels = load("scifact", split)
            for hops in (1, 2):
                v = [ndcg_at(ranked(sf, text, hops, args.mode), qrels[qid], 10) for qid, text in queries]
                print(f"scifact {split:<5} hops {hops}: nDCG@10 {sum(v) / len(v):.4f} ({len(v)} queries)")


if __name__ == "__main__":
    main()
