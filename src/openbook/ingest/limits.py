"""What one file may cost to read: zip packages are bounded before they are parsed, and the parse of a zip-based
format or a PDF runs in a separate process with a time and a memory limit.

Zip packages (DOCX, PPTX, EPUB, every loader of a zip-based format calls ``check_zip`` first): refused before any
parser sees them when the central directory lists more than ``max_zip_entries`` entries, when the entries
decompress to more than ``max_unzipped_mb`` MiB in all, when an entry of more than ``RATIO_MIN_BYTES`` is
compressed more than ``max_zip_ratio`` times (a ratio that text does not reach, a decompression bomb does: DEFLATE
reaches about 1,032:1), when entries overlap (their compressed sizes add up to more than the file), or when an
entry uses a compression method other than stored or deflated (the only two OPC and OCF packages may use). The
header's sizes are then checked by reading every entry, at most its declared size and at most the total limit
(``zipfile`` stops at the declared size and checks the CRC): a header that understates an entry is refused as
damaged, not believed.

The parse itself (``isolated``): the loaders of ``ISOLATED_SUFFIXES`` run in a worker process (``spawn``, so a
server's threads are not forked) whose address space may grow ``parse_memory_mb`` MiB beyond what it holds when
idle (``RLIMIT_AS``), and whose answer is awaited at most ``parse_timeout_s`` seconds; past either the worker is
stopped (a new one serves the next file) and the file fails with ``IngestError``. A PDF's loader reports each
page it has read (``progress``), and ``parse_timeout_s`` bounds each page instead of the whole file, so that a
long honest PDF finishes while a page that never does is stopped. Workers are kept idle for the next file and
stop with the process.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import IngestError, MissingExtraError, UnsupportedFormatError

RATIO_MIN_BYTES = 1 << 20
"""Entries smaller than this (decompressed) are not held to ``max_zip_ratio``: a small part of repeated
characters compresses far more than a large document does, and cannot grow a process by much."""

ZIP_SUFFIXES = frozenset({".docx", ".pptx", ".epub"})
"""The zip-based formats, each checked by ``check_zip`` before it is parsed."""

PAGED_SUFFIXES = frozenset({".pdf"})
"""Formats whose loader reports its progress page by page: ``parse_timeout_s`` bounds one page."""

ISOLATED_SUFFIXES = ZIP_SUFFIXES | PAGED_SUFFIXES
"""Formats whose loader runs in the worker process (``isolated``): the zip-based ones and PDF, whose
libraries inflate streams and build page objects in memory that the file's size does not bound."""

_READ_BLOCK = 1 << 20
_START_S = 120.0  # a worker process's start (a Python and the loaders' imports) on a loaded machine


@dataclass(frozen=True)
class ParseLimits:
    """Bounds on reading one file (``[ingest]`` settings; see the module docstring).

    Attributes:
        max_unzipped_mb: MiB a zip package may decompress to, all entries together (256: as a ``.gz`` file).
        max_zip_entries: entries a zip package may hold (10,000: an EPUB of many images stays below).
        max_zip_ratio: decompressed / compressed size an entry of more than ``RATIO_MIN_BYTES`` may reach (200).
        parse_timeout_s: seconds one file's parse may take (120), one page's for a PDF. 0: no limit, parsed in
            this process.
        parse_memory_mb: MiB of address space one file's parse may add to its worker (2048). 0: no limit.
    """

    max_unzipped_mb: float = 256.0
    max_zip_entries: int = 10_000
    max_zip_ratio: float = 200.0
    parse_timeout_s: float = 120.0
    parse_memory_mb: int = 2048

    @classmethod
    def of(cls, ingest: Any) -> "ParseLimits":
        """The limits of an ``openbook.config.IngestConfig``."""
        return cls(max_unzipped_mb=ingest.max_unzipped_mb, max_zip_entries=ingest.max_zip_entries,
                   max_zip_ratio=ingest.max_zip_ratio, parse_timeout_s=ingest.parse_timeout_s,
                   parse_memory_mb=ingest.parse_memory_mb)


def check_zip(path: Path, kind: str, limits: ParseLimits) -> None:
    """Refuse a zip package of format ``kind`` ("DOCX") that is not one, or that is over ``limits``, before it is
    parsed (see the module docstring).

    Raises:
        IngestError: not a zip package, damaged, or over a limit; the message names the limit and its setting.
    """
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head.startswith(b"\xd0\xcf\x11\xe0") and kind in ("DOCX", "PPTX"):  # an OLE container, not a zip
        raise IngestError(f"password-protected or legacy binary {kind} file; save it as an unencrypted "
                          f".{kind.lower()}")
    if not zipfile.is_zipfile(path):
        raise IngestError(f"not a valid {kind} file (not a zip package); re-save it from the application")
    max_bytes = int(limits.max_unzipped_mb * 2**20)
    bomb = f"refused as a possible decompression bomb: the {kind} package"
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > limits.max_zip_entries:
                raise IngestError(f"{bomb} holds {len(infos):,} entries, more than the limit of "
                                  f"{limits.max_zip_entries:,} ([ingest] max_zip_entries)")
            total = sum(i.file_size for i in infos)
            if total > max_bytes:
                raise IngestError(f"{bomb} decompresses to {total / 2**20:,.0f} MiB, more than the limit of "
                                  f"{limits.max_unzipped_mb:g} MiB ([ingest] max_unzipped_mb)")
            if sum(i.compress_size for i in infos) > path.stat().st_size:
                raise IngestError(f"{bomb} has overlapping entries (they share compressed data)")
            for i in infos:
                if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise IngestError(f"{i.filename!r} in the {kind} package uses compression method "
                                      f"{i.compress_type}; a {kind} package uses stored or deflated entries only")
                if i.file_size > RATIO_MIN_BYTES and i.file_size > limits.max_zip_ratio * max(i.compress_size, 1):
                    raise IngestError(f"{bomb} compresses {i.filename!r} {i.file_size / max(i.compress_size, 1):,.0f} "
                                      f"times, more than the limit of {limits.max_zip_ratio:g} ([ingest] "
                                      f"max_zip_ratio)")
            budget = max_bytes
            for i in infos:
                if i.is_dir():
                    continue
                with zf.open(i) as fh:  # reads at most file_size bytes, then checks the CRC
                    while block := fh.read(min(_READ_BLOCK, budget + 1)):
                        budget -= len(block)
                        if budget < 0:
                            raise IngestError(f"{bomb} decompresses to more than the limit of "
                                              f"{limits.max_unzipped_mb:g} MiB ([ingest] max_unzipped_mb)")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as exc:
        raise IngestError(f"not a valid {kind} file (a damaged zip package: {' '.join(str(exc).split())[:120]}); "
                          f"re-save it from the application") from exc


# ---------------------------------------------------------------------- the parse worker
def _vm_size() -> int:
    """This process's address space in bytes (``VmSize``), 0 when unknown (not Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _serve(conn: Any, memory_mb: int) -> None:
    """The worker's loop: ``(suffix, path, doc_id, hidden_slides)`` in, ``("ok", Document)`` or
    ``(kind, message)`` out. Ctrl-C is the parent's to handle (it stops the ingest and ends this daemon
    process), so the worker ignores SIGINT instead of printing a traceback of its own."""
    import importlib

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    from . import _load

    for module in ("docx", "ebooklib.epub", "pptx", "pypdf", "pdfplumber", "pypdfium2", "wordfreq"):
        # the loaders' libraries, imported before the limit and the first clock
        try:
            importlib.import_module(module)
        except ImportError:  # the office extra is missing: its loaders say so, file by file
            pass

    if memory_mb and _vm_size():  # Linux; elsewhere the time limit alone applies
        import resource

        limit = _vm_size() + memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    conn.send(("ready", None))
    while True:
        try:
            suffix, path, doc_id, hidden_slides = conn.recv()
        except (EOFError, OSError):
            return
        def progress(page: int) -> None:
            conn.send(("page", page))

        try:
            reply: tuple[str, Any] = ("ok", _load(suffix, Path(path), doc_id, hidden_slides, progress))
        except MemoryError:
            reply = ("memory", "")
        except (UnsupportedFormatError, MissingExtraError) as exc:
            reply = ("unsupported", str(exc))
        except IngestError as exc:
            reply = ("ingest", str(exc))
        except Exception as exc:  # noqa: BLE001 - a parser bug on one file: reported, the worker goes on
            reply = ("error", f"{type(exc).__name__} while parsing: {exc}")
        del path
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("memory", ""))


class _Worker:
    def __init__(self, memory_mb: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.memory_mb = memory_mb
        self.process = ctx.Process(target=_serve, args=(child, memory_mb), daemon=True,
                                   name="openbook-parse")
        self.process.start()
        child.close()
        try:  # started (imports done): a parse's time counts from here
            ready = self.conn.poll(_START_S) and self.conn.recv()[0] == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.stop()
            raise IngestError(f"the parser process did not start within {_START_S:g} s; the file was not read")

    def stop(self) -> None:
        self.process.kill()
        self.process.join(timeout=10)
        self.conn.close()


_idle: list[_Worker] = []
_idle_lock = threading.Lock()
_MAX_IDLE = 4


def _take(memory_mb: int) -> _Worker:
    with _idle_lock:
        for w in _idle:
            if w.memory_mb == memory_mb and w.process.is_alive():
                _idle.remove(w)
                return w
    return _Worker(memory_mb)


def _give_back(worker: _Worker) -> None:
    with _idle_lock:
        if len(_idle) < _MAX_IDLE:
            _idle.append(worker)
            return
    worker.stop()


def _exit_text(code: int | None) -> str:
    """A worker's exit status in words: ``killed by SIGABRT``, ``exit code 1``."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exit code {code}"


def isolated(suffix: str, path: Path, doc_id: str, limits: ParseLimits, local: Callable[[], Any],
             hidden_slides: bool = False) -> Any:
    """The Document that the loader of ``suffix`` makes of ``path``, parsed in a worker process within
    ``limits`` (``local``, the same parse in this process, when ``parse_timeout_s`` is 0 or this process is a
    daemonic ``multiprocessing`` worker, which may not start processes).

    Raises:
        IngestError: the loader's own error, or the parse took longer than ``parse_timeout_s`` seconds, needed
            more than ``parse_memory_mb`` MiB, or stopped the worker. UnsupportedFormatError: the loader's.
    """
    if not limits.parse_timeout_s or multiprocessing.current_process().daemon:
        return local()  # no limit asked, or a daemonic process, which may not start one
    worker = _take(limits.parse_memory_mb)
    try:
        worker.conn.send((suffix, str(path), doc_id, hidden_slides))
        while True:
            reply = worker.conn.recv() if worker.conn.poll(limits.parse_timeout_s) else None
            if reply is None or reply[0] != "page":
                break
            # a page read (a paged loader): the next one gets the whole limit
    except (EOFError, OSError):
        code = worker.process.exitcode
        worker.stop()
        raise IngestError(f"the parser stopped while reading it ({_exit_text(code)}; out of memory? [ingest] "
                          f"parse_memory_mb is {limits.parse_memory_mb:,} MiB); the file was not read. Split the "
                          f"file, or raise the limit") from None
    except BaseException:  # Ctrl-C: the worker may be mid-parse
        worker.stop()
        raise
    if reply is None:
        worker.stop()
        if suffix in PAGED_SUFFIXES:
            raise IngestError(f"reading one page took longer than {limits.parse_timeout_s:g} s ([ingest] "
                              f"parse_timeout_s, per page); stopped. Split the file, or raise the limit")
        raise IngestError(f"parsing took longer than {limits.parse_timeout_s:g} s ([ingest] parse_timeout_s); "
                          f"stopped. Split the file, or raise the limit")
    kind, value = reply
    if kind == "memory":
        worker.stop()  # its heap may be fragmented near the limit: the next file gets a fresh one
        raise IngestError(f"parsing needs more than {limits.parse_memory_mb:,} MiB of memory ([ingest] "
                          f"parse_memory_mb); not read. Split the file, or raise the limit")
    _give_back(worker)
    if kind == "ok":
        return value
    if kind == "unsupported":
        raise UnsupportedFormatError(value)
    raise IngestError(value)


def shutdown() -> None:
    """Stop the idle workers (they also stop with this process)."""
    with _idle_lock:
        workers, _idle[:] = list(_idle), []
    for w in workers:
        w.stop()

