"""Measure chunk-size settings by retrieval quality, to choose ``ChunkingConfig``'s defaults.

For each setting (target, overlap, max words) every document is cut with ``openbook.chunking.chunk_document``,
the chunks are indexed with bm25s (English stop words, Snowball English stemmer), and a document scores as its
best chunk (max-pooling over the top 200 chunks). Reported:

- SciFact (BEIR test split, 300 queries, 5,183 abstracts, chunk text prefixed with the title): nDCG@10 at
  document level, computed with pytrec_eval (``ndcg_cut_10``), chunks per document and chunking time.
- Skyladder lab (``shared/labs/skyladder``, 31 answerable questions; indexed text is ``Chunk.indexed_text()``):
  mean recall of the relevant docs in the top 10 docs, only when ``openbook.ingest`` offers ``discover`` and
  ``load_file``.

Run: ``PYTHONPATH=src python3 benchmarks/chunking_defaults.py [--limit N] [--settings 180/30/350,...]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import bm25s
import pytrec_eval
import Stemmer

from openbook.chunking import chunk_document
from openbook.config import ChunkingConfig
from openbook.types import Chunk, Document

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
SCIFACT = SHARED / "datasets" / "scifact"
SKYLADDER = SHARED / "labs" / "skyladder"
DEFAULT_SETTINGS = "whole,64/16/128,100/20/200,128/24/256,180/0/350,180/30/350,180/60/350,256/48/512,400/60/800"
DEPTH = 200


def parse_setting(text: str) -> ChunkingConfig | None:
    """``"180/30/350"`` -> ChunkingConfig; ``"whole"`` -> None (one chunk per document, no chunker)."""
    if text == "whole":
        return None
    target, overlap, mx = (int(x) for x in text.split("/"))
    return ChunkingConfig(target_words=target, overlap_words=overlap, max_words=mx)


def chunk_all(docs: list[Document], cfg: ChunkingConfig | None) -> tuple[list[Chunk], float]:
    t0 = time.perf_counter()
    if cfg is None:
        chunks = [Chunk(chunk_id=d.doc_id, doc_id=d.doc_id, text=d.text, title=d.title) for d in docs]
    else:
        chunks = [c for d in docs for c in chunk_document(d, cfg)]
    return chunks, time.perf_counter() - t0


def doc_rankings(
    chunks: list[Chunk], texts: list[str], queries: list[str], k_docs: int
) -> list[list[tuple[str, float]]]:
    """For each query, the best ``k_docs`` documents as (doc_id, best chunk's BM25 score), best first."""
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    q_tokens = bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False)
    ids, scores = retriever.retrieve(q_tokens, k=min(DEPTH, len(texts)), show_progress=False)
    out = []
    for row_ids, row_scores in zip(ids, scores):
        best: dict[str, float] = {}
        for i, s in zip(row_ids, row_scores):
            d = chunks[int(i)].doc_id
            if float(s) > 0 and d not in best:
                best[d] = float(s)
        out.append(sorted(best.items(), key=lambda kv: -kv[1])[:k_docs])
    return out


def load_scifact(limit: int | None) -> tuple[list[Document], dict[str, str], dict[str, dict[str, int]]]:
    docs = []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            docs.append(Document(doc_id=row["_id"], text=row["text"], title=row["title"], source="", format="beir"))
    qrels: dict[str, dict[str, int]] = {}
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, rel = line.split("\t")
            qrels.setdefault(qid, {})[did] = int(rel)
    queries = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    if limit:
        # Keep every relevant doc, then fill with the first others: a smaller but still hard corpus.
        relevant = {d for rels in qrels.values() for d in rels}
        keep = [d for d in docs if d.doc_id in relevant]
        keep += [d for d in docs if d.doc_id not in relevant][: max(0, limit - len(keep))]
        docs = keep
    return docs, queries, qrels


def run_scifact(settings: list[str], limit: int | None) -> None:
    docs, queries, qrels = load_scifact(limit)
    qids = list(queries)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    print(f"SciFact: {len(docs)} docs, {len(qids)} test queries")
    print(f"{'setting':>14} {'nDCG@10':>8} {'chunks/doc':>10} {'words/chunk':>11} {'chunk s':>8}")
    for name in settings:
        chunks, secs = chunk_all(docs, parse_setting(name))
        texts = [f"{c.title}\n{c.text}" for c in chunks]
        ranked = doc_rankings(chunks, texts, [queries[q] for q in qids], 10)
        run = {q: dict(r) for q, r in zip(qids, ranked)}
        run = {q: r or {"__none__": 0.0} for q, r in run.items()}
        scores = evaluator.evaluate(run)
        ndcg = statistics.mean(s["ndcg_cut_10"] for s in scores.values())
        words = statistics.mean(len(c.text.split()) for c in chunks)
        print(f"{name:>14} {ndcg:8.4f} {len(chunks) / len(docs):10.2f} {words:11.1f} {secs:8.2f}", flush=True)


def run_skyladder(settings: list[str]) -> None:
    try:
        from openbook.ingest import discover, load_file  # type: ignore[attr-defined]
    except ImportError:
        print("Skyladder: skipped (openbook.ingest has no discover/load_file yet)")
        return
    root = SKYLADDER / "docs"
    docs = [load_file(p, root) if _takes_root(load_file) else load_file(p) for p in discover(root)]
    questions = [json.loads(line) for line in open(SKYLADDER / "questions.jsonl", encoding="utf-8")]
    questions = [q for q in questions if q["answerable"]]
    print(f"Skyladder: {len(docs)} docs, {len(questions)} answerable questions")
    print(f"{'setting':>14} {'recall@10':>9} {'chunks':>7}")
    for name in settings:
        chunks, _ = chunk_all(docs, parse_setting(name))
        texts = [c.indexed_text() if c.chunk_id != c.doc_id else f"{c.title}\n{c.text}" for c in chunks]
        ranked = doc_rankings(chunks, texts, [q["question"] for q in questions], 10)
        recalls = []
        for q, r in zip(questions, ranked):
            got = {d[:7] for d, _ in r}
            recalls.append(sum(1 for d in q["relevant"] if d in got) / len(q["relevant"]))
        print(f"{name:>14} {statistics.mean(recalls):9.3f} {len(chunks):7d}", flush=True)


def _takes_root(fn: object) -> bool:
    import inspect

    return len(inspect.signature(fn).parameters) >= 2  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="SciFact docs to keep (relevant ones first)")
    parser.add_argument("--settings", default=DEFAULT_SETTINGS, help="comma list of target/overlap/max or whole")
    parser.add_argument("--skip-scifact", action="store_true")
    args = parser.parse_args(argv)
    settings = args.settings.split(",")
    if not args.skip_scifact:
        run_scifact(settings, args.limit)
    run_skyladder(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
