"""Fit the offline answerer's answerability model (``openbook.answer.refusal.ANSWERABILITY_MODEL``).

Calibration split: the questions of each BEIR QA set that are NOT in the reported sample (``random.Random(7)
.shuffle`` of queries.jsonl, first 200), at most ``--per-set`` of them (a second shuffle, seed 11). Each is asked
over the whole corpus (label 1), with its qrels documents hidden (label 0) and, for a third of them, on an
unrelated corpus (``--offtopic``, label 0: a question about what the corpus never names). ``--judged`` adds a set
without gold answers whose questions are technical rather than encyclopaedic (Cranfield: those with a document
judged a "complete answer" are positives, with every judged document hidden negatives; all of them calibrate,
none is reported). The features of the sentence the answerer would give are recorded, a logistic regression
(L2) is fitted per question language (``--pooled``: one for all, each language keeping its own bias), and the
bias is shifted so that 0.5 is the threshold at which ``--answered`` of the calibration positives are answered.

``--hybrid``: the stores are hybrid (``<store-root>/<set>-hybrid``, BM25 + the default embedder, made by the
first run; an existing store is used as it is) and the dense features (``refusal.DENSE_FEATURES``) join the fit;
the result goes to ``HYBRID_ANSWERABILITY_MODEL[embedder]``. Without it they are left out (a BM25 store has none).

    python benchmarks/calibrate_answers.py --dataset ../shared/datasets/hotpotqa_dev500 \\
        --dataset ../shared/datasets/cmrc2018_dev --offtopic ../shared/datasets/scifact \\
        --offtopic ../shared/datasets/hotpotqa_dev500 --judged ../shared/datasets/cranfield:4 \\
        --drop titles_named,title_overlap,bridge --l2 0.0003 --answered 0.95 --store-root /tmp/answer-stores

Prints the fitted weights as a Python dict to paste into refusal.py, and the operating point per language.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import openbook.answer.extractive as extractive
from openbook.answer.refusal import DENSE_FEATURES, FEATURES, question_language
from openbook.api import Engine
from openbook.config import Config
from openbook.eval.answers import QAQuestion, load_qa_questions
from openbook.eval.beir import load_qrels


def calibration_split(root: Path, per_set: int) -> list:
    questions = load_qa_questions(root)
    reported = list(questions)
    random.Random(7).shuffle(reported)
    held = {q.id for q in reported[:200]}
    rest = [q for q in questions if q.id not in held]
    random.Random(11).shuffle(rest)
    return rest[:per_set]


def judged_questions(spec: str) -> tuple[Path, list]:
    """``DIR:GRADE``: the queries of a BEIR folder without gold answers that have a document judged at least
    GRADE (Cranfield's 4 = "a complete answer"): answerable over the whole corpus, not with every judged
    document hidden."""
    folder, _, grade = spec.rpartition(":")
    root = Path(folder)
    qrels = load_qrels(root / "qrels" / "test.tsv")
    out = []
    with (root / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            judged = qrels.get(str(obj["_id"]), {})
            if judged and max(judged.values()) >= int(grade):
                out.append(QAQuestion(str(obj["_id"]), str(obj["text"]), (), tuple(d for d, g in judged.items()
                                                                                 if g > 0)))
    return root, out


def collect(engine: Engine, questions: list) -> list[tuple[str, int, dict | None]]:
    recorded: list[dict] = []
    original = extractive.answerability

    def record(features, language, embedder=None):
        recorded.append(dict(features))
        return original(features, language, embedder)

    extractive.answerability = record
    rows = []
    try:
        for q in questions:
            for label, exclude in ((1, ()), (0, q.relevant)):
                recorded.clear()
                engine.ask(q.question, exclude_docs=exclude)
                rows.append((question_language(q.question), label, recorded[0] if recorded else None, "corpus"))
    finally:
        extractive.answerability = original
    return rows


NEGATIVE = {"unseen", "type_missing", "few_terms"}


def fit(x: np.ndarray, y: np.ndarray, l2: float, drop: frozenset[str] = frozenset()) -> np.ndarray:
    def loss(w):
        z = x @ w[1:] + w[0]
        p = 1 / (1 + np.exp(-z))
        eps = 1e-9
        nll = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        return nll + l2 * float(w[1:] @ w[1:])

    # monotone: more evidence never lowers the score, an unseen term or a missing answer type never raises it
    bounds = [(None, None)] + [((0.0, 0.0) if f in drop else (None, 0.0) if f in NEGATIVE else (0.0, None))
                               for f in FEATURES]
    return minimize(loss, np.zeros(x.shape[1] + 1), method="L-BFGS-B", bounds=bounds).x


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", action="append", required=True)
    ap.add_argument("--judged", action="append", default=[],
                    help="DIR:GRADE, a BEIR folder without gold answers (e.g. Cranfield:4): questions with a "
                         "document judged >= GRADE are positives, with every judged document hidden negatives")
    ap.add_argument("--offtopic", action="append", default=[],
                    help="BEIR folder of an unrelated corpus: the calibration questions asked there are negatives")
    ap.add_argument("--store-root", default="/tmp/answer-stores")
    ap.add_argument("--per-set", type=int, default=300)
    ap.add_argument("--answered", type=float, default=0.95)
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--drop", default="", help="comma-separated features to leave out (weight 0)")
    ap.add_argument("--dump", default=None, help="write the feature rows as JSON lines here")
    ap.add_argument("--hybrid", action="store_true",
                    help="hybrid stores (<set>-hybrid) and the dense features: a HYBRID_ANSWERABILITY_MODEL entry")
    ap.add_argument("--pooled", action="store_true",
                    help="one set of weights for all languages (each keeps its own bias and operating point)")
    args = ap.parse_args()
    cfg = Config() if args.hybrid else Config().with_overrides({"embedding.enabled": False})
    kind = "hybrid" if args.hybrid else "bm25"

    def store(root: Path) -> Engine:
        path = Path(args.store_root) / f"{root.name}-{kind}"
        if path.exists():  # an existing store is used as it is (re-embedding a corpus takes minutes)
            return Engine.open(path, cfg)
        engine = Engine.open(path, cfg, create=True)
        engine.ingest([root / "corpus.jsonl"], sync=True)
        return engine

    rows = []
    splits = {}
    embedder = None
    for ds in args.dataset:
        root = Path(ds)
        splits[root.name] = calibration_split(root, args.per_set)
        with store(root) as engine:
            vectors = engine.store.embedding()
            embedder = vectors.model if vectors is not None else embedder
            rows += collect(engine, splits[root.name])
    for spec in args.judged:  # not reported anywhere: every judged question calibrates
        root, questions = judged_questions(spec)
        with store(root) as engine:
            rows += collect(engine, questions)
    for other in args.offtopic:  # the same questions on an unrelated corpus: every answer there is a negative
        root = Path(other)
        with store(root) as engine:
            for name, questions in splits.items():
                if name != root.name:
                    rows += [(lang, 0, f, "offtopic") for lang, label, f, _ in
                             collect(engine, questions[: args.per_set // 3]) if label == 0]
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    model = {}
    drop = frozenset(f for f in args.drop.split(",") if f)
    drop |= frozenset() if args.hybrid else frozenset(DENSE_FEATURES)  # a BM25 store has no dense leg
    pooled = None
    if args.pooled:
        sub = [r for r in rows if r[2] is not None]
        pooled = fit(np.array([[r[2][f] for f in FEATURES] for r in sub]), np.array([r[1] for r in sub], float),
                     args.l2, drop)
    for lang in sorted({r[0] for r in rows}):
        sub = [r for r in rows if r[0] == lang and r[2] is not None]
        x = np.array([[r[2][f] for f in FEATURES] for r in sub])
        y = np.array([r[1] for r in sub], dtype=float)
        w = fit(x, y, args.l2, drop) if pooled is None else pooled
        z = x @ w[1:] + w[0]
        n_pos = sum(1 for r in rows if r[0] == lang and r[1] == 1)
        pos_z = np.sort(z[y == 1])[::-1]
        k = min(len(pos_z) - 1, max(0, math.ceil(args.answered * n_pos) - 1))
        cut = float(pos_z[k])
        answered = float(np.sum(pos_z >= cut)) / n_pos
        line = f"{lang}: n={n_pos} answered {answered:.3f}"
        for kind in ("corpus", "offtopic"):
            negs = [r for r in rows if r[0] == lang and r[1] == 0 and r[3] == kind]
            kept = [r for r in negs if r[2] is not None]
            zn = np.array([[r[2][f] for f in FEATURES] for r in kept]).reshape(len(kept), -1) @ w[1:] + w[0]
            refused = (np.sum(zn < cut) + len(negs) - len(kept)) / max(len(negs), 1)
            line += f", {kind} negatives refused {refused:.3f} (n={len(negs)})"
        print(line + f" at z >= {cut:.3f}")
        weights = {"bias": round(float(w[0]) - cut, 4)}
        weights.update({f: round(float(v), 4) for f, v in zip(FEATURES, w[1:]) if abs(v) > 1e-6})
        model[lang] = weights
    if args.hybrid:
        print(f"HYBRID_ANSWERABILITY_MODEL[{embedder!r}] =")
    print(json.dumps(model, indent=4))


if __name__ == "__main__":
    main()
