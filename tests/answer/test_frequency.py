"""A "how often" question asks for a frequency (``question.expected_answer_type``): the sentence stating a rate or a
period answers first, on a small real BM25 store (real analyzer, index and answerer)."""

from __future__ import annotations

from helpers.stores import bm25_engine


def test_the_sentence_stating_the_rate_answers_a_how_often_question(tmp_path) -> None:
    # the handover sentence shares more of the question's words; only the first states how often
    e = bm25_engine(tmp_path, {
        "oncall.md": "# On-call\n\nThe on-call rotation changes every Monday at 10:00. At the handover the outgoing "
        "engineer hands over open incidents in the on-call channel. Handover notes for the rotation are kept in "
        "the wiki.\n",
        "canteen.md": "# Canteen\n\nThe canteen serves soup on Fridays and opens at eight.\n"})
    try:
        answer = e.ask("How often is the on-call rotation handed over?")
        assert not answer.refused, answer.notes
        assert answer.text.startswith("The on-call rotation changes every Monday"), answer.text
    finally:
        e.close()
