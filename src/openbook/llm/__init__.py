"""The LLM client: the ``Generator`` Protocol the stages call, and ``DeferredGenerator``, one built on first use.

The stages that can use a chat model (contextual retrieval and RAPTOR summaries at ingest, query transforms and
multi-hop at retrieval, answering) are handed a ``Generator`` (or None: no LLM configured) by the layer that
builds them (``openbook.api.Engine``); they never build one. ``openbook.llm.factory`` builds one from
``LLMConfig`` (``get_generator``, ``configured_generator``); only the outer layers (api, cli, server) import it.
This package imports only ``config``, ``errors`` and ``types``.

Backends (one module each):

- ``openai``: any OpenAI-compatible chat-completions server through the ``openai`` SDK (hosted API, llama.cpp
  server, vLLM, Ollama, LM Studio; pick the server with ``base_url``).
- ``anthropic``: the Anthropic Messages API through the ``anthropic`` SDK.

API keys come from ``LLMConfig.api_key`` (config file) or, when empty, from ``OPENAI_API_KEY`` /
``ANTHROPIC_API_KEY`` in the environment mapping handed to ``get_generator``. Keys are never logged nor put in
error messages or reprs.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterator, Protocol, Sequence, runtime_checkable

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


class DeferredGenerator:
    """A ``Generator`` whose backend is built by ``build`` on first use, then kept: an engine that is handed
    one pays for the SDK import and the key check only when a stage calls the model, and a command that never
    does (a plain search) runs with an LLM configured but unusable.

    Args:
        name: the backend's name (``"openai"``, ``"anthropic"``), known before it is built.
        build: makes the backend; what it raises (``ConfigError``: no key; ``GenerationError``: SDK missing)
            comes out of ``built()``, ``generate`` and ``stream``, and again on the next call.
    """

    def __init__(self, name: str, build: Callable[[], Generator]) -> None:
        self.name = name
        self._build = build
        self._backend: Generator | None = None
        self._lock = threading.Lock()

    def built(self) -> Generator:
        """The backend, built now when it was not yet."""
        with self._lock:
            if self._backend is None:
                self._backend = self._build()
            return self._backend

    @property
    def last_finish_reason(self) -> str | None:
        return self._backend.last_finish_reason if self._backend is not None else None

    @property
    def last_usage(self) -> dict[str, int]:
        """Tokens of the backend's last ``generate`` (``input_tokens``, ``output_tokens``, ...); {} before."""
        usage = getattr(self._backend, "last_usage", None)
        return usage if isinstance(usage, dict) else {}

    def generate(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        return self.built().generate(messages, max_tokens=max_tokens)

    def stream(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        return self.built().stream(messages, max_tokens=max_tokens)

    def __repr__(self) -> str:
        return f"DeferredGenerator({self.name!r}, built={self._backend is not None})"


def ready(generator: Generator | None) -> Generator | None:
    """``generator`` with its backend built now (a ``DeferredGenerator`` builds, raising what its build raises:
    ``ConfigError`` for a missing key), so that a stage fails before it starts work; None stays None."""
    if isinstance(generator, DeferredGenerator):
        generator.built()
    return generator


__all__ = ["DeferredGenerator", "Generator", "Message", "ready"]
