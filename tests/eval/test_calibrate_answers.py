"""benchmarks/calibrate_answers.py's split and its ``ONE_WORD_SHARE`` table, on small hand-made inputs: the
calibration split is exactly the questions outside the reported seed-7 sample, the table asks each question at
each value and restores the shipped one, and the figures' arithmetic (trimmed, lost, net) is pinned."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest

import openbook.answer.extractive as extractive
from openbook.api import Engine
from openbook.config import Config
from openbook.eval.answers import QAQuestion, QAResult, load_qa_questions, sample_questions

from helpers.stores import bm25_engine

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "calibrate_answers.py"
_spec = importlib.util.spec_from_file_location("calibrate_answers", _SCRIPT)
calib = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(calib)


def _beir(root: Path, n: int) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "d0", "title": "T", "text": "Text."}) + "\n",
                                       encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"q{i}", "text": f"Question {i}?", "metadata": {"answers": [str(i)]}}) + "\n"
        for i in range(n)), encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td0\t1\n" for i in range(n)), encoding="utf-8")
    return root


def test_the_calibration_split_is_the_complement_of_the_reported_sample(tmp_path: Path) -> None:
    root = _beir(tmp_path / "set", 230)
    questions = load_qa_questions(root)
    reported = {q.id for q in sample_questions(questions, 200, 7)}  # what `eval answers --sample 200 --seed 7` asks
    split = calib.calibration_split(root, 300)
    assert len(split) == 30 and not {q.id for q in split} & reported
    rest = [q for q in questions if q.id not in reported]
    random.Random(11).shuffle(rest)
    assert split == rest
    assert calib.calibration_split(root, 10) == rest[:10]  # --per-set: the first of the seed-11 shuffle


def _r(answer: str, refused: bool, gold: bool) -> QAResult:
    return QAResult("q", "en", answer, refused, gold, gold, 0.9, 1.0, "", True, 0.1, 1.0)


def test_share_figures_count_padding_and_evidence_dropped_and_gold_lost() -> None:
    qs = [QAQuestion(f"q{i}", "?", ("x",), ("rel", "rel2")) for i in range(5)]
    off = [(_r("A [1]. Padding [2].", False, True), frozenset({"rel", "pad"})),
           (_r("B [1]. The gold [2].", False, True), frozenset({"rel", "rel2"})),
           (_r("C [1]. Wrong [2].", False, False), frozenset({"pad", "pad2"})),
           (_r("D [1].", False, True), frozenset({"rel"})),
           (_r("", True, False), frozenset())]
    at = [(_r("A [1].", False, True), frozenset({"rel"})),       # padding dropped, gold kept
          (_r("B [1].", False, False), frozenset({"rel"})),      # a relevant document and the gold dropped
          (_r("C [1].", False, False), frozenset({"pad"})),      # padding dropped from a wrong answer
          (_r("D [1].", False, True), frozenset({"rel"})),       # unchanged
          (_r("", True, False), frozenset())]                    # refused both times
    f = calib.share_figures(at, off, qs)
    assert (f["changed"], f["lost"], f["padding"], f["support"]) == (3, 1, 2, 1)
    assert f["answered"] == 0.8 and f["gold"] == 0.4 and f["refused"] == 1.0
    assert f["chars"] == pytest.approx(sum(len(r.pos_answer) for r, _ in at[:4]) / 4)  # answered positives only
    assert (calib.share_figures(off, off, qs)["changed"], calib.share_figures(off, off, qs)["padding"]) == (0, 0)


DOCS = {
    "help/partner-loans.md": "# Partner loans\n\nTools borrowed from partner libraries are normally kept for "
    "three weeks.\n",
    "rules/records.md": "# Tool library records\n\nThe office keeps a record of returned tools for 12 months "
    "so that damage claims can be checked.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    root = tmp_path_factory.mktemp("share")
    bm25_engine(root, DOCS).close()
    e = Engine.open(root / "store", Config().with_overrides({"embedding.enabled": False,
                                                               "answer.min_confidence": 0.0}))
    yield e
    e.close()


def test_the_table_asks_at_each_value_and_restores_the_shipped_one(engine: Engine) -> None:
    q = QAQuestion("q1", "How long can I normally keep a tool borrowed from a partner library?", ("three weeks",),
                   ("help/partner-loans.md",))
    shipped = extractive.ONE_WORD_SHARE
    table = calib.one_word_share_table(engine, [q], [0.0, 1.0])
    assert extractive.ONE_WORD_SHARE == shipped
    assert set(table) == {0.0, 1.0} and all(len(rs) == 1 for rs in table.values())
    (off, off_cited), (on, on_cited) = table[0.0][0], table[1.0][0]
    # gate off, the record-keeping sentence of another document pads the answer with "keep"; at 1 it is left out
    assert "12 months" in off.pos_answer and "12 months" not in on.pos_answer
    assert off_cited == {"help/partner-loans.md", "rules/records.md"} and on_cited == {"help/partner-loans.md"}
    assert on.pos_contains_gold and off.pos_contains_gold
    f = calib.share_figures(table[1.0], table[0.0], [q])
    assert (f["padding"], f["support"], f["lost"]) == (1, 0, 0)
