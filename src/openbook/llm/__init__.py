"""The LLM client: a ``Generator`` Protocol and a registry that builds one from ``LLMConfig``.

The stages that can use a chat model (contextual retrieval and RAPTOR summaries at ingest, query transforms and
multi-hop at retrieval, answering) import it from here; it imports only ``config``, ``errors`` and ``types``.

Backends (one module each):

- ``openai``: any OpenAI-compatible chat-completions server through the ``openai`` SDK (hosted API, llama.cpp
  server, vLLM, Ollama, LM Studio; pick the server with ``base_url``).
- ``anthropic``: the Anthropic Messages API through the ``anthropic`` SDK.

API keys come from ``LLMConfig.api_key`` (config file) or, when empty, from ``OPENAI_API_KEY`` /
``ANTHROPIC_API_KEY`` in the environment mapping handed to ``get_generator``. Keys are never logged nor put in
error messages or reprs.
"""

from __future__ import annotations

import os
from typing import Callable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from ..config import LLMConfig
from ..errors import ConfigError
from ..types import Message


@runtime_checkable
class Generator(Protocol):
    """A chat model: messages in, text out.

    ``messages`` are ``{"role": "system"|"user"|"assistant", "content": str}`` dicts in conversation order.
    ``max_tokens`` (model tokens) overrides the configured limit for one call. After a call,
    ``last_finish_reason`` holds why the model stopped: ``"stop"``, ``"length"`` (hit max_tokens) or the
    backend's own word; None before the first call.
    """

    name: str
    last_finish_reason: str | None

    def generate(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        """The whole completion text. Raises GenerationError when the backend fails or answers malformed."""
        ...

    def stream(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        """Completion text pieces in arrival order; their concatenation is the completion."""
        ...


API_KEY_ENV: dict[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def parse_llm_spec(spec: str) -> tuple[str, str]:
    """Split a ``BACKEND:MODEL`` spec, e.g. ``"openai:gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``.

    The model part may itself hold colons (``"openai:qwen2.5:7b"`` -> ``("openai", "qwen2.5:7b")``).

    Raises:
        ConfigError: no colon, an empty part, or an unknown backend.
    """
    backend, sep, model = spec.strip().partition(":")
    backend = backend.strip().lower()
    model = model.strip()
    if not sep or not backend or not model:
        raise ConfigError(
            f"bad LLM spec {spec!r}: expected BACKEND:MODEL, "
            "e.g. openai:gpt-4o-mini or anthropic:claude-3-5-haiku-latest"
        )
    if backend not in _FACTORIES:
        known = ", ".join(sorted(_FACTORIES))
        raise ConfigError(f"unknown LLM backend {backend!r} in {spec!r}; known backends: {known}")
    return backend, model


def _make_openai(config: LLMConfig) -> Generator:
    from .openai_backend import OpenAIGenerator

    return OpenAIGenerator(config)


def _make_anthropic(config: LLMConfig) -> Generator:
    from .anthropic_backend import AnthropicGenerator

    return AnthropicGenerator(config)


_FACTORIES: dict[str, Callable[[LLMConfig], Generator]] = {
    "openai": _make_openai,
    "anthropic": _make_anthropic,
}


def get_generator(config: LLMConfig, environ: Mapping[str, str] | None = None) -> Generator:
    """Build the generator named by ``config.backend``.

    Args:
        config: backend, model, base_url, api_key, timeout_s (seconds per request), max_tokens, max_retries.
        environ: where to look up ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` when ``config.api_key`` is empty;
            None reads the process environment.

    Raises:
        ConfigError: empty or unknown backend, empty model, or no API key for a hosted API (no ``base_url``).
    """
    backend = config.backend.strip().lower()
    if not backend:
        raise ConfigError("no LLM backend configured: pass --llm openai:MODEL or set [llm] backend in openbook.toml")
    if backend not in _FACTORIES:
        raise ConfigError(f"unknown LLM backend {backend!r}; known backends: {', '.join(sorted(_FACTORIES))}")
    if not config.model.strip():
        raise ConfigError(f"no model configured for the {backend} backend: pass --llm {backend}:MODEL")
    if not config.api_key:
        env = os.environ if environ is None else environ
        key = env.get(API_KEY_ENV[backend], "")
        if key:
            from dataclasses import replace

            config = replace(config, api_key=key)
        elif not config.base_url:
            raise ConfigError(
                f"no API key for the {backend} backend: set {API_KEY_ENV[backend]} in the environment or "
                f"api_key in the [llm] section of openbook.toml (or point --base-url at a local server)"
            )
    return _FACTORIES[backend](config)


__all__ = ["API_KEY_ENV", "Generator", "Message", "get_generator", "parse_llm_spec"]
