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

Errors keep the CLI's one-line messages: the body is ``{"error": {"type": "QueryError", "message": "..."}}``
(the OpenAI error shape, so OpenAI clients show it too) with the status from ``STATUS``.
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
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal, Sequence

from fastapi import Depends, FastAPI, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import Headers
from starlette.routing import Route
from urllib.parse import urlsplit

from ..api import Engine
from ..config import Config
from ..errors import (ConfigError, GenerationError, IngestError, MissingExtraError, ModelMismatchError, OpenbookError,
                      QueryError, StoreError, UnsupportedFormatError)
from .keys import AuthError, KeyStore, Principal
from .service import Service
from .shapes import answer_json, document_json, documents_json, search_json

STATUS: list[tuple[type[Exception], int]] = [
    (AuthError, 401), (QueryError, 400), (ConfigError, 400), (UnsupportedFormatError, 415), (IngestError, 422),
    (ModelMismatchError, 409), (StoreError, 503), (GenerationError, 502), (MissingExtraError, 501),
    (OpenbookError, 500),
]
UPLOADS = "uploads"
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


def error_body(exc: Exception) -> dict[str, Any]:
    kind = exc.kind if isinstance(exc, ApiError) else type(exc).__name__
    return {"error": {"type": kind, "message": str(exc), "code": kind}}


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
    model: str
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

    app = FastAPI(title="openbook", version="1", lifespan=lifespan,
                  description="Answers from your own documents, with citations or an honest refusal.")
    app.add_middleware(_BrowserGuard, keys=keys)
    app.state.service = service
    app.state.keys = keys

    # ------------------------------------------------------------------ errors
    @app.exception_handler(OpenbookError)
    async def _openbook_error(_: Request, exc: OpenbookError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=status_for(exc))

    @app.exception_handler(AuthError)
    async def _auth_error(_: Request, exc: AuthError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=exc.status)

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
    def principal(request: Request) -> Principal:
        try:
            return keys.principal_from_headers(request.headers)
        except ConfigError as exc:  # a damaged key file: fail closed, as a server fault, not a bad request
            raise ApiError(503, "ConfigError", str(exc)) from None

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
        return info | {"keys_required": keys.required, "you": {"name": who.name, "roles": list(who.roles),
                                                              "write": who.write}}

    @app.post("/v1/search", summary="Ranked passages (the shape of `openbook search --json`)")
    async def search(req: SearchRequest, who: Principal = Depends(principal)) -> dict[str, Any]:
        return await service.read(search_json, req.query, req.k, req.where, who.roles, req.mode)

    @app.post("/v1/ask", summary="A cited answer or a refusal (`openbook ask --json`); SSE with stream: true")
    async def ask(req: AskRequest, request: Request, who: Principal = Depends(principal)) -> Any:
        history = [t.model_dump() for t in req.history]
        if not req.stream:
            return await service.answer(answer_json, req.question, req.where, who.roles, req.mode, history)
        return _stream(request, lambda on_token: service.answer(answer_json, req.question, req.where, who.roles,
                                                                req.mode, history, on_token),
                       lambda result: _sse("answer", result),
                       lambda piece: _sse("token", {"text": piece}),
                       lambda exc: _sse("error", error_body(exc)))

    @app.get("/v1/documents", summary="Documents the caller may read (`openbook documents --json`)")
    async def documents(prefix: str = "", where: list[str] = Query(default_factory=list),
                        who: Principal = Depends(principal)) -> dict[str, Any]:
        return await service.read(documents_json, prefix, where, who.roles)

    @app.get("/v1/documents/{doc_id:path}", summary="One document with its chunks (`openbook show --json`)")
    async def document(doc_id: str, who: Principal = Depends(principal)) -> dict[str, Any]:
        doc = await service.read(document_json, doc_id, who.roles)
        if doc is None:
            raise ApiError(404, "NotFound", f"no document {doc_id!r}: list ids with GET /v1/documents")
        return doc

    @app.delete("/v1/documents/{doc_id:path}", summary="Delete a document")
    async def delete(doc_id: str, who: Principal = Depends(writer)) -> dict[str, Any]:
        uploads = (service.local / UPLOADS).resolve()
        return {"deleted": await service.write(_delete_visible, doc_id, who.roles, uploads)}

    @app.post("/v1/ingest", summary="Upload files; the report of `openbook ingest --json`")
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
        return JSONResponse(report, status_code=200 if report["ok"] else 422)

    # ------------------------------------------------------------------ OpenAI-compatible
    @app.get("/v1/models", summary="OpenAI-compatible model list (one model: openbook)")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "created": 0,
                                            "owned_by": "openbook"}]}

    @app.post("/v1/chat/completions", summary="OpenAI-compatible chat: answers with [n] markers and sources")
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
                       chunks.final, chunks.token, chunks.error, done="data: [DONE]\n\n")

    # ------------------------------------------------------------------ MCP and the page
    mcp_route = next(r for r in mcp_app.routes if getattr(r, "path", None) == "/mcp")
    app.router.routes.append(Route("/mcp", endpoint=_Guarded(mcp_route.app, keys), methods=["GET", "POST",
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
    """The MCP endpoint behind the same API-key check as the REST API (401 before any MCP message)."""

    def __init__(self, app: Any, keys: KeyStore) -> None:
        self.app, self.keys = app, keys

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            self.keys.principal_from_headers(Headers(scope=scope))
        except AuthError as exc:
            await JSONResponse(error_body(exc), status_code=401)(scope, receive, send)
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
            elif not self.keys.required and not loopback_name(_host_name(host)):
                why = (f"this server has no API keys and answers only requests addressed to localhost or "
                       f"127.0.0.1, not {host!r}; create keys with `openbook keys add` to serve other names")
            if why is not None:
                await JSONResponse(error_body(ApiError(403, "Forbidden", why)), status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
