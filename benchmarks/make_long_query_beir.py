"""Build a BEIR folder of long natural-language queries over title-plus-abstract records from a BEIR corpus.

Library test collections (CISI, CACM, LISA) ask in sentences of background and need ("What problems and concerns
are there in ...? What difficulties are involved in ...?") over records that are a title and an abstract. This
builds a set of the same shape from a corpus of abstracts: for a sample of records, the query is the record's
opening sentences (the background an abstract starts with; ``chunking.split_sentences``), and those sentences are
removed from the record, which keeps its title and the rest of its abstract. The record is the one relevant
document of its query (grade 1): to find it, a system has to weigh a long query's words against a record that
says the rest. Queries and judgements come from the corpus alone, not from the source's queries or qrels, so the
folder tests long-query weighting on the source's vocabulary without touching its report sets.

Sample: records whose abstract has at least ``--min-sentences`` sentences and whose opening ``--sentences``
sentences hold at least ``--min-words`` words, sorted by id, ``random.Random(--seed).sample`` of ``--queries``.

With ``--requests`` the source's own judged queries (``--split``) are kept with their qrels and corpus, each
wrapped in one of ``REQUESTS``, the phrasings of a request to a library (chosen by the SHA-1 of the query id; one
of them upper case, as LISA's queries are written; two with the pronoun "I" inside a clause and contractions):
the words around the topic are what a long request adds.

    PYTHONPATH=src python benchmarks/make_long_query_beir.py ../shared/datasets/scifact /tmp/scifact_long
    PYTHONPATH=src python benchmarks/make_long_query_beir.py ../shared/datasets/cranfield /tmp/cranfield_req --requests

write ``OUT/{corpus.jsonl,queries.jsonl,qrels/test.tsv}``; score them with
``benchmarks/bm25_long_queries.py --dataset OUT`` and ``openbook eval retrieval --dataset OUT --no-embed``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

REQUESTS = (
    "I am interested in {q}. Please send me any papers on this topic.",
    "What papers or articles are there on {q}? I would also like information about related work.",
    "{q}. I need articles about this, especially any surveys or reviews.",
    "Information on {q}, and also on the methods used to study it.",
    "I AM LOOKING FOR MATERIAL ON {Q}. ANY ASPECT OF THE SUBJECT WOULD BE OF INTEREST.",
    "Papers I have missed on {q}: I've read the older surveys and would like recent work.",
    "Also I would like anything on {q}; we're especially interested in experiments.",
)


def request(qid: str, query: str) -> str:
    """``query`` (end punctuation removed) wrapped in the ``REQUESTS`` phrasing the SHA-1 of ``qid`` picks."""
    q = query.strip().rstrip(" .?!")
    template = REQUESTS[int(hashlib.sha1(qid.encode()).hexdigest(), 16) % len(REQUESTS)]
    return template.format(q=q, Q=q.upper())


def build_requests(source: Path, out: Path, split: str = "test") -> dict[str, int]:
    """Write ``out``: the corpus and ``split`` qrels of ``source``, its judged queries wrapped by ``request``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    shutil.copyfile(source / "qrels" / f"{split}.tsv", out / "qrels" / "test.tsv")
    shutil.copyfile(source / "corpus.jsonl", out / "corpus.jsonl")
    judged = {line.split("\t")[0] for line in (out / "qrels" / "test.tsv").open(encoding="utf-8")}
    n = 0
    with (source / "queries.jsonl").open(encoding="utf-8") as src, \
            (out / "queries.jsonl").open("w", encoding="utf-8") as dst:
        for line in src:
            obj = json.loads(line)
            if str(obj["_id"]) in judged:
                dst.write(json.dumps({**obj, "text": request(str(obj["_id"]), obj["text"])}) + "\n")
                n += 1
    return {"records": sum(1 for _ in (out / "corpus.jsonl").open(encoding="utf-8")), "queries": n}


def build(source: Path, out: Path, *, queries: int = 300, sentences: int = 2, min_sentences: int = 5,
          min_words: int = 25, seed: int = 7) -> dict[str, int]:
    """Write the long-query folder ``out`` from the BEIR folder ``source``; returns counts (records, queries)."""
    from openbook.chunking import split_sentences

    records = [json.loads(line) for line in (source / "corpus.jsonl").open(encoding="utf-8")]
    split: dict[str, list[tuple[int, int]]] = {}
    for rec in records:
        text = rec.get("text") or ""
        spans = split_sentences(text)
        if len(spans) >= min_sentences and len(text[:spans[sentences - 1][1]].split()) >= min_words:
            split[str(rec["_id"])] = spans
    chosen = set(random.Random(seed).sample(sorted(split), min(queries, len(split))))
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus, \
            (out / "queries.jsonl").open("w", encoding="utf-8") as qfile, \
            (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for rec in records:
            rid = str(rec["_id"])
            if rid in chosen:
                text, cut = rec["text"], split[rid][sentences - 1][1]
                qid = f"long-{rid}"
                qfile.write(json.dumps({"_id": qid, "text": " ".join(text[:cut].split())}) + "\n")
                qrels.write(f"{qid}\t{rid}\t1\n")
                rec = {**rec, "text": text[cut:].strip()}
            corpus.write(json.dumps(rec) + "\n")
    return {"records": len(records), "queries": len(chosen)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--sentences", type=int, default=2, help="opening sentences that make the query")
    parser.add_argument("--min-sentences", type=int, default=5)
    parser.add_argument("--min-words", type=int, default=25)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--requests", action="store_true", help="wrap the source's judged queries instead")
    parser.add_argument("--split", default="test", help="qrels split for --requests")
    args = parser.parse_args()
    if args.requests:
        counts = build_requests(args.source, args.out, args.split)
        print(f"{args.out}: {counts['records']} records, {counts['queries']} wrapped queries")
        return
    counts = build(args.source, args.out, queries=args.queries, sentences=args.sentences,
                   min_sentences=args.min_sentences, min_words=args.min_words, seed=args.seed)
    print(f"{args.out}: {counts['records']} records, {counts['queries']} long queries")


if __name__ == "__main__":
    main()
