"""Scoring of lab answers: refusals, must_contain (CJK whitespace), citations, recall, access leaks."""

from __future__ import annotations

import json

import pytest

from openbook.errors import EvaluationError
from openbook.eval.answers import (
    AnswerReport,
    contains,
    format_answer_report,
    lab_doc_id,
    load_acls,
    load_probes,
    load_questions,
    score_answer,
    summarize,
)
from openbook.types import Answer, Chunk, Citation, Hit, Passage


def _passage(n: int, doc_path: str) -> Passage:
    chunk = Chunk(chunk_id=f"{doc_path}#{n}", doc_id=doc_path, text="...")
    return Passage(n=n, hit=Hit(chunk.chunk_id, doc_path, 1.0 / n, chunk=chunk))


def _answer(text: str, context: list[str], cited: list[int], refused: bool = False) -> Answer:
    passages = tuple(_passage(i + 1, d) for i, d in enumerate(context))
    citations = tuple(Citation(n=n, doc_id=context[n - 1], chunk_id=passages[n - 1].hit.chunk_id) for n in cited)
    return Answer(text=text, refused=refused, citations=citations, passages=passages)


@pytest.fixture(scope="module")
def lab(lab_dir):
    questions = {q.id: q for q in load_questions(lab_dir / "questions.jsonl")}
    return questions, load_acls(lab_dir / "manifest.json"), load_probes(lab_dir / "unanswerable_probes.json")


def test_lab_files_load(lab):
    questions, acls, probes = lab
    assert len(questions) == 40
    assert sum(not q.answerable for q in questions.values()) == 9
    assert acls["doc-011"] == ("finance",)
    assert "Canberra" in probes["q25"]


def test_lab_doc_id_is_the_file_name_prefix():
    assert lab_doc_id("doc-024-support-answer-trash-retention.md") == "doc-024"
    assert lab_doc_id("docs/doc-005-pricing-table.md") == "doc-005"
    assert lab_doc_id("notes.txt") == "notes.t"


def test_cjk_must_contain_ignores_whitespace():
    assert contains("退款需要 3 个工作日。", "3个工作日", cjk=True)
    assert not contains("退款需要 3 个工作日。", "3个工作日", cjk=False)
    assert contains("The Trash keeps files for 14 Days.", "14 days", cjk=False)


def test_good_answer_scores_everywhere(lab):
    questions, acls, _ = lab
    a = _answer("Files stay 14 days in the Trash [1].",
                ["doc-024-support-answer-trash-retention.md", "doc-002-manual-versions-and-trash.md"], [1])
    r = score_answer(questions["q01"], a, acls)
    assert (r.refusal_correct, r.must_contain_ok, r.citations_valid, r.context_recall, r.leaked) == (
        True, True, True, 1.0, [])


def test_citing_an_irrelevant_document_is_invalid(lab):
    questions, acls, _ = lab
    a = _answer("14 days [2].", ["doc-024-x.md", "doc-013-release-notes-5.2.md"], [2])
    r = score_answer(questions["q01"], a, acls)
    assert r.citations_valid is False and r.context_recall == 0.5


def test_acl_denied_question_leaks_restricted_context(lab):
    questions, acls, probes = lab
    a = _answer("The budget is 4.2M [1].", ["doc-011-fy2025-budget-allocation.md"], [1])
    r = score_answer(questions["q15"], a, acls, probes["q15"])
    assert r.leaked == ["doc-011"] and r.refusal_correct is False and r.probe_hits == ["4.2M"]
    # The finance variant may see it.
    r16 = score_answer(questions["q16"], _answer("4.2M [1]", ["doc-011-fy2025-budget-allocation.md"], [1]), acls)
    assert r16.leaked == [] and r16.must_contain_ok


def test_correct_refusal_and_summary(lab):
    questions, acls, probes = lab
    refusal = _answer("I could not find this in the documents.", [], [], refused=True)
    results = [
        score_answer(questions["q25"], refusal, acls, probes["q25"]),
        score_answer(questions["q01"], refusal, acls),
    ]
    assert results[0].refusal_correct and results[0].must_contain_ok is None
    assert not results[1].refusal_correct and results[1].must_contain_ok is False
    s = summarize(results)
    assert s["refusal_accuracy"] == 0.5 and s["must_contain_rate"] == 0.0
    assert s["citation_validity"] is None and s["access_leaks"] == 0
    report = AnswerReport("q.jsonl", "docs", "offline", results, s, {"none": summarize(results[:1])})
    text = format_answer_report(report)
    assert "refusal accuracy    50%" in text and "q25" in text


def test_missing_manifest_is_an_evaluation_error(tmp_path):
    with pytest.raises(EvaluationError, match="manifest"):
        load_acls(tmp_path / "manifest.json")
    (tmp_path / "q.jsonl").write_text('{"id": "q1"}\n')
    with pytest.raises(EvaluationError, match="q.jsonl:1"):
        load_questions(tmp_path / "q.jsonl")


@pytest.mark.lab
def test_lab_end_to_end_with_the_offline_answerer(lab_dir, request):
    """The lab run end to end: every question scored, the report well formed, and no access leak (the access rule
    is a hard requirement, not a figure). The lab is a development lab: its answer figures are reported (printed
    and recorded as the test's user properties, which ``--junitxml`` writes), never gated on."""
    from openbook.config import Config
    from openbook.eval.answers import run_answer_eval

    report = run_answer_eval(lab_dir / "questions.jsonl", lab_dir / "docs", None, Config())
    assert report.answerer == "offline" and len(report.results) == 40
    assert report.summary["access_leaks"] == 0 and report.ok
    assert all(not set(r.leaked) for r in report.results)
    assert sum(t["n"] for t in report.by_trap.values()) == 40
    assert set(report.by_trap) == {r.trap for r in report.results}
    q15 = next(r for r in report.results if r.id == "q15")
    assert q15.roles == ["staff"] and "doc-011" not in q15.context_docs  # finance-only: never in staff's context
    q16 = next(r for r in report.results if r.id == "q16")
    assert q16.roles == ["staff", "finance"]
    for r in report.results:  # each score is there exactly where it applies
        assert (r.must_contain_ok is None) != r.answerable
        assert r.citations_valid is None or (r.answerable and not r.refused)
    for key in ("refusal_accuracy", "must_contain_rate", "citation_validity", "context_recall"):
        assert 0.0 <= report.summary[key] <= 1.0
        request.node.user_properties.append((key, report.summary[key]))
    text = format_answer_report(report)
    assert "access leaks       0" in text and "q40" in text
    json.dumps(report.to_dict(), allow_nan=False)
    print("\nSkyladder (development lab, reported only):\n" + format_answer_report(report, per_question=False))
