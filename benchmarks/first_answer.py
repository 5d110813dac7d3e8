"""Time to the first answer of a new store: seconds from the start of ``openbook ingest`` to the first ``openbook
search`` (a separate process, as a user in a second shell) that returns hits, and the dense coverage then; with
``--wait``, also the seconds until every vector is committed and the ingest's own up-front estimate beside it.

The ingest runs with the defaults (embeddings on); the searches poll every ``--every`` seconds with one query. The
machine's load average is printed before and after, so a figure taken on a shared machine can be read against it.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/first_answer.py ../shared/datasets/scifact/corpus.jsonl            # stops the
        # ingest (Ctrl-C) once the first answer came: the store keeps what was committed
    PYTHONPATH=src python benchmarks/first_answer.py ../shared/datasets/scifact/corpus.jsonl --wait     # to the end

Target: the first hybrid-or-BM25 answer <= 20 s after the ingest starts, on SciFact with 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "protein misfolding in neurodegenerative disease"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="a folder or a BEIR corpus.jsonl to ingest")
    parser.add_argument("--store", default=None, help="store folder (default: a new temporary folder)")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between searches")
    parser.add_argument("--wait", action="store_true", help="wait for every vector, then report the totals")
    parser.add_argument("--timeout", type=float, default=3600, help="give up after this many seconds")
    args = parser.parse_args()
    store = args.store or str(Path(tempfile.mkdtemp(prefix="openbook-first-")) / "store")
    print(f"load average before: {os.getloadavg()}", flush=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cli = [sys.executable, "-m", "openbook.cli"]
    t0 = time.monotonic()
    ingest = subprocess.Popen(cli + ["ingest", args.path, "--store", store], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    first = coverage = None
    while time.monotonic() - t0 < args.timeout and ingest.poll() is None:
        out = subprocess.run(cli + ["search", QUERY, "--store", store, "--json", "-k", "3"], capture_output=True,
                             text=True, env=env)
        if out.returncode == 0 and json.loads(out.stdout)["hits"]:
            first = time.monotonic() - t0
            coverage = json.loads(out.stdout)["applied"]["dense_coverage"]
            break
        time.sleep(args.every)
    print(f"first answer: {first:.1f} s after the ingest started (dense_coverage {coverage})" if first is not None
          else "no answer before the ingest ended or the timeout", flush=True)
    if not args.wait:
        ingest.send_signal(signal.SIGINT)
    try:
        _, err = ingest.communicate(timeout=None if args.wait else 120)
    except subprocess.TimeoutExpired:
        ingest.kill()
        _, err = ingest.communicate()
    total = time.monotonic() - t0
    estimate = re.search(r"embedding (\d+) chunks with \S+: about (.+?) in all", err)
    if args.wait:
        print(f"every vector: {total:.1f} s after the start (exit {ingest.returncode})")
        if estimate:
            print(f"the ingest's estimate for embedding {estimate.group(1)} chunks: about {estimate.group(2)}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
