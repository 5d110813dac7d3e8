"""``/v1/chat/completions`` with the official ``openai`` client, unchanged, pointed at the server."""

from __future__ import annotations

import openai
import pytest

from helpers.served import FINANCE_SECRET

QUESTION = "How many days of annual leave do full-time employees get?"


def client(served, who: str = "staff") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key=served.tokens[who], max_retries=0)


def test_completion_has_markers_sources_and_structured_citations(served):
    c = client(served)
    assert [m.id for m in c.models.list()] == ["openbook"]
    out = c.chat.completions.create(model="openbook", messages=[{"role": "user", "content": QUESTION}])
    text = out.choices[0].message.content
    assert "25 days" in text and "[1]" in text and "\n\nSources:\n[1] leave-policy.md" in text
    extra = out.model_extra
    assert extra["citations"][0]["doc_id"] == "leave-policy.md" and extra["openbook"]["refused"] is False


def test_streaming_and_refusal(served):
    c = client(served)
    stream = c.chat.completions.create(model="openbook", stream=True,
                                       messages=[{"role": "system", "content": "Be brief."},
                                                 {"role": "user", "content": QUESTION}])
    chunks = list(stream)
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks)
    assert "25 days" in text and "Sources:" in text
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["citations"][0]["doc_id"] == "leave-policy.md"
    refusal = c.chat.completions.create(model="openbook",
                                        messages=[{"role": "user", "content": "What is the capital of Australia?"}])
    assert refusal.model_extra["openbook"]["refused"] is True and "Sources:" not in refusal.choices[0].message.content


def test_follow_up_turn_is_condensed(served):
    out = client(served).chat.completions.create(model="openbook", messages=[
        {"role": "user", "content": "How much does the staff parking permit cost?"},
        {"role": "assistant", "content": "12 EUR per month [1]."},
        {"role": "user", "content": "When is it renewed?"}])
    assert "January" in out.choices[0].message.content
    assert "parking" in out.model_extra["openbook"]["question"]


def test_errors_reach_the_client(served):
    c = client(served)
    with pytest.raises(openai.NotFoundError):
        c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{served.url}/v1", api_key="ob_wrong", max_retries=0).chat.completions.create(
            model="openbook", messages=[{"role": "user", "content": QUESTION}])


def test_staff_never_receives_a_finance_passage_through_chat(served):
    c = client(served, "staff")
    for stream in (False, True):
        out = c.chat.completions.create(model="openbook", stream=stream, messages=[
            {"role": "user", "content": "What is the marketing budget approval code?"}])
        text = repr(list(out)) if stream else out.model_dump_json()
        assert FINANCE_SECRET not in text and "finance/budget.md" not in text and "480,000" not in text
