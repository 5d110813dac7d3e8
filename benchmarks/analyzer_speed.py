"""Analyzer throughput: the current analyzer against an earlier one from git history, on real corpora.

    python benchmarks/analyzer_speed.py                      # against main's first ICU-free analyzer (277c8aa)
    python benchmarks/analyzer_speed.py --rev HEAD~3 --datasets scifact,cmrc2018_dev

For each corpus (BEIR ``corpus.jsonl`` under ../shared/datasets, title + text) it reports input tokens/s
(whitespace-separated tokens of the raw text, the same count for both versions; for Chinese, where there
are few spaces, read the characters/s column) and the number of terms produced, for the first pass (cold per-token cache) and a second pass (warm cache). One thread; run with
nothing else busy. Results go to stdout as a Markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def load_old(rev: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/openbook/index/analyzer.py"],
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_analyzer.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_analyzer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Analyzer


def corpus(name: str, limit: int) -> list[str]:
    texts = []
    with open(ROOT / ".." / "shared" / "datasets" / name / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            texts.append((d.get("title") or "") + "\n" + d.get("text", ""))
            if len(texts) >= limit:
                break
    return texts


def measure(analyze, texts: list[str]) -> tuple[float, float, int]:
    start = time.perf_counter()
    terms = sum(len(analyze(t)) for t in texts)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    for t in texts:
        analyze(t)
    return cold, time.perf_counter() - start, terms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="277c8aa", help="git revision of the analyzer to compare with")
    ap.add_argument("--datasets", default="scifact,cmrc2018_dev,cranfield")
    ap.add_argument("--limit", type=int, default=100_000, help="documents per corpus")
    args = ap.parse_args()
    from openbook.index.analyzer import Analyzer

    Old = load_old(args.rev)
    print("| corpus | analyzer | input tokens | cold tokens/s | warm tokens/s | cold chars/s | terms out |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name in args.datasets.split(","):
        texts = corpus(name, args.limit)
        n_tokens = sum(len(t.split()) for t in texts)
        n_chars = sum(map(len, texts))
        new = Analyzer()
        for label, fn in ((f"before ({args.rev})", Old().analyze), ("now: analyze_document", new.analyze_document),
                          ("now: analyze (query)", Analyzer().analyze)):
            cold, warm, terms = measure(fn, texts)
            print(f"| {name} | {label} | {n_tokens:,} | {n_tokens / cold:,.0f} | {n_tokens / warm:,.0f} | "
                  f"{n_chars / cold:,.0f} | {terms:,} |")


if __name__ == "__main__":
    main()
