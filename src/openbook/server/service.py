"""The engine behind the server: reader threads that never wait for the writer, and one writer thread.

``Engine`` holds one SQLite connection, which may only be used by the thread that opened it. So each reader
thread opens its own ``Engine`` on the store once and keeps it (the index files are memory-mapped, so their pages
are shared between threads; the embedder is loaded once per process by ``get_embedder``). Ingest and delete run on
one writer thread with its own ``Engine``. SQLite runs in WAL mode and an index update becomes visible only at
its commit (see ``openbook.store.embedded``), so readers keep answering from the previous generation while a
write is in progress, and every reader checks the store's generation on each call: a generation committed by
this server's writer or by another process (``openbook ingest`` in a shell) is picked up without a restart.

Chunks left without a vector (an ingest stopped before its embedding phase ended) are embedded in the background
(``embed_in_background``): one committed batch per turn of the writer thread, so uploads and deletes wait for
one batch at most, and each batch joins the dense leg of every reader at its commit. While another process
holds the store's writer lock, the worker waits for it (that ingest embeds its own chunks).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, TypeVar

from ..api import Engine
from ..config import Config
from ..errors import StoreError

T = TypeVar("T")

BACKGROUND_RETRY_S = 10.0
"""Seconds the background embedding worker waits while another process holds the store's writer lock."""

_log = logging.getLogger("openbook.server")


UPLOADS = "uploads"
"""The folder (in ``Service.local``) that keeps uploaded originals; ``.incoming`` in it stages uploads."""


def sweep_uploads(engine: Engine, folder: Path) -> int:
    """Remove what a stopped server left in the uploads ``folder``: the staged files in ``.incoming``, and the
    originals no stored document names as its source (an upload moved in but killed before its commit, which no
    caller was told was stored). Runs under the store's writer lock; returns the number of files removed."""
    if not folder.is_dir():
        return 0
    removed = 0
    with engine.store.write_lock():
        held = set(engine.store.get_sources())
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith(".") and str(path.resolve()) not in held:
                path.unlink(missing_ok=True)
                removed += 1
        incoming = folder / ".incoming"
        if incoming.is_dir():
            for path in incoming.iterdir():
                if path.is_file():
                    path.unlink(missing_ok=True)
                    removed += 1
    return removed


class Service:
    """Runs engine calls off the event loop: ``await service.read(fn, ...)`` calls ``fn(engine, ...)`` on a
    reader thread, ``await service.answer(fn, ...)`` on an answerer thread, ``await service.write(fn, ...)`` on
    the writer thread.

    Answers run on threads of their own because an LLM call holds its thread for seconds (as long as the model
    writes, or a client reads a stream): on the reader threads, a few of them would keep every search waiting.

    Args:
        store: the store folder (created when missing, so a server can start empty and take uploads).
        config: the configuration every engine uses.
        readers: reader threads (default: the CPU count, at most 4), and as many answerer threads.
    """

    def __init__(self, store: str | Path, config: Config, readers: int | None = None) -> None:
        from ..store import backend_name, local_folder

        self.store = Path(store) if backend_name(store) == "embedded" else store  # a URL stays as it is
        self.local = local_folder(store)  # keys and uploaded originals live here (the store folder when embedded)
        self.config = config
        self.readers = readers or min(4, os.cpu_count() or 1)
        with Engine.open(self.store, config, create=True) as engine:
            swept = sweep_uploads(engine, self.local / UPLOADS)
        if swept:
            _log.info("removed %d uploaded file%s that no document holds (an upload stopped before its commit)",
                      swept, "" if swept == 1 else "s")
        self._local = threading.local()
        self._engines: list[Engine] = []
        self._engines_lock = threading.Lock()
        self._read_pool = ThreadPoolExecutor(self.readers, thread_name_prefix="openbook-read")
        self._answer_pool = ThreadPoolExecutor(self.readers, thread_name_prefix="openbook-answer")
        self._write_pool = ThreadPoolExecutor(1, thread_name_prefix="openbook-write")
        self._closing = threading.Event()
        self.background: dict[str, Any] = {"running": False, "embedded": 0, "pending": None, "error": None}
        """What the background embedding worker did: ``running``, ``embedded`` (vectors committed), ``pending``
        (chunks still waiting after its last turn), ``error`` (the one line that stopped it, or None)."""

    def _engine(self) -> Engine:
        engine = getattr(self._local, "engine", None)
        if engine is None:
            engine = Engine.open(self.store, self.config)
            self._local.engine = engine
            with self._engines_lock:
                self._engines.append(engine)
        return engine

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return fn(self._engine(), *args, **kwargs)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(engine, *args, **kwargs)`` on a reader thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._read_pool, lambda: self._call(fn, *args, **kwargs))

    async def answer(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(engine, *args, **kwargs)`` on an answerer thread (asks and chats: they may wait on an LLM)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._answer_pool, lambda: self._call(fn, *args, **kwargs))

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(engine, *args, **kwargs)`` on the writer thread (writes run one at a time)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._write_pool, lambda: self._call(fn, *args, **kwargs))

    def read_sync(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``read`` for callers without an event loop (blocks)."""
        return self._read_pool.submit(self._call, fn, *args, **kwargs).result()

    def _on_every_reader(self, fn: Callable[[], None], pool: ThreadPoolExecutor | None = None) -> None:
        """Run ``fn`` once on each thread of ``pool`` (the readers by default; a barrier keeps one task from
        taking two threads' turns)."""
        pool = self._read_pool if pool is None else pool
        barrier = threading.Barrier(self.readers)

        def task() -> None:
            barrier.wait(timeout=60)
            fn()

        for f in [pool.submit(task) for _ in range(self.readers)]:
            f.result()

    def warm(self) -> None:
        """Load the index (and compile the search kernels, load the embedder) on every reader and answerer
        thread now, so the first requests do not pay for it."""

        def load() -> None:
            engine = self._engine()
            try:
                if engine.effective_mode() != "bm25":
                    engine.embedder()  # cached per process: later calls on other threads reuse it
                engine.search("warm up", k=1)
            except StoreError:
                pass  # an empty store: nothing to load yet

        self.read_sync(lambda engine: load())  # the embedder first, on one thread, so it is loaded once
        self._on_every_reader(load)
        self._on_every_reader(load, self._answer_pool)

    def embed_in_background(self) -> None:
        """Start embedding the store's pending chunks (see the module docstring): returns at once; each turn of
        the writer thread commits one batch of vectors and queues the next turn until none is left, the service
        closes, or an error stops it (recorded in ``background["error"]`` and logged)."""
        if self._closing.is_set() or self.background["running"]:
            return
        self.background["running"] = True

        def turn(engine: Engine) -> None:
            if self._closing.is_set():
                self.background["running"] = False
                return
            try:
                if engine.store.writer_active():  # another process is writing (and embedding its own chunks)
                    timer = threading.Timer(BACKGROUND_RETRY_S, queue)
                    timer.daemon = True
                    timer.start()
                    return
                report = engine.embed_pending(batches=1)
            except Exception as exc:  # noqa: BLE001 - a worker's failure must not take the server down
                self.background.update(running=False, error=f"{type(exc).__name__}: {exc}")
                _log.warning("background embedding stopped: %s", self.background["error"])
                return
            self.background["embedded"] += report.chunks_embedded
            self.background["pending"] = report.chunks_pending
            if report.chunks_pending and report.chunks_embedded:
                queue()
            else:
                self.background["running"] = False

        def queue() -> None:
            if self._closing.is_set():
                self.background["running"] = False
                return
            try:
                self._write_pool.submit(self._call, turn)
            except RuntimeError:  # the pool shut down meanwhile
                self.background["running"] = False

        queue()

    def close(self) -> None:
        """Close every engine (each on its own thread) and stop the threads."""
        self._closing.set()

        def close_mine() -> None:
            engine = getattr(self._local, "engine", None)
            if engine is not None:
                engine.close()
                self._local.engine = None

        try:
            self._on_every_reader(close_mine)
            self._on_every_reader(close_mine, self._answer_pool)
            self._write_pool.submit(close_mine).result()
        except threading.BrokenBarrierError:
            pass  # a reader still busy after 60 s: its connection closes with the process
        finally:
            self._read_pool.shutdown(wait=True)
            self._answer_pool.shutdown(wait=True)
            self._write_pool.shutdown(wait=True)
