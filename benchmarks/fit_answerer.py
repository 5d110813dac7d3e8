"""Fit the offline answerer's answerability model from public training splits and write it where the package
loads it (``src/openbook/data/answerer/answerability.json``, read by ``openbook.answer.refusal``).

Splits (``answer_splits``): SQuAD 2.0 (a BEIR folder whose queries carry ``metadata.is_impossible``) by article:
the article titles (a corpus id ``Title-N`` names its article), sorted, shuffled by ``random.Random(7)``; the
first half is the report split, the rest the fit split. A BEIR QA set without impossible questions (HotpotQA,
CMRC 2018): the report split is ``eval answers --dataset``'s seed-7 sample of 200, the fit split the other
questions (``random.Random(11).shuffle``, first ``--per-set``). Nothing of a report split is fitted on.

Rows, one per ask, each with the features the answerer's ``decide`` step reads (``Answer.features``):
- positives: an answerable fit question over the whole corpus (label 1);
- on-topic negatives: an impossible SQuAD question over the whole corpus (its paragraph is there and does not
  hold the answer); a fit question of a QA set over a copy of the store without the fit questions' gold
  documents (``eval.answers.absent_store``: every corpus statistic and the vocabulary without them);
- swapped negatives (``swap_negative``): an answerable fit question whose year, number or name (one its gold
  passage states) is replaced by another of the same kind that a retrieved passage of another document states
  and no gold passage does, asked over the whole corpus: the passages stay on topic but no longer answer.

The model: per question language (``en``, ``zh``; other languages use ``refusal.MODEL_LANGUAGE``), an L2
logistic regression over ``refusal.FEATURES`` with each weight bounded to the sign ``refusal.FEATURE_SIGNS``
gives it (more evidence never lowers the score, a missing term never raises it), fitted by L-BFGS-B. The
operating point: the largest score at which every fit set of that language answers at least ``--answered`` of
its positives (``--answered-set SET=SHARE``: a share of its own for one set); the bias is shifted so that 0.5 is
that point (``AnswerConfig.min_confidence``). The fit's metrics at that point (per set: positives answered,
negatives refused, the AUC) are written beside the weights. ``--holdout SHARE`` also fits on the other fit
questions and prints the held-out ones' figures (validation: how features and operating points are chosen,
never on the report splits); ``--choose-point GRID`` prints the ``--answered-set`` shares ``choose_point``
picks there.

    python benchmarks/fit_answerer.py --squad ../shared/datasets/squad2_half_a \\
        --qa ../shared/datasets/hotpotqa_dev500 --qa ../shared/datasets/cmrc2018_dev \\
        --store-root /tmp/fit-stores [--hybrid] --out src/openbook/data/answerer/answerability.json

``--hybrid`` fits the model of the default embedder's hybrid stores (the dense features join, the sentence
cosines included: ``record_sentence_cosines``) into the same file under the embedder's name; without it the
BM25-only model (``bm25``). A store already under ``--store-root`` (``<folder name>-bm25`` or ``-hybrid`` with a
``.complete`` file, e.g. a copy of one ``openbook ingest`` made) is used as it is. ``--rows FILE`` keeps the
collected rows (JSON lines) and ``--load FILE`` (repeatable) refits from them without asking again.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import math
import random
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from openbook.answer.refusal import DENSE_FEATURES, FEATURE_SIGNS, FEATURES, MODEL_FILE, SENTENCE_FEATURES
from openbook.api import Engine
from openbook.config import Config
from openbook.eval.answers import QAQuestion, contains_gold, load_qa_questions, sample_questions
from openbook.index.embedders import DEFAULT_EMBEDDER
from openbook.question import question_language

SPLIT_SEED = 7
FIT_SEED = 11
REPORT_SAMPLE = 200


# ---------------------------------------------------------------------- splits


def _queries(root: Path) -> list[dict]:
    with (root / "queries.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _qrels(root: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    with (root / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        for line in fh:
            qid, doc, score = line.rstrip("\n").split("\t")[:3]
            if qid != "query-id" and float(score) > 0:
                out.setdefault(qid, []).append(doc)
    return out


def article_of(doc_id: str) -> str:
    """The article a SQuAD-style corpus id ``Title-N`` belongs to."""
    return doc_id.rsplit("-", 1)[0]


def article_split(root: Path) -> tuple[set[str], set[str]]:
    """``(fit articles, report articles)`` of a corpus whose ids are ``Title-N``: titles sorted, shuffled by
    ``random.Random(SPLIT_SEED)``, the first half reported."""
    titles = set()
    with (root / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                titles.add(article_of(json.loads(line)["_id"]))
    order = sorted(titles)
    random.Random(SPLIT_SEED).shuffle(order)
    half = len(order) // 2
    return set(order[half:]), set(order[:half])


def squad_questions(root: Path, articles: set[str]) -> tuple[list[QAQuestion], list[QAQuestion]]:
    """``(answerable, impossible)`` questions of a SQuAD-style folder whose qrels paragraph is in ``articles``;
    an impossible one carries its plausible answers as ``answers`` (for the plausible-answer rate)."""
    qrels = _qrels(root)
    answerable, impossible = [], []
    for obj in _queries(root):
        docs = qrels.get(str(obj["_id"]), [])
        if not docs or article_of(docs[0]) not in articles:
            continue
        meta = obj.get("metadata") or {}
        if meta.get("is_impossible"):
            impossible.append(QAQuestion(str(obj["_id"]), obj["text"], tuple(meta.get("plausible_answers") or ()),
                                         tuple(docs)))
        elif meta.get("answers"):
            answerable.append(QAQuestion(str(obj["_id"]), obj["text"], tuple(meta["answers"]), tuple(docs)))
    return answerable, impossible


def squad_fit_questions(root: Path, per_set: int) -> tuple[list[QAQuestion], list[QAQuestion]]:
    """The ``(answerable, impossible)`` questions of a SQuAD-style folder's fit articles that the fit asks:
    each list shuffled by ``random.Random(FIT_SEED)``, first ``per_set``."""
    fit_articles, _ = article_split(root)
    answerable, impossible = squad_questions(root, fit_articles)
    rng = random.Random(FIT_SEED)
    rng.shuffle(answerable)
    rng.shuffle(impossible)
    return answerable[:per_set], impossible[:per_set]


def qa_fit_questions(root: Path, per_set: int) -> list[QAQuestion]:
    """The fit split of a BEIR QA set: every question outside the seed-7 report sample, shuffled by
    ``random.Random(FIT_SEED)``, first ``per_set``."""
    questions = load_qa_questions(root)
    reported = {q.id for q in sample_questions(questions, REPORT_SAMPLE, SPLIT_SEED)}
    rest = [q for q in questions if q.id not in reported]
    random.Random(FIT_SEED).shuffle(rest)
    return rest[:per_set]


# ---------------------------------------------------------------------- swapped negatives

_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)?(?![\d.,])")
_NAME = re.compile(r"(?<![\w'])(?:[A-Z][a-z]+(?:\s+(?:of|de|von|van|the)\s+|\s+)?){1,3}(?<!\s)")


def _names(text: str) -> set[str]:
    """Capitalised word runs not opening a sentence (a rough name finder, for making negatives only)."""
    out = set()
    for m in _NAME.finditer(text):
        start = m.start()
        before = text[:start].rstrip()
        if not before or before[-1] in ".!?\"“":
            continue
        name = m.group(0).strip()
        if len(name) > 2:
            out.add(name)
    return out


def swap_negative(question: str, gold_text: str, other_texts: list[str], rng: random.Random) -> str | None:
    """The question with one year, number or name it shares with its gold passages replaced by one of the same
    kind that ``other_texts`` (passages of other documents retrieved for it) state and ``gold_text`` does not;
    None when it has none to swap. Years first, then numbers, then names (in that order of preference)."""
    for kind in ("year", "number", "name"):
        if kind == "year":
            mine = [y for y in _YEAR.findall(question) if y in gold_text]
            pool = sorted({y for t in other_texts for y in _YEAR.findall(t)} - set(_YEAR.findall(gold_text)))
        elif kind == "number":
            mine = [n for n in _NUMBER.findall(question) if not _YEAR.fullmatch(n) and n in gold_text]
            pool = sorted({n for t in other_texts for n in _NUMBER.findall(t) if not _YEAR.fullmatch(n)}
                          - set(_NUMBER.findall(gold_text)))
        else:
            mine = [n for n in _names(question) if n in gold_text]
            pool = sorted({n for t in other_texts for n in _names(t)} - {n for n in _names(gold_text)}
                          - {n for n in _names(question)})
            pool = [n for n in pool if n not in gold_text]
        if mine and pool:
            old = rng.choice(sorted(mine))
            new = rng.choice(pool)
            return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, question, count=1)
    return None


# ---------------------------------------------------------------------- stores


def corpus_texts(root: Path) -> dict[str, str]:
    out = {}
    with (root / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                obj = json.loads(line)
                out[str(obj["_id"])] = f"{obj.get('title') or ''}\n{obj.get('text') or ''}"
    return out


def full_store(root: Path, store_root: Path, hybrid: bool, config: Config) -> Path:
    """The store of ``root``'s corpus under ``store_root`` (made by the first run, reused after)."""
    path = store_root / f"{root.name}-{'hybrid' if hybrid else 'bm25'}"
    if not (path / ".complete").exists():
        shutil.rmtree(path, ignore_errors=True)
        with Engine.open(path, config, create=True) as engine:
            report = engine.ingest([root / "corpus.jsonl"], progress=sys.stderr.isatty(),
                                   embed=None if hybrid else False)
            if not report.ok:
                raise SystemExit(f"could not ingest {root}")
        (path / ".complete").write_text("ok\n")
    return path


def without_docs(store: Path, doc_ids: set[str]) -> Path:
    """A copy of ``store`` without ``doc_ids`` (``eval.absent.absent_store``), made once beside it and named by a
    digest of the ids."""
    from openbook.eval.absent import absent_store

    digest = hashlib.sha1("\n".join(sorted(doc_ids)).encode()).hexdigest()[:10]
    dest = store.parent / f"{store.name}-without-{digest}"
    if not (dest / ".complete").exists():
        shutil.rmtree(dest, ignore_errors=True)
        absent_store(store, sorted(doc_ids), dest)
        (dest / ".complete").write_text("ok\n")
    return dest


# ---------------------------------------------------------------------- rows


def ask_rows(engine: Engine, questions: list[QAQuestion], label: int, source: str, name: str) -> list[dict]:
    """One row per question: its features as the answerer's ``decide`` read them (None: refused before
    scoring), whether the answer contains a gold answer (positives) or a plausible one (impossible questions)."""
    rows = []
    start = time.perf_counter()
    for i, q in enumerate(questions):
        answer = engine.ask(q.question)
        rows.append({"set": name, "source": source, "id": q.id, "language": question_language(q.question),
                     "label": label, "features": dict(answer.features) or None, "refused": answer.refused,
                     "confidence": answer.confidence,
                     "gold": bool(q.answers) and not answer.refused and contains_gold(answer.text, q.answers)})
        if (i + 1) % 100 == 0:
            print(f"  {name} {source}: {i + 1}/{len(questions)} ({time.perf_counter() - start:.0f} s)",
                  file=sys.stderr, flush=True)
    return rows


def swapped_questions(engine: Engine, questions: list[QAQuestion], texts: dict[str, str],
                      seed: int) -> list[QAQuestion]:
    """``swap_negative`` of each question that has something to swap (retrieval over the whole store)."""
    rng = random.Random(seed)
    out = []
    for q in questions:
        gold = "\n".join(texts.get(d, "") for d in q.relevant)
        others = [p.chunk.text for p in engine.passages(q.question) if p.chunk.doc_id not in set(q.relevant)]
        swapped = swap_negative(q.question, gold, others, rng)
        if swapped and swapped != q.question:
            out.append(QAQuestion(f"{q.id}-swap", swapped, (), q.relevant))
    return out


def record_sentence_cosines() -> None:
    """Make the answerer compute the dense sentence features (``refusal.SENTENCE_FEATURES``: one more embedding
    per ask) whatever the shipped model weighs, so that a hybrid fit can weigh them; the answerer computes them
    only where its model reads them (``refusal.reads_sentence_cosine``)."""
    import openbook.answer.extractive as extractive

    extractive.reads_sentence_cosine = lambda embedder: True


def collect(args: argparse.Namespace, config: Config) -> list[dict]:
    rows: list[dict] = []
    store_root = Path(args.store_root)
    store_root.mkdir(parents=True, exist_ok=True)
    for root in map(Path, args.squad):
        answerable, impossible = squad_fit_questions(root, args.per_set)
        store = full_store(root, store_root, args.hybrid, config)
        with Engine.open(store, config) as engine:
            rows += ask_rows(engine, answerable, 1, "corpus", root.name)
            rows += ask_rows(engine, impossible, 0, "impossible", root.name)
            swaps = swapped_questions(engine, answerable[:args.swaps], corpus_texts(root), FIT_SEED)
            rows += ask_rows(engine, swaps, 0, "swapped", root.name)
    for root in map(Path, args.qa):
        questions = qa_fit_questions(root, args.per_set)
        store = full_store(root, store_root, args.hybrid, config)
        gold = {d for q in questions for d in q.relevant}
        absent = without_docs(store, gold)
        with Engine.open(store, config) as engine:
            rows += ask_rows(engine, questions, 1, "corpus", root.name)
            swaps = swapped_questions(engine, questions[:args.swaps], corpus_texts(root), FIT_SEED)
            rows += ask_rows(engine, swaps, 0, "swapped", root.name)
        with Engine.open(absent, config) as engine:
            rows += ask_rows(engine, questions, 0, "absent", root.name)
    return rows


# ---------------------------------------------------------------------- fit


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, signs: list[int]) -> np.ndarray:
    """``[bias, w...]`` of an L2 logistic regression (mean log loss + ``l2 * |w|^2``), each weight bounded to its
    sign (+1: >= 0, -1: <= 0, 0: free), by L-BFGS-B."""
    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = np.clip(x @ w[1:] + w[0], -40, 40)
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-9
        nll = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        g = p - y
        grad = np.concatenate([[g.mean()], x.T @ g / len(y) + 2 * l2 * w[1:]])
        return nll + l2 * float(w[1:] @ w[1:]), grad

    bounds = [(None, None)] + [((0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None)) for s in signs]
    return minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", bounds=bounds).x


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney), ties counted half."""
    if not len(pos) or not len(neg):
        return float("nan")
    scores = np.concatenate([pos, neg])
    order = scores.argsort(kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # average ranks of ties
        tie = scores == value
        ranks[tie] = ranks[tie].mean()
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def target(answered: float | dict[str, float], name: str) -> float:
    """The share of set ``name``'s positives answered at the operating point: ``answered`` itself, or its entry
    for ``name`` (``""``: every other set)."""
    return answered if isinstance(answered, float) else answered.get(name, answered[""])


def fit_language(rows: list[dict], names: tuple[str, ...], l2: float, answered: float | dict[str, float]) -> dict:
    """The model of one language: weights, the bias shifted to the operating point, and the fit metrics
    (``answered``: see ``target``)."""
    scored = [r for r in rows if r["features"] is not None]
    x = np.array([[float(r["features"].get(f, 0.0)) for f in names] for r in scored])
    y = np.array([float(r["label"]) for r in scored])
    w = fit_logistic(x, y, l2, [FEATURE_SIGNS.get(f, 0) for f in names])
    z = x @ w[1:] + w[0]
    # the operating point: the largest z at which every set answers at least ``answered`` of its positives
    # (a positive refused before scoring counts as refused)
    point = math.inf
    for name in sorted({r["set"] for r in rows}):
        n_pos = sum(1 for r in rows if r["set"] == name and r["label"] == 1)
        pos_z = np.sort([zi for zi, r in zip(z, scored) if r["set"] == name and r["label"] == 1])[::-1]
        if n_pos and len(pos_z):
            k = min(len(pos_z) - 1, max(0, math.ceil(target(answered, name) * n_pos) - 1))
            point = min(point, float(pos_z[k]))
    point = 0.0 if not math.isfinite(point) else point
    weights = {f: round(float(v), 4) for f, v in zip(names, w[1:]) if abs(v) > 1e-6}
    model = {"bias": round(float(w[0]) - point, 4), "weights": weights}
    metrics: dict[str, dict] = {}
    for name in sorted({r["set"] for r in rows}):
        mine = [(zi - point, r) for zi, r in zip(z, scored) if r["set"] == name]
        n_pos = sum(1 for r in rows if r["set"] == name and r["label"] == 1)
        entry = {"positives": n_pos, "answered": sum(1 for zi, r in mine if r["label"] == 1 and zi >= 0) / max(n_pos, 1)}
        for source in sorted({r["source"] for r in rows if r["set"] == name and r["label"] == 0}):
            n_neg = sum(1 for r in rows if r["set"] == name and r["source"] == source)
            answered_neg = sum(1 for zi, r in mine if r["source"] == source and zi >= 0)
            entry[f"{source}_refused"] = 1 - answered_neg / max(n_neg, 1)
            entry[f"{source}_n"] = n_neg
        pos = np.array([zi for zi, r in mine if r["label"] == 1])
        neg = np.array([zi for zi, r in mine if r["label"] == 0])
        entry["auc"] = round(auc(pos, neg), 4)
        metrics[name] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in entry.items()}
    return {"model": model, "fit": metrics}


def report_rows(args: argparse.Namespace, config: Config) -> list[dict]:
    """Rows of the report splits, asked with ``min_confidence`` 0 so that every answer is composed whatever the
    model decides (``gold``: the composed answer contains a gold answer, or for an impossible question a
    plausible one): any model's figures then follow from its score on the recorded features. The same
    questions as ``openbook eval answers --dataset DIR --sample 200 --seed 7`` (with ``--doc-prefix`` for each
    report article of a SQuAD folder): positives over the whole corpus, impossible questions over it too, and
    the answerable ones again over a copy without every sampled question's relevant documents."""
    from dataclasses import replace

    from openbook.eval.answers import load_qa_questions, sample_questions

    config = replace(config, answer=replace(config.answer, min_confidence=0.0))
    store_root = Path(args.store_root)
    rows: list[dict] = []
    for root in map(Path, [*args.squad, *args.qa]):
        questions = load_qa_questions(root)
        if root in map(Path, args.squad):
            _, report_articles = article_split(root)
            questions = [q for q in questions if q.relevant and all(article_of(d) in report_articles
                                                                      for d in q.relevant)]
        sample = sample_questions(questions, REPORT_SAMPLE, SPLIT_SEED)
        answerable = [q for q in sample if not q.impossible]
        impossible = [replace(q, answers=q.plausible) for q in sample if q.impossible]
        store = full_store(root, store_root, args.hybrid, config)
        gold = {d for q in answerable for d in q.relevant}
        absent = without_docs(store, gold)
        with Engine.open(store, config) as engine:
            rows += ask_rows(engine, answerable, 1, "corpus", root.name)
            rows += ask_rows(engine, impossible, 0, "impossible", root.name)
        with Engine.open(absent, config) as engine:
            rows += ask_rows(engine, answerable, 0, "absent", root.name)
    return rows


def figures(rows: list[dict], models: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Per set, what the answerer would give under ``models`` (language -> ``{"bias", "weights"}``) on rows
    asked with ``min_confidence`` 0: positives answered and containing gold, negatives refused per source,
    impossible questions answered with a plausible answer."""
    out: dict[str, dict[str, float]] = {}
    for name in sorted({r["set"] for r in rows}):
        mine = [r for r in rows if r["set"] == name]

        def answers(r: dict) -> bool:
            if r["features"] is None or r["refused"]:
                return False
            model = models.get(r["language"]) or models["en"]
            z = model["bias"] + sum(w * float(r["features"].get(f, 0.0)) for f, w in model["weights"].items())
            return z >= 0

        pos = [r for r in mine if r["label"] == 1]
        entry = {"answered": sum(map(answers, pos)) / max(len(pos), 1),
                 "contains_gold": sum(1 for r in pos if answers(r) and r["gold"]) / max(len(pos), 1)}
        for source in sorted({r["source"] for r in mine if r["label"] == 0}):
            neg = [r for r in mine if r["source"] == source]
            entry[f"{source}_refused"] = 1 - sum(map(answers, neg)) / max(len(neg), 1)
            if source == "impossible":
                entry["plausible_answer"] = sum(1 for r in neg if answers(r) and r["gold"]) / max(len(neg), 1)
        out[name] = {k: round(v, 3) for k, v in entry.items()}
    return out


def held_out(row: dict, share: float) -> bool:
    """Whether a fit row's question is in the validation share: a digest of its question id (a swapped
    negative's and an absent one's with their positive's), below ``share``."""
    base = row["id"].removesuffix("-swap")
    return hashlib.sha1(f"{row['set']}/{base}".encode()).digest()[0] / 256 < share


def capped(rows: list[dict], n: int) -> list[dict]:
    """The rows a fit of ``--per-set n`` would have asked, from rows of a larger ``--per-set``: per set and source
    the first ``n`` questions in the order asked (an absent or swapped negative with its positive)."""
    kept: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        if r["source"] in ("corpus", "impossible"):
            kept.setdefault((r["set"], r["source"]), []).append(r["id"])
    keep = {(s, i) for (s, _), ids in kept.items() for i in ids[:n]}
    return [r for r in rows if (r["set"], r["id"].removesuffix("-swap")) in keep]


def validate(rows: list[dict], names: tuple[str, ...], l2: float, answered: float | dict[str, float],
             share: float, cap: int | None = None) -> dict[str, dict[str, float]]:
    """Fit on the fit rows outside ``held_out`` (per language, as the shipped fit; ``cap``: only those of
    ``capped``) and score the held-out ones at that fit's operating point, per set: positives answered,
    negatives refused per source, the AUC (a row refused before scoring counts as refused; ``n``: held-out
    questions)."""
    train = [r for r in (capped(rows, cap) if cap else rows) if not held_out(r, share)]
    test = [r for r in rows if held_out(r, share)]
    out: dict[str, dict[str, float]] = {}
    for language in ("en", "zh"):
        mine = [r for r in train if r["language"] == language]
        if not mine:
            continue
        model = fit_language(mine, names, l2, answered)["model"]
        for name in sorted({r["set"] for r in test if r["language"] == language}):
            own = [r for r in test if r["set"] == name and r["language"] == language]
            z = {id(r): (model["bias"] + sum(w * float(r["features"].get(f, 0.0))
                                             for f, w in model["weights"].items()))
                 if r["features"] is not None else -math.inf for r in own}
            pos = [r for r in own if r["label"] == 1]
            entry = {"n": len(pos), "answered": sum(1 for r in pos if z[id(r)] >= 0) / max(len(pos), 1)}
            for source in sorted({r["source"] for r in own if r["label"] == 0}):
                neg = [r for r in own if r["source"] == source]
                entry[f"{source}_refused"] = sum(1 for r in neg if z[id(r)] < 0) / max(len(neg), 1)
            finite = [r for r in own if math.isfinite(z[id(r)])]
            entry["auc"] = auc(np.array([z[id(r)] for r in finite if r["label"] == 1]),
                               np.array([z[id(r)] for r in finite if r["label"] == 0]))
            out[name] = {k: round(v, 3) for k, v in entry.items()}
    return out


ISSUE_ANSWERED = {"squad2_half_a": 0.85, "hotpotqa_dev500": 0.90, "cmrc2018_dev": 0.90}
"""The share of each report set's positives the operating point is to answer (the issue's targets)."""


def choose_point(rows: list[dict], names: tuple[str, ...], l2: float, share: float,
                 grid: tuple[float, ...]) -> dict[str, float]:
    """Per set, the share of its fit positives answered at the operating point (``--answered-set``), chosen on
    the held-out part (``validate``): per language, of every combination of ``grid`` shares, one at which each
    held-out set answers its ``ISSUE_ANSWERED`` share with the most negatives refused (the largest shares on a
    tie); where none does, the one whose least-answered set answers most."""
    import itertools

    chosen: dict[str, float] = {}
    for language in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == language]
        sets = sorted({r["set"] for r in mine})
        results = []
        for combo in itertools.product(grid, repeat=len(sets)):
            v = validate(mine, names, l2, {"": 0.88, **dict(zip(sets, combo))}, share)
            ok = all(v[s]["answered"] >= ISSUE_ANSWERED.get(s, 0.9) for s in v)
            refused = sum(x for f in v.values() for k, x in f.items() if k in ("impossible_refused", "absent_refused"))
            results.append((ok, min(f["answered"] for f in v.values()), round(refused, 4), sum(combo), combo))
        met = [r for r in results if r[0]]
        best = max(met, key=lambda r: (r[2], r[3])) if met else max(results, key=lambda r: (r[1], r[2]))
        chosen.update(zip(sets, best[4]))
    return chosen


ABLATIONS = {
    "all features": (),
    "without the on-topic features": ("window_coverage", "miss_sentence_max", "miss_window_max",
                                      "miss_passage_max", "negation_unmatched", "number_missing", "novel_terms"),
    "without the rule features": ("year_other", "unit_missing", "unseen_common", "codes_held", "dense_blind"),
    "without the dense sentence features": SENTENCE_FEATURES,
    "without the dense features": DENSE_FEATURES + SENTENCE_FEATURES,
    "without swapped negatives in the fit": (),
}
"""The ablation table's variants: features left out of the fit (``--ablate``)."""


def ablate(fit_rows: list[dict], report: list[dict], l2: float, answered: float | dict[str, float],
           base: tuple[str, ...] = FEATURES) -> list[tuple[str, dict]]:
    """Each ``ABLATIONS`` variant fitted on ``fit_rows`` and scored on the report rows (``figures``)."""
    table = []
    for label, dropped in ABLATIONS.items():
        rows = [r for r in fit_rows if r["source"] != "swapped"] if "swapped" in label else fit_rows
        names = tuple(f for f in base if f not in dropped)
        models = {lang: fit_language([r for r in rows if r["language"] == lang], names, l2, answered)["model"]
                  for lang in ("en", "zh") if any(r["language"] == lang for r in rows)}
        table.append((label, figures(report, models)))
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--squad", action="append", default=[], help="a SQuAD 2.0 BEIR folder (split by article)")
    ap.add_argument("--qa", action="append", default=[], help="a BEIR QA folder (fit: outside the seed-7 sample)")
    ap.add_argument("--per-set", type=int, default=200, help="fit questions per set and kind (default 200)")
    ap.add_argument("--swaps", type=int, default=100, help="positives per set made into swapped negatives")
    ap.add_argument("--store-root", default="/tmp/openbook-fit-stores")
    ap.add_argument("--hybrid", action="store_true", help="hybrid stores (the default embedder)")
    ap.add_argument("--l2", type=float, default=0.001)
    ap.add_argument("--answered", type=float, default=0.88,
                    help="share of each fit set's positives answered at the operating point (default 0.88)")
    ap.add_argument("--answered-set", action="append", default=[], metavar="SET=SHARE",
                    help="the share answered for one fit set (its folder name), instead of --answered")
    ap.add_argument("--drop", action="append", default=[], metavar="FEATURE",
                    help="leave a feature out of the fit (repeatable)")
    ap.add_argument("--cap", type=int, help="fit on the rows of a smaller --per-set (capped) too, in --holdout")
    ap.add_argument("--choose-point", metavar="SHARES",
                    help="comma-separated grid of shares: print the --answered-set shares choose_point picks on the "
                         "--holdout part, and exit")
    ap.add_argument("--rows", help="write the collected rows here (JSON lines)")
    ap.add_argument("--load", action="append", default=[],
                    help="refit from rows written by --rows (repeatable: the files' rows together)")
    ap.add_argument("--out", default=str(MODEL_FILE), help="the model file (default: the package's)")
    ap.add_argument("--report-rows", action="append", default=[],
                    help="collect the report splits' rows into this file (asked with min_confidence 0), score "
                         "the fitted model on them, and print the ablation table; existing files are read, not "
                         "asked again (repeatable: the files' rows together)")
    ap.add_argument("--holdout", type=float, default=0.0,
                    help="also fit on all but this share of the fit questions (by a digest of the question id) "
                         "and print the held-out questions' figures at that fit's operating point (validation)")
    args = ap.parse_args()
    config = Config()
    if args.hybrid:
        record_sentence_cosines()
    if args.load:
        rows = [json.loads(line) for path in args.load
                for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
    else:
        rows = collect(args, config)
        if args.rows:
            Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    key = (config.embedding.model or DEFAULT_EMBEDDER) if args.hybrid else "bm25"
    names = tuple(f for f in FEATURES if f not in set(args.drop))
    if args.choose_point:
        grid = tuple(float(x) for x in args.choose_point.split(","))
        print(json.dumps(choose_point(rows, names, args.l2, args.holdout or 0.3, grid)))
        return
    if args.answered_set:
        args.answered = {"": args.answered, **{k: float(v) for k, v in (a.split("=") for a in args.answered_set)}}
    languages = {}
    for language in ("en", "zh"):
        mine = [r for r in rows if r["language"] == language]
        if mine:
            languages[language] = fit_language(mine, names, args.l2, args.answered)
    out = Path(args.out)
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"format": 1, "models": {}}
    data["models"][key] = {lang: v["model"] for lang, v in languages.items()}
    data.setdefault("fit", {})[key] = {lang: v["fit"] for lang, v in languages.items()}
    data.setdefault("written", {})[key] = {
        "by": "benchmarks/fit_answerer.py", "date": _dt.date.today().isoformat(),
        "command": " ".join(["python", "benchmarks/fit_answerer.py", *sys.argv[1:]]),
        "rows": len(rows), "l2": args.l2, "answered": args.answered}
    if args.holdout:
        print(json.dumps({"validation": validate(rows, names, args.l2, args.answered, args.holdout, args.cap)},
                         indent=1))
    if args.report_rows:
        paths = [Path(p) for p in args.report_rows]
        if all(path.exists() for path in paths):
            report = [json.loads(line) for path in paths
                      for line in path.read_text(encoding="utf-8").splitlines() if line]
        elif len(paths) == 1:
            report = report_rows(args, config)
            paths[0].write_text("".join(json.dumps(r) + "\n" for r in report), encoding="utf-8")
        else:
            raise SystemExit("--report-rows: several files are read only when every one exists")
        data.setdefault("report", {})[key] = figures(report, data["models"][key])
        print("| variant | " + " | ".join(sorted({r["set"] for r in report})) + " |")
        for label, figs in ablate(rows, report, args.l2, args.answered, names):
            print(f"| {label} | " + " | ".join(" / ".join(f"{k} {v:.0%}" for k, v in f.items())
                                               for _, f in sorted(figs.items())) + " |")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({"fit": data["fit"][key], "report": data.get("report", {}).get(key)}, indent=1))


if __name__ == "__main__":
    main()
