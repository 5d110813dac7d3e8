"""Every refusal of the offline answerer comes from one step, ``extractive.decide``, which names its reason
(answer/extractive/decide.py); the answer's note and confidence are the decision's, and the features the fitted
model read travel on the answer. What were refusal rules (a unit asked and none stated, another year than the one
asked) are features the model weighs."""

from __future__ import annotations

from pathlib import Path

import pytest

import openbook.answer.extractive as extractive
from openbook.answer.extractive import ANSWERABLE, LOW_ANSWERABILITY, NOTHING_TO_READ, Decision, Evidence, decide
from openbook.answer.refusal import FEATURES, answerability
from openbook.api import Engine
from openbook.config import Config
from helpers.stores import bm25_engine

DOCS = {"uploads.md": "# Upload links\n\nAn upload link expires after 7 days. Files are stored in the shared drive.\n",
        "roads.md": "# Road repairs\n\nIn 2023 the city repaired 4,100 potholes on its streets.\n",
        "leave.md": "# Annual leave\n\nFull-time employees receive 25 days of annual leave each year.\n"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("decide")
    bm25_engine(root, DOCS).close()
    return root / "store"


def _asked(store: Path, question: str, monkeypatch: pytest.MonkeyPatch, **overrides: object):
    seen: list[Decision] = []
    real = extractive.decide

    def spy(evidence: Evidence) -> Decision:
        seen.append(real(evidence))
        return seen[-1]

    monkeypatch.setattr(extractive, "decide", spy)
    with Engine.open(store, Config().with_overrides({"embedding.enabled": False, **overrides})) as e:
        return e.ask(question), seen


def test_a_refusal_is_the_decision_that_names_its_reason(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answer, seen = _asked(store, "What is the maximum file size I can upload?", monkeypatch)
    assert answer.refused and not answer.citations
    last = seen[-1]
    assert not last.answer and last.reason == LOW_ANSWERABILITY
    assert answer.notes == (last.note,) and answer.confidence == last.confidence
    assert last.note is not None and last.note.startswith("refused: answerability ")
    assert all(d.answer for d in seen[:-1])  # the one refusal is the last decision taken
    assert set(answer.features) == set(FEATURES)  # what the model read travels on the answer
    assert answer.confidence == pytest.approx(answerability(answer.features, "en"))


@pytest.mark.parametrize("question,feature", [
    ("What is the maximum file size I can upload?", "unit_missing"),  # a size asked, a duration stated
    ("How many potholes were repaired in 2024?", "year_other"),  # 2024 asked, 2023 stated
])
def test_what_were_refusal_rules_are_features(store: Path, monkeypatch: pytest.MonkeyPatch, question: str,
                                              feature: str) -> None:
    answer, _ = _asked(store, question, monkeypatch, **{"answer.min_confidence": 0.0})
    assert not answer.refused  # with every score let through, nothing else refuses
    assert answer.features[feature] == 1.0
    assert answerability({**answer.features, feature: 0.0}, "en") >= answer.confidence


def test_an_answer_keeps_the_decision_taken_before_composing(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answer, seen = _asked(store, "How many days of annual leave do full-time employees receive?", monkeypatch)
    assert not answer.refused and "25 days" in answer.text
    assert all(d.answer for d in seen) and seen[-1].reason == ANSWERABLE
    assert answer.confidence == seen[-1].confidence >= Config().answer.min_confidence
    assert answer.features["unit_missing"] == 0.0 and answer.features["year_other"] == 0.0


def test_nothing_to_read_is_refused_before_anything_is_scored() -> None:
    decision = decide(Evidence(passages=(), terms=("leave",)))
    assert decision == Decision(False, NOTHING_TO_READ, None, "refused: no passage matched the question")
    with pytest.raises(AttributeError):
        decision.answer = True  # type: ignore[misc]

