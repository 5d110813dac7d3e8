"""Follow-up questions become standalone queries: the offline rule, and the LLM rewrite (scripted double)."""

from __future__ import annotations

from helpers.scripted_llm import Reply

from openbook.answer.condense import condense_question, needs_context
from openbook.llm.factory import get_generator
from openbook.config import LLMConfig

HISTORY = [{"role": "user", "content": "How much does the staff parking permit cost?"},
           {"role": "assistant", "content": "12 EUR per month [1]."}]


def test_self_contained_questions_are_kept():
    assert condense_question([], "When is it renewed?") == "When is it renewed?"
    question = "How many days of annual leave do full-time employees get?"
    assert not needs_context(question)
    assert condense_question(HISTORY, question) == question


def test_follow_ups_without_a_question_of_their_own_borrow_the_previous_question_offline():
    for follow_up in ("And for contractors?", "What about weekends?"):
        assert needs_context(follow_up)
        assert condense_question(HISTORY, follow_up) == \
            f"{follow_up} (How much does the staff parking permit cost?)"


def test_follow_ups_with_a_question_of_their_own_get_the_words_they_leave_out_offline():
    # the whole previous question would be a second question to answer ("... (How much does ... cost?)")
    for follow_up in ("When is it renewed?", "And how often is it renewed?"):
        assert needs_context(follow_up)
        assert condense_question(HISTORY, follow_up) == f"{follow_up} (staff parking permit cost)"
    limit = [{"role": "user", "content": "What is the upload size limit?"}]
    assert condense_question(limit, "And how do I disable the limit?") == \
        "And how do I disable the limit? (upload size)"


def test_an_llm_rewrites_the_follow_up(scripted):
    scripted.push(Reply("When is the staff parking permit renewed?"))
    config = LLMConfig(backend="openai", model="scripted", base_url=scripted.openai_url, api_key="x")
    out = condense_question(HISTORY, "When is it renewed?", get_generator(config))
    assert out == "When is the staff parking permit renewed?"
    sent = scripted.requests[-1].body["messages"]
    assert "standalone question" in sent[0]["content"]
    assert "staff parking permit cost" in sent[1]["content"] and sent[1]["content"].endswith("When is it renewed?")


def test_a_failing_llm_falls_back_to_the_rule(scripted):
    scripted.push(Reply(status=500))
    config = LLMConfig(backend="openai", model="scripted", base_url=scripted.openai_url, api_key="x",
                       max_retries=0)
    out = condense_question(HISTORY, "When is it renewed?", get_generator(config))
    assert out == "When is it renewed? (staff parking permit cost)"
