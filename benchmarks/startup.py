"""Start-up cost of the CLI: wall time of whole ``openbook search`` / ``ask`` processes, and what they import.

Every run is a fresh ``python -m openbook`` process (the way a user or a script calls the CLI); the figure is the
median over ``--runs`` runs, after one discarded warm-up run that lets Python write its bytecode caches (even where
``PYTHONDONTWRITEBYTECODE`` is set), numba its kernel cache and openbook its per-user caches; the CPU time (user +
system) is printed beside it. The floors (``python -c pass`` and ``import numpy``) are measured the same way, so
that a figure taken on a loaded machine can be read against them. The machine's load average is printed.

Usage (from the repository root; build the stores first)::

    openbook ingest ../shared/datasets/scifact/corpus.jsonl --no-embed --store /tmp/scifact-bm25
    openbook ingest SOME/SUBSET/corpus.jsonl --store /tmp/scifact-hybrid        # with embeddings
    PYTHONPATH=src python benchmarks/startup.py --bm25-store /tmp/scifact-bm25 --hybrid-store /tmp/scifact-hybrid

Targets: ``search`` on a BM25-only store <= 0.5 s and offline ``ask`` there <= 1 s; ``search`` on a hybrid store
<= 1.5 s, offline ``ask`` there <= 2 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

QUERY = "protein misfolding in neurodegenerative disease"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The processes' environment: this one's, except that Python may write bytecode caches (an installed package has
them; without them every process compiles openbook's sources again)."""


def wall(cmd: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Seconds of wall time, and of CPU time (user + system, the process and its children), of ``runs`` fresh
    processes running ``cmd`` (after one discarded warm-up run). CPU time varies less than wall time on a machine
    that other work loads."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=ENV)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode:
            sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()[-500:]}")
    return times, cpu


def report(label: str, measured: tuple[list[float], list[float]]) -> None:
    times, cpu = measured
    print(f"{label:<38} median {statistics.median(times):6.3f} s (CPU {statistics.median(cpu):5.3f} s)   runs "
          + " ".join(f"{t:.2f}" for t in times))


def top_imports(cmd: list[str], n: int) -> list[tuple[float, str]]:
    """The ``n`` top-level imports with the largest cumulative time (ms) under ``python -X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False, env=ENV)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if cumulative.strip().isdigit() and not name.startswith("  "):  # top level: two-space indent at most
            rows.append((int(cumulative) / 1000, name.strip()))
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bm25-store", help="a store ingested with --no-embed")
    parser.add_argument("--hybrid-store", help="a store with embeddings")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--query", default=QUERY)
    args = parser.parse_args()
    py = sys.executable
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} CPUs; {args.runs} runs each")
    report("python -c pass", wall([py, "-c", "pass"], args.runs))
    report("python -c 'import numpy'", wall([py, "-c", "import numpy"], args.runs))
    cmds = []
    if args.bm25_store:
        cmds.append(("search, BM25-only store", [py, "-m", "openbook", "search", args.query, "--store",
                                                 args.bm25_store]))
        cmds.append(("ask (offline), BM25-only store", [py, "-m", "openbook", "ask", args.query, "--store",
                                                        args.bm25_store]))
    if args.hybrid_store:
        cmds.append(("search, hybrid store", [py, "-m", "openbook", "search", args.query, "--store",
                                              args.hybrid_store]))
        cmds.append(("ask (offline), hybrid store", [py, "-m", "openbook", "ask", args.query, "--store",
                                                     args.hybrid_store]))
    for label, cmd in cmds:
        report(label, wall(cmd, args.runs))
    for label, cmd in cmds:
        print(f"\nslowest top-level imports, {label} (python -X importtime, ms cumulative):")
        for ms, name in top_imports(cmd, 8):
            print(f"  {ms:8.1f}  {name}")


if __name__ == "__main__":
    main()
