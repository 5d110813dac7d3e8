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

from openbook.answer.refusal import question_language
from openbook.config import Config
from openbook.errors import EvaluationError
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


def run_answer_eval(questions: Path, docs: Path, store: Path | None, config: Config) -> AnswerReport:
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
        store_dir = Path(store) if store is not None else Path(tmp) / "store"
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
