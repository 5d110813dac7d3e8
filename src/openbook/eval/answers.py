"""Answer evaluation on a lab (``questions.jsonl`` + ``manifest.json``, see ``shared/labs/README.md``).

Each question is asked with its ``user_acl`` as roles. Per question we record the answer, its citations and
whether it refused; then we score:

- refusal accuracy: unanswerable questions refused, answerable ones not refused (all questions);
- must_contain rate: every ``must_contain`` string occurs in the answer, case-insensitively, and with all
  whitespace removed for Chinese and Japanese questions (answerable questions);
- citation validity: the answer cites at least one passage, and every cited document was in the context and
  is one of the question's ``relevant`` documents (answerable questions that were answered);
- context recall: share of the ``relevant`` documents that reached the context (answerable questions);
- access leaks: citations or context passages of a document whose manifest ``acl`` the asker does not hold
  (a document with ``acl: null`` is visible to everyone); must be 0;
- probe hits: unanswerable questions whose answer contains one of ``unanswerable_probes.json``'s strings.

Lab document ids are file-name prefixes (``doc-024`` for ``doc-024-support-answer.md``); only this module maps
the engine's document ids (paths) to them.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping, Sequence

from openbook.config import Config
from openbook.errors import EvaluationError
from openbook.question import question_language
from openbook.types import Answer

_LAB_ID = re.compile(r"^(doc-\d+)")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class LabQuestion:
    """One golden question (fields as in the lab README's question schema)."""

    id: str
    question: str
    answerable: bool
    answer: str
    must_contain: tuple[str, ...]
    relevant: tuple[str, ...]
    trap: str
    user_acl: tuple[str, ...]


@dataclass
class QuestionResult:
    """How the engine did on one question; ``None`` marks a score that does not apply to it."""

    id: str
    trap: str
    answerable: bool
    roles: list[str]
    answer: str
    refused: bool
    refusal_correct: bool
    must_contain_ok: bool | None
    missing: list[str]
    cited: list[str]
    citations_valid: bool | None
    context_docs: list[str]
    context_recall: float | None
    leaked: list[str]
    probe_hits: list[str]
    seconds: float


@dataclass
class AnswerReport:
    """Scores of one answer evaluation; ``to_dict()`` is the JSON form.

    Attributes:
        questions_file, docs: inputs; ``answerer``: ``offline`` or the LLM backend/model used.
        results: one ``QuestionResult`` per question, in file order.
        summary: ``refusal_accuracy``, ``must_contain_rate``, ``citation_validity``, ``context_recall``
            (0-1 means over the questions each applies to, None where none does), ``access_leaks`` and
            ``probe_hits`` (counts).
        by_trap: trap -> the same keys plus ``n``, over that trap's questions.
    """

    questions_file: str
    docs: str
    answerer: str
    results: list[QuestionResult]
    summary: dict[str, float | None]
    by_trap: dict[str, dict[str, float | None]]

    @property
    def ok(self) -> bool:
        """True when no answer leaked a document the asker may not see."""
        return self.summary.get("access_leaks", 0) == 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable report."""
        return asdict(self)


def lab_doc_id(doc_id: str) -> str:
    """The lab id of an engine document id: ``docs/doc-024-x.md`` -> ``doc-024`` (first 7 characters otherwise)."""
    name = PurePosixPath(doc_id.replace("\\", "/")).name
    match = _LAB_ID.match(name)
    return match.group(1) if match else name[:7]


def load_questions(path: Path) -> list[LabQuestion]:
    """Read a lab ``questions.jsonl``.

    Raises:
        EvaluationError: missing file, bad JSON, or a question without ``id``/``question``/``answerable``.
    """
    if not path.is_file():
        raise EvaluationError(f"questions file {path} not found")
    out: list[LabQuestion] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out.append(LabQuestion(
                    id=str(obj["id"]),
                    question=str(obj["question"]),
                    answerable=bool(obj["answerable"]),
                    answer=str(obj.get("answer", "")),
                    must_contain=tuple(obj.get("must_contain") or ()),
                    relevant=tuple(obj.get("relevant") or ()),
                    trap=str(obj.get("trap") or "none"),
                    user_acl=tuple(obj.get("user_acl") or ("staff",)),
                ))
            except (json.JSONDecodeError, KeyError, TypeError):
                raise EvaluationError(
                    f"{path}:{lineno}: expected a question object with 'id', 'question' and 'answerable' "
                    "(see shared/labs/README.md)"
                ) from None
    return out


def load_acls(manifest: Path) -> dict[str, tuple[str, ...] | None]:
    """Lab id -> roles allowed to see it (None: everyone), from the lab's ``manifest.json``.

    Raises:
        EvaluationError: missing or malformed manifest.
    """
    if not manifest.is_file():
        raise EvaluationError(
            f"lab manifest {manifest} not found; it must sit next to the questions file to check access leaks"
        )
    try:
        entries = json.loads(manifest.read_text(encoding="utf-8"))
        return {str(e["id"]): (tuple(e["acl"]) if e.get("acl") is not None else None) for e in entries}
    except (json.JSONDecodeError, KeyError, TypeError):
        raise EvaluationError(f"{manifest}: expected a JSON list of {{'id', 'acl', ...}} objects") from None


def load_probes(path: Path) -> dict[str, list[str]]:
    """Question id -> probe strings from ``unanswerable_probes.json``; empty when the file is absent.

    Raises:
        EvaluationError: the file exists but is malformed.
    """
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(qid): [str(p) for p in entry["probes"]] for qid, entry in data.items()}
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise EvaluationError(f"{path}: expected {{qid: {{'probes': [...], 'scope': ...}}}}") from None


def visible(lab_id: str, roles: Iterable[str], acls: Mapping[str, tuple[str, ...] | None]) -> bool:
    """Whether a user with ``roles`` may see the document (no acl, or at least one shared role)."""
    acl = acls.get(lab_id)
    return acl is None or bool(set(acl) & set(roles))


def contains(answer: str, needle: str, cjk: bool) -> bool:
    """Case-insensitive substring test; with ``cjk`` all whitespace is removed from both sides first."""
    a, n = answer.casefold(), needle.casefold()
    if cjk:
        a, n = _SPACE.sub("", a), _SPACE.sub("", n)
    return n in a


def score_answer(q: LabQuestion, answer: Answer, acls: Mapping[str, tuple[str, ...] | None],
                 probes: Sequence[str] = (), seconds: float = 0.0) -> QuestionResult:
    """Score one answer against its golden question (see the module docstring for each score)."""
    cjk = question_language(q.question) in ("zh", "ja")
    context = list(dict.fromkeys(lab_doc_id(p.hit.doc_id) for p in answer.passages))
    cited = list(dict.fromkeys(lab_doc_id(c.doc_id) for c in answer.citations))
    leaked = [d for d in dict.fromkeys([*cited, *context]) if not visible(d, q.user_acl, acls)]
    relevant = set(q.relevant)
    must_ok: bool | None = None
    missing: list[str] = []
    cites_ok: bool | None = None
    recall: float | None = None
    if q.answerable:
        missing = [s for s in q.must_contain if not contains(answer.text, s, cjk)]
        must_ok = not answer.refused and not missing
        recall = len(relevant & set(context)) / len(relevant) if relevant else None
        if not answer.refused:
            cites_ok = bool(cited) and all(d in context and d in relevant for d in cited)
    probe_hits = [p for p in probes if contains(answer.text, p, cjk=True)] if not q.answerable else []
    return QuestionResult(
        id=q.id, trap=q.trap, answerable=q.answerable, roles=list(q.user_acl), answer=answer.text,
        refused=answer.refused, refusal_correct=answer.refused != q.answerable, must_contain_ok=must_ok,
        missing=missing, cited=cited, citations_valid=cites_ok, context_docs=context, context_recall=recall,
        leaked=leaked, probe_hits=probe_hits, seconds=seconds,
    )


def _mean(values: Iterable[float | bool | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def summarize(results: Sequence[QuestionResult]) -> dict[str, float | None]:
    """The summary scores over ``results``: ``n``, means 0-1 (None when no question applies), and counts.

    Returns:
        ``n``, ``refusal_accuracy``, ``must_contain_rate``, ``citation_validity``, ``context_recall``,
        ``access_leaks`` (leaked documents summed over questions), ``probe_hits`` (questions).
    """
    return {
        "n": len(results),
        "refusal_accuracy": _mean(r.refusal_correct for r in results),
        "must_contain_rate": _mean(r.must_contain_ok for r in results),
        "citation_validity": _mean(r.citations_valid for r in results),
        "context_recall": _mean(r.context_recall for r in results),
        "access_leaks": sum(len(r.leaked) for r in results),
        "probe_hits": sum(1 for r in results if r.probe_hits),
    }


def evaluate_answers(engine: Any, questions: Sequence[LabQuestion],
                     acls: Mapping[str, tuple[str, ...] | None],
                     probes: Mapping[str, Sequence[str]] | None = None) -> list[QuestionResult]:
    """Ask every question on an open engine with its ``user_acl`` as roles and score each answer.

    Returns:
        One result per question, in the given order.
    """
    probes = probes or {}
    results = []
    for q in questions:
        start = time.perf_counter()
        answer = engine.ask(q.question, roles=list(q.user_acl))
        seconds = time.perf_counter() - start
        results.append(score_answer(q, answer, acls, probes.get(q.id, ()), seconds))
    return results


def run_answer_eval(questions: Path, docs: Path, store: str | Path | None, config: Config) -> AnswerReport:
    """Evaluate answers on a lab end to end (what ``openbook eval answers`` runs).

    Ingests ``docs`` into ``store`` (or a throw-away store when None), asks every question of
    ``questions`` with the configured answerer (offline when ``config.llm.backend`` is empty), and scores
    them. ``manifest.json`` (required) and ``unanswerable_probes.json`` (optional) are read from the
    questions file's folder.

    Returns:
        The report; ``report.ok`` is False when any document leaked to a user who may not see it.

    Raises:
        EvaluationError: missing or malformed questions, manifest or probes file, or nothing ingested.
        StoreError, IngestError, GenerationError: from the engine.
    """
    from openbook.api import Engine

    questions = Path(questions)
    qs = load_questions(questions)
    acls = load_acls(questions.parent / "manifest.json")
    probes = load_probes(questions.parent / "unanswerable_probes.json")
    if not Path(docs).is_dir():
        raise EvaluationError(f"documents folder {docs} not found")
    with tempfile.TemporaryDirectory(prefix="openbook-answers-") as tmp:
        store_dir = store if store is not None else Path(tmp) / "store"  # a folder or a URL
        engine = Engine.open(store_dir, config, create=True)
        try:
            ingest = engine.ingest([Path(docs)], sync=True)
            if not ingest.ok:
                reasons = "; ".join(f"{p}: {r}" for p, r in ingest.failed[:3])
                raise EvaluationError(f"could not ingest {docs}: {reasons}")
            results = evaluate_answers(engine, qs, acls, probes)
        finally:
            engine.close()
    traps = sorted({r.trap for r in results})
    llm = config.llm
    answerer = f"{llm.backend}:{llm.model}" if llm.backend else "offline"
    return AnswerReport(
        questions_file=str(questions), docs=str(docs), answerer=answerer, results=results,
        summary=summarize(results),
        by_trap={t: summarize([r for r in results if r.trap == t]) for t in traps},
    )


def _pct(value: float | None) -> str:
    return "   -" if value is None else f"{value * 100:3.0f}%"


def _mark(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def format_answer_report(report: AnswerReport, per_question: bool = True) -> str:
    """A human-readable report: one line per question, the summary, and the per-trap table."""
    lines: list[str] = []
    if per_question:
        lines.append(f"{'id':<5} {'trap':<9} {'exp':<6} {'refused':<7} {'ok':<3} {'must':<4} {'cite':<4} "
                     f"{'recall':>6}  leaks / answer")
        for r in report.results:
            expected = "answer" if r.answerable else "refuse"
            recall = "-" if r.context_recall is None else f"{r.context_recall:.2f}"
            extra = f"LEAK {','.join(r.leaked)} " if r.leaked else ""
            extra += f"PROBE {','.join(r.probe_hits)} " if r.probe_hits else ""
            text = _SPACE.sub(" ", r.answer)[:60]
            lines.append(f"{r.id:<5} {r.trap:<9} {expected:<6} {_mark(r.refused):<7} {_mark(r.refusal_correct):<3} "
                         f"{_mark(r.must_contain_ok):<4} {_mark(r.citations_valid):<4} {recall:>6}  {extra}{text}")
        lines.append("")
    s = report.summary
    lines.append(f"answerer {report.answerer}, {int(s['n'])} questions")
    lines.append(f"  refusal accuracy   {_pct(s['refusal_accuracy'])}")
    lines.append(f"  must_contain rate  {_pct(s['must_contain_rate'])}")
    lines.append(f"  citation validity  {_pct(s['citation_validity'])}")
    lines.append(f"  context recall     {_pct(s['context_recall'])}")
    lines.append(f"  access leaks       {int(s['access_leaks'])}" + ("" if report.ok else "  (MUST BE 0)"))
    lines.append(f"  probe hits         {int(s['probe_hits'])}")
    lines.append("")
    lines.append(f"  {'trap':<10} {'n':>3} {'refusal':>8} {'must':>5} {'cite':>5} {'recall':>7} {'leaks':>6}")
    for trap, t in report.by_trap.items():
        lines.append(f"  {trap:<10} {int(t['n']):>3} {_pct(t['refusal_accuracy']):>8} "
                     f"{_pct(t['must_contain_rate']):>5} {_pct(t['citation_validity']):>5} "
                     f"{_pct(t['context_recall']):>7} {int(t['access_leaks']):>6}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- BEIR question answering
#
# A BEIR folder whose queries carry ``metadata.answers`` (HotpotQA, CMRC 2018, SQuAD-like sets) gives real
# negatives for free: ask each question once over the whole corpus (a positive: the answer is there) and once
# with its qrels documents hidden by a query-time filter (a negative: what remains is on the same topic but does
# not hold the answer).

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LATIN = r"[0-9a-z\u00c0-\u024f]"
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class QAQuestion:
    """One question of a BEIR QA set: its gold answer strings (any one counts) and relevant doc ids."""

    id: str
    question: str
    answers: tuple[str, ...]
    relevant: tuple[str, ...]


@dataclass
class QAResult:
    """One question asked twice: over the whole corpus (``pos_*``) and with its relevant documents hidden
    (``neg_*``). ``*_confidence`` is the answerer's answerability score (None when it gave none)."""

    id: str
    language: str
    pos_answer: str
    pos_refused: bool
    pos_contains_gold: bool
    pos_cites_relevant: bool
    pos_confidence: float | None
    pos_ms: float
    neg_answer: str
    neg_refused: bool
    neg_confidence: float | None
    neg_ms: float
    yes_no: bool = False  # every gold answer is "yes" or "no" (a comparison an extractive answer never states)


@dataclass
class QAReport:
    """Scores of ``openbook eval answers --dataset``; ``to_dict()`` is the JSON form.

    Attributes:
        dataset, answerer, sample, seed: inputs (``sample`` None: every question with answers and qrels).
        summary: ``all`` and one entry per question language, each with ``n``, ``answered`` (share of positives
            answered), ``contains_gold`` (share of all positives whose answer contains a normalised gold
            answer; a refusal counts as a miss), ``gold_not_yes_no`` (the same over the positives whose gold
            answers are not all "yes"/"no"; 0 when there are none), ``cites_relevant`` (share of answered positives citing a
            relevant document), ``refused_negatives``, ``p50_ms``/``p95_ms`` (per ``ask``, both runs).
        curve_png: the refusal curve written, or None.
        results: one ``QAResult`` per question, in sample order.
    """

    dataset: str
    answerer: str
    sample: int | None
    seed: int
    summary: dict[str, dict[str, float]]
    curve_png: str | None
    results: list[QAResult]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable report."""
        return asdict(self)


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation for containment: NFKC, casefold, punctuation to spaces, English articles
    dropped, whitespace collapsed; between two CJK characters whitespace is dropped altogether."""
    import unicodedata

    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    text = " ".join(text.split())
    return re.sub(r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]) (?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])",
                  "", text)


def contains_gold(answer: str, golds: Sequence[str]) -> bool:
    """Whether the normalised ``answer`` contains any normalised gold answer: not inside a longer Latin
    word or number (so ``no`` does not match ``not``; ``FeO`` right after a Chinese character counts), as a
    substring where the gold answer has CJK characters."""
    norm = normalize_answer(answer)
    for gold in golds:
        g = normalize_answer(gold)
        if not g:
            continue
        if _CJK_CHAR.search(g):
            if g.replace(" ", "") in norm.replace(" ", ""):
                return True
        elif re.search(rf"(?<!{_LATIN}){re.escape(g)}(?!{_LATIN})", norm):
            return True
    return False


def load_qa_questions(root: Path) -> list[QAQuestion]:
    """Questions of a BEIR folder that carry ``metadata.answers`` and have qrels, in ``queries.jsonl`` order.

    Raises:
        EvaluationError: missing files, bad JSON, or no question with both answers and qrels.
    """
    from .beir import load_qrels

    root = Path(root)
    qrels = load_qrels(root / "qrels" / "test.tsv")
    path = root / "queries.jsonl"
    if not path.is_file():
        raise EvaluationError(f"{path} not found; a BEIR folder needs queries.jsonl")
    out: list[QAQuestion] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                qid, text = str(obj["_id"]), str(obj["text"])
                answers = (obj.get("metadata") or {}).get("answers") or []
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                raise EvaluationError(f"{path}:{lineno}: expected {{'_id', 'text', 'metadata': {{'answers'}}}}") \
                    from None
            relevant = tuple(d for d, g in qrels.get(qid, {}).items() if g > 0)
            if answers and relevant and text.strip():
                out.append(QAQuestion(qid, text, tuple(str(a) for a in answers), relevant))
    if not out:
        raise EvaluationError(f"{path}: no question has both metadata.answers and qrels; "
                              "`eval answers --dataset` needs a QA set (else use `eval retrieval`)")
    return out


def sample_questions(questions: Sequence[QAQuestion], n: int | None, seed: int) -> list[QAQuestion]:
    """``random.Random(seed).shuffle`` of the questions in file order, first ``n`` (all when None)."""
    import random

    order = list(questions)
    if n is None:
        return order
    random.Random(seed).shuffle(order)
    return order[:n]


def ask_twice(engine: Any, q: QAQuestion) -> QAResult:
    """Ask ``q`` over the whole corpus and with its relevant documents hidden; score both answers."""
    start = time.perf_counter()
    pos = engine.ask(q.question)
    pos_ms = (time.perf_counter() - start) * 1000.0
    start = time.perf_counter()
    neg = engine.ask(q.question, exclude_docs=q.relevant)
    neg_ms = (time.perf_counter() - start) * 1000.0
    relevant = set(q.relevant)
    return QAResult(
        id=q.id, language=question_language(q.question), pos_answer=pos.text, pos_refused=pos.refused,
        pos_contains_gold=not pos.refused and contains_gold(pos.text, q.answers),
        pos_cites_relevant=not pos.refused and any(c.doc_id in relevant for c in pos.citations),
        pos_confidence=pos.confidence, pos_ms=pos_ms,
        neg_answer=neg.text, neg_refused=neg.refused, neg_confidence=neg.confidence, neg_ms=neg_ms,
        yes_no=bool(q.answers) and all(normalize_answer(a) in ("yes", "no") for a in q.answers),
    )


def summarize_qa(results: Sequence[QAResult]) -> dict[str, float]:
    """The rates of ``QAReport.summary`` over ``results`` (0-1; latency in ms; zeros when empty)."""
    import numpy as np

    n = len(results)
    if not n:
        return {"n": 0, "answered": 0.0, "contains_gold": 0.0, "gold_not_yes_no": 0.0, "cites_relevant": 0.0,
                "refused_negatives": 0.0, "p50_ms": 0.0, "p95_ms": 0.0}
    answered = [r for r in results if not r.pos_refused]
    open_q = [r for r in results if not r.yes_no]
    ms = np.asarray([r.pos_ms for r in results] + [r.neg_ms for r in results])
    return {
        "n": n,
        "answered": len(answered) / n,
        "contains_gold": sum(r.pos_contains_gold for r in results) / n,
        "gold_not_yes_no": (sum(r.pos_contains_gold for r in open_q) / len(open_q)) if open_q else 0.0,
        "cites_relevant": (sum(r.pos_cites_relevant for r in answered) / len(answered)) if answered else 0.0,
        "refused_negatives": sum(r.neg_refused for r in results) / n,
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
    }


def refusal_curve(results: Sequence[QAResult], thresholds: Sequence[float]) -> tuple[list[float], list[float]]:
    """Answered positives and refused negatives (shares, 0-1) if the answerer refused below each threshold.

    A question without a confidence (no passages, no content term) counts as refused at every threshold.
    """
    pos = [r.pos_confidence for r in results]
    neg = [r.neg_confidence for r in results]
    answered = [sum(1 for c in pos if c is not None and c >= t) / max(len(pos), 1) for t in thresholds]
    refused = [sum(1 for c in neg if c is None or c < t) / max(len(neg), 1) for t in thresholds]
    return answered, refused


def write_refusal_curve(results: Sequence[QAResult], path: Path, title: str,
                        threshold: float | None = None) -> Path:
    """Plot answered positives and refused negatives over the decision threshold, per language, as a PNG.

    Returns:
        ``path`` (parent folders created).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    thresholds = [float(t) for t in np.linspace(0.0, 1.0, 101)]
    langs = sorted({r.language for r in results})
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    for i, lang in enumerate(langs):
        subset = [r for r in results if r.language == lang]
        answered, refused = refusal_curve(subset, thresholds)
        color = f"C{i}"
        ax.plot(thresholds, answered, color=color, label=f"{lang}: positives answered (n={len(subset)})")
        ax.plot(thresholds, refused, color=color, linestyle="--", label=f"{lang}: negatives refused")
    if threshold is not None:
        ax.axvline(threshold, color="grey", linewidth=0.8)
        ax.text(threshold, 0.02, f" threshold {threshold:.2f}", color="grey", fontsize=8)
    ax.set_xlabel("answerability threshold (refuse below)")
    ax.set_ylabel("share of questions")
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def run_qa_eval(dataset: Path, store: str | Path | None, config: Config, sample: int | None = None, seed: int = 7,
                out_dir: Path | None = None, progress: bool = False) -> QAReport:
    """Evaluate answers on a BEIR QA folder end to end (what ``openbook eval answers --dataset`` runs).

    Ingests ``corpus.jsonl`` into ``store`` (created, or reused when unchanged) or a throw-away store, asks
    each sampled question twice (see ``ask_twice``) and writes ``<out_dir>/<dataset>.answers.png`` (the
    refusal curve) and ``<out_dir>/<dataset>.answers.json`` when ``out_dir`` is given.

    Raises:
        EvaluationError: bad dataset folder or nothing ingested. StoreError, IngestError, GenerationError:
        from the engine.
    """
    from openbook.api import Engine

    from .beir import load_beir

    data = load_beir(dataset)
    questions = sample_questions(load_qa_questions(Path(dataset)), sample, seed)
    results: list[QAResult] = []
    with tempfile.TemporaryDirectory(prefix="openbook-qa-") as tmp:
        store_dir = store if store is not None else Path(tmp) / "store"  # a folder or a URL
        engine = Engine.open(store_dir, config, create=True)
        try:
            ingest = engine.ingest([data.corpus], sync=True, progress=progress)
            if not ingest.ok:
                reasons = "; ".join(f"{p}: {r}" for p, r in ingest.failed[:3])
                raise EvaluationError(f"could not ingest {data.corpus}: {reasons}")
            iterator: Iterable[QAQuestion] = questions
            if progress:
                from tqdm import tqdm

                iterator = tqdm(questions, desc="questions", unit="q")
            for q in iterator:
                results.append(ask_twice(engine, q))
        finally:
            engine.close()
    langs = sorted({r.language for r in results})
    summary = {"all": summarize_qa(results)}
    summary.update({lang: summarize_qa([r for r in results if r.language == lang]) for lang in langs})
    llm = config.llm
    answerer = f"{llm.backend}:{llm.model}" if llm.backend else "offline"
    report = QAReport(dataset=data.name, answerer=answerer, sample=sample, seed=seed, summary=summary,
                      curve_png=None, results=results)
    if out_dir is not None:
        out_dir = Path(out_dir)
        if answerer == "offline":
            png = write_refusal_curve(results, out_dir / f"{data.name}.answers.png",
                                      f"{data.name}, {len(results)} questions, {answerer}",
                                      config.answer.min_confidence)
            report.curve_png = str(png)
        (out_dir / f"{data.name}.answers.json").write_text(
            json.dumps(report.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return report


def format_qa_report(report: QAReport) -> str:
    """A human-readable table: one row per language and one for all questions."""
    lines = [f"{report.dataset}: {report.summary['all']['n']:.0f} questions"
             + (f" (sample {report.sample}, seed {report.seed})" if report.sample is not None else "")
             + f", answerer {report.answerer}",
             f"  {'language':<8} {'n':>4} {'answered':>9} {'gold':>6} {'gold-yn':>8} {'cites':>6} "
             f"{'neg refused':>12} {'p50 ms':>8} {'p95 ms':>8}"]
    for lang, s in report.summary.items():
        lines.append(f"  {lang:<8} {s['n']:>4.0f} {_pct(s['answered']):>9} {_pct(s['contains_gold']):>6} "
                     f"{_pct(s['gold_not_yes_no']):>8} {_pct(s['cites_relevant']):>6} {_pct(s['refused_negatives']):>12} {s['p50_ms']:>8.0f} "
                     f"{s['p95_ms']:>8.0f}")
    lines.append("  answered / gold (contains a gold answer, over all positives; gold-yn: over those whose gold "
                 "is not yes/no) / cites (a relevant doc, over "
                 "answered positives): questions over the whole corpus; neg refused: the same questions with "
                 "their relevant documents hidden")
    if report.curve_png:
        lines.append(f"  refusal curve  {report.curve_png}")
    return "\n".join(lines)
