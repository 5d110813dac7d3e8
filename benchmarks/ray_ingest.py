"""Ingest throughput on Ray against a local ingest, on one machine: 1 and 2 Ray worker processes.

    python benchmarks/ray_ingest.py                  # ../shared/samples (HTML, PDF, Markdown), BM25 only
    python benchmarks/ray_ingest.py --embed --limit 12   # also embed (default embedder), 12 Markdown pages

Each run ingests the same folder into a new embedded store: locally (``openbook ingest``), then with
``--ray`` on a local Ray cluster (``ray.cluster_utils.Cluster``: a head node with N CPUs, so N worker
processes run tasks). The figure is wall time from the call to the committed store, including Ray's task
start-up but not the cluster's; each Ray store is checked against the local one (documents and chunk ids
equal, vectors within 1e-6). Prints a Markdown table; ``--json`` writes the raw figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from openbook.api import Engine  # noqa: E402
from openbook.config import Config  # noqa: E402

SAMPLES = REPO.parent / "shared" / "samples"


def _ingest(folder: Path, store: Path, embed: bool, ray_address: str | None) -> tuple[float, dict]:
    config = Config().with_overrides({"store": str(store)})
    t0 = time.perf_counter()
    with Engine.open(store, config, create=True) as engine:
        report = engine.ingest([folder], embed=embed, ray=ray_address)
    seconds = time.perf_counter() - t0
    with Engine.open(store, config) as engine:
        ids = engine.store.get_indexed_chunk_ids()
        contents = {"docs": sorted(engine.store.get_documents()), "ids": ids,
                    "vectors": engine.store.get_vectors(ids) if embed else None}
    return seconds, {"report": report, **contents}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", default=str(SAMPLES), help="what to ingest (default ../shared/samples)")
    ap.add_argument("--embed", action="store_true", help="embed too (default embedder); else BM25 only")
    ap.add_argument("--limit", type=int, default=0, help="ingest only the first N files (sorted), copied")
    ap.add_argument("--workers", default="1,2", help="Ray worker processes per run (default 1,2)")
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args()
    import ray
    from ray.cluster_utils import Cluster

    tmp = Path(tempfile.mkdtemp(prefix="openbook-ray-bench-"))
    folder = Path(args.folder)
    if args.limit:
        files = sorted(p for p in folder.rglob("*") if p.is_file())[: args.limit]
        folder = tmp / "corpus"
        for f in files:
            target = folder / f.relative_to(args.folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
    rows = []
    local_s, local = _ingest(folder, tmp / "local", args.embed, None)
    n_docs, n_chunks = len(local["docs"]), len(local["ids"])
    rows.append({"run": "local (this process)", "seconds": local_s, "same": True})
    for n in (int(x) for x in args.workers.split(",")):
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": n, "include_dashboard": False})
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            seconds, got = _ingest(folder, tmp / f"ray{n}", args.embed, cluster.address)
        finally:
            ray.shutdown()
            cluster.shutdown()
        same = got["docs"] == local["docs"] and got["ids"] == local["ids"] and (
            not args.embed or bool(np.allclose(got["vectors"], local["vectors"], atol=1e-6)))
        rows.append({"run": f"Ray, {n} worker process{'es' if n > 1 else ''}", "seconds": seconds, "same": same})
    load = os.getloadavg()[0]
    print(f"{n_docs} documents, {n_chunks} chunks, {'BM25 and vectors' if args.embed else 'BM25 only'}; "
          f"{os.cpu_count()} CPUs, load average {load:.1f}")
    print("| run | seconds | documents/s | chunks/s | store equals the local one |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['run']} | {r['seconds']:.1f} | {n_docs / r['seconds']:.2f} | {n_chunks / r['seconds']:.1f} | "
              f"{'yes' if r['same'] else 'NO'} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"documents": n_docs, "chunks": n_chunks, "embed": args.embed,
                                               "load": load, "rows": rows}, indent=1), encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
