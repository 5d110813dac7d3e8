"""The HTTP application: REST API under ``/v1``, the web page at ``/``, MCP at ``/mcp``.

Built on FastAPI (Starlette underneath) and served by uvicorn. FastAPI because its pydantic request models reject
unknown fields (so a request cannot smuggle in ``roles``) and give the OpenAPI schema at ``/openapi.json`` for
free, and because it is Starlette, so the MCP SDK's streamable HTTP app (a Starlette app) joins the same server
and event loop. Every engine call runs on the ``Service``'s threads, never on the event loop.

Browsers (``_BrowserGuard``, every route): a request carrying an ``Origin`` header (a page's script) is served
only when that origin is the server itself, so a web page on another site cannot make the user's browser upload,
delete or ask through a server it can reach (cross-site request forgery: a ``multipart/form-data`` POST needs no
CORS preflight, and without keys the local server trusts anonymous callers); and a server without keys answers
only requests addressed to a loopback name (``Host``: localhost, 127.0.0.1, [::1]), so a site whose DNS name is
re-pointed at 127.0.0.1 cannot read it either (DNS rebinding). Clients that are not browsers send no ``Origin``.

Errors keep the CLI's one-line messages: every error response's body is ``ErrorBody``,
``{"error": {"type": "QueryError", "message": "...", "code": "QueryError"}}`` (the OpenAI error shape, so OpenAI
clients show it too), with the status from ``STATUS``, and the OpenAPI schema says so for every operation. A
message never holds the server's own paths (the store's folder is named ``STORE``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import re
import threading
import time
import uuid
from contextlib import asynccontextmanager
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal, Sequence

from fastapi import Depends, FastAPI, Query, Request, Security, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route
from urllib.parse import urlsplit

from ..api import Engine
from ..config import Config
from ..errors import (ConfigError, GenerationError, IngestError, MissingExtraError, ModelMismatchError, OpenbookError,
                      QueryError, StoreError, UnsupportedFormatError)
from .keys import AuthError, KeyStore, Principal
from .service import UPLOADS, Service
from .shapes import answer_json, document_json, documents_json, search_json

STATUS: list[tuple[type[Exception], int]] = [
    (AuthError, 401), (QueryError, 400), (ConfigError, 400), (UnsupportedFormatError, 415), (IngestError, 422),
    (ModelMismatchError, 409), (StoreError, 503), (GenerationError, 502), (MissingExtraError, 501),
    (OpenbookError, 500),
]
_STATUSES = {int(s) for s in HTTPStatus}
MODEL_NAME = "openbook"
log = logging.getLogger("openbook.server")


def status_for(exc: Exception) -> int:
    """HTTP status of an openbook error (the first matching class of ``STATUS``)."""
    return next((code for cls, code in STATUS if isinstance(exc, cls)), 500)


class ApiError(Exception):
    """An error with an HTTP status that is not an openbook error (403, 404, 413)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


class ErrorDetail(BaseModel):
    type: str = Field(description="The kind of error: an openbook error class (QueryError, ConfigError, ...), "
                                  "AuthError, ValidationError, Forbidden, NotFound, TooLarge, BadFilename, ...")
    message: str = Field(description="One line: what was wrong, and how to fix it.")
    code: str = Field(description="A machine-readable code (the OpenAI error shape's): the type, or "
                                  "invalid_request for a request that does not match the schema.")


class ErrorBody(BaseModel):
    """The body of every error response (4xx and 5xx)."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    "4XX": {"model": ErrorBody, "description": "The request was refused: a bad request or filter (400), no or an "
                                               "unknown key (401), not allowed (403), not found (404), too large "
                                               "(413), an unsupported file type (415), a request that does not "
                                               "match this schema (422), a store built by another model (409)"},
    "5XX": {"model": ErrorBody, "description": "The LLM failed (502), or the store or key file cannot be read (503)"},
}
"""The error responses every operation documents (``ErrorBody``), for FastAPI's ``responses``."""


def _json_data(schema: dict[str, Any]) -> dict[str, Any]:
    """An event's ``data``: JSON text holding a value of ``schema``."""
    return {"type": "string", "contentMediaType": "application/json", "contentSchema": schema}


_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
ASK_EVENTS: dict[str, Any] = {
    "description": "One Server-Sent Event of an answer asked with `stream: true`: `token` events (a piece of the "
                   "answer's text), then one `answer` event (the JSON answer, as without `stream`), or an `error` "
                   "event (ErrorBody) instead",
    "oneOf": [
        {"type": "object", "required": ["event", "data"], "properties": {
            "event": {"const": "token"},
            "data": _json_data({"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}})}},
        {"type": "object", "required": ["event", "data"], "properties": {
            "event": {"const": "answer"}, "data": _json_data({"type": "object"})}},
        {"type": "object", "required": ["event", "data"], "properties": {
            "event": {"const": "error"}, "data": _json_data(_ERROR_REF)}},
    ],
}
"""The schema of each event of ``/v1/ask``'s stream (OpenAPI 3.1: a ``text/event-stream`` schema is one event)."""

CHAT_EVENTS: dict[str, Any] = {
    "description": "One Server-Sent Event of a chat completion asked with `stream: true` (OpenAI's stream): "
                   "`chat.completion.chunk` objects, or an ErrorBody, then `[DONE]`",
    "type": "object", "required": ["data"],
    "properties": {"data": {"anyOf": [{"const": "[DONE]"}, _json_data({"anyOf": [
        {"type": "object", "required": ["object", "choices"],
         "properties": {"object": {"const": "chat.completion.chunk"}, "choices": {"type": "array"}}},
        _ERROR_REF]})]}},
}
"""The schema of each event of ``/v1/chat/completions``' stream."""


BEARER = HTTPBearer(auto_error=False, scheme_name="apiKey", description=(
    "An API key (`openbook keys add NAME --role ROLE`), sent as `Authorization: Bearer KEY`. Required on a server "
    "whose store has keys; a server without keys serves callers on loopback without one (public documents)."))
"""The API-key scheme as the OpenAPI schema states it; ``KeyStore.principal_from_headers`` does the checking."""


def _document_links(doc_id: str) -> dict[int | str, dict[str, Any]]:
    """The 200 response's OpenAPI links: the document whose id is at ``doc_id`` (a runtime expression) in the
    body can be shown and deleted (so API tools can chain the calls)."""
    return {200: {"links": {
        "ShowDocument": {"operationId": "show_document", "parameters": {"doc_id": doc_id}},
        "DeleteDocument": {"operationId": "delete_document", "parameters": {"doc_id": doc_id}}}}}


def _sse_response(events: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    """The extra 200 content of an operation that answers with Server-Sent Events when asked to stream."""
    return {200: {"content": {"text/event-stream": {"schema": events}}}}


def error_body(exc: Exception, hide: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """``ErrorBody`` of ``exc``, each ``(path, name)`` of ``hide`` replaced in the message (server paths)."""
    kind = exc.kind if isinstance(exc, ApiError) else type(exc).__name__
    return {"error": {"type": kind, "message": _hidden(str(exc), hide), "code": kind}}


def _hidden(text: str, hide: Sequence[tuple[str, str]]) -> str:
    for path, name in hide:
        text = text.replace(path, name)
    return text


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


# ---------------------------------------------------------------------- request models
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(_Strict):
    query: str = Field(description="The words to search for.")
    k: int = Field(10, ge=1, le=100, description="Hits to return.")
    where: list[str] = Field(default_factory=list, description="Metadata filters, e.g. 'updated>=2024-01-01'.")
    mode: Literal["bm25", "dense", "hybrid"] | None = None


class Turn(_Strict):
    role: Literal["user", "assistant", "system"]
    content: str


class AskRequest(_Strict):
    question: str
    where: list[str] = Field(default_factory=list)
    mode: Literal["bm25", "dense", "hybrid"] | None = None
    stream: bool = Field(False, description="Answer as Server-Sent Events: `token` events, then `answer`.")
    history: list[Turn] = Field(default_factory=list, description="Earlier turns; the question is condensed "
                                                                  "with them into a standalone query.")


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """OpenAI chat-completions request; sampling fields a client sends (temperature, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description=f"The model: {MODEL_NAME!r} (another name is 404 model_not_found).",
                       examples=[MODEL_NAME])
    messages: list[ChatMessage]
    stream: bool = False


# ---------------------------------------------------------------------- the app
def create_app(store: str | Path, config: Config, *, keys: KeyStore | None = None, max_upload_mb: float = 20,
               readers: int | None = None, host: str = "127.0.0.1") -> FastAPI:
    """The ASGI app for one store.

    Args:
        store: store folder (created when missing).
        config: engine configuration (LLM backend, retrieval, embedding).
        keys: the key store; default ``KeyStore(store)``.
        max_upload_mb: largest file ``/v1/ingest`` accepts, in MiB.
        readers: reader threads (see ``Service``).
        host: the address served, for the MCP transport's DNS-rebinding protection on loopback.
    """
    from .mcp_tools import build_mcp

    keys = keys or KeyStore(store)
    service = Service(store, config, readers)
    max_upload = int(max_upload_mb * 1024 * 1024)

    def mcp_principal(request: Any) -> Principal:
        return keys.principal_from_headers(request.headers if request is not None else {})

    mcp = build_mcp(service, mcp_principal)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(service.warm)
        if config.embedding.enabled:
            service.embed_in_background()  # chunks a stopped ingest left without a vector
        async with mcp.session_manager.run():
            yield
        await asyncio.to_thread(service.close)

    app = FastAPI(title="openbook", version="1", lifespan=lifespan, responses=ERROR_RESPONSES,
                  description="Answers from your own documents, with citations or an honest refusal.")
    app.add_middleware(_BrowserGuard, keys=keys)
    app.state.service = service
    app.state.keys = keys

    # ------------------------------------------------------------------ errors
    hide = _private_paths(service)

    def error_json(exc: Exception) -> dict[str, Any]:
        return error_body(exc, hide)

    @app.exception_handler(OpenbookError)
    async def _openbook_error(_: Request, exc: OpenbookError) -> JSONResponse:
        return JSONResponse(error_json(exc), status_code=status_for(exc))

    @app.exception_handler(AuthError)
    async def _auth_error(_: Request, exc: AuthError) -> JSONResponse:
        return JSONResponse(error_json(exc), status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(error_json(exc), status_code=exc.status)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's and FastAPI's own refusals (a body that is not JSON, an unknown path, a method a path does
        # not serve), in the same shape as every other error
        kind = "".join(HTTPStatus(exc.status_code).phrase.title().split()) if exc.status_code in _STATUSES \
            else "HTTPError"
        message, headers = f"{exc.detail}", dict(exc.headers or {})
        if exc.status_code == 405:
            # Starlette names the methods of the first route with this path only; a path served by several
            # routes (GET and DELETE /v1/documents/{doc_id}) allows the methods of them all
            allowed = _methods_at(app.router.routes, request.scope)
            headers["Allow"] = ", ".join(allowed)
            message = f"{request.method} is not served at {request.url.path}: use {' or '.join(allowed)}"
        return JSONResponse(error_json(ApiError(exc.status_code, kind, message)), status_code=exc.status_code,
                            headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        parts = [f"{'.'.join(str(x) for x in e.get('loc', ()) if x != 'body') or 'body'}: {e.get('msg')}"
                 + (" (roles come from the API key, never from the request)"
                    if e.get("type") == "extra_forbidden" and tuple(e.get("loc", ()))[-1:] == ("roles",) else "")
                 for e in exc.errors()]
        message = "bad request: " + "; ".join(parts)
        return JSONResponse({"error": {"type": "ValidationError", "message": message, "code": "invalid_request"}},
                            status_code=422)

    # ------------------------------------------------------------------ who is asking
    def principal(request: Request, _: HTTPAuthorizationCredentials | None = Security(BEARER)) -> Principal:
        try:
            return keys.principal_from_headers(request.headers)
        except ConfigError as exc:  # a damaged key file: fail closed, as a server fault, not a bad request
            raise ApiError(503, "ConfigError", str(exc)) from None  # (error_json hides the file's path)

    def writer(who: Principal = Depends(principal)) -> Principal:
        if not who.write:
            raise ApiError(403, "Forbidden", f"key {who.name!r} may not ingest or delete; create a key with "
                                             f"`openbook keys add NAME --role ROLE --write`")
        return who

    # ------------------------------------------------------------------ API
    @app.get("/v1/health", summary="Liveness and the index generation served")
    async def health() -> dict[str, Any]:
        stats = await service.read(Engine.stats)
        return {"status": "ok", "generation": stats["generation"]}

    @app.get("/v1/stats", summary="What the store holds")
    async def stats(who: Principal = Depends(principal)) -> dict[str, Any]:
        info = await service.read(Engine.stats, roles=who.roles)  # what the caller may see, never hidden ones
        # the store's folder or URL (a URL may hold a password) is the server's own: named STORE, as in errors
        return info | {"store": "STORE", "location": "STORE", "keys_required": keys.required,
                       "you": {"name": who.name, "roles": list(who.roles), "write": who.write}}

    @app.post("/v1/search", summary="Ranked passages (the shape of `openbook search --json`)",
              responses=_document_links("$response.body#/hits/0/doc_id"))
    async def search(req: SearchRequest, who: Principal = Depends(principal)) -> dict[str, Any]:
        return await service.read(search_json, req.query, req.k, req.where, who.roles, req.mode)

    @app.post("/v1/ask", summary="A cited answer or a refusal (`openbook ask --json`); SSE with stream: true",
              responses=_sse_response(ASK_EVENTS))
    async def ask(req: AskRequest, request: Request, who: Principal = Depends(principal)) -> Any:
        history = [t.model_dump() for t in req.history]
        if not req.stream:
            return await service.answer(answer_json, req.question, req.where, who.roles, req.mode, history)
        return _stream(request, lambda on_token: service.answer(answer_json, req.question, req.where, who.roles,
                                                                req.mode, history, on_token),
                       lambda result: _sse("answer", result),
                       lambda piece: _sse("token", {"text": piece}),
                       lambda exc: _sse("error", error_json(exc)))

    @app.get("/v1/documents", summary="Documents the caller may read (`openbook documents --json`)",
             responses=_document_links("$response.body#/documents/0/doc_id"))
    async def documents(prefix: str = "", where: list[str] = Query(default_factory=list),
                        who: Principal = Depends(principal)) -> dict[str, Any]:
        return await service.read(documents_json, prefix, where, who.roles)

    @app.get("/v1/documents/{doc_id:path}", summary="One document with its chunks (`openbook show --json`)",
             operation_id="show_document")
    async def document(doc_id: str, who: Principal = Depends(principal)) -> dict[str, Any]:
        doc = await service.read(document_json, doc_id, who.roles)
        if doc is None:
            raise ApiError(404, "NotFound", f"no document {doc_id!r}: list ids with GET /v1/documents")
        return doc

    @app.delete("/v1/documents/{doc_id:path}", summary="Delete a document", operation_id="delete_document")
    async def delete(doc_id: str, who: Principal = Depends(writer)) -> dict[str, Any]:
        uploads = (service.local / UPLOADS).resolve()
        return {"deleted": await service.write(_delete_visible, doc_id, who.roles, uploads)}

    @app.post("/v1/ingest", summary="Upload files; the report of `openbook ingest --json`",
              responses=_document_links("$response.body#/added/0"))
    async def ingest(files: list[UploadFile], who: Principal = Depends(writer)) -> JSONResponse:
        folder = (service.local / UPLOADS).resolve()
        incoming = folder / ".incoming"
        incoming.mkdir(parents=True, exist_ok=True)
        staged: list[tuple[Path, Path]] = []
        try:
            for f in files:
                name = Path(f.filename or "").name
                if not name or name.startswith(".") or not re.fullmatch(r"[\w .()+,@=-]+", name):
                    raise ApiError(400, "BadFilename", f"{f.filename!r}: give the file a plain name (letters, "
                                                       f"digits, spaces, . _ -)")
                tmp = incoming / f"{uuid.uuid4().hex}-{name}"
                size = 0
                with open(tmp, "wb") as out:
                    while chunk := await f.read(1 << 20):
                        size += len(chunk)
                        if size > max_upload:
                            raise ApiError(413, "TooLarge", f"{name}: larger than the upload limit of "
                                                            f"{max_upload_mb:g} MiB; start the server with a "
                                                            f"larger --max-upload-mb or ingest it with the CLI")
                        out.write(chunk)
                staged.append((tmp, folder / name))
            # what the key may publish depends on the upload alone; whether a hidden document holds the name is
            # decided under the store's writer lock, in one step with the write (``_ingest_staged``)
            refused = [dst.name for tmp, dst in staged
                       if not await asyncio.to_thread(_readable_by, tmp, dst.name, who.roles, config)]
            if refused:
                raise ApiError(403, "Forbidden", _not_writable(refused, who.name))
            report = _without_folder(await service.write(_ingest_staged, staged, who.roles, who.name), folder)
        finally:
            for tmp, _ in staged:
                tmp.unlink(missing_ok=True)
        if report["ok"]:
            return JSONResponse(report)
        # nothing could be ingested: an error (ErrorBody) that carries the report, as the CLI's exit code 1 does
        why = "; ".join([reason for _, reason in report["failed"]]
                        + [f"{doc_id}: no text to index" for _, doc_id in report["empty"]])
        failure = IngestError(f"no file could be ingested: {why}")
        return JSONResponse(report | error_json(failure), status_code=status_for(failure))

    # ------------------------------------------------------------------ OpenAI-compatible
    @app.get("/v1/models", summary="OpenAI-compatible model list (one model: openbook)")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "created": 0,
                                            "owned_by": "openbook"}]}

    @app.post("/v1/chat/completions", summary="OpenAI-compatible chat: answers with [n] markers and sources",
              responses=_sse_response(CHAT_EVENTS))
    async def chat(req: ChatRequest, request: Request, who: Principal = Depends(principal)) -> Any:
        from .chat import ChatChunks, chat_completion, split_conversation

        if req.model != MODEL_NAME:
            raise ApiError(404, "model_not_found", f"model {req.model!r} does not exist here; use {MODEL_NAME!r}")
        history, question = split_conversation([(m.role, m.text()) for m in req.messages])
        cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if not req.stream:
            result = await service.answer(answer_json, question, (), who.roles, None, history)
            return chat_completion(result, cid, created)
        chunks = ChatChunks(cid, created)
        return _stream(request, lambda on_token: service.answer(answer_json, question, (), who.roles, None,
                                                                history, on_token),
                       chunks.final, chunks.token, lambda exc: chunks.error(error_json(exc)),
                       done="data: [DONE]\n\n")

    # ------------------------------------------------------------------ MCP and the page
    mcp_route = next(r for r in mcp_app.routes if getattr(r, "path", None) == "/mcp")
    app.router.routes.append(Route("/mcp", endpoint=_Guarded(mcp_route.app, keys, hide), methods=["GET", "POST",
                                                                                               "DELETE"]))
    static = resources.files("openbook.server") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        # no other site may frame the page (clickjacking: a click on a hidden page asks or uploads as you);
        # the page's own Content-Security-Policy (a meta tag) cannot say frame-ancestors
        return FileResponse(str(static / "index.html"), headers={
            "X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

    def _stream(request: Request, run: Callable[[Callable[[str], None]], Any], final: Callable[[Any], str],
                token: Callable[[str], str], error: Callable[[Exception], str], done: str = "") -> StreamingResponse:
        """Server-Sent Events: a ``token`` event per text piece as the answerer produces it, then ``final``.

        A client that goes away (its connection closed: the ASGI ``http.disconnect``, or a send that fails)
        cancels the answer: the next piece the LLM sends raises ``_ClientGone`` on the answerer thread, which
        ends the LLM stream (``generate_answer`` closes it, and with it the connection to the LLM server) and
        frees the thread, instead of reading the model's whole answer for nobody.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        gone = threading.Event()

        def on_token(piece: str) -> None:
            if gone.is_set():
                raise _ClientGone("the client closed the connection")
            loop.call_soon_threadsafe(queue.put_nowait, ("token", piece))

        async def watch() -> None:  # the request body is read: the next message is the disconnect
            while not gone.is_set():
                if (await request.receive())["type"] == "http.disconnect":
                    gone.set()

        task = asyncio.ensure_future(run(on_token))
        task.add_done_callback(lambda _: queue.put_nowait(("done", "")))
        watcher = asyncio.ensure_future(watch())

        async def events() -> AsyncIterator[str]:
            sent = False
            try:
                while True:
                    kind, piece = await queue.get()
                    if kind == "done":
                        break
                    sent = True
                    yield token(piece)
                try:
                    result = task.result()
                except (OpenbookError, AuthError) as exc:
                    yield error(exc)
                else:
                    if not sent:  # the offline answerer does not stream: its whole text is one piece
                        yield token(result["answer"])
                    yield final(result)
                if done:
                    yield done
            finally:  # the stream ended, or the client left (the response is cancelled here)
                gone.set()
                watcher.cancel()
                task.add_done_callback(_quiet)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return app


class _ClientGone(Exception):
    """Raised into an answer whose streaming client has left, to stop it (never shown to anyone)."""


def _quiet(task: "asyncio.Future[Any]") -> None:
    """Retrieve a finished answer's outcome, so that one cancelled by its client's leaving is not logged as an
    exception nobody retrieved."""
    if not task.cancelled():
        task.exception()


def _hidden_document(engine: Engine, doc_id: str, roles: tuple[str, ...]) -> bool:
    """True when ``doc_id`` is stored but not visible to ``roles`` (an upload must not replace it)."""
    return engine.document(doc_id, roles=roles) is None and engine.document_exists(doc_id)


def _not_writable(names: Sequence[str], key: str) -> str:
    """The one message for uploads a key may not write, whatever the reason (see ``create_app``'s ingest)."""
    return (f"{', '.join(names)}: key {key!r} may not write a document under this name with this access list (a "
            f"key must hold one of a document's roles to publish it, and cannot replace a document it may not "
            f"read); upload it under another name, or with a key holding one of its roles")


def _readable_by(path: Path, name: str, roles: Sequence[str], config: Config) -> bool:
    """Whether a document uploaded as ``name`` would be visible to ``roles``: public, or an access list naming
    one of them. A file that does not parse (or is over ``config.ingest``'s limits) is left to the ingest, whose
    report says why."""
    from ..ingest import load_file
    from ..ingest.limits import ParseLimits
    from ..store.filters import visible

    try:
        docs = load_file(path, name, ParseLimits.of(config.ingest))
    except OpenbookError:
        return True
    return all(visible(d.metadata, roles) for d in docs)


def _methods_at(routes: Sequence[Any], scope: Any) -> list[str]:
    """The HTTP methods that ``routes`` serve at the path of the request ``scope``, sorted."""
    return sorted({m for r in routes if getattr(r, "methods", None) and r.matches(scope)[0] != Match.NONE
                   for m in r.methods})


def _private_paths(service: Service) -> list[tuple[str, str]]:
    """The server's own locations an error message may name, each with the word callers see instead (``STORE``),
    longest first: the store (a folder, or a database URL, which may hold a password) and its local folder."""
    names = {str(service.store), str(service.local), str(Path(service.local).resolve())}
    if isinstance(service.store, Path):
        names.add(str(service.store.resolve()))
    # (a relative folder's name is a word a message may use for something else: only absolute paths and URLs)
    return sorted(((n, "STORE") for n in names if n and (Path(n).is_absolute() or "://" in n)),
                  key=lambda pair: -len(pair[0]))


def _without_folder(value: Any, folder: Path) -> Any:
    """``value`` (a report: dicts, lists, strings) with ``folder``'s absolute path taken out of every string, so
    that a caller sees an uploaded file by its name (``plan.md``), never the server's own paths."""
    if isinstance(value, str):
        return value.replace(f"{folder}{os.sep}", "").replace(str(folder), UPLOADS)
    if isinstance(value, dict):
        return {k: _without_folder(v, folder) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_folder(v, folder) for v in value]
    return value


def _writer_waits(line: str) -> None:
    """``on_wait`` of the server's writes: another process (``openbook ingest`` in a shell) holds the store."""
    log.info("%s", line)


def _ingest_staged(engine: Engine, staged: list[tuple[Path, Path]], roles: Sequence[str],
                   key: str) -> dict[str, Any]:
    """Move uploaded files into the uploads folder and ingest them (on the writer thread), refusing the whole
    upload with a 403 ``ApiError`` when a document the key may not read holds one of the names.

    The check, the move and the ingest are one step under the store's writer lock, so no other write (this
    server's or another process's, on any backend) can store a hidden document under the name in between. One
    refusal, one message, as for an upload the key could not read (``_not_writable``): a separate answer would
    tell the key that a hidden document exists (GET and DELETE answer 404 for hidden and missing alike).

    The report's ``documents_total`` / ``chunks_total`` count what ``roles`` may see, as ``/v1/stats`` does: the
    store's own totals would tell a writer how much is hidden from it."""
    with engine.store.write_lock(_writer_waits):
        refused = [dst.name for _, dst in staged if _hidden_document(engine, dst.name, roles)]
        if refused:
            raise ApiError(403, "Forbidden", _not_writable(refused, key))
        for tmp, dst in staged:
            os.replace(tmp, dst)
        report = engine.ingest([dst for _, dst in staged], on_wait=_writer_waits)
        failed = {path for path, _ in report.failed}
        for _, dst in staged:
            if str(dst) in failed:
                dst.unlink(missing_ok=True)  # not kept: it would fail again on the next upload
    seen = engine.stats(roles=roles)
    return report.to_dict() | {"documents_total": seen["documents"], "chunks_total": seen["chunks"]}


def _delete_visible(engine: Engine, doc_id: str, roles: Sequence[str], uploads: Path) -> list[str]:
    """Delete ``doc_id`` when ``roles`` may see it, and its uploaded original (a file in ``uploads``), on the
    writer thread: the check and the delete are one step under the store's writer lock.

    Raises:
        ApiError: 404 when the document is missing or hidden from ``roles`` (the same answer for both)."""
    with engine.store.write_lock(_writer_waits):
        doc = engine.document(doc_id, roles=roles)
        if doc is None:
            raise ApiError(404, "NotFound", f"no document {doc_id!r}: list ids with GET /v1/documents")
        gone = engine.delete([doc_id])
        source = Path(doc["source"])
        if gone and source.parent == uploads:
            source.unlink(missing_ok=True)
    return gone


class _Guarded:
    """The MCP endpoint behind the same API-key check as the REST API (401 before any MCP message; 503 when the
    key file cannot be read, as on the REST API). ``hide``: the server's paths to keep out of messages."""

    def __init__(self, app: Any, keys: KeyStore, hide: Sequence[tuple[str, str]] = ()) -> None:
        self.app, self.keys, self.hide = app, keys, hide

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            self.keys.principal_from_headers(Headers(scope=scope))
        except AuthError as exc:
            await JSONResponse(error_body(exc), status_code=401, headers={"WWW-Authenticate": "Bearer"})(
                scope, receive, send)
            return
        except ConfigError as exc:  # a damaged key file: fail closed
            await JSONResponse(error_body(exc, self.hide), status_code=503)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def loopback_name(host: str) -> bool:
    """Whether ``host`` (an address to bind, or a ``Host`` header's name without its port) names this machine's
    loopback interface: localhost (and ``*.localhost``), 127.0.0.0/8, ::1."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(netloc: str) -> str:
    """The host part of a ``Host`` header or URL netloc, without the port ("[::1]:8000" -> "[::1]")."""
    return urlsplit(f"//{netloc}").hostname or ""


class _BrowserGuard:
    """Refuses (403) a browser request from another site, and, on a server without keys, any request not
    addressed to a loopback name (see the module docstring). ASGI middleware over every route, MCP included."""

    def __init__(self, app: Any, keys: KeyStore) -> None:
        self.app, self.keys = app, keys

    def _keys_required(self) -> bool:
        """Whether the server requires keys; True when the key file cannot be read (fail closed: the request's
        key check then answers 503, saying what is wrong with the file)."""
        try:
            return self.keys.required
        except ConfigError:
            return True

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            host = headers.get("host", "")
            origin = headers.get("origin")
            # (behind a reverse proxy the page's origin is the name the proxy was asked for: X-Forwarded-Host,
            # a header a cross-site page cannot add without a CORS preflight, which this server never grants)
            served = {host.lower(), *(h.strip().lower() for h in headers.get("x-forwarded-host", "").split(",") if h)}
            why = None
            if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() not in served):
                why = (f"a browser request from another site ({origin}) is not served: use the page this server "
                       f"serves, or a client that is not a browser")
            elif not self._keys_required() and not loopback_name(_host_name(host)):
                why = (f"this server has no API keys and answers only requests addressed to localhost or "
                       f"127.0.0.1, not {host!r}; create keys with `openbook keys add` to serve other names")
            if why is not None:
                await JSONResponse(error_body(ApiError(403, "Forbidden", why)), status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
