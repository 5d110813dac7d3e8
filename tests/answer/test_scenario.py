"""Scenario questions: the asker states a situation, then asks (answer/extractive.py ``scenario_weights``).

A real BM25 store over small hand-made documents; the situation's words count as context, not as words the
answering sentence must hold, while a scenario whose answer the documents lack is still refused.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

from openbook.answer.extractive import SITUATION_WEIGHT, content_terms, scenario_weights
from openbook.api import Engine
from openbook.index.analyzer import Analyzer

from helpers.stores import bm25_engine

DOCS = {
    "help/trash.md": "# Deleted files and the Trash\n\nWhen you delete a file or a folder it moves to the Trash. "
    "Items stay in the Trash for 14 days; after that they are permanently deleted and cannot be recovered. "
    "To restore an item, open the Trash, select it and choose Restore.\n",
    "help/sharing.md": "# Sharing links\n\nA sharing link expires after 30 days unless the owner renews it. "
    "Anyone with the link can view the shared folder but cannot edit it.\n",
    "help/storage.md": "# Storage plans\n\nThe Basic plan includes 50 GB of storage and the Pro plan 2 TB. "
    "Files larger than 10 GB cannot be uploaded from the browser.\n",
    "policy/purchasing.md": "# Purchasing policy\n\nAny purchase above USD 300 needs a purchase order number "
    "before the order is placed. A purchase paid with a corporate card without a purchase order number is "
    "recovered from the cardholder's next payroll. Purchases up to USD 300 can be claimed as expenses with a "
    "receipt.\n",
    "policy/leave.md": "# Annual leave\n\nEmployees with fewer than six months of service may take at most three "
    "consecutive days of annual leave. Longer leave needs the approval of the department head. Unused leave "
    "expires at the end of March.\n",
    "policy/travel.md": "# Business travel\n\nEconomy class is booked for flights under six hours. Hotel costs are "
    "reimbursed up to USD 180 per night in most cities.\n",
    "insurance/home.md": "# Home insurance\n\nDamage to your fence or garden wall caused by a fallen tree is covered "
    "by the buildings insurance of the owner of the damaged property. Storm damage must be reported within 30 "
    "days.\n",
    "it/laptops.md": "# Laptops\n\nA lost or stolen laptop must be reported to the IT service desk within 24 "
    "hours. Laptops are replaced every four years.\n",
}

ANSWERABLE = [
    ("A customer deleted a folder three weeks ago and now wants it back from the Trash. Can they still restore "
     "it themselves?", "14 days"),
    ("I bought a USD 450 annual software subscription on my corporate card without getting a purchase order "
     "number. What happens?", "payroll"),
    ("I joined the company four months ago. How many consecutive days of annual leave can I take?",
     "three consecutive"),
    ("I left my laptop on the train yesterday and it is gone. By when must I report it?", "24 hours"),
    ("We are on the Basic plan and our team keeps adding files. How much storage do we have?", "50 GB"),
    ("I am flying to a conference next month and the flight takes four hours. Which class is booked?", "Economy"),
]

UNANSWERABLE = [
    "A customer emptied the Recycle Bin on their phone last year. Can our support team recover their photos?",
    "I bought a USD 450 annual software subscription on my corporate card. Can I deduct it from my income tax?",
    "My neighbour's dog dug under my fence last night; what is the fine for the dog owner?",
    "I joined the company four months ago. How many days of paternity leave do I get?",
    pytest.param("My laptop battery swells after two years of use. Who manufactures the replacement battery?",
                 marks=pytest.mark.xfail(reason="the fitted answerability model (public fit splits) does not weigh this kind enough yet; the feature fires (tests/answer/test_decide.py); BENCHMARKS.md, fitted answerability model", strict=False)),
    "I am flying to a conference next month. What is the daily meal allowance in Tokyo?",
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    e = bm25_engine(tmp_path_factory.mktemp("scenario"), DOCS)
    yield e
    e.close()


@pytest.mark.parametrize("question,expected", ANSWERABLE)
def test_a_scenario_whose_answer_the_documents_hold_is_answered(engine: Engine, question: str,
                                                                 expected: str) -> None:
    a = engine.ask(question)
    assert not a.refused, (a.notes, a.confidence)
    assert expected.casefold() in a.text.casefold(), a.text


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_a_scenario_whose_answer_the_documents_lack_is_refused(engine: Engine, question: str) -> None:
    a = engine.ask(question)
    assert a.refused, (a.text, a.confidence)


def test_the_same_questions_asked_plainly_are_answered(engine: Engine) -> None:
    """The plain form of two scenarios: the answer does not depend on the story told around it."""
    for question, expected in (("How long do deleted items stay in the Trash?", "14 days"),
                               ("How many consecutive days of annual leave can a new employee take?",
                                "three consecutive")):
        a = engine.ask(question)
        assert not a.refused and expected in a.text, a.text


def test_a_plain_question_keeps_its_weights() -> None:
    """A one-sentence question is scored exactly as before: the very same weights object comes back."""
    analyzer = Analyzer()
    question = "How long do deleted items stay in the Trash?"
    terms = content_terms(question, analyzer)
    weights = np.ones(len(terms))
    assert scenario_weights(question, terms, weights, analyzer, {t: 1 for t in terms}) is weights


def test_the_situation_weighs_less_than_the_ask_and_its_story_nothing() -> None:
    """What a generic ask leaves to the situation is covered by the purchase test above ("What happens?")."""
    analyzer = Analyzer()
    question = ("A customer deleted a folder three weeks ago and now wants it back from the Trash. "
                "Can they still restore it themselves?")
    terms = content_terms(question, analyzer)
    weights = np.ones(len(terms))
    seen = {t: 1 for t in terms if t not in set(analyzer.analyze("three weeks ago themselves"))}
    judged = dict(zip(terms, scenario_weights(question, terms, weights, analyzer, seen)))
    restore, = analyzer.analyze("restore")
    trash, = analyzer.analyze("Trash")
    folder, = analyzer.analyze("folder")
    ago, = analyzer.analyze("ago")
    assert judged[restore] == 1.0  # the ask
    assert judged[trash] == 1.0  # a name the situation states
    assert judged[folder] == SITUATION_WEIGHT["en"] < 1.0  # the situation's other words: context
    assert judged[ago] == 0.0  # a word of the story no document holds
