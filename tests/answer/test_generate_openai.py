"""The OpenAI-compatible backend against the scripted chat-completions server (real SDK, real HTTP)."""

from __future__ import annotations

import socket

import pytest
from helpers.scripted_llm import Reply

from openbook.llm.factory import get_generator
from openbook.llm.openai_backend import OpenAIGenerator
from openbook.config import LLMConfig
from openbook.errors import GenerationError

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "question?"}]
SECRET = "sk-test-SECRET-123"


def _gen(server, **kw) -> OpenAIGenerator:
    cfg = LLMConfig(backend="openai", model="scripted-model", base_url=server.openai_url, **kw)
    gen = get_generator(cfg, environ={"OPENAI_API_KEY": SECRET})
    assert isinstance(gen, OpenAIGenerator)
    return gen


def test_generate_sends_the_expected_request(scripted):
    scripted.push("Deleted files stay 14 days [1].")
    gen = _gen(scripted, max_tokens=64)
    assert gen.generate(MESSAGES) == "Deleted files stay 14 days [1]."
    assert gen.last_finish_reason == "stop"
    (req,) = scripted.requests
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "scripted-model"
    assert req.body["messages"] == MESSAGES
    assert req.body["max_tokens"] == 64 and req.body["temperature"] == 0.0
    assert not req.body.get("stream")
    assert req.headers["authorization"] == f"Bearer {SECRET}"


def test_per_call_max_tokens_and_length_finish(scripted):
    scripted.push(Reply("cut off", finish_reason="length"))
    gen = _gen(scripted)
    gen.generate(MESSAGES, max_tokens=5)
    assert scripted.requests[0].body["max_tokens"] == 5
    assert gen.last_finish_reason == "length"


def test_stream_yields_pieces_in_order(scripted):
    scripted.push(Reply("x", pieces=["Deleted", " files", " stay", " 14", " days", " [1]."]))
    gen = _gen(scripted)
    pieces = list(gen.stream(MESSAGES))
    assert pieces == ["Deleted", " files", " stay", " 14", " days", " [1]."]
    assert scripted.requests[0].body["stream"] is True
    assert gen.last_finish_reason == "stop"


def test_retries_429_and_5xx_then_succeeds(scripted):
    scripted.push(Reply(status=429), Reply(status=503), "ok [1].")
    assert _gen(scripted, max_retries=2).generate(MESSAGES) == "ok [1]."
    assert len(scripted.requests) == 3


def test_gives_up_after_max_retries_with_a_clear_error(scripted):
    scripted.push(*[Reply(status=500)] * 3)
    with pytest.raises(GenerationError, match=r"openai backend .*scripted-model.* HTTP 500") as err:
        _gen(scripted, max_retries=1).generate(MESSAGES)
    assert len(scripted.requests) == 2
    assert SECRET not in str(err.value)


def test_unreachable_server_names_the_backend_and_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = LLMConfig(backend="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(GenerationError, match=rf"openai backend .*127\.0\.0\.1:{port}.* unreachable"):
        get_generator(cfg, environ={}).generate(MESSAGES)


def test_timeout_is_reported(scripted):
    scripted.push(Reply("late", delay_s=2.0))
    with pytest.raises(GenerationError, match=r"did not answer within 0.3 s"):
        _gen(scripted, timeout_s=0.3, max_retries=0).generate(MESSAGES)


def test_malformed_reply_is_an_error(scripted):
    scripted.push(Reply(raw='{"id": "x", "object": "chat.completion", "choices": []}'))
    with pytest.raises(GenerationError, match="malformed"):
        _gen(scripted).generate(MESSAGES)


def test_reply_without_content_is_an_error(scripted):
    scripted.push(Reply(raw='{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": '
                        '[{"index": 0, "message": {"role": "assistant", "content": null}, "finish_reason": "stop"}]}'))
    with pytest.raises(GenerationError, match="without text"):
        _gen(scripted).generate(MESSAGES)


def test_404_explains_the_base_url(scripted):
    scripted.push(Reply(status=404))
    with pytest.raises(GenerationError, match="404"):
        _gen(scripted).generate(MESSAGES)


def test_key_never_shows_in_repr(scripted):
    gen = _gen(scripted)
    assert SECRET not in repr(gen) and SECRET not in str(vars(gen).get("base_url"))


def test_local_server_needs_no_key(scripted):
    scripted.push("hi")
    gen = get_generator(LLMConfig(backend="openai", model="m", base_url=scripted.openai_url), environ={})
    assert gen.generate(MESSAGES) == "hi"
