"""Recall of a command-line option's own manual entry, for questions that name the option as written.

Hand-made questions (``questions.jsonl``: ``question``, ``doc`` = the manual's command, ``entry`` = how the
option's entry line opens in that manual) over man pages rendered to text on this machine::

    mkdir man && for c in grep ls ssh tar ssh_config cp sort find curl; do
        MANWIDTH=100 man $c | col -bx > man/$c.txt; done
    openbook --store st ingest man/
    python benchmarks/options/recall.py --store st [--ask]

A chunk is gold when it belongs to ``<doc>.txt`` and one of its lines opens with ``entry`` (whitespace
collapsed). Prints recall@1/@3/@5/@10 for BM25 and hybrid (hybrid only on a store with embeddings); with
``--ask``, also how often the answerer's passages hold the gold chunk and how often the answer's first
citation is it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from openbook.api import Engine


def _norm(text: str) -> str:
    return " ".join(text.split())


def is_gold(chunk, doc: str, entry: str) -> bool:
    """Whether ``chunk`` is in ``<doc>.txt`` and holds a line opening with ``entry`` (whitespace collapsed)."""
    if chunk is None or chunk.doc_id != f"{doc}.txt":
        return False
    want = _norm(entry)
    return any(_norm(line).startswith(want) for line in chunk.text.splitlines()) or _norm(chunk.text).startswith(want)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--questions", default=str(Path(__file__).with_name("questions.jsonl")))
    ap.add_argument("--ask", action="store_true", help="also run the answerer")
    ap.add_argument("--verbose", action="store_true", help="print each question's gold rank")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    ks = (1, 3, 5, 10)
    with Engine.open(args.store) as engine:
        modes = ["bm25"] + (["hybrid"] if engine.has_embeddings else [])
        for mode in modes:
            hits = engine.search_batch([r["question"] for r in rows], 10, mode=mode, load_chunks=True)
            ranks = []
            for r, hs in zip(rows, hits):
                rank = next((i + 1 for i, h in enumerate(hs) if is_gold(h.chunk, r["doc"], r["entry"])), None)
                ranks.append(rank)
                if args.verbose:
                    print(f"  {mode:6s} {rank!s:>4s}  {r['question']}")
            recall = "  ".join(f"R@{k} {sum(1 for x in ranks if x and x <= k) / len(rows):.2f}" for k in ks)
            print(f"{mode:6s} n={len(rows)}  {recall}")
        if args.ask:
            in_passages = first_cited = 0
            for r in rows:
                answer = engine.ask(r["question"])
                gold = {p.n for p in answer.passages if is_gold(p.chunk, r["doc"], r["entry"])}
                in_passages += bool(gold)
                ok = bool(answer.citations) and answer.citations[0].n in gold and not answer.refused
                first_cited += ok
                if args.verbose:
                    print(f"  ask {'ok ' if ok else 'BAD'} {r['question']} -> {answer.text[:110]!r}")
            print(f"ask    n={len(rows)}  gold in passages {in_passages / len(rows):.2f}  "
                  f"first citation gold {first_cited / len(rows):.2f}")


if __name__ == "__main__":
    main()
