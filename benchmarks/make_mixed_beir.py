"""Derive a "long mixed passages" BEIR folder from a BEIR QA folder, to calibrate answerability on long chunks.

What it simulates: real user documents (news pages, manuals, policies) are long, and a ~200-word chunk of one
often holds several topics: a story and its sidebar, two sections of a manual, the clauses of a policy. A
question's cosine to such a chunk is diluted by the other topics, although one sentence of it answers the
question fully. The public QA sets the answerability model is calibrated on (HotpotQA: one-topic Wikipedia
paragraphs of ~70 words) have no such chunks, so a model fitted on them alone leans on the passage cosine and
refuses answerable questions over long mixed chunks.

How: the corpus documents are shuffled with a fixed seed and cut into groups of 3 or 4 (the size drawn from the
same generator); each group becomes one new document, its parts' texts joined as plain paragraphs (a blank line
between them, NO per-part heading, so the chunker packs several topics into one chunk as on a real page). The new
document's title is its FIRST part's title: a real page's title names its main topic, not its sidebars, so the
first topic keeps its title context and the others lose theirs, as they do on a page (a neutral title such as
"Collection 12" would remove a signal no real page lacks). Ids are ``mix00000`` ...; the qrels are remapped to the
new ids (a query whose two gold documents share a group keeps one qrel, its grade the higher); queries, with their
``metadata.answers``, are copied unchanged. Hiding a query's qrels documents (``openbook eval answers``' negatives)
hides whole new documents, so the unrelated parts grouped with a gold document go with it.

The same arguments always give the same bytes. The output folder must be outside the repository:

    python benchmarks/make_mixed_beir.py ../shared/datasets/hotpotqa_dev500 /tmp/mixed/hotpotqa_dev500_mixed
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

SEED = 20261201


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def group_documents(doc_ids: list[str], seed: int = SEED, sizes: tuple[int, ...] = (3, 4)) -> list[list[str]]:
    """``doc_ids`` shuffled with ``random.Random(seed)`` and cut into consecutive groups whose sizes are drawn
    from ``sizes`` by the same generator; a last group smaller than ``min(sizes)`` joins the one before it (a
    corpus of fewer documents than that is one group). Every id is in exactly one group."""
    rng = random.Random(seed)
    order = list(doc_ids)
    rng.shuffle(order)
    groups: list[list[str]] = []
    i = 0
    while i < len(order):
        n = rng.choice(sizes)
        groups.append(order[i:i + n])
        i += n
    if len(groups) > 1 and len(groups[-1]) < min(sizes):
        groups[-2].extend(groups.pop())
    return groups


def make_mixed(src: Path, out: Path, seed: int = SEED, split: str = "test") -> Path:
    """Write the mixed folder ``out`` (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) from the BEIR folder
    ``src``; returns ``out``.

    Raises:
        FileNotFoundError: ``src`` lacks corpus.jsonl, queries.jsonl or qrels/<split>.tsv.
        ValueError: ``out`` is inside ``src``.
    """
    src, out = src.resolve(), out.resolve()
    for part in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (src / part).is_file():
            raise FileNotFoundError(f"{src / part}: not found (a BEIR folder holds corpus.jsonl, queries.jsonl "
                                    f"and qrels/{split}.tsv)")
    if out == src or src in out.parents:
        raise ValueError(f"{out}: the output folder must not be inside the source folder {src}")
    docs = _read_jsonl(src / "corpus.jsonl")
    by_id = {str(d["_id"]): d for d in docs}
    groups = group_documents(list(by_id), seed)
    new_id = {}
    corpus = []
    for n, group in enumerate(groups):
        gid = f"mix{n:05d}"
        parts = [by_id[d] for d in group]
        for d in group:
            new_id[d] = gid
        text = "\n\n".join(" ".join(str(p.get("text") or "").split()) for p in parts)
        corpus.append({"_id": gid, "title": str(parts[0].get("title") or ""), "text": text})
    qrels: dict[str, dict[str, int]] = {}
    with (src / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        header = fh.readline()
        for line in fh:
            cells = line.rstrip("\n").split("\t")
            if len(cells) < 3 or cells[1] not in new_id:
                continue
            gid = new_id[cells[1]]
            qrels.setdefault(cells[0], {})[gid] = max(qrels.get(cells[0], {}).get(gid, 0), int(cells[2]))
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for d in corpus:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    shutil.copyfile(src / "queries.jsonl", out / "queries.jsonl")
    with (out / "qrels" / f"{split}.tsv").open("w", encoding="utf-8") as fh:
        fh.write(header if header.strip() else "query-id\tcorpus-id\tscore\n")
        for qid, rel in qrels.items():
            for gid, grade in rel.items():
                fh.write(f"{qid}\t{gid}\t{grade}\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path, help="a BEIR QA folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
    ap.add_argument("out", type=Path, help="the new folder (outside the repository, e.g. under /tmp)")
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()
    try:
        out = make_mixed(args.src, args.out, args.seed)
    except (FileNotFoundError, ValueError) as exc:
        sys.exit(f"error: {exc}")
    n = sum(1 for _ in (out / "corpus.jsonl").open(encoding="utf-8"))
    print(f"{out}: {n} documents")


if __name__ == "__main__":
    main()
