"""Batch BM25 search over one small index in one long-lived process: when the rent-or-buy rule switches from numpy
to the compiled kernel, and what that does to queries per second and total time.

Builds a ``BM25Index`` of a BEIR corpus (title + text, the default analyzer), then runs ``--passes`` batch calls of
all its queries (``search_batch``, top 10) and prints each pass's queries per second and which path scored it, and
the total wall time of all passes, numpy path included. ``--numpy`` keeps the numpy path all along (the kernel as if
numba were missing), for the same total on the other side:

    PYTHONPATH=src python benchmarks/bm25_batches.py ../shared/datasets/scifact
    PYTHONPATH=src python benchmarks/bm25_batches.py ../shared/datasets/scifact --numpy
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from openbook.index import _bm25_kernels as kernels
from openbook.index.analyzer import Analyzer
from openbook.index.sparse import BM25Index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a BEIR folder (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--passes", type=int, default=40)
    parser.add_argument("--numpy", action="store_true", help="never load the compiled kernel")
    args = parser.parse_args()
    if args.numpy:
        kernels.HAVE_NUMBA = False
    analyzer = Analyzer()
    with open(args.dataset / "corpus.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    with open(args.dataset / "queries.jsonl", encoding="utf-8") as f:
        queries = [analyzer.analyze(json.loads(line)["text"]) for line in f if line.strip()]
    index = BM25Index.build([analyzer.analyze(f"{d.get('title', '')} {d['text']}") for d in docs])
    print(f"{index.rows} rows, {len(queries)} queries per pass; MIN_ROWS {kernels.MIN_ROWS}, "
          f"LOAD_COST_S {kernels.LOAD_COST_S}")
    total = 0.0
    for n in range(args.passes):
        started = time.perf_counter()
        index.search_batch(queries, 10)
        took = time.perf_counter() - started
        total += took
        path = "kernel" if kernels.loaded() else "numpy"
        print(f"pass {n + 1:3d}: {len(queries) / took:9.0f} QPS  {path}")
    print(f"total {total:.2f} s for {args.passes * len(queries)} queries "
          f"({args.passes * len(queries) / total:.0f} QPS overall)")


if __name__ == "__main__":
    main()
