"""Choosing a backend: spec parsing, registry, API keys from config or environment."""

from __future__ import annotations

import pytest

from openbook.llm import Generator
from openbook.llm.factory import get_generator, parse_llm_spec
from openbook.config import LLMConfig
from openbook.errors import ConfigError


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("OpenAI:qwen2.5:7b", ("openai", "qwen2.5:7b")),
        (" anthropic:claude-3-5-haiku-latest ", ("anthropic", "claude-3-5-haiku-latest")),
    ],
)
def test_parse_llm_spec(spec, expected):
    assert parse_llm_spec(spec) == expected


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":m", "mystery:model"])
def test_bad_specs_are_config_errors(spec):
    with pytest.raises(ConfigError, match="openai"):
        parse_llm_spec(spec)


def test_hosted_api_without_key_says_which_variable():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_generator(LLMConfig(backend="openai", model="gpt-4o-mini"), environ={})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        get_generator(LLMConfig(backend="anthropic", model="claude"), environ={})


def test_key_from_environment_or_config():
    gen = get_generator(LLMConfig(backend="openai", model="gpt-4o-mini"), environ={"OPENAI_API_KEY": "sk-env"})
    assert isinstance(gen, Generator) and "sk-env" not in repr(gen)
    gen = get_generator(LLMConfig(backend="anthropic", model="c", api_key="sk-file"), environ={})
    assert isinstance(gen, Generator) and "sk-file" not in repr(gen)


def test_empty_or_unknown_backend_and_empty_model():
    with pytest.raises(ConfigError, match="--llm"):
        get_generator(LLMConfig(), environ={})
    with pytest.raises(ConfigError, match="known backends"):
        get_generator(LLMConfig(backend="cohere", model="x"), environ={})
    with pytest.raises(ConfigError, match="no model"):
        get_generator(LLMConfig(backend="openai", base_url="http://127.0.0.1:1/v1"), environ={})
