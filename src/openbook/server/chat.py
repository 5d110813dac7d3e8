"""The OpenAI chat-completions shapes for ``/v1/chat/completions`` (model ``openbook``).

The last user message is the question; the turns before it are the history it is condensed with
(``openbook.answer.condense``). The reply's ``content`` is the answer with its ``[n]`` markers followed by a
"Sources:" list, so any chat client shows where the answer comes from; the same citations, and the refusal flag,
are also given as data: ``citations`` and ``openbook`` (the whole ``ask --json`` object) beside ``choices`` in a
completion, and in the last chunk of a stream. OpenAI's SDK keeps such extra fields (``completion.citations``).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..answer.context import format_sources
from ..errors import QueryError
from ..types import Citation


def split_conversation(messages: Sequence[tuple[str, str]]) -> tuple[list[dict[str, str]], str]:
    """(history, question): the last user message and the user/assistant turns before it.

    Raises:
        QueryError: no user message, or an empty last one.
    """
    last = max((i for i, (role, _) in enumerate(messages) if role == "user"), default=None)
    if last is None or not messages[last][1].strip():
        raise QueryError("the conversation has no user question: the last user message is the question")
    history = [{"role": r, "content": c} for r, c in messages[:last] if r in ("user", "assistant")]
    return history, messages[last][1]


def content_of(result: dict[str, Any]) -> str:
    """The answer text followed by its sources, one per line (as the CLI prints them)."""
    sources = format_sources([Citation(**c) for c in result["citations"]])
    return result["answer"] + (f"\n\nSources:\n{sources}" if sources else "")


def _extras(result: dict[str, Any]) -> dict[str, Any]:
    return {"citations": result["citations"], "openbook": result}


def chat_completion(result: dict[str, Any], cid: str, created: int) -> dict[str, Any]:
    """A ``chat.completion`` object for an ``answer_json`` result."""
    return {"id": cid, "object": "chat.completion", "created": created, "model": "openbook",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content_of(result)}}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, **_extras(result)}


class ChatChunks:
    """``chat.completion.chunk`` server-sent events: a role chunk with the first token, token chunks, then the
    sources and a final chunk with ``finish_reason`` and the structured citations."""

    def __init__(self, cid: str, created: int) -> None:
        self.cid, self.created, self.first = cid, created, True

    def _event(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        body = {"id": self.cid, "object": "chat.completion.chunk", "created": self.created, "model": "openbook",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    def token(self, piece: str) -> str:
        delta = {"role": "assistant", "content": piece} if self.first else {"content": piece}
        self.first = False
        return self._event(delta)

    def final(self, result: dict[str, Any]) -> str:
        sources = format_sources([Citation(**c) for c in result["citations"]])
        tail = self._event({"content": f"\n\nSources:\n{sources}"}) if sources else ""
        return tail + self._event({}, "stop", **_extras(result))

    def error(self, body: dict[str, Any]) -> str:
        """An event holding an error response's body (``{"error": {"type", "message", "code"}}``)."""
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
