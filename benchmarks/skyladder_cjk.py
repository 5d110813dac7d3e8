"""Skyladder lab's Chinese questions on a fresh hybrid store: the rank of the first relevant document (top 5).

A check that the embedder still matches Chinese questions to their documents after an engine change: compare
the printout with the same script run on another tree.

    PYTHONPATH=src python benchmarks/skyladder_cjk.py --store /tmp/sky-hybrid
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

LAB = Path(__file__).resolve().parents[1] / ".." / "shared" / "labs" / "skyladder"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="a store folder to (re)create")
    parser.add_argument("--lab", default=str(LAB))
    args = parser.parse_args()
    ob = [sys.executable, "-m", "openbook"]
    subprocess.run([*ob, "ingest", str(Path(args.lab) / "docs"), "--store", args.store, "--sync", "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(Path(args.lab) / "questions.jsonl", encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh]
    for q in questions:
        if not q["answerable"] or not re.search(r"[\u4e00-\u9fff]", q["question"]):
            continue
        ranks = []
        for mode in ("dense", "hybrid"):
            cmd = [*ob, "search", q["question"], "--store", args.store, "--mode", mode, "-k", "5", "--json"]
            for role in q["user_acl"]:
                cmd += ["--role", role]
            hits = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["hits"]
            # lab ids are the file names' first seven characters (doc-029-... -> doc-029)
            rank = next((i + 1 for i, h in enumerate(hits) if h["doc_id"][:7] in q["relevant"]), None)
            ranks.append(f"{mode} {rank if rank else '-'}")
        print(q["id"], *ranks, q["question"])


if __name__ == "__main__":
    main()
