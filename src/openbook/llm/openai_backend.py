"""OpenAI-compatible chat completions through the ``openai`` SDK (hosted API or any local server).

Retries: the SDK retries connection errors, 408, 409, 429 and 5xx answers up to ``max_retries`` times with
exponential backoff (0.5 s doubling to at most 8 s, with jitter; a ``Retry-After`` header wins).
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from .._extras import hint
from ..config import LLMConfig
from ..errors import GenerationError
from ..types import Message

_LOCAL_KEY = "not-needed"  # local servers ignore the key; the SDK insists on one


def _import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise GenerationError(hint("the openai backend", "llm")) from None
    return openai


class OpenAIGenerator:
    """Chat completions at ``config.base_url`` (empty: the hosted OpenAI API) with ``config.model``.

    Requests use temperature 0 and ``max_tokens`` from the config (or the per-call override).
    """

    name = "openai"

    def __init__(self, config: LLMConfig) -> None:
        openai = _import_openai()
        self._openai = openai
        self.model = config.model
        self.base_url = config.base_url or "https://api.openai.com/v1"
        self.max_tokens = config.max_tokens
        self.timeout_s = config.timeout_s
        self.last_finish_reason: str | None = None
        self.last_usage: dict[str, int] = {}  # tokens of the last generate(): input, output, cache_read
        self._client = openai.OpenAI(
            api_key=config.api_key or _LOCAL_KEY,
            base_url=config.base_url or None,
            timeout=config.timeout_s,
            max_retries=config.max_retries,
        )

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIGenerator(model={self.model!r}, base_url={self.base_url!r})"

    def _request(self, messages: Sequence[Message], max_tokens: int | None, stream: bool) -> Any:
        try:
            return self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": m["role"], "content": m["content"]} for m in messages],
                max_tokens=max_tokens or self.max_tokens,
                temperature=0.0,
                stream=stream,
            )
        except self._openai.OpenAIError as exc:
            raise self._error(exc) from None
        except ValueError as exc:  # a 200 reply whose body is not JSON (json.JSONDecodeError is a ValueError)
            raise GenerationError(
                f"openai backend (model {self.model!r} at {self.base_url}) sent a reply that is not JSON "
                f"({exc}); is --base-url an OpenAI-compatible /v1 endpoint?"
            ) from None

    def _error(self, exc: Exception) -> GenerationError:
        openai = self._openai
        where = f"openai backend (model {self.model!r} at {self.base_url})"
        if isinstance(exc, openai.APITimeoutError):
            return GenerationError(
                f"{where} did not answer within {self.timeout_s:g} s; raise [llm] timeout_s or check the server"
            )
        if isinstance(exc, openai.APIConnectionError):
            return GenerationError(f"{where} is unreachable ({exc}); start the server or fix --base-url")
        if isinstance(exc, openai.AuthenticationError):
            return GenerationError(f"{where} rejected the API key (401); set a valid OPENAI_API_KEY")
        if isinstance(exc, openai.NotFoundError):
            return GenerationError(f"{where} answered 404: unknown model or wrong --base-url (it should end in /v1)")
        if isinstance(exc, openai.APIStatusError):
            return GenerationError(f"{where} failed with HTTP {exc.status_code} after retries: {exc.message}")
        return GenerationError(f"{where} failed: {type(exc).__name__}: {exc}")

    def generate(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        """The whole completion text (see ``Generator.generate``).

        Raises:
            GenerationError: unreachable, timed out, HTTP error after retries, or a reply without a message.
        """
        response = self._request(messages, max_tokens, stream=False)
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise GenerationError(
                f"openai backend (model {self.model!r} at {self.base_url}) sent a malformed reply without choices"
            )
        self.last_finish_reason = choices[0].finish_reason
        usage = getattr(response, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        self.last_usage = {"input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                           "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
                           "cache_read_tokens": int(getattr(details, "cached_tokens", 0) or 0)}
        content = choices[0].message.content
        if content is None:
            raise GenerationError(
                f"openai backend (model {self.model!r} at {self.base_url}) sent a reply without text content"
            )
        return content

    def stream(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        """Completion text pieces as the server sends them (see ``Generator.stream``).

        Raises:
            GenerationError: as ``generate``, also when the stream breaks off.
        """
        self.last_finish_reason = None
        events = self._request(messages, max_tokens, stream=True)
        try:
            for event in events:
                for choice in getattr(event, "choices", None) or ():
                    delta = getattr(choice, "delta", None)
                    piece = getattr(delta, "content", None) if delta is not None else None
                    if piece:
                        yield piece
                    if choice.finish_reason:
                        self.last_finish_reason = choice.finish_reason
        except self._openai.OpenAIError as exc:
            raise self._error(exc) from None
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
