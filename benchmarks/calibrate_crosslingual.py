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

    python benchmarks/calibrate_crosslingual.py --dataset ../shared/datasets/hotpotqa_dev500:/tmp/s17/hp-hybrid \\
        --dataset ../shared/datasets/cmrc2018_dev:/tmp/s17/cm-hybrid --per-set 120 --report 100 --refused 0.9

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
from openbook.answer.refusal import expected_answer_type, has_answer_type, question_language  # noqa: E402
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
    ap.add_argument("--dataset", action="append", required=True, help="BEIR_DIR:HYBRID_STORE")
    ap.add_argument("--per-set", type=int, default=120)
    ap.add_argument("--report", type=int, default=100)
    ap.add_argument("--refused", type=float, default=0.9)
    ap.add_argument("--dump", default=None)
    args = ap.parse_args()
    cal: list[tuple[int, dict]] = []
    rep: dict[str, list[tuple[int, dict]]] = {}
    for spec in args.dataset:
        folder, _, store = spec.rpartition(":")
        root = Path(folder)
        reported = list(load_qa_questions(root))
        random.Random(7).shuffle(reported)
        with Engine.open(store, Config()) as engine:
            cal += collect(engine, calibration_split(root, args.per_set))
            rep[root.name] = collect(engine, reported[:args.report])
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for split, rows in [("calibration", cal)] + list(rep.items()):
                for label, r in rows:
                    fh.write(json.dumps({"split": split, "label": label, **r}) + "\n")
    neg = sorted(r["margin"] for label, r in cal if label == 0 and r["first"] and r["typed"])
    n_neg = sum(1 for label, _ in cal if label == 0)
    # the smallest margin at which the rule refuses >= --refused of the calibration negatives
    allowed = int((1 - args.refused) * n_neg)
    margin = neg[-allowed - 1] + 1e-4 if allowed < len(neg) else 0.0
    margin = round(float(np.ceil(margin * 1000) / 1000), 3)
    print(f"MARGIN = {margin}  (calibration: {len(cal)} rows, {n_neg} negatives)")
    for name, rows in [("calibration", cal)] + list(rep.items()):
        a, g, r = rates(rows, margin)
        print(f"  {name:18s} positives answered {a:.0%}, answered with gold {g:.0%}, negatives refused {r:.0%}")
    for m in (0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08):
        a, g, r = rates(cal, m)
        print(f"  calibration at {m:.2f}: answered {a:.0%} gold {g:.0%} neg refused {r:.0%}")


if __name__ == "__main__":
    main()
