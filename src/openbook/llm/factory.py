"""Builds the configured ``openbook.llm.Generator`` from ``LLMConfig``: the registry of backends by name.

Only the outer layers (``openbook.api``, the CLI, the server) import this module; the stages are handed the
generator it builds (an import-linter contract in pyproject.toml keeps them from importing it).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable, Mapping

from ..config import LLMConfig
from ..errors import ConfigError
from . import DeferredGenerator, Generator


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
            config = replace(config, api_key=key)
        elif not config.base_url:
            raise ConfigError(
                f"no API key for the {backend} backend: set {API_KEY_ENV[backend]} in the environment or "
                f"api_key in the [llm] section of openbook.toml (or point --base-url at a local server)"
            )
    return _FACTORIES[backend](config)


def configured_generator(config: LLMConfig, environ: Mapping[str, str] | None = None) -> Generator | None:
    """The generator ``config`` names, built by ``get_generator`` on its first use (a ``DeferredGenerator``);
    None when no backend is configured (``config.backend`` empty), for the offline answerer.

    Nothing is checked here: a missing key, an unknown backend or a missing SDK raise (``ConfigError``,
    ``GenerationError``) when a stage first calls the model or readies it (``openbook.llm.ready``).
    """
    if not config.backend.strip():
        return None
    return DeferredGenerator(config.backend.strip().lower(), lambda: get_generator(config, environ))


__all__ = ["API_KEY_ENV", "configured_generator", "get_generator", "parse_llm_spec"]
