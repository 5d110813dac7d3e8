"""BM25 query latency of openbook's index at a million rows, without the analyzer (for comparing kernels).

Builds a ``BM25Index`` from a random rows x terms matrix (fixed seed: ``--rows`` rows of 40 distinct terms drawn
from a Zipf-like distribution over 200,000 terms, term frequencies 1-3) and times single queries of 3-8 terms
(term ranks 20-2,000; top 10) after 10 warm-up queries: p50 and p95 over ``--queries`` queries, and the one-time cost of the first
compiled query (numba load and, where the tree has them, the per-posting weights). Run it against two checkouts to
compare kernels on the same matrix:

    PYTHONPATH=src python benchmarks/bm25_query.py
    PYTHONPATH=/path/to/main/src python benchmarks/bm25_query.py

``benchmarks/peers.py`` measures the whole tool (analyzer included) against bm25s and tantivy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import scipy.sparse as sp

from openbook.index.sparse import BM25Index


def synthetic(rows: int, terms: int, per_row: int, seed: int) -> BM25Index:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, terms + 1) ** 0.9
    cols = rng.choice(terms, size=rows * per_row, p=weights / weights.sum()).astype(np.int32)
    data = rng.integers(1, 4, size=rows * per_row).astype(np.int32)
    indptr = np.arange(0, rows * per_row + 1, per_row, dtype=np.int64)
    tf = sp.csr_matrix((data, cols, indptr), shape=(rows, terms))
    return BM25Index.from_tf(tf, [f"t{i}" for i in range(terms)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    start = time.perf_counter()
    index = synthetic(args.rows, 200_000, 40, 7)
    built = time.perf_counter() - start
    rng = np.random.default_rng(11)
    # query terms from ranks 20-2,000 (the analyzer drops the stopwords above): 2,000-100,000 postings each
    queries = [[f"t{t}" for t in rng.integers(20, 2_000, size=rng.integers(3, 9))] for _ in range(args.queries + 10)]
    start = time.perf_counter()
    index.search(queries[0], 10)
    first = time.perf_counter() - start
    for q in queries[1:10]:
        index.search(q, 10)
    times = []
    for q in queries[10:]:
        start = time.perf_counter()
        index.search(q, 10)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(f"{args.rows:,} rows, {len(index.indices):,} postings (built in {built:.1f} s); first query {first:.2f} s; "
          f"p50 {statistics.median(times):.2f} ms, p95 {times[int(0.95 * len(times))]:.2f} ms over "
          f"{len(times)} queries; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
