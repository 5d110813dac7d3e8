"""Calibrate ``openbook.answer.crosslingual.MARGIN``: the least margin of a cross-language answering sentence.

No public cross-language QA set is available here, so the relative statistic is calibrated *monolingually*,
assuming it transfers across languages (it compares the question with sentences of one language on both sides of
a subtraction, so a shift of every cross-language cosine drops out; the assumption is that the spread does not
change much). For each question of the calibration split of each BEIR QA set (questions outside the reported
sample, as in ``calibrate_answers.py``), over a hybrid store, asked over the whole corpus (a positive) and with
its qrels documents hidden (a negative), the sentences of the retrieved passages are embedded and the sentence
``crosslingual.cross_sentence`` would choose among them is recorded with its ``margin``, whether its passage is the
dense leg's first and whether it holds the answer type. ``MARGIN`` is the smallest margin at which at least
``--refused`` of the calibration negatives are refused by the whole rule; the same rule is then reported on the
reported sample (``random.Random(7).shuffle``, first ``--report`` questions): positives answered with a sentence
that contains a gold answer, negatives refused.

    python benchmarks/calibrate_crosslingual.py --dataset ../shared/datasets/hotpotqa_dev500:HP_STORE_COPY \\
        --dataset ../shared/datasets/cmrc2018_dev:CM_STORE_COPY --per-set 80 --report 60 --refused 0.9 \\
        --fit-on cmrc2018_dev --dump rows.jsonl      # then --load rows.jsonl to refit without re-embedding

Each ``--dataset`` is ``BEIR_DIR:HYBRID_STORE`` (a store made by ``openbook ingest`` with the default embedder;
it is opened read-only in spirit, but commands take its write lock: pass a copy).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate_answers import calibration_split  # noqa: E402

from openbook.answer.crosslingual import TYPE_BONUS, cosines, dense_first, margins  # noqa: E402
from openbook.answer.extractive import _sentences  # noqa: E402
from openbook.question import expected_answer_type, has_answer_type, question_language  # noqa: E402
from openbook.api import Engine  # noqa: E402
from openbook.config import Config  # noqa: E402
from openbook.eval.answers import contains_gold, load_qa_questions  # noqa: E402


def record(engine: Engine, question, exclude: tuple[str, ...], embed, max_sentences: int = 64) -> dict | None:
    """The sentence the cross-language rule would choose among the passages (all in one language here)."""
    passages = engine.passages(question.question, exclude_docs=exclude)
    flat = [(p, s) for p in passages for s in _sentences(p)][:max_sentences]
    if len(flat) < 2:
        return None
    cos = cosines(question.question, [s for _, s in flat], embed)
    marg = margins(cos, ["one"] * len(flat))
    kind = expected_answer_type(question.question)
    typed = [has_answer_type(s, kind, question.question) for _, s in flat]
    j = int(np.argmax(marg + TYPE_BONUS * np.asarray(typed, float)))
    p, s = flat[j]
    first = dense_first(passages)
    return {"margin": float(marg[j]), "cosine": float(cos[j]), "typed": typed[j],
            "first": first is not None and first.n == p.n, "gold": contains_gold(s, question.answers),
            "language": question_language(question.question)}


def collect(engine: Engine, questions) -> list[tuple[int, dict]]:
    embedder = engine.embedder()
    embed = lambda texts, kind: embedder.embed(texts, kind=kind)  # noqa: E731
    rows = []
    for q in questions:
        for label, exclude in ((1, ()), (0, tuple(q.relevant))):
            r = record(engine, q, exclude, embed)
            if r is not None:
                rows.append((label, r))
    return rows


def answers(r: dict, margin: float) -> bool:
    return r["first"] and r["typed"] and r["margin"] >= margin


def rates(rows: list[tuple[int, dict]], margin: float) -> tuple[float, float, float]:
    """(positives answered, positives answered with a gold-bearing sentence, negatives refused)."""
    pos = [r for label, r in rows if label == 1]
    neg = [r for label, r in rows if label == 0]
    return (sum(answers(r, margin) for r in pos) / max(len(pos), 1),
            sum(answers(r, margin) and r["gold"] for r in pos) / max(len(pos), 1),
            sum(not answers(r, margin) for r in neg) / max(len(neg), 1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", action="append", default=[], help="BEIR_DIR:HYBRID_STORE")
    ap.add_argument("--fit-on", default="", help="comma-separated set names whose calibration rows set MARGIN "
                                                 "(default: every set)")
    ap.add_argument("--per-set", type=int, default=120)
    ap.add_argument("--report", type=int, default=100)
    ap.add_argument("--refused", type=float, default=0.9)
    ap.add_argument("--dump", default=None, help="write the rows as JSON lines here")
    ap.add_argument("--load", default=None, help="read the rows of an earlier --dump instead of collecting")
    args = ap.parse_args()
    rows: list[tuple[str, str, int, dict]] = []  # (set, split, label, record)
    if args.load:
        with open(args.load, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                rows.append((r.pop("set"), r.pop("split"), r.pop("label"), r))
    for spec in args.dataset:
        folder, _, store = spec.rpartition(":")
        root = Path(folder)
        reported = list(load_qa_questions(root))
        random.Random(7).shuffle(reported)
        with Engine.open(store, Config()) as engine:
            rows += [(root.name, "calibration", label, r)
                     for label, r in collect(engine, calibration_split(root, args.per_set))]
            rows += [(root.name, "reported", label, r) for label, r in collect(engine, reported[:args.report])]
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for name, split, label, r in rows:
                fh.write(json.dumps({"set": name, "split": split, "label": label, **r}) + "\n")
    fit_on = {n for n in args.fit_on.split(",") if n} or {name for name, *_ in rows}
    cal = [(label, r) for name, split, label, r in rows if split == "calibration" and name in fit_on]
    neg = sorted(r["margin"] for label, r in cal if label == 0 and r["first"] and r["typed"])
    n_neg = sum(1 for label, _ in cal if label == 0)
    # the smallest margin (to 0.01) at which the rule refuses >= --refused of the calibration negatives
    margin = next(m / 100 for m in range(0, 31) if rates(cal, m / 100)[2] >= args.refused)
    print(f"MARGIN = {margin:.2f}  (fitted on {', '.join(sorted(fit_on))}: {len(cal)} rows, {n_neg} negatives, "
          f"{len(neg)} of them pass the passage and answer-type tests)")
    for name in sorted({name for name, *_ in rows}):
        for split in ("calibration", "reported"):
            sub = [(label, r) for n, s, label, r in rows if n == name and s == split]
            a, g, r = rates(sub, margin)
            print(f"  {name:16s} {split:12s} n={len(sub) // 2:3d}  positives answered {a:.0%}, answered with "
                  f"gold {g:.0%}, negatives refused {r:.0%}")
    for m in (0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10):
        a, g, r = rates(cal, m)
        print(f"  fit rows at {m:.2f}: answered {a:.0%} with gold {g:.0%}, negatives refused {r:.0%}")


if __name__ == "__main__":
    main()
