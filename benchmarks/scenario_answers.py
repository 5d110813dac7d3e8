"""Scenario questions on public QA sets: calibrate ``extractive.SITUATION_WEIGHT`` and report it.

Real users state a situation before they ask ("A tenant moved out two months ago and the deposit has not come
back. Can they still claim it themselves?"). The public sets hold almost none, so each question is
rewritten as one (``scenario``): a name the question states (a relevant document's title found in it, else the
longest name ``extractive.question_names`` finds) moves into a preceding statement, replaced in the question by
"it" ("它" in Chinese), and the statement adds a personal frame drawn from a fixed list ("My colleague and I
were discussing {name} over lunch yesterday."), words no document is about, as in a real situation. A question
without such a name gets the frame alone, with the first relevant document's title. The rewrite is seeded by
the question id, so every run asks the same questions.

Each rewritten question is asked over the whole corpus (a positive) and with its qrels documents hidden (a
negative), as ``openbook eval answers`` does; retrieval runs once per ask and the answerer once per candidate
``--weights`` value (``main``: every question scored as a plain one, as before), so one pass measures them all. ``--split calibration``: questions outside the reported
seed-7 sample (a seed-11 shuffle of the rest, first ``--n``); ``--split report``: the seed-7 sample's first
``--n``. ``--plain`` asks the questions as they are (a check that the plain questions do not move).

    python benchmarks/scenario_answers.py --dataset ../shared/datasets/hotpotqa_dev500 --store COPY \\
        --split calibration --n 150 --weights main,1,0.5,0.3,0
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

import openbook.answer.extractive as extractive
from openbook.api import Engine
from openbook.config import Config
from openbook.eval.answers import contains_gold, load_qa_questions, sample_questions
from openbook.question import question_language, question_parts

FRAMES_EN = (
    "My colleague and I were discussing {name} over lunch yesterday.",
    "A customer asked our team about {name} last week and wants a quick answer.",
    "I am writing a short report for my manager that mentions {name}.",
    "My daughter has a school project on {name} due on Friday.",
    "We read an article about {name} this morning during the team meeting.",
)
FRAMES_ZH = (
    "我和同事昨天午饭时聊起了{name}。",
    "上周有位客户向我们团队问起{name}，想尽快得到答复。",
    "我正在给经理写一份提到{name}的简短报告。",
    "我女儿这周五要交一个关于{name}的学校作业。",
)


def load_titles(root: Path, wanted: set[str]) -> dict[str, str]:
    """Titles of the ``wanted`` corpus documents."""
    titles: dict[str, str] = {}
    with (root / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if str(obj["_id"]) in wanted:
                titles[str(obj["_id"])] = str(obj.get("title") or "")
    return titles


def scenario(question: str, qid: str, titles: list[str]) -> str:
    """``question`` rewritten as a scenario question (see the module docstring); deterministic per ``qid``."""
    rng = random.Random(qid)
    zh = question_language(question) in ("zh", "ja")
    frames = FRAMES_ZH if zh else FRAMES_EN
    frame = frames[rng.randrange(len(frames))]
    low = question.casefold()
    named = [t for t in titles if t and t.casefold() in low]
    if not named and not zh:
        named = [n for n in extractive.question_names(question) if n in low]
    if named:
        name = max(named, key=len)
        at = low.index(name.casefold())
        ask = question[:at] + ("它" if zh else "it") + question[at + len(name):]
        mention = question[at:at + len(name)]
    else:
        ask, mention = question, next((t for t in titles if t), "this")
    ask = ask.strip()
    if not re.search(r"[?？]$", ask):
        ask += "？" if zh else "?"
    if not zh and ask[:1].islower():
        ask = ask[:1].upper() + ask[1:]
    return f"{frame.format(name=mention)}{'' if zh else ' '}{ask}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--store", required=True, help="an existing store of the dataset's corpus (a copy: asks write)")
    ap.add_argument("--split", choices=("calibration", "report"), default="calibration")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--weights", default="1,0.5,0.3,0.15,0")
    ap.add_argument("--plain", action="store_true", help="ask the questions as they are")
    ap.add_argument("--no-embed", action="store_true", help="a BM25-only store (made by the first run when absent)")
    ap.add_argument("--out", default=None, help="write one JSON line per question here")
    args = ap.parse_args()

    root = Path(args.dataset)
    questions = load_qa_questions(root)
    reported = sample_questions(questions, 200, 7)
    if args.split == "report":
        chosen = reported[:args.n]
    else:
        held = {q.id for q in reported}
        rest = [q for q in questions if q.id not in held]
        random.Random(11).shuffle(rest)
        chosen = rest[:args.n]
    titles = load_titles(root, {d for q in chosen for d in q.relevant})
    weights: list = [w if w == "main" else float(w) for w in args.weights.split(",")]

    original = extractive.answer_extractive
    outcomes: list[tuple[bool, str, float]] = []

    def each_weight(*a, **k):
        outcomes.clear()
        saved = extractive.SITUATION_WEIGHT, extractive.scenario_weights
        try:
            for w in weights:
                if w == "main":  # every question scored as a plain one, as main does
                    extractive.scenario_weights = lambda question, terms, weights, *rest: weights
                else:
                    extractive.SITUATION_WEIGHT, extractive.scenario_weights = {"en": w, "zh": w}, saved[1]
                ans = original(*a, **k)
                outcomes.append((ans.refused, ans.text, ans.confidence))
        finally:
            extractive.SITUATION_WEIGHT, extractive.scenario_weights = saved
        return ans

    extractive.answer_extractive = each_weight
    cfg = Config().with_overrides({"embedding.enabled": False}) if args.no_embed else Config()
    engine = Engine.open(args.store, cfg, create=args.no_embed)
    if args.no_embed and engine.store.count_stored()[0] == 0:
        engine.ingest([root / "corpus.jsonl"], sync=True)
    tally = {w: {"pos_answered": 0, "pos_gold": 0, "neg_refused": 0} for w in weights}
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    n_scen = 0
    try:
        for q in chosen:
            text = q.question if args.plain else scenario(q.question, q.id, [titles.get(d, "") for d in q.relevant])
            n_scen += bool(question_parts(text).situation)
            row = {"id": q.id, "question": text}
            for label, exclude in (("pos", ()), ("neg", q.relevant)):
                engine.ask(text, exclude_docs=exclude)
                row[label] = [(r, round(c, 3)) for r, _, c in outcomes]
                for w, (refused, answer, _) in zip(weights, outcomes):
                    if label == "pos":
                        tally[w]["pos_answered"] += not refused
                        tally[w]["pos_gold"] += (not refused) and contains_gold(answer, q.answers)
                    else:
                        tally[w]["neg_refused"] += refused
                if label == "pos":
                    row["pos_gold"] = [(not r) and contains_gold(t, q.answers) for r, t, _ in outcomes]
            if out:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        extractive.answer_extractive = original
        engine.close()
        if out:
            out.close()
    n = len(chosen)
    print(f"{root.name} {args.split} n={n} {'plain' if args.plain else 'scenario'} (with a situation: {n_scen})")
    print("weight  pos answered  contains gold  neg refused  mean(answered, refused)")
    for w in weights:
        t = tally[w]
        a, g, r = (100 * t[k] / n for k in ("pos_answered", "pos_gold", "neg_refused"))
        print(f"{w:>6}  {a:11.1f}%  {g:12.1f}%  {r:10.1f}%  {(a + r) / 2:6.1f}")


if __name__ == "__main__":
    main()
