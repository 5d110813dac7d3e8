"""The BM25 leg scores a search request by ``Analyzer.search_terms``: a first-person request's pronoun "I" is not
searched (it would match the "i" of every "i.e." with a rare term's idf), while a numeral "I" after a noun is; nor
are the tails of contractions (the "re" of "we're" would match every "re-entry")."""

from __future__ import annotations

from helpers.stores import bm25_engine

DOCS = {
    "notes/abbreviations.md": "# Style notes\n\nWrite the abbreviation i.e. with two full stops, i.e. as the "
    "style guide says; e.g. is written the same way.\n",
    "wiki/flutter.md": "# Panel flutter\n\nPanel flutter is a self-excited oscillation of a thin panel in a "
    "supersonic flow. Wind tunnel tests of flutter measure its onset.\n",
    "wiki/complex.md": "# Respiratory complex I\n\nComplex I is the first enzyme of the respiratory chain.\n",
    "wiki/reentry.md": "# Re-entry\n\nRe-entry heating of a capsule; re-entry corridors of a re-usable craft.\n",
    "wiki/enzymes.md": "# Enzymes\n\nAn enzyme is a protein that speeds up a reaction in the chain of "
    "respiration.\n",
}


def test_a_first_person_request_finds_its_topic_and_a_numeral_i_is_searched(tmp_path) -> None:
    engine = bm25_engine(tmp_path, DOCS)
    try:
        hits = engine.search("I am interested in flutter. I need tests, i.e. wind tunnel ones.", k=2)
        assert [h.doc_id for h in hits] == ["wiki/flutter.md"]  # not the notes on "i.e."
        assert engine.search("complex I enzyme", k=1)[0].doc_id == "wiki/complex.md"
    finally:
        engine.close()


def test_a_request_with_the_pronoun_inside_a_clause_and_contractions_finds_its_topic(tmp_path) -> None:
    engine = bm25_engine(tmp_path, DOCS)
    try:
        hits = engine.search("Papers I have missed on panel flutter: we're keen on wind tunnel tests.", k=2)
        assert [h.doc_id for h in hits] == ["wiki/flutter.md"]  # not "i.e.", "complex I" nor "re-entry"
    finally:
        engine.close()
