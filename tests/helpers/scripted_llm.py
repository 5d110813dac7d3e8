"""A scripted chat server on 127.0.0.1 speaking the OpenAI chat-completions and Anthropic Messages protocols.

A faithful local double for answer-quality tests: it returns the replies it was given, in order, as JSON or as
server-sent events (the exact event shapes both SDKs parse), and records every request it received.

    with ScriptedLLMServer() as server:
        server.push(Reply("Trash keeps files 14 days [1]."))
        config = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url)
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        text: the completion text.
        status: HTTP status; non-200 sends an error body instead of a completion.
        delay_s: seconds to wait before answering (to trigger client timeouts).
        finish_reason: OpenAI finish reason (``stop``/``length``); mapped to Anthropic's stop_reason.
        pieces: stream pieces; None splits ``text`` after each space.
        raw: if set, sent verbatim as the body with status 200 (malformed replies).
        usage: token counts merged into the reply's ``usage`` (e.g. Anthropic's ``cache_read_input_tokens``).
    """

    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    finish_reason: str = "stop"
    pieces: list[str] | None = None
    raw: str | None = None
    usage: dict[str, Any] | None = None

    def stream_pieces(self) -> list[str]:
        if self.pieces is not None:
            return self.pieces
        words = self.text.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]] if self.text else []


@dataclass
class Request:
    """One request received. For a streamed reply: ``pieces_sent`` (text pieces written), ``ended`` ("done":
    every piece and the end were sent; "client closed": a write failed because the client closed the
    connection) and ``ended_at`` (``time.monotonic()`` then)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    pieces_sent: int = 0
    ended: str | None = None
    ended_at: float | None = None


_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "test"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.server.owner.requests.append(request)
        self.request_record = request
        try:
            reply = self.server.owner.replies.get_nowait()
        except queue.Empty:
            self._json(500, {"error": {"message": "scripted server: no reply left in the script", "type": "script"}})
            return
        if reply.delay_s:
            time.sleep(reply.delay_s)
        try:
            if reply.raw is not None:
                self._send(200, reply.raw.encode(), "application/json")
            elif reply.status != 200:
                self._json(reply.status, {"type": "error", "error": {"message": f"scripted {reply.status}",
                                                                      "type": "scripted_error"}},
                           {"retry-after-ms": "5"})
            elif self.path.endswith("/chat/completions"):
                self._openai(reply, body)
            elif self.path.endswith("/messages"):
                self._anthropic(reply, body)
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        except (BrokenPipeError, ConnectionResetError):
            request.ended, request.ended_at = "client closed", time.monotonic()  # the client gave up

    def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()

    def _event(self, data: Any, event: str | None = None) -> None:
        payload = data if isinstance(data, str) else json.dumps(data)
        text = (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()

    def _openai(self, reply: Reply, body: dict[str, Any]) -> None:
        model = body.get("model", "scripted")
        base = {"id": "chatcmpl-scripted", "created": 0, "model": model}
        if not body.get("stream"):
            self._json(200, {**base, "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply.text},
                 "finish_reason": reply.finish_reason}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, **(reply.usage or {})}})
            return
        self._start_stream()
        chunk = {**base, "object": "chat.completion.chunk"}
        self._event({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                           "finish_reason": None}]})
        for piece in reply.stream_pieces():
            self._event({**chunk, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            self.request_record.pieces_sent += 1
            time.sleep(self.server.owner.piece_delay_s)
        self._event({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
        self._event("[DONE]")
        self.request_record.ended, self.request_record.ended_at = "done", time.monotonic()

    def _anthropic(self, reply: Reply, body: dict[str, Any]) -> None:
        model = body.get("model", "scripted")
        stop = _ANTHROPIC_STOP.get(reply.finish_reason, reply.finish_reason)
        message = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                   "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1, **(reply.usage or {})}}
        if not body.get("stream"):
            self._json(200, {**message, "content": [{"type": "text", "text": reply.text}], "stop_reason": stop})
            return
        self._start_stream()
        self._event({"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
                    "message_start")
        self._event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                    "content_block_start")
        for piece in reply.stream_pieces():
            self._event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
                        "content_block_delta")
            self.request_record.pieces_sent += 1
            time.sleep(self.server.owner.piece_delay_s)
        self._event({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self._event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                     "usage": {"output_tokens": 1}}, "message_delta")
        self._event({"type": "message_stop"}, "message_stop")
        self.request_record.ended, self.request_record.ended_at = "done", time.monotonic()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ScriptedLLMServer"


@dataclass
class ScriptedLLMServer:
    """Start with ``start()`` or ``with``; ``push`` replies; read ``requests`` afterwards."""

    piece_delay_s: float = 0.0
    replies: "queue.Queue[Reply]" = field(default_factory=queue.Queue)
    requests: list[Request] = field(default_factory=list)

    def start(self) -> "ScriptedLLMServer":
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def openai_url(self) -> str:
        """base_url for the openai SDK."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        """base_url for the anthropic SDK (it appends /v1/messages)."""
        return f"http://127.0.0.1:{self.port}"

    def push(self, *replies: Reply | str) -> None:
        for r in replies:
            self.replies.put(Reply(r) if isinstance(r, str) else r)
