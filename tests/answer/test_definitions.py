"""A term a document defines governs the rules that use it, on small hand-written documents: the rule that uses
the defined term with a value of the asked type answers (the definition joins as its hop), a rule about another
defined term is not stitched on, a weaker sentence of another document adding one common word of the
question does not pad the answer, another row of a table does not join a row as the sentence "naming" it, and
two sentences that each cover one half of the question without any link between them do not count
as one answer in the answerability features."""

from __future__ import annotations

import pytest

from openbook.answer.bridge import definition, governing
from openbook.answer.extractive import _Candidate, _linked
from openbook.api import Engine
from openbook.config import Config
from openbook.index.analyzer import Analyzer
from openbook.types import Chunk, Hit, Passage

from helpers.stores import bm25_engine

_FILLER = " ".join(f"Clause {i} of these rules is kept for reference and changes nothing here." for i in range(12))

DOCS = {
    "rules/tool-lending.md": "# Harbourside Tool Library - Lending Rules\n\n## 1. Definitions\n\n"
    "- **Class K tool** means a hand tool: hammers, saws, chisels and spanners.\n"
    "- **Class P tool** means a powered tool: drills, sanders, ladders and pressure washers.\n"
    "- **Patron** means a resident of Harbourside or a pensioner from a twinned town who holds a patron card.\n\n"
    f"## 2. General\n\n{_FILLER}\n\n"
    "## 3. Loan periods\n\n"
    "- Class K tools are lent to residents for 21 days.\n"
    "- Class P tools are lent for 3 days to every member.\n\n"
    "## 4. Limits\n\nPatrons may have up to 4 tools on loan at the same time.\n\n"
    "## 5. Renewals\n\nClass P tools may be renewed twice. Class K tools may be renewed up to 5 times.\n",
    "rules/records.md": "# Tool library records\n\nThe office keeps a record of returned tools for 12 months "
    "so that damage claims can be checked.\n",
    "help/partner-loans.md": "# Partner loans\n\nTools borrowed from partner libraries are normally kept for "
    "three weeks.\n",
    "help/opening.md": "# Opening times\n\n| site | weekdays | saturday |\n|---|---|---|\n"
    "| Quay Street | 09:00-18:00 | 10:00-14:00 |\n| Mill Lane | 08:00-20:00 | open at all times |\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    """The documents in a BM25-only store, with ``min_confidence`` 0: these tests are about which sentences
    answer, not whether the calibrated answerability lets the answer through."""
    root = tmp_path_factory.mktemp("definitions")
    bm25_engine(root, DOCS).close()
    e = Engine.open(root / "store", Config().with_overrides({"embedding.enabled": False,
                                                               "answer.min_confidence": 0.0}))
    yield e
    e.close()


def test_the_forms_of_a_definition() -> None:
    analyzer = Analyzer()
    d = definition("Class K tool means a hand tool: hammers, saws, chisels and spanners.", analyzer)
    assert d is not None and {"hammer", "saw"} <= d.body
    assert d.pattern.search("Class K tools are lent for 21 days")
    assert not d.pattern.search("Class P tools are lent for 3 days")
    quoted = definition('A "new member" is a patron who joined less than 6 months ago.', analyzer)
    assert quoted is not None and quoted.pattern.search("New members may not borrow powered tools.")
    label = definition("Controlled tool: any tool with a blade longer than 10 cm.", analyzer)
    assert label is not None and label.pattern.search("Controlled tools need a signed form.")
    for not_one in ("This means that you pay the fee.", "Note: the office is closed.", "The hammer is blue.",
                    "site: Quay Street; weekdays: 09:00-18:00"):
        assert definition(not_one, analyzer) is None
    assert governing(d.text, [d]) is None  # the definition does not govern itself


def test_the_rule_using_the_defined_term_answers_and_the_definition_joins(engine: Engine) -> None:
    # the question names a saw; only the definition says a saw is a Class K tool, the rule far below gives the days
    answer = engine.ask("How long can a resident borrow a saw?")
    assert not answer.refused
    assert answer.text.startswith("Class K tools are lent to residents for 21 days.")
    assert "Class K tool means a hand tool" in answer.text
    assert "Class P" not in answer.text


def test_a_paraphrased_member_class_reaches_its_rule(engine: Engine) -> None:
    # "pensioner" is only in the definition of a patron: the limit stated for patrons answers, and the
    # definition says why
    answer = engine.ask("How many tools can a pensioner have out at once?")
    assert not answer.refused
    assert answer.text.startswith("Patrons may have up to 4 tools on loan at the same time.")
    assert "Patron means a resident of Harbourside or a pensioner" in answer.text


def test_the_rule_beats_the_definition_and_a_rule_of_another_class_is_not_stitched(engine: Engine) -> None:
    answer = engine.ask("How many times can I renew a pressure washer?")
    assert not answer.refused
    assert answer.text.startswith("Class P tools may be renewed twice.")
    assert "Class K" not in answer.text


def test_no_weaker_sentence_of_another_document_pads_the_answer_for_one_common_word(engine: Engine) -> None:
    # "The office keeps a record of returned tools for 12 months" shares only "keep" with what the answer lacks
    answer = engine.ask("How long can I normally keep a tool borrowed from a partner library?")
    assert not answer.refused
    assert "three weeks" in answer.text
    assert {c.doc_id for c in answer.citations} == {"help/partner-loans.md"}


def test_another_row_does_not_name_a_rows_subject(engine: Engine) -> None:
    answer = engine.ask("What time does Quay Street close on Saturday?")
    assert answer.text.startswith("site: Quay Street")
    assert "Mill Lane" not in answer.text


def _candidate(text: str, doc: str, chunk: str, title: str, analyzer: Analyzer, n: int) -> _Candidate:
    c = Chunk(chunk_id=chunk, doc_id=doc, text=text, title=title)
    terms = frozenset(analyzer.analyze_document(text))
    return _Candidate(Passage(n=n, hit=Hit(chunk, doc, 1.0, {}, c)), text, 1.0, 0.5, terms)


def test_two_halves_of_a_question_are_not_linked_unless_something_joins_them() -> None:
    analyzer = Analyzer()
    q = set(analyzer.analyze("What is the door code for the visitor workshop?"))
    guest = _candidate("Visitors use the Annex workshop.", "d1", "c1", "Workshops", analyzer, 1)
    code = _candidate("Members open the main door with their card and a door code.", "d1", "c2", "Workshops",
                      analyzer, 2)
    assert not _linked(guest, code, analyzer, q, {})
    # a shared name joins them, and so does one passage
    annex = _candidate("The Annex door code is changed every month.", "d1", "c2", "Workshops", analyzer, 2)
    assert _linked(guest, annex, analyzer, q, {})
    same = _candidate("Members open the main door with a code.", "d1", "c1", "Workshops", analyzer, 1)
    assert _linked(guest, same, analyzer, q, {})
    # a passage naming the other document's title is the bridge of a multi-hop question
    film = _candidate("The film stars Ada Quill.", "d2", "c3", "Harbour Lights", analyzer, 3)
    person = _candidate("She was born in 1931.", "d3", "c4", "Ada Quill", analyzer, 4)
    assert _linked(film, person, analyzer, set(analyzer.analyze("When was the star of Harbour Lights born?")), {})


def test_an_unlinked_sentence_supplying_the_asked_attribute_does_not_lift_answerability(tmp_path, monkeypatch) -> None:
    # the guest network sentence covers "guest Wi-Fi"; the password is another document's, about member accounts:
    # the two halves make no answer, so two_sentences stays the answering sentence's own coverage
    import openbook.answer.extractive as extractive

    docs = {"net/guest-wifi.md": "# Guest Wi-Fi\n\nGuests connect to the HarbourNet Wi-Fi network.\n",
            "net/accounts.md": "# Member accounts\n\nMembers sign in to the booking desk with their card number "
            "and password.\n"}
    seen: list[dict[str, float]] = []
    real = extractive.answer_features

    def spy(*args, **kwargs):
        features = real(*args, **kwargs)
        seen.append(features)
        return features

    monkeypatch.setattr(extractive, "answer_features", spy)
    bm25_engine(tmp_path, docs).close()
    with Engine.open(tmp_path / "store", Config().with_overrides({"embedding.enabled": False})) as e:
        e.ask("What is the password for the guest Wi-Fi?")
    assert seen and seen[-1]["two_sentences"] == pytest.approx(seen[-1]["sentence_coverage"])
