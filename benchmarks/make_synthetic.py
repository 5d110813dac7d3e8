"""Generate the deterministic synthetic BEIR corpus used by the peer benchmark.

Each document is about 60 words (uniform 40-80) of whole SciFact sentences drawn at random with a fixed seed,
cut to its length; ids are ``s0000000`` ... . The same arguments always give the same bytes.

    python benchmarks/make_synthetic.py --docs 1000000 --out /tmp/openbook-bench/synthetic-1000000
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

SEED = 20240613
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def scifact_sentences(scifact: Path) -> list[list[str]]:
    """Every SciFact abstract sentence (and title) of at least 4 words, as word lists, in corpus order."""
    out: list[list[str]] = []
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            for part in [obj.get("title", ""), *_SENTENCE_END.split(obj.get("text", ""))]:
                words = part.split()
                if len(words) >= 4:
                    out.append(words)
    return out


def generate(scifact: Path, out: Path, n_docs: int, seed: int = SEED, min_words: int = 40,
             max_words: int = 80) -> Path:
    """Write ``out/corpus.jsonl`` with ``n_docs`` documents (skipped when an identical one exists).

    Args:
        scifact: the SciFact BEIR folder (sentences come from its ``corpus.jsonl``).
        out: output folder; ``corpus.jsonl`` and ``params.json`` are written there.
        n_docs: number of documents.
        seed: NumPy ``default_rng`` seed.
        min_words, max_words: document length range in whitespace-separated words (inclusive).

    Returns:
        The path of ``corpus.jsonl``.
    """
    params = {"n_docs": n_docs, "seed": seed, "min_words": min_words, "max_words": max_words, "version": 1}
    corpus = out / "corpus.jsonl"
    marker = out / "params.json"
    if corpus.is_file() and marker.is_file() and json.loads(marker.read_text()) == params:
        return corpus
    out.mkdir(parents=True, exist_ok=True)
    sentences = scifact_sentences(scifact)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_words, max_words + 1, size=n_docs)
    picks = rng.integers(0, len(sentences), size=(n_docs, 8))
    tmp = corpus.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for i in range(n_docs):
            target = int(lengths[i])
            words: list[str] = []
            j = 0
            while len(words) < target:
                idx = int(picks[i, j]) if j < picks.shape[1] else int(rng.integers(0, len(sentences)))
                words.extend(sentences[idx])
                j += 1
            doc = {"_id": f"s{i:07d}", "title": "", "text": " ".join(words[:target])}
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
    tmp.replace(corpus)
    marker.write_text(json.dumps(params))
    return corpus


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000, help="number of documents (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--scifact", type=Path, default=here.parent.parent / "shared" / "datasets" / "scifact")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default /tmp/openbook-bench/synthetic-N)")
    args = parser.parse_args(argv)
    out = args.out or Path("/tmp/openbook-bench") / f"synthetic-{args.docs}"
    start = time.perf_counter()
    path = generate(args.scifact, out, args.docs, args.seed)
    print(f"{path}: {args.docs} documents in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
