"""Snapshot of the offline answerer's output, to show that a restructure of ``openbook.answer.extractive``
changes no answer: run it before and after, then compare the two files (``diff before.json after.json``).

It ingests the Skyladder lab's documents and the first ``--docs`` documents of a BEIR corpus (default
``../shared/datasets/squad2_half_a``) into two temporary BM25-only stores (embedding off), asks every Skyladder
question (with its ``user_acl`` roles) and the first ``--questions`` BEIR questions whose qrels document is in
that slice, and writes each answer's text, refused flag, confidence and notes as JSON to ``--out``. With
``--hybrid`` it also asks the Skyladder questions of a hybrid store (the default embedder), whose answers go through
the dense features and fallbacks.

    PYTHONPATH=src python benchmarks/answer_snapshot.py --out before.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from openbook.api import Engine
from openbook.config import Config

ROOT = Path(__file__).resolve().parent.parent


def _answer(engine: Engine, question: str, roles: list[str]) -> dict:
    a = engine.ask(question, roles=roles)
    return {"question": question, "text": a.text, "refused": a.refused, "confidence": a.confidence,
            "notes": list(a.notes)}


def _store(root: Path, folder: Path, embedding: bool = False) -> Engine:
    engine = Engine.open(root / "store", Config().with_overrides({"embedding.enabled": embedding}), create=True)
    if not engine.ingest([folder]).ok:
        raise SystemExit(f"ingest of {folder} failed")
    return engine


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--lab", type=Path, default=ROOT.parent / "shared/labs/skyladder")
    ap.add_argument("--beir", type=Path, default=ROOT.parent / "shared/datasets/squad2_half_a")
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--questions", type=int, default=150)
    ap.add_argument("--hybrid", action="store_true", help="also ask the lab questions of a hybrid store")
    args = ap.parse_args(argv)
    out: dict[str, list[dict]] = {"skyladder": [], "beir": []}
    lab = [json.loads(line) for line in (args.lab / "questions.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        for key, embedding in [("skyladder", False)] + ([("skyladder_hybrid", True)] if args.hybrid else []):
            out[key] = []
            with _store(Path(tmp) / key, args.lab / "docs", embedding) as engine:
                for q in lab:
                    out[key].append(_answer(engine, q["question"], q.get("user_acl") or []))
        sliced = Path(tmp) / "beir"
        sliced.mkdir()
        lines = (args.beir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:args.docs]
        ids = {json.loads(line)["_id"] for line in lines}
        (sliced / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        qrels: dict[str, set[str]] = {}
        for row in (args.beir / "qrels/test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
            qid, doc, *_ = row.split("\t")
            qrels.setdefault(qid, set()).add(doc)
        with _store(Path(tmp) / "beir-store", sliced) as engine:
            for line in (args.beir / "queries.jsonl").read_text(encoding="utf-8").splitlines():
                if len(out["beir"]) >= args.questions:
                    break
                q = json.loads(line)
                if qrels.get(q["_id"], set()) & ids:
                    out["beir"].append(_answer(engine, q["text"], []))
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    print(", ".join(f"{len(v)} {k}" for k, v in out.items()) + f" answers -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
