"""openbook's BM25 against bm25s on a BEIR folder, query by query: where and why the two rankings differ.

Both index one row per record, title and text joined by a line break (as ``peers.py`` does), with k1 1.2 and
b 0.75; bm25s runs its Lucene variant over ``bm25s.tokenize(stopwords="en")`` and PyStemmer's English stemmer (its
documented setup), openbook its ``Analyzer`` (documents: ``analyze_document``; queries: ``search_terms``, as the engine's BM25 leg) and
``BM25Index``. With ``--engine-run`` a TREC run of ``openbook eval retrieval --no-embed`` (the whole engine:
chunking, the two-hop default, expansions) is scored beside them. Prints nDCG@10 of each, the chunked run against
whole records by the number of chunks of a query's relevant records, the queries where openbook loses most, and
for those the query terms of each side.

    PYTHONPATH=src python benchmarks/bm25_long_queries.py --dataset ../shared/datasets/cranfield
    PYTHONPATH=src python benchmarks/bm25_long_queries.py --dataset DIR --engine-run eval-results/DIR.bm25.trec

Needs the ``bench`` (or ``test``) extra for bm25s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

K1, B = 1.2, 0.75


def texts_of(dataset) -> tuple[list[str], list[str]]:
    """Record ids and texts (title, newline, text) of a BEIR dataset, as ``peers.py`` reads them."""
    sys.path.insert(0, str(HERE))
    from peers import _load_corpus

    return _load_corpus(Path(dataset.corpus))


def bm25s_run(ids: list[str], texts: list[str], queries: dict[str, str], k: int) -> dict[str, list[tuple[str, float]]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    qtexts = list(queries.values())
    tokens = bm25s.tokenize(qtexts, stopwords="en", stemmer=stemmer, show_progress=False)
    rows, scores = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False, n_threads=1)
    return {qid: [(ids[r], float(s)) for r, s in zip(row, score) if s > 0]
            for qid, row, score in zip(queries, rows, scores)}


def openbook_run(ids: list[str], texts: list[str], queries: dict[str, str], k: int, analyzer=None
                 ) -> dict[str, list[tuple[str, float]]]:
    from openbook.index.analyzer import Analyzer
    from openbook.index.sparse import BM25Index

    analyzer = analyzer or Analyzer()
    index = BM25Index.from_texts(texts, analyzer, k1=K1, b=B)
    rows, scores = index.search_batch([analyzer.search_terms(q) for q in queries.values()], k)
    return {qid: [(ids[r], float(s)) for r, s in zip(row, score) if r >= 0]
            for qid, row, score in zip(queries, rows, scores)}


def chunked_run(dataset, queries: dict[str, str], k: int, chunks_of: dict[str, int] | None = None
                ) -> dict[str, list[tuple[str, float]]]:
    """openbook's BM25 over the chunks ingest makes (``chunk_document``, ``Chunk.indexed_text``: title, then the
    chunk), idf over records as the engine's store counts it (``BM25Index.with_documents``), a record scoring as
    its best chunk, as ``eval retrieval`` collapses them. ``chunks_of``, when given, is filled with each record's
    number of chunks."""
    import json

    import numpy as np

    from openbook.chunking import chunk_document
    from openbook.index.analyzer import Analyzer
    from openbook.index.sparse import BM25Index
    from openbook.types import Document

    doc_of, texts = [], []
    with Path(dataset.corpus).open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            doc = Document(doc_id=str(obj["_id"]), text=obj.get("text") or "", title=obj.get("title") or "",
                           source="corpus.jsonl", format="beir")
            chunks = chunk_document(doc)
            if chunks_of is not None:
                chunks_of[doc.doc_id] = len(chunks)
            for chunk in chunks:
                doc_of.append(doc.doc_id)
                texts.append(chunk.indexed_text())
    analyzer = Analyzer()
    ordinal = {d: i for i, d in enumerate(dict.fromkeys(doc_of))}
    index = BM25Index.from_texts(texts, analyzer, k1=K1, b=B).with_documents(
        np.array([ordinal[d] for d in doc_of], dtype=np.int32))
    rows, scores = index.search_batch([analyzer.search_terms(q) for q in queries.values()], 3 * k)
    out = {}
    for qid, row, score in zip(queries, rows, scores):
        best: dict[str, float] = {}
        for r, s in zip(row, score):
            if r >= 0:
                best.setdefault(doc_of[r], float(s))
        out[qid] = list(best.items())[:k]
    return out


def per_query(run, qrels) -> dict[str, float]:
    from openbook.eval.metrics import per_query as metrics_per_query

    table = metrics_per_query({q: [d for d, _ in ranked] for q, ranked in run.items()}, qrels, ["ndcg@10"])
    return {q: row["ndcg@10"] for q, row in table.items()}


def read_trec(path: Path) -> dict[str, list[tuple[str, float]]]:
    run: dict[str, list[tuple[str, float]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _rank, score, _ = line.split()
        run.setdefault(qid, []).append((doc, float(score)))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--engine-run", type=Path, default=None, help="TREC run of `eval retrieval --no-embed`")
    parser.add_argument("--worst", type=int, default=8, help="queries to show where openbook loses most")
    args = parser.parse_args()

    import bm25s
    import Stemmer

    from openbook.eval.beir import load_beir
    from openbook.index.analyzer import Analyzer

    data = load_beir(args.dataset, split=args.split)
    queries = {q: t for q, t in data.queries.items() if q in data.qrels}
    ids, texts = texts_of(data)
    chunks_of: dict[str, int] = {}
    runs = {"bm25s": bm25s_run(ids, texts, queries, 100), "openbook": openbook_run(ids, texts, queries, 100),
            "chunks": chunked_run(data, queries, 100, chunks_of)}
    if args.engine_run:
        runs["engine"] = read_trec(args.engine_run)
    scores = {name: per_query(run, data.qrels) for name, run in runs.items()}
    print(f"{args.dataset.name}: {len(ids)} records, {len(queries)} judged queries, mean query length "
          f"{statistics.mean(len(t.split()) for t in queries.values()):.1f} words")
    for name, s in scores.items():
        print(f"  nDCG@10 {name:<9} {statistics.mean(s.values()):.4f}")
    by_chunks: dict[int, list[float]] = {}
    for q in queries:  # chunked against whole records, by the most chunks among a query's relevant records
        most = max((chunks_of.get(d, 0) for d, g in data.qrels[q].items() if g > 0), default=0)
        by_chunks.setdefault(most, []).append(scores["chunks"][q] - scores["openbook"][q])
    for most, d in sorted(by_chunks.items()):
        print(f"  chunks - openbook, relevant records of at most {most} chunks: {len(d)} queries, "
              f"mean {statistics.mean(d):+.4f}")
    diff = {q: scores["openbook"][q] - scores["bm25s"][q] for q in queries}
    print(f"  openbook - bm25s per query: {sum(d > 1e-9 for d in diff.values())} better, "
          f"{sum(d < -1e-9 for d in diff.values())} worse, {sum(abs(d) <= 1e-9 for d in diff.values())} equal")
    analyzer, stemmer = Analyzer(), Stemmer.Stemmer("english")
    for qid in sorted(diff, key=diff.get)[:args.worst]:
        ours = analyzer.search_terms(queries[qid])
        theirs = bm25s.tokenize([queries[qid]], stopwords="en", stemmer=stemmer, return_ids=False,
                                show_progress=False)[0]
        print(f"\n  q{qid} {diff[qid]:+.3f}: {queries[qid][:150]}\n    openbook {ours}\n    bm25s    {theirs}")


if __name__ == "__main__":
    main()
