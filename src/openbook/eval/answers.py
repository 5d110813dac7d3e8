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
from dataclasses import asdict, dataclass
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
# A BEIR folder whose queries carry ``metadata.answers`` (HotpotQA, CMRC 2018, SQuAD 2.0) gives two kinds of
# negatives:
# - an answerable question asked again without its qrels documents (a negative: what remains is on the same topic
#   but does not hold the answer). By default the documents are absent (a second store without them, see
#   ``openbook.eval.absent``); ``negatives="hidden"`` hides them with a query-time filter instead, which keeps
#   every corpus statistic they contributed;
# - a question marked ``metadata.is_impossible`` (SQuAD 2.0), asked once over the whole corpus: written to look
#   answerable from an on-topic passage that does not hold the answer. ``metadata.plausible_answers`` are the
#   spans a careless reader would give; an answer containing one is the "plausible wrong answer".

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LATIN = r"[0-9a-z\u00c0-\u024f]"
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

NEGATIVE_MODES = ("absent", "hidden")
"""How an answerable question's negative is asked: ``absent`` on a copy of the store without the sampled
questions' relevant documents, ``hidden`` on the full store with them excluded by a query-time filter."""


@dataclass(frozen=True)
class QAQuestion:
    """One question of a BEIR QA set.

    Attributes:
        answers: gold answer strings (any one counts); empty for an impossible question.
        relevant: qrels documents (score > 0), in qrels order; for an impossible question the on-topic passage
            it was written on (which does not hold an answer), possibly empty.
        impossible: ``metadata.is_impossible``: no document answers it.
        plausible: ``metadata.plausible_answers`` of an impossible question (empty otherwise).
    """

    id: str
    question: str
    answers: tuple[str, ...]
    relevant: tuple[str, ...]
    impossible: bool = False
    plausible: tuple[str, ...] = ()


@dataclass(frozen=True)
class Asked:
    """One question asked once: the question, the engine's ``Answer`` and the wall time of ``ask`` in ms."""

    question: QAQuestion
    answer: Answer
    ms: float


@dataclass
class QAResult:
    """How one question did. An answerable question is asked over the whole corpus (``pos_*``) and without its
    relevant documents (``neg_*``: absent or hidden); an impossible one only once, over the whole corpus, and
    that answer is its negative (``neg_*``; ``pos_*`` do not apply: empty answer, refused, 0 ms).
    ``*_confidence`` is the answerer's answerability score (None when it gave none); ``neg_plausible``: the
    negative was answered with text containing one of the question's plausible answers (``contains_gold``)."""

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
    impossible: bool = False
    neg_plausible: bool = False


@dataclass
class QAReport:
    """Scores of ``openbook eval answers --dataset``; ``to_dict()`` is the JSON form.

    Attributes:
        dataset, answerer, sample, seed: inputs (``sample`` None: every question).
        summary: ``all`` and one entry per question language, the keys of ``summarize_qa``.
        curve_png: the refusal curve written, or None.
        results: one ``QAResult`` per question, answerable ones first, each group in sample order.
        negatives: ``absent`` or ``hidden`` (see ``NEGATIVE_MODES``); groups: copies the absent negatives were
            asked on (``absent_groups``).
        restricted_to: what restricted the questions before sampling (a question-id file, doc-id prefixes), or
            None.
    """

    dataset: str
    answerer: str
    sample: int | None
    seed: int
    summary: dict[str, dict[str, float | None]]
    curve_png: str | None
    results: list[QAResult]
    negatives: str = "absent"
    restricted_to: str | None = None
    groups: int = 1

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
    """The QA questions of a BEIR folder, in ``queries.jsonl`` order: those with ``metadata.answers`` and
    qrels (answerable), and those with ``metadata.is_impossible`` true (impossible; qrels optional,
    ``metadata.plausible_answers`` read when present). Other queries are skipped.

    Raises:
        EvaluationError: missing files, bad JSON, a question both impossible and with answers, or no QA
            question at all.
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
                meta = obj.get("metadata") or {}
                answers = tuple(str(a) for a in meta.get("answers") or [])
                impossible = meta.get("is_impossible") is True
                plausible = tuple(str(a) for a in meta.get("plausible_answers") or [])
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                raise EvaluationError(f"{path}:{lineno}: expected {{'_id', 'text', 'metadata': {{'answers'}}}}") \
                    from None
            if impossible and answers:
                raise EvaluationError(f"{path}:{lineno}: question {qid} has metadata.is_impossible true and "
                                      f"metadata.answers {list(answers)[:3]}; an impossible question has none")
            relevant = tuple(d for d, g in qrels.get(qid, {}).items() if g > 0)
            if not text.strip():
                continue
            if impossible:
                out.append(QAQuestion(qid, text, (), relevant, impossible=True, plausible=plausible))
            elif answers and relevant:
                out.append(QAQuestion(qid, text, answers, relevant))
    if not out:
        raise EvaluationError(f"{path}: no question has both metadata.answers and qrels, nor "
                              "metadata.is_impossible; `eval answers --dataset` needs a QA set (else use "
                              "`eval retrieval`)")
    return out


def read_question_ids(path: Path) -> list[str]:
    """Query ids from a text file, one per line (surrounding whitespace stripped; blank lines and lines
    starting with ``#`` skipped), in file order without repeats.

    Raises:
        EvaluationError: the file is missing or holds no id.
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(f"question id file {path} not found")
    ids = [s for line in path.read_text(encoding="utf-8").splitlines() if (s := line.strip())
           and not s.startswith("#")]
    if not ids:
        raise EvaluationError(f"{path} holds no question id (one query id per line)")
    return list(dict.fromkeys(ids))


def restrict_questions(questions: Sequence[QAQuestion], ids: Iterable[str] | None = None,
                       doc_prefixes: Sequence[str] = ()) -> list[QAQuestion]:
    """The questions (in the given order) whose id is in ``ids`` (None: any) and, when ``doc_prefixes`` is
    given, whose relevant documents all start with one of the prefixes (a question without relevant documents
    is then left out). Restrict before sampling to evaluate one part of a split.

    Raises:
        EvaluationError: an id of ``ids`` is not among ``questions``, or nothing is left.
    """
    kept = list(questions)
    if ids is not None:
        wanted = list(dict.fromkeys(ids))
        known = {q.id for q in kept}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise EvaluationError(f"{len(unknown)} of {len(wanted)} question ids are not QA questions of this set "
                                  f"(answers and qrels, or is_impossible), e.g. {', '.join(unknown[:3])}")
        chosen = set(wanted)
        kept = [q for q in kept if q.id in chosen]
    if doc_prefixes:
        prefixes = tuple(doc_prefixes)
        kept = [q for q in kept if q.relevant and all(d.startswith(prefixes) for d in q.relevant)]
    if not kept:
        raise EvaluationError("no question is left after restricting by question ids / document prefixes")
    return kept


def sample_questions(questions: Sequence[QAQuestion], n: int | None, seed: int) -> list[QAQuestion]:
    """Up to ``n`` answerable and up to ``n`` impossible questions (all when ``n`` is None).

    Each group keeps file order, is shuffled by its own ``random.Random(seed)`` and cut to its first ``n``; the
    answerable group comes first. A set without impossible questions gives exactly
    ``random.Random(seed).shuffle`` of the questions, first ``n``.
    """
    import random

    answerable = [q for q in questions if not q.impossible]
    impossible = [q for q in questions if q.impossible]
    if n is None:
        return answerable + impossible
    random.Random(seed).shuffle(answerable)
    random.Random(seed).shuffle(impossible)
    return answerable[:n] + impossible[:n]


def ask_questions(engine: Any, questions: Sequence[QAQuestion], *, hide_relevant: bool = False,
                  progress: str | None = None) -> list[Asked]:
    """Ask each question once on an open engine (``engine.ask``, the engine's configured answerer).

    Args:
        hide_relevant: exclude each question's relevant documents by a query-time filter (the ``hidden``
            negatives); corpus statistics stay those of the whole store.
        progress: a progress bar on stderr with this label; None: silent.

    Returns:
        One ``Asked`` per question, in the given order.
    """
    iterator: Iterable[QAQuestion] = questions
    if progress:
        from tqdm import tqdm

        iterator = tqdm(questions, desc=progress, unit="q")
    out = []
    for q in iterator:
        start = time.perf_counter()
        answer = engine.ask(q.question, exclude_docs=q.relevant) if hide_relevant else engine.ask(q.question)
        out.append(Asked(q, answer, (time.perf_counter() - start) * 1000.0))
    return out


def score_qa(negative: Asked, positive: Asked | None = None) -> QAResult:
    """Score one question: ``negative`` is its answerable question's ask without the relevant documents or an
    impossible question's ask over the whole corpus; ``positive`` the answerable question's ask over the whole
    corpus (None for an impossible question).

    Raises:
        EvaluationError: ``positive`` is missing for an answerable question, given for an impossible one, or
            the two asks are of different questions.
    """
    q = negative.question
    if (positive is None) != q.impossible or (positive is not None and positive.question.id != q.id):
        raise EvaluationError(f"question {q.id}: an answerable question needs its positive ask, an impossible "
                              f"one has none")
    neg = negative.answer
    result = QAResult(
        id=q.id, language=question_language(q.question), pos_answer="", pos_refused=True, pos_contains_gold=False,
        pos_cites_relevant=False, pos_confidence=None, pos_ms=0.0, neg_answer=neg.text, neg_refused=neg.refused,
        neg_confidence=neg.confidence, neg_ms=negative.ms,
        yes_no=bool(q.answers) and all(normalize_answer(a) in ("yes", "no") for a in q.answers),
        impossible=q.impossible, neg_plausible=not neg.refused and contains_gold(neg.text, q.plausible),
    )
    if positive is not None:
        pos, relevant = positive.answer, set(q.relevant)
        result.pos_answer, result.pos_refused = pos.text, pos.refused
        result.pos_contains_gold = not pos.refused and contains_gold(pos.text, q.answers)
        result.pos_cites_relevant = not pos.refused and any(c.doc_id in relevant for c in pos.citations)
        result.pos_confidence, result.pos_ms = pos.confidence, positive.ms
    return result


def ask_twice(engine: Any, q: QAQuestion) -> QAResult:
    """Score ``q`` on one engine: an answerable question over the whole corpus and with its relevant documents
    hidden (the ``hidden`` negatives), an impossible one once over the whole corpus."""
    if q.impossible:
        return score_qa(ask_questions(engine, [q])[0])
    pos = ask_questions(engine, [q])[0]
    return score_qa(ask_questions(engine, [q], hide_relevant=True)[0], pos)


def summarize_qa(results: Sequence[QAResult]) -> dict[str, float | None]:
    """The rates of ``QAReport.summary`` over ``results`` (shares 0-1; None where no question applies).

    Returns:
        ``n`` (questions), ``n_answerable``, ``n_impossible``; over answerable questions: ``answered`` (share of
        positives answered), ``contains_gold`` (positives whose answer contains a normalised gold answer, over
        all positives: a refusal is a miss), ``gold_not_yes_no`` (the same over the positives whose gold answers
        are not all "yes"/"no"), ``cites_relevant`` (answered positives citing a relevant document),
        ``refused_negatives`` (their negatives refused); over impossible questions: ``refused_impossible``,
        ``answered_impossible`` and ``plausible_answer`` (answered with text containing a plausible answer);
        ``p50_ms``/``p95_ms`` per ``ask`` over every ask made (0 when none).
    """
    import numpy as np

    pos = [r for r in results if not r.impossible]
    imp = [r for r in results if r.impossible]
    answered = [r for r in pos if not r.pos_refused]
    open_q = [r for r in pos if not r.yes_no]

    def share(count: int, total: int) -> float | None:
        return count / total if total else None

    ms = np.asarray([r.pos_ms for r in pos] + [r.neg_ms for r in results])
    return {
        "n": len(results),
        "n_answerable": len(pos),
        "n_impossible": len(imp),
        "answered": share(len(answered), len(pos)),
        "contains_gold": share(sum(r.pos_contains_gold for r in pos), len(pos)),
        "gold_not_yes_no": share(sum(r.pos_contains_gold for r in open_q), len(open_q)),
        "cites_relevant": share(sum(r.pos_cites_relevant for r in answered), len(answered)),
        "refused_negatives": share(sum(r.neg_refused for r in pos), len(pos)),
        "refused_impossible": share(sum(r.neg_refused for r in imp), len(imp)),
        "answered_impossible": share(sum(not r.neg_refused for r in imp), len(imp)),
        "plausible_answer": share(sum(r.neg_plausible for r in imp), len(imp)),
        "p50_ms": float(np.percentile(ms, 50)) if len(ms) else 0.0,
        "p95_ms": float(np.percentile(ms, 95)) if len(ms) else 0.0,
    }


def refusal_curve(results: Sequence[QAResult], thresholds: Sequence[float]) -> tuple[list[float], list[float]]:
    """Answered positives and refused negatives (shares, 0-1) if the answerer refused below each threshold.

    Positives are the answerable questions' whole-corpus asks; negatives every question's negative ask (an
    impossible question's included). A question without a confidence (no passages, no content term) counts as
    refused at every threshold.
    """
    pos = [r.pos_confidence for r in results if not r.impossible]
    neg = [r.neg_confidence for r in results]
    answered = [sum(1 for c in pos if c is not None and c >= t) / max(len(pos), 1) for t in thresholds]
    refused = [sum(1 for c in neg if c is None or c < t) / max(len(neg), 1) for t in thresholds]
    return answered, refused


def _plotting() -> Any:
    """matplotlib, or ``MissingExtraError`` naming the ``eval`` extra."""
    from .._extras import require

    return require("matplotlib", "eval", "The refusal curve of eval answers")


def write_refusal_curve(results: Sequence[QAResult], path: Path, title: str,
                        threshold: float | None = None) -> Path:
    """Plot answered positives and refused negatives over the decision threshold, per language, as a PNG.

    Returns:
        ``path`` (parent folders created).

    Raises:
        MissingExtraError: matplotlib (the ``eval`` extra) is not installed.
    """
    matplotlib = _plotting()
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
        n_pos = sum(not r.impossible for r in subset)
        ax.plot(thresholds, answered, color=color, label=f"{lang}: positives answered (n={n_pos})")
        ax.plot(thresholds, refused, color=color, linestyle="--", label=f"{lang}: negatives refused (n={len(subset)})")
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


def absent_groups(questions: Sequence[QAQuestion], groups: int) -> list[list[QAQuestion]]:
    """The answerable ``questions`` dealt round-robin, in the given order, into ``min(groups, len)`` groups (each
    group in the given order); impossible questions are left out.

    Raises:
        EvaluationError: ``groups`` below 1.
    """
    if groups < 1:
        raise EvaluationError(f"absent groups must be at least 1, not {groups}")
    answerable = [q for q in questions if not q.impossible]
    k = min(groups, len(answerable)) or 1
    return [answerable[i::k] for i in range(k)] if answerable else []


def ask_dataset(engine: Any, questions: Sequence[QAQuestion], store: str | Path, config: Config,
                negatives: str = "absent", workdir: Path | None = None,
                progress: bool = False, groups: int = 1) -> list[QAResult]:
    """Ask ``questions`` on ``engine`` (open on ``store``, which holds the whole corpus) and score them.

    Positives (answerable questions over the whole corpus) and impossible questions run on ``engine``.
    Answerable questions' negatives: ``absent`` deals them into ``groups`` groups (``absent_groups``) and asks
    each group on a copy of ``store`` without the relevant documents of every question of the group
    (``openbook.eval.absent.absent_store``, opened with ``config``), so a question sharing a relevant document
    with another of its group misses it there too; with one group (the default) the copy is
    ``<workdir>/absent`` and is kept, with more each copy is removed once its group is asked. ``hidden`` asks
    them on ``engine`` with their own relevant documents filtered out.

    Returns:
        One ``QAResult`` per question, answerable ones first, each group in the given order.

    Raises:
        EvaluationError: an unknown ``negatives`` mode, ``absent`` without a ``workdir``, ``groups`` below 1.
        StoreError, GenerationError: from the engine.
    """
    import shutil

    from openbook.api import Engine

    from .absent import absent_store

    if negatives not in NEGATIVE_MODES:
        raise EvaluationError(f"unknown negatives mode {negatives!r}; choose one of {', '.join(NEGATIVE_MODES)}")
    answerable = [q for q in questions if not q.impossible]
    impossible = [q for q in questions if q.impossible]
    dealt = absent_groups(answerable, groups)
    label = (lambda text: text) if progress else (lambda text: None)
    pos = ask_questions(engine, answerable, progress=label("positives"))
    imp = ask_questions(engine, impossible, progress=label("impossible"))
    if negatives == "hidden" or not answerable:
        neg = ask_questions(engine, answerable, hide_relevant=True, progress=label("negatives (hidden)"))
    else:
        if workdir is None:
            raise EvaluationError("absent negatives need a work folder for the store without the documents")
        by_id: dict[str, Asked] = {}
        for i, members in enumerate(dealt):
            folder = Path(workdir) / ("absent" if len(dealt) == 1 else f"absent-{i}")
            path = absent_store(store, {d for q in members for d in q.relevant}, folder)
            with Engine.open(path, config) as without:
                tag = "negatives (absent)" if len(dealt) == 1 else f"negatives (absent, group {i + 1}/{len(dealt)})"
                by_id.update((a.question.id, a) for a in ask_questions(without, members, progress=label(tag)))
            if len(dealt) > 1:
                shutil.rmtree(path, ignore_errors=True)
        neg = [by_id[q.id] for q in answerable]
    return [score_qa(n, p) for n, p in zip(neg, pos)] + [score_qa(i) for i in imp]


def run_qa_eval(dataset: Path, store: str | Path | None, config: Config, sample: int | None = None, seed: int = 7,
                out_dir: Path | None = None, progress: bool = False, negatives: str = "absent",
                question_ids: Sequence[str] | None = None, doc_prefixes: Sequence[str] = (),
                restricted_to: str | None = None, groups: int = 1) -> QAReport:
    """Evaluate answers on a BEIR QA folder end to end (what ``openbook eval answers --dataset`` runs).

    Loads the QA questions (``load_qa_questions``), keeps those of ``question_ids`` / ``doc_prefixes``
    (``restrict_questions``), samples them (``sample_questions``: ``sample`` answerable plus ``sample``
    impossible ones), ingests ``corpus.jsonl`` into ``store`` (created, or reused when unchanged; a folder or a
    backend URL) or a throw-away store, asks and scores them (``ask_dataset``, with ``groups`` copies for absent
    negatives), and writes
    ``<out_dir>/<dataset>.answers.png`` (the refusal curve, offline answerer) and
    ``<out_dir>/<dataset>.answers.json`` when ``out_dir`` is given. ``restricted_to`` is recorded in the report.

    Raises:
        EvaluationError: bad dataset folder, question ids or negatives mode, or nothing ingested.
        MissingExtraError: the refusal curve is to be written and matplotlib (the ``eval`` extra) is not
            installed; raised before anything runs.
        StoreError, IngestError, GenerationError: from the engine.
    """
    from openbook.api import Engine

    from .beir import load_beir

    if out_dir is not None and not config.llm.backend:
        _plotting()
    if negatives not in NEGATIVE_MODES:
        raise EvaluationError(f"unknown negatives mode {negatives!r}; choose one of {', '.join(NEGATIVE_MODES)}")
    absent_groups([], groups)  # a bad count fails before the ingest
    data = load_beir(dataset)
    questions = load_qa_questions(Path(dataset))
    if question_ids is not None or doc_prefixes:
        questions = restrict_questions(questions, question_ids, doc_prefixes)
    questions = sample_questions(questions, sample, seed)
    with tempfile.TemporaryDirectory(prefix="openbook-qa-") as tmp:
        store_dir = store if store is not None else Path(tmp) / "store"  # a folder or a URL
        with Engine.open(store_dir, config, create=True) as engine:
            ingest = engine.ingest([data.corpus], sync=True, progress=progress)
            if not ingest.ok:
                reasons = "; ".join(f"{p}: {r}" for p, r in ingest.failed[:3])
                raise EvaluationError(f"could not ingest {data.corpus}: {reasons}")
            results = ask_dataset(engine, questions, store_dir, config, negatives, Path(tmp), progress, groups)
    langs = sorted({r.language for r in results})
    summary = {"all": summarize_qa(results)}
    summary.update({lang: summarize_qa([r for r in results if r.language == lang]) for lang in langs})
    llm = config.llm
    answerer = f"{llm.backend}:{llm.model}" if llm.backend else "offline"
    report = QAReport(dataset=data.name, answerer=answerer, sample=sample, seed=seed, summary=summary,
                      curve_png=None, results=results, negatives=negatives, restricted_to=restricted_to,
                      groups=groups)
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
    head = report.summary["all"]
    counts = f"{head['n_answerable']:.0f} answerable"
    if head["n_impossible"]:
        counts += f" + {head['n_impossible']:.0f} impossible"
    lines = [f"{report.dataset}: {counts} questions"
             + (f" (sample {report.sample}, seed {report.seed})" if report.sample is not None else "")
             + (f", restricted to {report.restricted_to}" if report.restricted_to else "")
             + f", answerer {report.answerer}, negatives {report.negatives}"
             + (f" ({report.groups} groups)" if report.negatives == "absent" and report.groups > 1 else ""),
             f"  {'language':<8} {'n':>4} {'answered':>9} {'gold':>6} {'gold-yn':>8} {'cites':>6} "
             f"{'neg refused':>12} {'n imp':>6} {'imp refused':>12} {'plausible':>10} {'p50 ms':>8} {'p95 ms':>8}"]
    for lang, s in report.summary.items():
        lines.append(f"  {lang:<8} {s['n_answerable']:>4.0f} {_pct(s['answered']):>9} {_pct(s['contains_gold']):>6} "
                     f"{_pct(s['gold_not_yes_no']):>8} {_pct(s['cites_relevant']):>6} "
                     f"{_pct(s['refused_negatives']):>12} {s['n_impossible']:>6.0f} "
                     f"{_pct(s['refused_impossible']):>12} {_pct(s['plausible_answer']):>10} "
                     f"{s['p50_ms']:>8.0f} {s['p95_ms']:>8.0f}")
    hiding = ("a copy of the store without their relevant documents" if report.negatives == "absent"
              else "their relevant documents hidden by a filter (corpus statistics kept)")
    lines.append("  n, answered / gold (contains a gold answer, over all positives; gold-yn: over those whose gold is "
                 "not yes/no) / cites (a relevant doc, over answered positives): answerable questions over the "
                 f"whole corpus; neg refused: the same questions on {hiding}; imp refused / plausible (answered "
                 "with a plausible wrong answer): impossible questions over the whole corpus")
    if report.curve_png:
        lines.append(f"  refusal curve  {report.curve_png}")
    return "\n".join(lines)
