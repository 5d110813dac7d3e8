"""`eval answers --dataset`: questions asked over the whole corpus and with their relevant documents hidden;
the arithmetic pinned on a tiny hand-made BEIR folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbook.config import Config
from openbook.errors import EvaluationError
from openbook.eval.answers import (
    QAQuestion,
    QAResult,
    contains_gold,
    load_qa_questions,
    normalize_answer,
    refusal_curve,
    run_qa_eval,
    sample_questions,
    summarize_qa,
)

CORPUS = [
    {"_id": "d1", "title": "Lake Zorvan", "text": "Lake Zorvan is the deepest lake in Veldoria. It is 412 metres deep."},
    {"_id": "d2", "title": "Mount Keltrin", "text": "Mount Keltrin was first climbed in 1911 by Anna Brisk."},
    {"_id": "d3", "title": "Veldoria", "text": "Veldoria is a small country whose capital is Ostmark."},
    {"_id": "d4", "title": "Ostmark", "text": "Ostmark has a famous clock tower built by the guild of masons."},
]
QUERIES = [
    {"_id": "q1", "text": "How deep is Lake Zorvan?", "metadata": {"answers": ["412 metres"]}},
    {"_id": "q2", "text": "Who first climbed Mount Keltrin?", "metadata": {"answers": ["Anna Brisk"]}},
    {"_id": "q3", "text": "What is the capital of Veldoria?", "metadata": {"answers": ["Ostmark"]}},
    {"_id": "q4", "text": "A query without answers", "metadata": {}},
]


@pytest.fixture
def qa_dir(tmp_path: Path) -> Path:
    root = tmp_path / "tinyqa"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in CORPUS) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES) + "\n", encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"
                                             "q4\td4\t1\n", encoding="utf-8")
    return root


def test_normalisation_is_nfkc_case_punctuation_and_articles() -> None:
    assert normalize_answer("The  Ｏｓｔｍａｒｋ, Ltd.") == "ostmark ltd"
    assert normalize_answer("「战史演武」&「争霸演武」") == "战史演武争霸演武"
    assert contains_gold("It was built by the Guild of Masons [4]", ["guild of masons"])
    assert not contains_gold("It is not known", ["no"])  # whole words for Latin script
    assert contains_gold("答案是光荣和 ω-force 合作", ["光荣和ω-force"])
    assert not contains_gold("", ["x"])


def test_only_questions_with_answers_and_qrels_load_in_file_order(qa_dir: Path) -> None:
    qs = load_qa_questions(qa_dir)
    assert [q.id for q in qs] == ["q1", "q2", "q3"]
    assert qs[0].answers == ("412 metres",) and qs[0].relevant == ("d1",)


def test_no_qa_question_is_a_clear_error(qa_dir: Path) -> None:
    (qa_dir / "queries.jsonl").write_text(json.dumps(QUERIES[3]) + "\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match="metadata.answers"):
        load_qa_questions(qa_dir)


def test_sample_is_a_seeded_shuffle_of_file_order() -> None:
    import random

    qs = [QAQuestion(str(i), f"q{i}", ("a",), ("d",)) for i in range(10)]
    expected = list(qs)
    random.Random(3).shuffle(expected)
    assert sample_questions(qs, 4, 3) == expected[:4]
    assert sample_questions(qs, None, 3) == qs


def _r(pos_refused: bool, gold: bool, cites: bool, neg_refused: bool, pc: float | None, nc: float | None,
       ms: float = 1.0, yes_no: bool = False) -> QAResult:
    return QAResult("q", "en", "", pos_refused, gold, cites, pc, ms, "", neg_refused, nc, ms, yes_no)


def test_summary_arithmetic() -> None:
    results = [_r(False, True, True, True, 0.9, 0.1, 1), _r(False, False, False, False, 0.8, 0.7, 2),
               _r(True, False, False, True, 0.2, 0.3, 3), _r(False, True, True, False, 0.6, 0.5, 4)]
    s = summarize_qa(results)
    assert s["gold_not_yes_no"] == 0.5
    results[1] = _r(False, False, False, False, 0.8, 0.7, 2, yes_no=True)  # a "yes"/"no" gold, not stated
    assert summarize_qa(results)["gold_not_yes_no"] == pytest.approx(2 / 3)
    assert summarize_qa(results)["contains_gold"] == 0.5
    assert s["n"] == 4
    assert s["answered"] == 0.75
    assert s["contains_gold"] == 0.5           # over all positives: a refusal is a miss
    assert s["cites_relevant"] == pytest.approx(2 / 3)  # over answered positives
    assert s["refused_negatives"] == 0.5
    assert s["p50_ms"] == 2.5                  # both runs of each question: 1,1,2,2,3,3,4,4
    answered, refused = refusal_curve(results, [0.0, 0.55, 1.0])
    assert answered == [1.0, 0.75, 0.0]
    assert refused == [0.0, 0.75, 1.0]
    assert refusal_curve([_r(True, False, False, True, None, None)], [0.0]) == ([0.0], [1.0])


def test_end_to_end_on_a_tiny_folder(qa_dir: Path, tmp_path: Path) -> None:
    cfg = Config().with_overrides({"embedding.enabled": False})
    report = run_qa_eval(qa_dir, None, cfg, out_dir=tmp_path / "out")
    s = report.summary["all"]
    assert s["n"] == 3 and set(report.summary) == {"all", "en"}
    assert s["answered"] == 1.0 and s["contains_gold"] == 1.0 and s["cites_relevant"] == 1.0
    by_id = {r.id: r for r in report.results}
    assert all(r.neg_refused or "[" in r.neg_answer for r in report.results)
    # hiding d1 leaves nothing about Lake Zorvan: the negative is refused
    assert by_id["q1"].neg_refused
    assert Path(report.curve_png).stat().st_size > 1000
    saved = json.loads((tmp_path / "out" / "tinyqa.answers.json").read_text(encoding="utf-8"))
    assert saved["summary"]["all"]["n"] == 3
