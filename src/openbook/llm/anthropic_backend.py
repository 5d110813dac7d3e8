"""Anthropic Messages API through the ``anthropic`` SDK.

The system message is sent as the ``system`` parameter; retries as in the SDK (connection errors, 408, 409,
429, 5xx; exponential backoff, ``Retry-After`` honoured) up to ``max_retries`` times.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from .._extras import hint
from ..config import LLMConfig
from ..errors import GenerationError
from ..types import Message

_LOCAL_KEY = "not-needed"

# Anthropic's stop reasons mapped to the OpenAI words the rest of openbook uses.
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise GenerationError(hint("the anthropic backend", "llm")) from None
    return anthropic


class AnthropicGenerator:
    """Messages API at ``config.base_url`` (empty: Anthropic's hosted API) with ``config.model``."""

    name = "anthropic"

    def __init__(self, config: LLMConfig) -> None:
        anthropic = _import_anthropic()
        self._anthropic = anthropic
        self.model = config.model
        self.base_url = config.base_url or "https://api.anthropic.com"
        self.max_tokens = config.max_tokens
        self.timeout_s = config.timeout_s
        self.last_finish_reason: str | None = None
        self.last_usage: dict[str, int] = {}  # tokens of the last generate(): input, output, cache read/write
        self._client = anthropic.Anthropic(
            api_key=config.api_key or _LOCAL_KEY,
            base_url=config.base_url or None,
            timeout=config.timeout_s,
            max_retries=config.max_retries,
        )

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicGenerator(model={self.model!r}, base_url={self.base_url!r})"

    def _request(self, messages: Sequence[Message], max_tokens: int | None, stream: bool) -> Any:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        chat = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens or self.max_tokens,
            "messages": chat,
            "stream": stream,
        }
        if system:
            kwargs["system"] = system
        try:
            return self._client.messages.create(**kwargs)
        except self._anthropic.AnthropicError as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> GenerationError:
        anthropic = self._anthropic
        where = f"anthropic backend (model {self.model!r} at {self.base_url})"
        if isinstance(exc, anthropic.APITimeoutError):
            return GenerationError(
                f"{where} did not answer within {self.timeout_s:g} s; raise [llm] timeout_s or check the server"
            )
        if isinstance(exc, anthropic.APIConnectionError):
            return GenerationError(f"{where} is unreachable ({exc}); check the network or --base-url")
        if isinstance(exc, anthropic.AuthenticationError):
            return GenerationError(f"{where} rejected the API key (401); set a valid ANTHROPIC_API_KEY")
        if isinstance(exc, anthropic.APIStatusError):
            return GenerationError(f"{where} failed with HTTP {exc.status_code} after retries: {exc.message}")
        return GenerationError(f"{where} failed: {type(exc).__name__}: {exc}")

    def generate(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        """The whole completion text: every text block joined (see ``Generator.generate``).

        Raises:
            GenerationError: unreachable, timed out, HTTP error after retries, or a reply without text.
        """
        response = self._request(messages, max_tokens, stream=False)
        blocks = getattr(response, "content", None)
        texts = [b.text for b in blocks or () if getattr(b, "type", "") == "text"]
        if not texts:
            raise GenerationError(
                f"anthropic backend (model {self.model!r} at {self.base_url}) sent a reply without text content"
            )
        reason = getattr(response, "stop_reason", None)
        self.last_finish_reason = _FINISH.get(reason, reason)
        usage = getattr(response, "usage", None)
        self.last_usage = {key: int(getattr(usage, field, 0) or 0) for key, field in (
            ("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
            ("cache_read_tokens", "cache_read_input_tokens"), ("cache_write_tokens", "cache_creation_input_tokens"))}
        return "".join(texts)

    def stream(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        """Text deltas in arrival order (see ``Generator.stream``).

        Raises:
            GenerationError: as ``generate``, also when the stream breaks off or reports an error event.
        """
        self.last_finish_reason = None
        events = self._request(messages, max_tokens, stream=True)
        try:
            for event in events:
                kind = getattr(event, "type", "")
                if kind == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
                    if event.delta.text:
                        yield event.delta.text
                elif kind == "message_delta":
                    reason = getattr(event.delta, "stop_reason", None)
                    if reason:
                        self.last_finish_reason = _FINISH.get(reason, reason)
        except self._anthropic.AnthropicError as exc:
            raise self._error(exc) from None
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
