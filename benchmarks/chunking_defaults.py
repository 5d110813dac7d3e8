"""Measure chunk-size settings by retrieval quality, to choose ``ChunkingConfig``'s defaults.

For each setting (target, overlap, max words) every document is cut with ``openbook.chunking.chunk_document``,
the chunks are indexed with bm25s (English stop words, Snowball English stemmer), and a document scores as its
best chunk (max-pooling over the top 200 chunks). Reported:

- SciFact (BEIR test split, 300 queries, 5,183 abstracts, chunk text prefixed with the title): nDCG@10 at
  document level, computed with pytrec_eval (``ndcg_cut_10``), chunks per document and chunking time.
- Skyladder lab (``shared/labs/skyladder``, 31 answerable questions; indexed text is ``Chunk.indexed_text()``):
  mean recall of the relevant docs in the top 3/5/10 docs, and ans@6: the share of questions for which one of
  the top 6 chunks (the answerer's passages) holds every ``must_contain`` string; needs ``openbook.ingest``'s
  ``discover`` and ``load_file``.

Run: ``PYTHONPATH=src python3 benchmarks/chunking_defaults.py [--limit N] [--settings 180/30/350,...]``
(about a minute for the default settings on 2 busy cores).

Measured (2026-11, bm25s 0.3.16, BlingFire 0.1.8)::

    SciFact        setting  nDCG@10 chunks/doc words/chunk
                     whole   0.6863       1.00       201.8
                 64/16/128   0.6692       4.37        48.2
                100/20/200   0.6695       2.78        75.9
                128/24/256   0.6765       2.24        94.8
                160/20/320   0.6794       1.76       116.6
                 180/0/350   0.6819       1.62       124.9
                180/30/350   0.6810       1.63       128.9
                180/60/350   0.6789       1.70       136.9
                200/20/350   0.6873       1.48       137.6
                256/32/400   0.6817       1.21       169.8
                300/30/500   0.6899       1.10       185.1
    Skyladder      setting    R@3    R@5   R@10  ans@6  chunks
                     whole  0.790  0.855  0.887  0.871      30
                 64/16/128  0.839  0.887  0.887  0.839     346
                100/20/200  0.806  0.887  0.887  0.839     254
                180/30/350  0.823  0.855  0.887  0.839     201
                200/20/350  0.823  0.855  0.887  0.839     197
                256/48/512  0.806  0.855  0.887  0.839     191

Recommendation: 200/20/350 (see ``openbook.chunking``'s docstring). Chunking all 5,183 SciFact abstracts takes
~3 s. The one ans@6 question lost by every chunked setting is q09, a two-document (multihop) question whose
strings are never in one chunk.
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
PASSAGES = 6  # AnswerConfig.passages: chunks given to the answerer


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


def search(texts: list[str], queries: list[str]) -> tuple[object, object]:
    """bm25s top-``DEPTH`` chunk indices and scores per query: two arrays [n_queries, min(DEPTH, n_chunks)]."""
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    q_tokens = bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False)
    return retriever.retrieve(q_tokens, k=min(DEPTH, len(texts)), show_progress=False)


def doc_rankings(ids: object, scores: object, chunks: list[Chunk], k_docs: int) -> list[list[tuple[str, float]]]:
    """For each query, the best ``k_docs`` documents as (doc_id, best chunk's BM25 score), best first."""
    out = []
    for row_ids, row_scores in zip(ids, scores):  # type: ignore[call-overload]
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
        ranked = doc_rankings(*search(texts, [queries[q] for q in qids]), chunks, 10)
        run = {q: dict(r) for q, r in zip(qids, ranked)}
        run = {q: r or {"__none__": 0.0} for q, r in run.items()}
        scores = evaluator.evaluate(run)
        ndcg = statistics.mean(s["ndcg_cut_10"] for s in scores.values())
        words = statistics.mean(len(c.text.split()) for c in chunks)
        print(f"{name:>14} {ndcg:8.4f} {len(chunks) / len(docs):10.2f} {words:11.1f} {secs:8.2f}", flush=True)


def run_skyladder(settings: list[str]) -> None:
    try:
        from openbook.ingest import discover, load_file
    except ImportError:
        print("Skyladder: skipped (openbook.ingest has no discover/load_file yet)")
        return
    docs = [d for path, doc_id in discover([SKYLADDER / "docs"]) for d in load_file(path, doc_id)]
    questions = [json.loads(line) for line in open(SKYLADDER / "questions.jsonl", encoding="utf-8")]
    questions = [q for q in questions if q["answerable"]]
    print(f"Skyladder: {len(docs)} docs, {len(questions)} answerable questions (Chinese ones can only miss: "
          "English analyzer); mean recall of relevant docs in the top k docs")
    print(f"{'setting':>14} {'R@3':>6} {'R@5':>6} {'R@10':>6} {'ans@6':>6} {'chunks':>7} {'words':>7}")
    for name in settings:
        chunks, _ = chunk_all(docs, parse_setting(name))
        texts = [c.indexed_text() if c.chunk_id != c.doc_id else f"{c.title}\n{c.text}" for c in chunks]
        ids, scores = search(texts, [q["question"] for q in questions])
        ranked = doc_rankings(ids, scores, chunks, 10)
        row = []
        for k in (3, 5, 10):
            recalls = []
            for q, r in zip(questions, ranked):
                got = {d[:7] for d, _ in r[:k]}
                recalls.append(sum(1 for d in q["relevant"] if d in got) / len(q["relevant"]))
            row.append(statistics.mean(recalls))
        # Answer-bearing: one of the top PASSAGES chunks holds every must_contain string (what the answerer sees).
        bearing = []
        for q, row_ids, row_scores in zip(questions, ids, scores):
            top = [_squash(chunks[int(i)].text) for i, s in zip(row_ids, row_scores) if float(s) > 0][:PASSAGES]
            bearing.append(any(all(_squash(m) in t for m in q["must_contain"]) for t in top))
        print(f"{name:>14} {row[0]:6.3f} {row[1]:6.3f} {row[2]:6.3f} {statistics.mean(bearing):6.3f} "
              f"{len(chunks):7d} {statistics.mean(len(c.text.split()) for c in chunks):7.1f}", flush=True)


def _squash(text: str) -> str:
    return "".join(text.lower().split())


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
