"""Which sentences the offline answerer composes, and the two-sentence answerability evidence, on small
hand-made documents: a sentence that inherits its document's subject, the bridge sentence that adds most,
near-ties of one document, names stated in a question, a hard negative on the same topic."""

from __future__ import annotations

import pytest

from openbook.answer.extractive import question_names
from openbook.api import Engine

from helpers.stores import bm25_engine

DOCS = {
    # the answering sentence names its subject only through the title ("Its parent company ...")
    "media/oriental-pearl.md": "# Oriental Pearl Media\n\nOriental Pearl Media was founded in 1992 in Shanghai and "
    "runs the Oriental Pearl Tower, three restaurants and a travel agency.\n\nIts parent company is the Shanghai "
    "Media Group.\n",
    "media/harbour-radio.md": "# Harbour Radio\n\nHarbour Radio is a media company in Tallvik. It runs two "
    "stations.\n",
    # multi-hop: the person's page names the laboratory, whose page holds the answer
    "people/anna-brisk.md": "# Anna Brisk\n\nAnna Brisk is a chemist who worked at Norlab Research for twenty "
    "years.\n",
    "org/norlab.md": "# Norlab Research\n\nNorlab Research is a chemistry laboratory founded by three engineers "
    "and funded by a laboratory trust. Its headquarters are in Tallvik, a harbour town.\n",
    # two sentences about the same subject that words cannot tell apart
    "parks/heuco.md": "# Heuco Tanks\n\nHeuco Tanks holds at least 200 painted masks on its rocks.\n\nHeuco Tanks "
    "is a state park with rock basins.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("composition"), DOCS)
    yield e
    e.close()


def test_a_sentence_inherits_its_documents_subject(engine: Engine) -> None:
    a = engine.ask("What is the parent company of Oriental Pearl Media?")
    assert not a.refused
    assert a.text.startswith("Its parent company is the Shanghai Media Group.")


def test_the_bridge_sentence_adds_what_the_first_lacks(engine: Engine) -> None:
    a = engine.ask("In which town are the headquarters of the laboratory where Anna Brisk worked?")
    assert not a.refused
    assert "Tallvik" in a.text
    assert {c.doc_id for c in a.citations} == {"people/anna-brisk.md", "org/norlab.md"}


def test_near_ties_of_one_document_both_answer(engine: Engine) -> None:
    a = engine.ask("What is Heuco Tanks?")
    assert not a.refused
    assert "painted masks" in a.text and "state park" in a.text


@pytest.mark.xfail(reason="the fitted answerability model (public fit splits) does not weigh this kind enough yet; the feature fires (tests/answer/test_decide.py); BENCHMARKS.md, fitted answerability model", strict=False)
def test_without_its_second_hop_the_bridge_question_is_refused(engine: Engine) -> None:
    question = "In which town are the headquarters of the laboratory where Anna Brisk worked?"
    whole = engine.ask(question)
    hidden = engine.ask(question, exclude_docs=("org/norlab.md",))
    assert hidden.refused and not whole.refused
    assert hidden.confidence is not None and whole.confidence is not None
    assert hidden.confidence < whole.confidence


@pytest.mark.parametrize("question,names", [
    ("Are Kalenderhane Mosque and Galata Bridge both in Istanbul?",
     ["kalenderhane mosque", "galata bridge", "istanbul"]),
    ("Which came first, The Korean War or the Berlin Airlift?", ["korean war", "berlin airlift"]),
    ('Who directed "Kiss and Tell" in Hollywood?', ["kiss and tell", "hollywood"]),
    ("How long are deleted files kept?", []),
    ("I joined Northwind last year. Can I take leave now?", ["northwind"]),  # "Can" opens a sentence
    ("Can I book premium economy on a 9-hour flight to Oslo?", ["oslo"]),  # a measure is no name
])
def test_question_names(question: str, names: list[str]) -> None:
    assert question_names(question) == names


def test_an_unseen_measurement_counts_through_its_number_and_unit(engine: Engine) -> None:
    from openbook.answer.extractive import term_weights

    terms = engine.analyzer.analyze("a 9-hour stop at the laboratory with error E-2043")
    assert {"9-hour", "9", "hour", "e-2043"} <= set(terms)
    w = dict(zip(terms, term_weights(terms, engine)))
    assert w["9-hour"] == 0.0  # "9" and "hour" carry it
    lab = engine.analyzer.analyze("laboratory")[0]
    assert w["e-2043"] == max(w.values()) > w[lab] > 0  # an unseen identifier keeps the largest idf
