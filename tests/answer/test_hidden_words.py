"""A refusal tells a caller nothing about the words of documents it may not see: which question words the corpus
lacks, and what they weigh, are judged on the visible documents (``answer.pipeline.VisibleStats``). Real analyzer,
real BM25 store on disk."""

from __future__ import annotations

import pytest

from helpers.stores import bm25_engine, docs_engine

DOCS = {
    "legal/memo.md": "---\nacl: [legal]\n---\n# Legal memo\n\nThe Glimmerdyne team replaces the contract templates "
                     "every spring.\n",
    "news.md": "# Team news\n\nThe design team replaces the office chairs every five years. The support team "
               "answers tickets within two days.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    eng = bm25_engine(tmp_path_factory.mktemp("hidden-words"), DOCS)
    yield eng
    eng.close()


def test_a_word_only_a_hidden_document_uses_reads_as_a_word_no_document_uses(engine):
    hidden = engine.ask("What does the Glimmerdyne team replace?")  # the word of the legal-only memo
    absent = engine.ask("What does the Flurbotron team replace?")  # a word no document uses
    assert hidden.refused and absent.refused
    assert hidden.notes == absent.notes
    assert hidden.confidence == pytest.approx(absent.confidence, abs=1e-12)


def test_the_caller_who_may_see_the_document_gets_the_answer(engine):
    answer = engine.ask("What does the Glimmerdyne team replace?", roles=["legal"])
    assert not answer.refused and "contract templates" in answer.text
    assert [c.doc_id for c in answer.citations] == ["legal/memo.md"]


def test_a_word_no_visible_document_uses_on_postgresql(tmp_path, postgresql_location):
    """The same judgement on a PostgreSQL store: a question word outside the caller's visible vocabulary is
    weighed as a word no document uses, and the ask answers (or refuses) instead of raising."""
    engine = docs_engine(tmp_path, DOCS, embedding=False, store=postgresql_location)
    try:
        hidden = engine.ask("What does the Glimmerdyne team replace?", roles=["staff"])
        absent = engine.ask("What does the Flurbotron team replace?")
        assert hidden.refused and absent.refused
        assert hidden.notes == absent.notes
        assert hidden.confidence == pytest.approx(absent.confidence, abs=1e-12)
        answer = engine.ask("What does the Glimmerdyne team replace?", roles=["legal"])
        assert not answer.refused and "contract templates" in answer.text
    finally:
        engine.close()
