"""Where an ingest's parsing, chunking and embedding run: in this process, or as Ray tasks across a cluster.

``Ingester`` asks a runner for two things and writes every result itself, so one writer commits to the store
(the embedded folder or PostgreSQL) whichever runner computed the rows:

- ``prepare(jobs)``: for each ``(file, doc_id)``, the file's documents (``load_file``) with, per document, its
  chunks and their index terms, yielded in the order of ``jobs``;
- ``embed(texts_batches)``: the passage vectors of each batch, in order.

``LocalRunner`` parses in this process and leaves chunking to the caller (``None`` for each document's chunks).
``RayRunner`` (``pip install 'openbook[distributed]'``) submits one Ray task per file (loading and chunking)
and one per embedder batch (each worker process loads the model once). Back-pressure: at most ``in_flight``
tasks (default: twice the cluster's CPUs) are submitted before the oldest is collected, so a folder of any size
holds a bounded number of parsed files in memory. A task whose worker process or node dies is retried
(``max_retries``, Ray's retry of system failures) wherever the cluster has room; a file whose task still fails
is reported as failed, never left out silently. The embedder batches are the same batches a local ingest
computes, so the vectors equal a local ingest's (the same model and batch in each task). Every node must hold
the files at the same paths (a shared filesystem) and have openbook installed with the same extras.
"""

from __future__ import annotations

import os
import time
import unicodedata
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .._extras import require
from ..chunking import chunk_document
from ..config import ChunkingConfig
from ..errors import ConfigError, IngestError
from ..index.analyzer import Analyzer
from ..types import Chunk, Document
from . import load_file
from .limits import ParseLimits

MAX_RETRIES = 3
"""Times a task is re-run after its worker process or node dies (Ray's ``max_retries``)."""
CONNECT_WAIT_S = 10
"""Seconds ``ray.init`` tries to reach the GCS of a cluster given by address (Ray's own default is about 20)."""


@dataclass(frozen=True)
class Prepared:
    """One file's outcome: its documents, each with its chunks and their index terms (``None``: the caller
    chunks), or the exception that loading raised; ``seconds``: read and chunk time where it ran."""

    docs: list[tuple[Document, list[Chunk] | None, list[list[str]] | None]]
    error: BaseException | None = None
    read_s: float = 0.0
    chunk_s: float = 0.0


@dataclass(frozen=True)
class PrepareJob:
    """What a worker needs to load and chunk files as this ingest would."""

    limits: ParseLimits
    hidden_slides: bool
    chunking: ChunkingConfig
    analyzer: tuple[str | None, bool]  # Analyzer(language, stopwords)
    chunk: bool  # False: the caller chunks (contextual retrieval rewrites chunks before their terms)


def prepare_file(file: str, doc_id: str, job: PrepareJob, analyzer: Analyzer | None = None) -> Prepared:
    """Load ``file`` and, when ``job.chunk``, chunk each document and analyze its chunks; a loading error is
    returned in ``Prepared.error`` (an error of the file, which a retry would repeat), not raised."""
    t0 = time.perf_counter()
    try:
        docs = load_file(Path(file), doc_id, limits=job.limits, hidden_slides=job.hidden_slides)
    except Exception as exc:  # noqa: BLE001 - reported per file by the ingest
        return Prepared([], exc, time.perf_counter() - t0)
    t1 = time.perf_counter()
    out: list[tuple[Document, list[Chunk] | None, list[list[str]] | None]] = []
    if not job.chunk:
        return Prepared([(d, None, None) for d in docs], None, t1 - t0)
    analyzer = analyzer or Analyzer(*job.analyzer)
    for doc in docs:
        doc = replace(doc, doc_id=unicodedata.normalize("NFC", doc.doc_id))  # as ``Ingester`` keys documents
        try:
            chunks = chunk_document(doc, job.chunking)
            tokens = [analyzer.analyze_document(c.indexed_text()) for c in chunks]
        except Exception:  # noqa: BLE001 - the ingest chunks this document again and reports its error
            chunks, tokens = None, None
        out.append((doc, chunks, tokens))
    return Prepared(out, None, t1 - t0, time.perf_counter() - t1)


class LocalRunner:
    """Parses in this process, one file after another; the caller chunks and embeds."""

    distributed = False

    def prepare(self, jobs: Sequence[tuple[str, str]], job: PrepareJob) -> Iterator[Prepared]:
        """``Prepared`` per ``(file, doc_id)`` of ``jobs``, in order, loaded when asked for (chunks ``None``)."""
        local = replace(job, chunk=False)
        for file, doc_id in jobs:
            yield prepare_file(file, doc_id, local)

    def close(self) -> None:
        """Nothing to release."""


class RayRunner:
    """Loading, chunking and embedding as Ray tasks on the cluster at ``address`` (``"auto"``: the cluster
    this machine belongs to, else a local one started for this ingest).

    Raises:
        MissingExtraError: Ray is not installed (the ``distributed`` extra).
        ConfigError: ``address`` is neither ``auto`` nor ``HOST:PORT`` (``check_address``).
        IngestError: the cluster cannot be reached.
    """

    distributed = True

    def __init__(self, address: str = "auto", in_flight: int | None = None) -> None:
        if address != "auto":  # an existing cluster: a head that answers TCP but not Ray fails after CONNECT_WAIT_S
            os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(CONNECT_WAIT_S))
        ray = require("ray", "distributed", "Ingest on Ray")
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            try:
                if address == "auto":
                    try:
                        ray.init(address="auto", logging_level="ERROR", log_to_driver=False)
                    except ConnectionError:  # no cluster here: one local Ray for this ingest
                        ray.init(logging_level="ERROR", log_to_driver=False, include_dashboard=False)
                else:
                    _reachable(check_address(address))
                    with _stderr_kept_unless_failed():  # Ray's C++ client logs each failed attempt to fd 2
                        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except (IngestError, ConfigError):
                raise
            except Exception as exc:  # noqa: BLE001 - Ray raises several types for an unreachable cluster
                raise IngestError(f"cannot reach the Ray cluster at {address}: {str(exc).splitlines()[0]}") from exc
            self._started = True
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.in_flight = max(1, in_flight or 2 * self.cpus)
        self._prepare = ray.remote(max_retries=MAX_RETRIES)(prepare_file)
        self._embed = ray.remote(max_retries=MAX_RETRIES)(embed_batch)

    def _in_order(self, submit: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``submit(item)`` (a Ray object ref) for each of ``items``, at most ``in_flight`` ahead of the oldest,
        whose ref is yielded (not awaited) in the order of ``items``."""
        pending: deque[Any] = deque()
        todo = iter(items)
        for item in todo:
            pending.append(submit(item))
            if len(pending) >= self.in_flight:
                yield pending.popleft()
        yield from pending

    def prepare(self, jobs: Sequence[tuple[str, str]], job: PrepareJob) -> Iterator[Prepared]:
        """``Prepared`` per ``(file, doc_id)`` of ``jobs``, in order; at most ``in_flight`` tasks run ahead of the
        one collected. A task that fails after its retries gives a ``Prepared`` whose ``error`` says why."""
        ref_job = self._ray.put(job)
        for ref in self._in_order(lambda j: self._prepare.remote(j[0], j[1], ref_job), jobs):
            try:
                yield self._ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - the task's worker kept dying: this file fails, reported
                yield Prepared([], IngestError(f"the Ray task failed after {MAX_RETRIES} retries: "
                                               f"{str(exc).splitlines()[0]}"))

    def embed(self, model: str, batches: list[list[str]], batch_size: int) -> Iterator[np.ndarray]:
        """Passage vectors (float32 ``[len(batch), dim]``) of each of ``batches``, in order: one Ray task per
        batch, at most ``in_flight`` ahead of the one collected; each worker process loads ``model`` once."""
        for ref in self._in_order(lambda texts: self._embed.remote(model, texts, batch_size), batches):
            yield self._ray.get(ref)

    def close(self) -> None:
        """Release the local Ray this runner started."""
        if self._started:
            self._ray.shutdown()


@contextmanager
def _stderr_kept_unless_failed() -> Iterator[None]:
    """Run the block with file descriptor 2 sent to a temporary file, written back to stderr if the block
    returns and dropped if it raises (its exception then says what went wrong, in one line)."""
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    ok = False
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
            ok = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        if ok and held.tell():
            held.seek(0)
            sys.stderr.write(held.read().decode("utf-8", "replace"))
            sys.stderr.flush()


def check_address(address: str) -> str:
    """``address`` itself if it is ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT`` with a port in 1-65535.

    Raises:
        ConfigError: any other value, naming the forms accepted.
    """
    if address == "auto":
        return address
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if sep and host and port.isdigit() and 0 < int(port) < 65536 and not any(c.isspace() for c in host):
        return address
    raise ConfigError(f"invalid Ray address {address!r}: give auto, HOST:PORT or ray://HOST:PORT")


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Raise ``IngestError`` unless ``address`` (a Ray head's GCS address, in a form ``check_address`` accepts)
    takes a TCP connection and answers an HTTP/2 preface, each within ``timeout`` seconds; ``ray.init`` itself
    retries an unreachable address for about 20 s, and waits on a port that accepts but never answers for minutes."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout) as conn:
            # a GCS is a gRPC server: it answers an HTTP/2 client preface with its SETTINGS frame at once
            # (RFC 9113 sections 3.4 and 6.5: a 9-byte frame header whose type byte, the fourth, is 0x4)
            conn.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            try:
                header = conn.recv(9)
            except TimeoutError:
                header = b""
    except OSError as exc:
        raise IngestError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None
    if len(header) < 4 or header[3] != 0x4:
        raise IngestError(f"cannot reach the Ray cluster at {address}: it accepts connections but gives no "
                          f"gRPC answer within {timeout:g} s (is it a Ray head's GCS port?)")


_EMBEDDERS: dict[str, Any] = {}
"""The embedders a worker process has loaded, by name: a Ray worker runs many tasks and loads each model once."""


def embed_batch(model: str, texts: list[str], batch_size: int) -> np.ndarray:
    """Passage vectors of ``texts`` by the embedder ``model`` (``get_embedder``), loaded once per process."""
    if model not in _EMBEDDERS:
        from ..index.embedders import get_embedder

        _EMBEDDERS[model] = get_embedder(model)
    return _EMBEDDERS[model].embed(texts, kind="passage", batch_size=batch_size)


def runner_for(ray: str | None) -> LocalRunner | RayRunner:
    """``RayRunner(ray)`` when ``ray`` names a cluster (``"auto"`` or an address), else ``LocalRunner()``."""
    return RayRunner(ray) if ray else LocalRunner()
