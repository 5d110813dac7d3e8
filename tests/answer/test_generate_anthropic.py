"""The Anthropic backend against the scripted Messages API double (real SDK, real HTTP)."""

from __future__ import annotations

import pytest
from helpers.scripted_llm import Reply

from openbook.llm.factory import get_generator
from openbook.llm.anthropic_backend import AnthropicGenerator
from openbook.config import LLMConfig
from openbook.errors import GenerationError

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "question?"}]
SECRET = "sk-ant-SECRET-456"


def _gen(server, **kw) -> AnthropicGenerator:
    cfg = LLMConfig(backend="anthropic", model="claude-scripted", base_url=server.anthropic_url, **kw)
    gen = get_generator(cfg, environ={"ANTHROPIC_API_KEY": SECRET})
    assert isinstance(gen, AnthropicGenerator)
    return gen


def test_system_goes_to_its_own_field(scripted):
    scripted.push("Files stay 14 days [1].")
    gen = _gen(scripted, max_tokens=99)
    assert gen.generate(MESSAGES) == "Files stay 14 days [1]."
    assert gen.last_finish_reason == "stop"
    (req,) = scripted.requests
    assert req.path == "/v1/messages"
    assert req.body["system"] == "rules"
    assert req.body["messages"] == [{"role": "user", "content": "question?"}]
    assert req.body["max_tokens"] == 99 and req.body["model"] == "claude-scripted"
    # older SDKs send x-api-key, newer ones a bearer token
    assert SECRET in (req.headers.get("x-api-key", ""), req.headers.get("authorization", "").removeprefix("Bearer "))
    assert "anthropic-version" in req.headers


def test_stream_and_max_tokens_stop_reason(scripted):
    scripted.push(Reply("x", pieces=["一", "二", "三"], finish_reason="length"))
    gen = _gen(scripted)
    assert list(gen.stream(MESSAGES, max_tokens=3)) == ["一", "二", "三"]
    assert gen.last_finish_reason == "length"
    assert scripted.requests[0].body["stream"] is True and scripted.requests[0].body["max_tokens"] == 3


def test_overloaded_is_retried_then_reported(scripted):
    scripted.push(Reply(status=529), "fine")
    assert _gen(scripted, max_retries=1).generate(MESSAGES) == "fine"
    scripted.push(Reply(status=529), Reply(status=529))
    with pytest.raises(GenerationError, match=r"anthropic backend .*HTTP 529") as err:
        _gen(scripted, max_retries=1).generate(MESSAGES)
    assert SECRET not in str(err.value)


def test_timeout_is_reported(scripted):
    scripted.push(Reply("late", delay_s=2.0))
    with pytest.raises(GenerationError, match="anthropic backend .*did not answer within 0.3 s"):
        _gen(scripted, timeout_s=0.3, max_retries=0).generate(MESSAGES)


def test_reply_without_text_is_an_error(scripted):
    scripted.push(Reply(raw='{"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [], '
                        '"stop_reason": "end_turn", "stop_sequence": null, '
                        '"usage": {"input_tokens": 1, "output_tokens": 0}}'))
    with pytest.raises(GenerationError, match="without text"):
        _gen(scripted).generate(MESSAGES)
