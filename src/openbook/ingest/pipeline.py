"""Ingest orchestration: files -> documents -> chunks -> analyzed terms (and vectors) -> one store, in batches.

``Ingester(store, config).ingest(paths)`` discovers files (``openbook.ingest.discover``), loads each
(``load_file``), chunks (``openbook.chunking``), analyzes (``openbook.index.analyzer``) and writes documents and
index rows through the ``openbook.store.base.Store`` protocol, one transaction per batch: an interrupted ingest
keeps every committed batch, and readers never see half a batch. ``Engine.ingest`` and ``Engine.delete`` call it.

Two phases, so that a store answers searches within seconds of the start of a long ingest:

1. ``index``: every file is read, chunked and analyzed, and each batch is committed with its BM25 index; with
   embeddings on, the new chunks are written *pending* (``Store.put_index(..., defer=True)``): BM25 finds them
   at once, the dense leg does not yet.
2. ``embed``: the pending chunks (their number now known exactly) are embedded and committed batch by batch
   (``Store.put_vectors``); each commit adds its vectors to the dense leg. A stopped ingest leaves a searchable
   store whose pending chunks the next ``ingest`` (or ``Ingester.embed_pending``, ``openbook embed``) embeds.

Each phase shows one progress bar for all of its work (tqdm on a terminal), or a plain line every
``PROGRESS_EVERY_S`` seconds, with the measured rate and the time left for the whole phase.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .._extras import hint
from ..chunking import chunk_document, chunker_revision
from ..config import Config
from ..errors import IngestError, StoreError, UnsupportedFormatError
from ..index.analyzer import Analyzer
from ..llm import Generator, ready
from ..store.base import Store, require_local_index
from ..types import Chunk, Document, content_hash
from ..versions import version_links
from . import discover
from .distributed import LocalRunner, PrepareJob, RayRunner, runner_for
from ._common import path_text
from .limits import ParseLimits
from .signature import file_digest, file_part, split_digest, stored_digest

BATCH_MIN_CHUNKS = 1000
"""Without embedding, an ingest commits a batch once this many new chunks are pending, or as many as the index
already holds when that is more: an interrupted ingest keeps every committed batch, and rewriting the index per
batch stays a bounded share of the work (batches double, so all rewrites together cost about two index
builds)."""

BATCH_EMBED_SECONDS = 120.0
"""While embedding, a batch of vectors holds about this many seconds of embedding at the rate measured so far, so
Ctrl-C loses at most a few minutes of work whatever the machine's speed."""

BATCH_FIRST_EMBED_CHUNKS = 64
"""The first batch of vectors (the rate is not known yet), and the smallest: the dense leg starts early."""

BATCH_MAX_EMBED_CHUNKS = 4000
"""The largest batch of vectors, unless ``BATCH_REWRITE_SHARE`` asks for more."""

BATCH_REWRITE_SHARE = 8
"""A commit of vectors may rewrite the store's whole vector file (the embedded store writes a new generation):
a batch holds at least 1/this of the store's rows, so all rewrites of one embedding pass together cost about
this many writes of the vectors, whatever the store's size."""

PROGRESS_EVERY_S = 10.0
"""Seconds between plain progress lines (``ingest(log=...)``, used when stderr is not a terminal)."""

ESTIMATE_MIN_CHUNKS = 500
"""An ``embed`` phase of at least this many chunks says through ``log`` how long all of it will take, once its rate
has been measured for ``ESTIMATE_AFTER_S`` (after the model's first batch, which also loads it)."""

ESTIMATE_AFTER_S = 20.0
"""Seconds of measured embedding before the estimate of the whole phase is said: one batch of 32 texts is too
small a sample of a machine's speed."""

STAGES = ("read", "chunk", "embed", "index")

PHASES = ("index", "embed")
"""The phases of an ingest, in order (``on_commit`` hears their names)."""


@dataclass(frozen=True)
class FileProblem:
    """A file or document an ingest did not store: one shape for a failure and for a document with no text.

    Attributes:
        path: the file as the ingest reached it (the given path, or a path under the given folder), as in
            ``failed``, ``skipped`` and ``warnings``.
        kind: ``"failed"`` (it could not be read, cleaned or chunked; access metadata that cannot be parsed
            is a failure) or ``"empty"`` (no text to index, 0 chunks).
        reason: one line saying why, without the path.
        doc_id: the document's id (the id the file would have had, for a file that failed to load).
    """

    path: str
    kind: str
    reason: str
    doc_id: str


EMPTY_REASON = "no text to index (0 chunks); not stored"


@dataclass
class IngestReport:
    """What one ``ingest`` call did.

    Attributes:
        added, updated, unchanged, deleted: document ids.
        unread: the unchanged documents whose files were not parsed again: each file's bytes, and what decides
            how it is read, are what the store read (``openbook.ingest.signature``).
        failed: ``(path, one-line reason)`` of files or documents that could not be read, cleaned or chunked.
        skipped: ``(path, reason)`` of files openbook does not read (their type, binary content); not failures.
        empty: ``(path, doc_id)`` of documents with no indexable text (0 chunks); not stored. (``path`` is the
            file's resolved path; ``failed`` and ``empty`` keep these pair forms for existing scripts.)
        problems: ``failed`` and ``empty`` in one shape (``FileProblem``), in the order they happened.
        warnings: ``(path, message)`` from the loaders (``Document.warnings``).
        notes: one-line remarks on the batch (an empty folder, a symbolic link to a folder not followed).
        chunks_added, chunks_removed: index rows written and dropped; chunks_embedded: vectors computed and
            committed (a changed document's unchanged chunks keep their stored vectors).
        chunks_pending: indexed chunks still waiting for their vector afterwards (0 unless interrupted, or
            embeddings are off for a store that has some pending).
        chunks_total, documents_total: what the store holds afterwards.
        seconds: wall time of the ingest (after any wait for another writer); stage_seconds: ``read`` (load and clean), ``chunk`` (chunk, analyze,
            store), ``embed``, ``index`` (write the index generations).
        interrupted: Ctrl-C stopped it; the lists hold what was committed before (the next run resumes).
        contextualize: contextual retrieval's counts (``ContextStats.to_dict()``), {} when off.
        raptor: the RAPTOR rebuild's report (``openbook.ingest.raptor.rebuild``), {} when off.
    """

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0
    chunks_pending: int = 0
    chunks_total: int = 0
    documents_total: int = 0
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    interrupted: bool = False
    contextualize: dict[str, Any] = field(default_factory=dict)  # ContextStats.to_dict() when contexts were on
    raptor: dict[str, Any] = field(default_factory=dict)  # openbook.ingest.raptor.rebuild() when [index] raptor

    @property
    def ok(self) -> bool:
        """False only when files failed or had no text and nothing at all could be ingested."""
        return not ((self.failed or self.empty) and not (self.added or self.updated or self.unchanged))

    def skip_summary(self) -> str:
        """``skipped`` in one line, grouped by reason: file names when there are at most three, else counts by
        file type (``""`` when nothing was skipped).

        Example: ``skipped 86 files: 80 .rst, 4 .docx (unsupported type); 2 .txt (binary content)``.
        """
        if not self.skipped:
            return ""
        groups: dict[str, list[str]] = {}
        for path, reason in self.skipped:
            groups.setdefault(_skip_reason(path, reason), []).append(path)
        parts = []
        for why, paths in groups.items():
            if len(self.skipped) <= 3:
                kinds = ", ".join(Path(p).name for p in paths)
            else:
                counts: dict[str, int] = {}
                for p in paths:
                    suffix = Path(p).suffix.lower() or "(no suffix)"
                    counts[suffix] = counts.get(suffix, 0) + 1
                kinds = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"{kinds} ({why})")
        n = len(self.skipped)
        return f"skipped {n} file{'s' if n != 1 else ''}: " + "; ".join(parts)

    def rates(self) -> str:
        """Throughput in words: overall documents/s and chunks/s (of the documents read and chunks written or
        embedded by this run), then each stage's rate, each with three significant digits
        (e.g. ``12.0 docs/s, 40.1 chunks/s; read 300 docs/s, chunk 800 chunks/s, embed 22.0 chunks/s``);
        ``""`` when the run did no work."""
        docs = len(self.added) + len(self.updated)
        chunks = max(self.chunks_added, self.chunks_embedded)
        if self.seconds <= 0 or not (docs or chunks):
            return ""
        st = self.stage_seconds
        read = docs + len(self.unchanged) - len(self.unread)
        stages = [f"read {_rate(read / st['read'])} docs/s" if st["read"] > 0 and read else "",
                  f"chunk {_rate(self.chunks_added / st['chunk'])} chunks/s"
                  if st["chunk"] > 0 and self.chunks_added else "",
                  f"embed {_rate(self.chunks_embedded / st['embed'])} chunks/s"
                  if st["embed"] > 0 and self.chunks_embedded else "",
                  f"index {_rate(self.chunks_added / st['index'])} chunks/s"
                  if st["index"] > 0 and self.chunks_added else ""]
        overall = ([f"{_rate(docs / self.seconds)} docs/s"] if docs else []) + \
            [f"{_rate(chunks / self.seconds)} chunks/s"]
        per_stage = ", ".join(x for x in stages if x)
        return ", ".join(overall) + (f"; {per_stage}" if per_stage else "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


class _Ticker:
    """Says a plain progress line through ``log`` at most every ``every`` seconds (for logs, CI, pipes)."""

    def __init__(self, log: Callable[[str], None] | None, every: float = PROGRESS_EVERY_S) -> None:
        self.log, self.every = log, every
        self.start = self.last = time.perf_counter()

    def due(self) -> bool:
        now = time.perf_counter()
        if self.log is None or now - self.last < self.every:
            return False
        self.last = now
        return True

    def say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)


def _rate(value: float) -> str:
    """A rate with three significant digits and no exponent: ``0.0123``, ``1.23``, ``12.3``, ``1234``."""
    if value >= 100:
        return f"{value:.0f}"
    if value <= 0:
        return "0"
    return f"{value:.{max(1, 2 - int(np.floor(np.log10(value))))}f}"


class _Phase:
    """The progress of one ingest phase over a known total: a tqdm bar on stderr (``bar``), else a plain line
    through ``log`` at most every ``every`` seconds, with the measured rate and the time left for the whole phase.

    With ``warm``, the rate is measured from the end of the first ``advance`` on (that step also loads the model),
    so the time left is not inflated by a one-off start. Each step may carry a weight (the characters of the texts
    embedded): the time left is then the weight still to do (known exactly for the units ``expect`` announced,
    their mean for the rest) over the measured weight per second, so a step of long texts taken first does not
    skew it.
    """

    def __init__(self, name: str, total: int, unit: str, *, bar: bool, log: Callable[[str], None] | None,
                 every: float = PROGRESS_EVERY_S, warm: bool = False, desc: str = "",
                 detail: Callable[[], str] | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
        self.name, self.total, self.unit = name, total, unit
        self.log, self.every, self.detail, self.clock = log, every, detail, clock
        self.done, self.weight_done = 0, 0.0
        self.known, self.known_weight = 0, 0.0  # units announced by ``expect``, and their weight
        self.start = self.last = clock()
        # (time, units done, weight done) that rates count from
        self._base: tuple[float, int, float] | None = None if warm else (self.start, 0, 0.0)
        self._bar: Any = None
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc or name, unit=unit, file=sys.stderr, leave=False,
                             dynamic_ncols=True)

    def expect(self, units: int, weight: float) -> None:
        """Announce the weight of the next ``units`` units (a batch of texts about to be embedded)."""
        self.known += units
        self.known_weight += weight

    def measured(self) -> float:
        """Seconds of measured work so far (after the warm-up step)."""
        return self.clock() - self._base[0] if self._base is not None else 0.0

    def rate(self) -> float | None:
        """Units per second measured so far (None until measurable)."""
        elapsed = self.measured()
        counted = self.done - self._base[1] if self._base is not None else 0
        return counted / elapsed if elapsed > 0 and counted > 0 else None

    def left(self) -> float | None:
        """Seconds left for the whole phase at the measured rate (None until measurable)."""
        if self._base is None:
            return None
        elapsed, weighed = self.measured(), self.weight_done - self._base[2]
        if elapsed <= 0 or weighed <= 0:
            return None
        mean = self.known_weight / self.known if self.known else 1.0
        todo = max(self.known_weight - self.weight_done, 0.0) + max(self.total - max(self.known, self.done), 0) * mean
        return todo / (weighed / elapsed)

    def line(self) -> str:
        """Where the phase stands in words: ``embed: 1200/1984 chunks, 1.10 chunks/s, about 12 min left``."""
        rate, left = self.rate(), self.left()
        parts = [f"{self.name}: {self.done}/{self.total} {self.unit}s"]
        if self.detail is not None:
            parts.append(self.detail())
        if rate is not None:
            parts.append(f"{_rate(rate)} {self.unit}s/s")
        if left is not None:
            parts.append(f"about {_duration(left)} left")
        return ", ".join(p for p in parts if p)

    def advance(self, n: int = 1, weight: float | None = None) -> None:
        """``n`` more units done (of ``weight``, default ``n``)."""
        self.done += n
        self.weight_done += n if weight is None else weight
        now = self.clock()
        if self._base is None:
            self._base = (now, self.done, self.weight_done)
        if self._bar is not None:
            self._bar.update(n)
            if self.detail is not None:
                self._bar.set_postfix_str(self.detail(), refresh=False)
        elif self.log is not None and now - self.last >= self.every:
            self.last = now
            self.log(self.line())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.4 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _ignore_further_interrupts() -> Callable[[], None]:
    """Ignore SIGINT until the returned function is called, when this is the main thread (a second Ctrl-C
    during the clean-up after the first would interrupt closing the parser workers and thread pools with a
    traceback); the function puts the previous handler back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    return lambda: signal.signal(signal.SIGINT, previous)


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped ``Engine.ingest``; ``report`` holds what was committed before it.

    A ``KeyboardInterrupt``, so code that does not know it still stops; the next ingest of the same paths
    resumes (committed documents are unchanged and skipped).
    """

    def __init__(self, report: IngestReport) -> None:
        super().__init__("ingest interrupted")
        self.report = report


@dataclass
class _Batch:
    """What the open transaction has written to SQLite but not yet indexed and committed."""

    chunks: list[Chunk] = field(default_factory=list)
    tokens: list[list[str]] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    reuse: set[str] = field(default_factory=set)  # new chunk ids whose committed vector is still valid
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def touched(self) -> bool:
        return bool(self.chunks or self.removed or self.added or self.updated or self.deleted)


def nfc(text: str) -> str:
    """Unicode NFC form of a document id or path, so an id typed on one system matches one stored by another."""
    return unicodedata.normalize("NFC", text)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _failure(file: Path, exc: BaseException, doc_id: str | None = None) -> str:
    """One line naming the file (and the document of a multi-document file) and the reason."""
    message = _error_text(exc)
    where = f"{file} (document {doc_id})" if doc_id else str(file)
    return message if message.startswith(str(file)) else f"{where}: {message}"


def _error_text(exc: BaseException) -> str:
    """An exception in one line; the class name first unless it is an ``IngestError`` (whose words suffice)."""
    message = _one_line(str(exc))
    if not isinstance(exc, IngestError):
        message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return message


def _unread_files(files: list[tuple[Path, str, str]], digests: list[str | None], stored: dict[str, Any],
                  sources: dict[str, list[str]]) -> dict[int, list[str]]:
    """Index in ``files`` -> the ids of its stored documents, for each file that need not be parsed: every
    document stored from it (``sources``, keyed by the resolved path as the loaders write ``Document.source``)
    carries the file part that its ``digests`` entry gives for that many documents (``signature.file_part``),
    and no other file of this ingest reaches those ids first."""
    out: dict[int, list[str]] = {}
    claimed: set[str] = set()
    for i, ((file, _, _), digest) in enumerate(zip(files, digests)):
        if digest is None:
            continue
        ids = [d for d in sources.get(path_text(str(file.resolve())), []) if d in stored]
        if not ids or claimed.intersection(ids):
            continue
        part = file_part(digest, len(ids))
        if all(split_digest(stored[d].content_hash)[1] == part for d in ids):
            out[i] = ids
            claimed.update(ids)
    return out


def _record_failure(report: "IngestReport", file: Path, exc: BaseException, doc_id: str, multi: bool) -> None:
    """Add a failure to ``report.failed`` (its pair form) and ``report.problems``; ``multi``: the document
    is one of several a file holds, named in the line."""
    report.failed.append((str(file), _failure(file, exc, doc_id if multi else None)))
    report.problems.append(FileProblem(str(file), "failed", _without_path(_error_text(exc), file), doc_id))


def _without_path(message: str, file: Path) -> str:
    """``message`` without a leading ``FILE:`` (the report puts the file first itself)."""
    for prefix in (str(file), file.name):
        if message.startswith(prefix + ":"):
            return message[len(prefix) + 1:].strip()
    return message


def _skip_reason(path: str, reason: str) -> str:
    """The short reason of a skip: ``unsupported type``, or the loader's words after the path."""
    text = reason[len(path):].lstrip(" :") if reason.startswith(path) else reason
    if text.startswith("unsupported file type"):
        return "unsupported type"
    if text.startswith("unsupported compressed file type"):  # its quoted type holds "(": cut there, it read "... type '"
        return "unsupported compressed type"
    return re.split(r"[;(,]", text)[0].strip() or "skipped"  # "binary content (an ELF executable), ..." -> ...


def _symlinked_folders(root: Path) -> list[Path]:
    """Symbolic links to folders under ``root`` (hidden ones excluded); ``discover`` follows each folder once."""
    found = []
    for folder, dirs, _ in os.walk(root):
        for d in list(dirs):
            if not d.startswith(".") and os.path.islink(os.path.join(folder, d)):
                found.append(Path(folder) / d)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
    return sorted(found)


def _under(source: str, roots: set[str]) -> bool:
    return any(source == r or source.startswith(r.rstrip(os.sep) + os.sep) for r in roots)



class _Vectors:
    """The embedder as ``Store.put_index`` sees it (``VectorSource``): the ingest's batched, timed ``_embed``."""

    def __init__(self, ingester: "Ingester") -> None:
        self._ingester = ingester

    @property
    def name(self) -> str:
        return self._ingester.embedder().name

    @property
    def normalized(self) -> bool:
        return self._ingester.embedder().normalized

    @property
    def dim(self) -> int:
        return self._ingester.embedder().dim

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._ingester._embed(texts)


class Ingester:
    """Writes files into one ``Store`` with one ``Config`` (chunking, analyzer, embedding). One per engine.

    Args:
        generator: the LLM that writes chunk contexts (``[ingest] contextualize``) and RAPTOR summaries
            (``[index] raptor``); the caller builds it from ``config.llm`` (``openbook.llm.factory``). None: the
            offline contexts and extractive summaries.
    """

    def __init__(self, store: Store, config: Config, analyzer: Analyzer | None = None,
                 generator: Generator | None = None) -> None:
        self.store = store
        self.config = config
        self.analyzer = analyzer or Analyzer()
        self.generator = generator
        self._limits = ParseLimits.of(config.ingest)
        self._ticker = _Ticker(None)  # progress lines of the running ingest
        self._stages: dict[str, float] | None = None  # its stage timings
        self._embed_rate: float | None = None  # chunks/s measured after the model's first batch
        self._on_commit: Callable[[str, int], None] | None = None  # the running ingest's hook
        self._situator: Any = None  # openbook.ingest.contextualize.Situator during an ingest with contexts
        self._runner: LocalRunner | RayRunner = LocalRunner()  # where files are parsed and chunks embedded

    def embedder(self):
        """The embedder in use: ``config.embedding.model``, else the store's, else the default."""
        from ..index.embedders import embedder_for

        info = self.store.get_embedding()
        return embedder_for(self.config.embedding.model, info.model if info is not None else None)

    def _embeds_by_default(self, report: IngestReport) -> bool:
        """Whether an ingest that was not told embeds: ``config.embedding.enabled``, unless no model is configured
        and the embedder the store would use cannot run (its packages, the ``embed`` extra, are missing): then
        False, with a note naming the extra. A configured model that cannot run fails when it is loaded."""
        if not self.config.embedding.enabled:
            return False
        if self.config.embedding.model:
            return True
        from ..index.embedders import DEFAULT_EMBEDDER, missing_packages

        info = self.store.get_embedding()
        if not missing_packages(info.model if info is not None else DEFAULT_EMBEDDER):
            return True
        report.notes.append(f"BM25 only: {hint('embedding', 'embed')}")
        return False

    def _pipeline_signature(self) -> str:
        """Settings that change chunks or index terms: a change re-processes every document."""
        sig: dict[str, Any] = {"chunking": asdict(self.config.chunking), "analyzer": self.analyzer.settings()}
        if self.config.ingest.contextualize:  # on, or another model: the indexed text changes
            from .contextualize import context_model

            sig["contextualize"] = context_model(self.config)
        return json.dumps(sig, sort_keys=True)

    def ingest(self, paths: Sequence[str | Path], *, sync: bool = False, progress: bool = False,
               embed: bool | None = None, reembed: bool = False,
               on_wait: Callable[[str], None] | None = None,
               log: Callable[[str], None] | None = None,
               on_commit: Callable[[str, int], None] | None = None,
               ray: str | None = None) -> IngestReport:
        """Ingest files and folders (recursively); unchanged documents are left alone.

        The BM25 index of every batch is committed first (phase ``index``), the vectors after (phase ``embed``,
        see the module docstring): searches work from the first commit on, and the dense leg grows with each
        committed batch of vectors. Chunks that an earlier, stopped ingest left without a vector are embedded
        too.

        One file is one document (a BEIR ``corpus.jsonl``: one per line). A document's id is its path relative
        to the folder it was first ingested from (NFC, POSIX separators); the same file reached again from
        another folder (its parent, say) is the same document and keeps that id.

        Args:
            paths: files or folders.
            sync: also delete stored documents under these folders whose files are gone.
            progress: show one progress bar per phase on stderr.
            embed: embed new and changed chunks with ``config.embedding.model`` (default
                ``config.embedding.enabled``, except that with no model configured and the embedder's packages
                (the ``embed`` extra) not installed the ingest is BM25-only and one line of ``notes`` says so).
                Chunks whose text did not change keep their stored vectors. A store that already holds chunks
                but no vectors stays BM25-only until ``reembed``.
            reembed: (re)compute the vectors of every chunk with ``config.embedding.model`` (every chunk is
                pending from the first commit until its new vector is committed).
            on_wait: hears one line when another process is writing to the store (this call then waits).
            log: hears plain progress lines: the embedding phase's estimate once its rate is measured, and
                (when ``progress`` is off) where the phase stands every ``PROGRESS_EVERY_S`` seconds.
            on_commit: called after each committed batch with the phase (``"index"``, ``"embed"``) and the
                chunks that phase has committed so far (index rows written, vectors computed). An exception it
                raises stops the ingest as one raised by the ingest would; what was committed stays.
            ray: load, chunk and embed as Ray tasks on this cluster (``"auto"`` or an address such as
                ``"10.0.0.5:6379"``; ``openbook.ingest.distributed``); this process still writes every
                commit. None: all in this process.

        Returns:
            An ``IngestReport``. Every file or document that fails to load, clean or chunk is listed in
            ``failed`` with a one-line reason and the rest of the batch lands; unsupported files are
            ``skipped``; documents without text are ``empty``.

        Raises:
            IngestError: a given path does not exist; the ``ray`` cluster cannot be reached.
            MissingExtraError: ``ray`` is given and Ray (the ``distributed`` extra) is not installed.
            ModelMismatchError: the store was embedded with another model (use ``reembed``).
            StoreError: the store is read-only.
            IngestInterrupted: Ctrl-C; batches committed before it are kept (the next run resumes).
        """
        report = IngestReport()
        restore: Callable[[], None] | None = None  # set while a Ctrl-C's clean-up ignores a second one
        embed = self._embeds_by_default(report) if embed is None else embed
        files, roots = self._files(paths, report)
        files = self._outside_store(paths, files, report)
        self._ticker = _Ticker(log, PROGRESS_EVERY_S if not progress else float("inf"))
        self._stages = report.stage_seconds
        self._on_commit = on_commit
        if self.config.index.raptor:  # fail before writing anything: the tree is a folder beside the index
            require_local_index(self.store, "RAPTOR summaries ([index] raptor)")
        if self.config.ingest.contextualize:
            from .contextualize import Situator

            self._situator = Situator(self.config, None if self.store.read_only else Path(
                require_local_index(self.store, "contextual retrieval ([ingest] contextualize)").path),
                                      self.generator)
        self._runner = runner_for(ray)
        try:
            with self.store.write_lock(on_wait):
                start = time.perf_counter()  # rates count the work, not the wait for another writer
                self._ticker.start = self._ticker.last = start
                try:
                    embedding = self._ingest_locked(files, roots, report, sync=sync, progress=progress,
                                                    embed=embed, reembed=reembed)
                    if embedding:
                        self._embed_pending_locked(report, progress)
                    if self.config.index.raptor:
                        report.raptor = self._rebuild_raptor()
                except KeyboardInterrupt:
                    report.interrupted = True
                    restore = _ignore_further_interrupts()  # a second Ctrl-C must not break the clean-up below
                    raise IngestInterrupted(self._totals(report, start)) from None
        finally:
            try:
                self._runner.close()
                self._runner = LocalRunner()
                self._ticker, self._stages, self._on_commit = _Ticker(None), None, None
                if self._situator is not None:
                    report.contextualize = self._situator.stats.to_dict()
                    self._situator.close()
                    self._situator = None
            finally:
                if restore is not None:
                    restore()
        return self._totals(report, start)

    def _totals(self, report: IngestReport, start: float) -> IngestReport:
        """``report`` with the store's document, chunk and pending-vector totals and the seconds since ``start``."""
        report.documents_total, report.chunks_total = self.store.count_stored()
        report.chunks_pending = self._pending_count()
        report.seconds = time.perf_counter() - start
        return report

    def _pending_count(self) -> int:
        info = self.store.get_embedding()
        return info.pending if info is not None else 0

    def embed_pending(self, *, progress: bool = False, on_wait: Callable[[str], None] | None = None,
                      log: Callable[[str], None] | None = None,
                      on_commit: Callable[[str, int], None] | None = None,
                      batches: int | None = None) -> IngestReport:
        """Embed the chunks the store holds without a vector (left by a stopped ingest), batch by batch, each
        batch one commit; what ``ingest`` does after its files when it finds such chunks.

        Args:
            progress, on_wait, log, on_commit: as in ``ingest`` (only the ``embed`` phase runs).
            batches: stop after this many committed batches (None: when none is left); the server's
                background worker embeds one batch per turn of its writer thread.

        Returns:
            An ``IngestReport`` with ``chunks_embedded``, ``chunks_pending`` (0 when done), the totals and timings.

        Raises:
            StoreError: the store is read-only.
            IngestInterrupted: Ctrl-C; the batches of vectors committed before it are kept.
        """
        report = IngestReport()
        self._ticker = _Ticker(log, PROGRESS_EVERY_S if not progress else float("inf"))
        self._stages = report.stage_seconds
        self._on_commit = on_commit
        try:
            with self.store.write_lock(on_wait):
                start = time.perf_counter()
                try:
                    self._embed_pending_locked(report, progress, batches)
                except KeyboardInterrupt:
                    report.interrupted = True
                    raise IngestInterrupted(self._totals(report, start)) from None
        finally:
            self._ticker, self._stages, self._on_commit = _Ticker(None), None, None
        return self._totals(report, start)

    def _embed_pending_locked(self, report: IngestReport, progress: bool, batches: int | None = None) -> None:
        """Phase ``embed``, under the writer lock: every pending chunk's vector, committed batch by batch (at most
        ``batches`` batches)."""
        ids = self.store.get_pending_vectors()
        if not ids:
            return
        embedder = self.embedder()
        info = self.store.get_embedding()
        if info is not None and info.model != embedder.name:
            from ..index.dense import check_model

            check_model(info.model, info.dim, embedder.name)
        phase = _Phase("embed", len(ids), "chunk", bar=progress, log=self._ticker.log, warm=True,
                       every=self._ticker.every, desc=f"embed ({embedder.name})")
        estimated = False

        def advance(n: int, weight: float) -> None:
            nonlocal estimated
            phase.advance(n, weight)
            left = phase.left()
            if not estimated and left is not None and phase.total >= ESTIMATE_MIN_CHUNKS and \
                    (phase.measured() >= ESTIMATE_AFTER_S or phase.done == phase.total):
                estimated = True
                self._ticker.say(f"embedding {phase.total} chunks with {embedder.name}: about "
                                 f"{_duration(left + phase.clock() - phase.start)} in all at "
                                 f"{_rate(phase.rate() or 0)} chunks/s")

        done = committed = 0
        try:
            while done < len(ids) and (batches is None or committed < batches):
                part = ids[done:done + self._vector_batch()]
                found = self.store.get_chunks(part)
                missing = [c for c in part if c not in found]
                if missing:
                    raise StoreError(f"chunk {missing[0]!r} is indexed in store {self.store.location} but not "
                                     f"stored; the store is damaged: re-ingest the documents into a new store")
                texts = [found[c].indexed_text() for c in part]
                phase.expect(len(texts), float(sum(map(len, texts))))
                vectors = self._embed(texts, advance)
                t0 = time.perf_counter()
                with self.store.transaction():
                    self.store.put_vectors(part, vectors)
                report.stage_seconds["index"] += time.perf_counter() - t0
                done += len(part)
                committed += 1
                report.chunks_embedded += len(part)
                if self._on_commit is not None:
                    self._on_commit("embed", done)
        finally:
            phase.close()

    def _vector_batch(self) -> int:
        """Chunks per commit of vectors (see ``BATCH_EMBED_SECONDS`` and ``BATCH_REWRITE_SHARE``)."""
        if self._embed_rate is None:
            return BATCH_FIRST_EMBED_CHUNKS
        limit = min(max(int(self._embed_rate * BATCH_EMBED_SECONDS), BATCH_FIRST_EMBED_CHUNKS),
                    BATCH_MAX_EMBED_CHUNKS)
        stats = self.store.get_corpus_stats()
        return max(limit, (stats.chunks if stats is not None else 0) // BATCH_REWRITE_SHARE)

    @staticmethod
    def _files(paths: Sequence[str | Path], report: IngestReport) -> tuple[list[tuple[Path, str, str]], set[str]]:
        """``(file, path-derived doc id, root folder)`` for every file under ``paths``, and the root folders."""
        files: list[tuple[Path, str, str]] = []
        roots: set[str] = set()
        reached: set[Path] = set()  # a file reached from two of the paths is read once (the first)
        for p in paths:
            path = Path(p).expanduser()
            if not path.exists():
                raise IngestError(f"{p}: no such file or folder")
            root = str(path.resolve() if path.is_dir() else path.resolve().parent)
            roots.add(root)
            found = discover([path])
            if path.is_dir():
                for link in _symlinked_folders(path):
                    # discover follows a link to a folder once; a loop or a second way to the same folder is not
                    # walked again (its files keep the ids of the first way)
                    if any(f == link or link in f.parents for f, _ in found):
                        report.notes.append(f"{link}: a symbolic link to a folder, followed: its files are "
                                            f"ingested with ids under {link.name}/")
                    else:
                        report.notes.append(f"{link}: a symbolic link to a folder already ingested by its own "
                                            f"path (or a loop), not followed")
                if not found:
                    report.notes.append(f"{p}: no files to ingest (hidden files and folders are skipped)")
            for f, doc_id in found:
                real = Path(os.path.realpath(f))  # Path.resolve() raises on a link that points to itself
                if real not in reached:
                    reached.add(real)
                    files.append((f, nfc(doc_id), root))
        return files, roots

    def _outside_store(self, paths: Sequence[str | Path], files: list[tuple[Path, str, str]],
                       report: IngestReport) -> list[tuple[Path, str, str]]:
        """``files`` without the store's own files when a given folder holds the store folder (``ingest .
        --store kb`` must not read its index as documents). Files given inside the store folder itself (the
        server's ``uploads/``) are kept."""
        local = self.store.local_index()  # a database store has no folder to skip
        if local is None:
            return files
        own = Path(local.path).resolve()
        if not any(own.is_relative_to(Path(p).expanduser().resolve()) for p in paths):
            return files
        kept = [(f, d, r) for f, d, r in files
                if not Path(os.path.realpath(f)).is_relative_to(own) or Path(r).is_relative_to(own)]
        if len(kept) < len(files):
            report.notes.append(f"{own}: the store folder itself, not ingested ({len(files) - len(kept)} files)")
        return kept

    def _ingest_locked(self, files: list[tuple[Path, str, str]], roots: set[str], report: IngestReport, *,
                       sync: bool, progress: bool, embed: bool, reembed: bool) -> bool:
        """Phase ``index`` of ``ingest``, under the store's writer lock: load, chunk and commit in batches, new
        chunks pending their vectors when embedding. Returns whether the ``embed`` phase should follow."""
        stats, vectors = self.store.get_corpus_stats(), self.store.get_embedding()
        if embed and not reembed and vectors is not None:
            if self.config.embedding.model:
                from ..index.dense import check_model

                check_model(vectors.model, vectors.dim, self.config.embedding.model)
        sig = self._pipeline_signature()
        stored = self.store.get_documents()
        sources = self.store.get_sources()
        seen: set[str] = set()
        read_ok: set[str] = set()
        batch = _Batch()
        # vectors are computed when asked for, except for a store that holds chunks without vectors
        embedding = (embed or reembed) and (reembed or stats is None or vectors is not None or not stats.chunks)
        first, limit = True, self._batch_limit()
        new_chunks = 0  # chunks written by this phase (committed or in the open batch)
        phase = _Phase("index", len(files), "file", bar=progress, log=self._ticker.log, every=self._ticker.every,
                       detail=lambda: f"{new_chunks} new chunks")
        job = PrepareJob(self._limits, self.config.ingest.hidden_slides, self.config.chunking,
                         (self.analyzer.language, self.analyzer.stopwords), chunk=self._situator is None)
        t0 = time.perf_counter()
        settings = json.dumps([sig, asdict(self._limits), self.config.ingest.hidden_slides])
        digests = [file_digest(file, settings) for file, _, _ in files]
        unread = _unread_files(files, digests, stored, sources)
        report.stage_seconds["read"] += time.perf_counter() - t0
        outcomes = iter(self._runner.prepare(
            [(str(file), doc_id) for i, (file, doc_id, _) in enumerate(files) if i not in unread], job))
        self.store.begin()
        try:
            for i, (file, doc_id, root) in enumerate(files):
                if i in unread:  # its bytes are what the store read: not parsed again
                    seen.update(unread[i])
                    report.unchanged.extend(unread[i])
                    report.unread.extend(unread[i])
                    phase.advance()
                    continue
                outcome = next(outcomes)
                t1 = time.perf_counter()
                report.stage_seconds["read"] += outcome.read_s
                report.stage_seconds["chunk"] += outcome.chunk_s
                if isinstance(outcome.error, UnsupportedFormatError):
                    report.skipped.append((str(file), _one_line(str(outcome.error))))
                    phase.advance()
                    continue
                if outcome.error is not None:  # one bad file never stops the batch
                    _record_failure(report, file, outcome.error, doc_id, multi=False)
                    phase.advance()
                    continue
                read_ok.add(str(file.resolve()))
                docs = [d for d, _, _ in outcome.docs]
                path_keyed = len(docs) == 1 and nfc(docs[0].doc_id) == doc_id
                part = file_part(digests[i], len(docs)) if digests[i] is not None else ""
                for n_doc, (doc, chunks, tokens) in enumerate(outcome.docs, start=1):
                    if len(docs) > 1 and self._ticker.due():
                        self._ticker.say(f"index: {file.name}: {n_doc}/{len(docs)} documents, "
                                         f"{new_chunks} new chunks")
                    report.warnings.extend((str(file), _without_path(_one_line(w), file)) for w in doc.warnings)
                    before = len(batch.chunks)
                    try:
                        self._ingest_document(doc, root, path_keyed, stored, sources, seen, (sig, part), batch,
                                              report, file, (chunks, tokens) if chunks is not None else None)
                    except Exception as exc:  # noqa: BLE001 - a cleaner/chunker/analyzer bug: this document only
                        _record_failure(report, file, exc, nfc(doc.doc_id), multi=not path_keyed)
                    new_chunks += len(batch.chunks) - before
                    if len(batch.chunks) >= limit:  # checked per document: a corpus.jsonl is batched too
                        report.stage_seconds["chunk"] += time.perf_counter() - t1
                        self._commit_batch(batch, report, embed=embed, reembed=reembed and first)
                        first, batch, limit = False, _Batch(), self._batch_limit()
                        self.store.begin()
                        t1 = time.perf_counter()
                report.stage_seconds["chunk"] += time.perf_counter() - t1
                phase.advance()
            if sync:
                # gone: under a given folder, not seen now, and either its file no longer exists or its file
                # was read in this run without it (a document removed from a BEIR corpus.jsonl); a file that
                # failed to load keeps its previous version
                done = set(report.deleted) | set(batch.deleted)
                gone = sorted(d for d, s in stored.items() if d not in seen and d not in done
                              and (s.root in roots or _under(s.source, roots))
                              and (s.source in read_ok or not Path(s.source).exists()))
                batch.removed |= self.store.get_chunk_ids(gone)
                self.store.delete_documents(gone)
                batch.deleted.extend(gone)
            if batch.touched() or (reembed and first) or self._precision_changes():
                self._commit_batch(batch, report, embed=embed, reembed=reembed and first)
            else:
                self.store.commit()
            if embed and not embedding and report.chunks_added:  # asked to embed, kept BM25-only: say why
                report.notes.append("the new chunks were not embedded: this store holds chunks without vectors "
                                    "(it was first ingested without embedding), so it stays BM25-only; "
                                    "`openbook ingest --reembed PATH` embeds every chunk")
        except BaseException:
            self.store.rollback()
            raise
        finally:
            phase.close()
        return embedding

    def _precision_changes(self) -> bool:
        """Whether ``[embedding] vector_precision`` asks for another precision than the store's vectors are
        searched at: a commit then re-indexes them (from the stored float32 vectors) even when no file changed."""
        wanted, info = self.config.embedding.vector_precision, self.store.get_embedding()
        return bool(wanted) and info is not None and info.precision != wanted

    def _batch_limit(self) -> int:
        """Pending new chunks that trigger a commit of the BM25 index (see ``BATCH_MIN_CHUNKS``)."""
        stats = self.store.get_corpus_stats()
        return max(BATCH_MIN_CHUNKS, stats.chunks if stats is not None else 0)

    def _ingest_document(self, doc: Document, root: str, path_keyed: bool, stored: dict[str, Any],
                         sources: dict[str, list[str]], seen: set[str], sig: tuple[str, str], batch: _Batch,
                         report: IngestReport, file: Path,
                         prepared: tuple[list[Chunk], list[list[str]]] | None = None) -> None:
        """Chunk one document of ``file`` (or take its ``prepared`` chunks and their terms, computed by the
        runner with this ingest's settings) and write it (or nothing) into the open transaction; raises on any
        failure, leaving the transaction as it was. ``sig``: the pipeline signature and the file part of the
        document's digest (``signature.file_part``; ``""`` when the file's bytes could not be hashed)."""
        sig, part = sig
        doc = replace(doc, doc_id=nfc(doc.doc_id))
        duplicates: list[str] = []
        if path_keyed:  # one file, one document: a file already stored under another id keeps that id
            known = [d for d in sources.get(doc.source, []) if d in stored and d not in batch.deleted]
            if known and doc.doc_id not in known:
                doc = replace(doc, doc_id=known[0])
            duplicates = [d for d in known if d != doc.doc_id]
        if doc.doc_id in seen and not path_keyed:  # a BEIR record: its id is its _id, not a path
            raise IngestError(f"duplicate document id {doc.doc_id!r} (an earlier record of this ingest has the same "
                              f"_id); skipped. Give each record of the corpus its own _id")
        if doc.doc_id in seen:
            raise IngestError(f"duplicate document id {doc.doc_id!r} (another file of this ingest has the same path "
                              f"under its folder); skipped. Ingest the folders from a common parent folder so "
                              f"their ids differ")
        seen.add(doc.doc_id)
        # (a document the chunker now cuts otherwise is re-chunked once; an empty revision leaves the hash as it was)
        text_digest = content_hash(doc.content_hash, sig, *filter(None, [chunker_revision(doc)]))
        digest = stored_digest(text_digest, part)
        old = stored.get(doc.doc_id)
        if old is not None and old.root != root and old.source != doc.source:
            raise IngestError(
                f"document id {doc.doc_id!r} is already taken by {old.source} (ingested from {old.root}); "
                f"skipped. Ingest both from a common parent folder, or `openbook delete {doc.doc_id}` first")
        if old is not None and split_digest(old.content_hash)[0] == text_digest and not duplicates:
            report.unchanged.append(doc.doc_id)
            if old.content_hash != digest:  # same text, other bytes (or no file part yet): the next ingest skips it
                self.store.set_digests({doc.doc_id: digest})
            return
        if prepared is not None:
            chunks, tokens = prepared
        else:
            chunks = chunk_document(doc, self.config.chunking)
            if self._situator is not None:  # contextual retrieval: Chunk.context joins the indexed text
                chunks = self._situator.apply(doc, chunks)
            tokens = [self.analyzer.analyze_document(c.indexed_text()) for c in chunks]
        with self.store.savepoint():
            removed = self.store.get_chunk_ids([doc.doc_id, *duplicates]) if (old or duplicates) else set()
            common = removed & {c.chunk_id for c in chunks}
            before = {cid: c.indexed_text() for cid, c in self.store.get_chunks(sorted(common)).items()}
            reuse = {c.chunk_id for c in chunks if before.get(c.chunk_id) == c.indexed_text()}
            self.store.delete_documents([doc.doc_id, *duplicates])
            if chunks:
                self.store.put_document(doc, root, chunks, digest)
        batch.removed |= removed
        batch.deleted.extend(duplicates)
        if not chunks:  # reported, not stored; a previous version is removed (its text is gone)
            report.empty.append((doc.source, doc.doc_id))
            report.problems.append(FileProblem(str(file), "empty", EMPTY_REASON, doc.doc_id))
            return
        batch.reuse |= reuse
        batch.chunks.extend(chunks)
        batch.tokens.extend(tokens)
        (batch.updated if old is not None else batch.added).append(doc.doc_id)

    def _commit_batch(self, batch: _Batch, report: IngestReport, *, embed: bool, reembed: bool) -> None:
        """Index the batch as the next generation and commit it with its documents (one transaction); the
        chunks to embed are written pending (``defer``): the ``embed`` phase computes their vectors."""
        t0 = time.perf_counter()
        self.store.put_versions(version_links(self.store.get_titles_and_metadata(versioned_only=True)))
        self.store.put_index(batch.removed, batch.chunks, batch.tokens, reuse=batch.reuse,
                               embedder=_Vectors(self) if embed or reembed else None, reembed=reembed, defer=True)
        self.store.commit()
        report.added += batch.added
        report.updated += batch.updated
        report.deleted += batch.deleted
        report.chunks_added += len(batch.chunks)
        report.chunks_removed += len(batch.removed)
        report.stage_seconds["index"] += time.perf_counter() - t0
        if self._on_commit is not None:
            self._on_commit("index", report.chunks_added)

    # ------------------------------------------------------------------ RAPTOR summaries
    def _rebuild_raptor(self) -> dict[str, Any]:
        """(Re)build the RAPTOR tree when the index changed since it was built (``openbook.ingest.raptor``)."""
        from ..index.raptor import FOLDER, RaptorTree
        from .raptor import RaptorHost, rebuild, tree_settings

        host = RaptorHost(self.store, self.config, self.analyzer, self.embedder)
        index = host.loaded()
        if index is None or not index.bm25.rows:
            return {}
        tree = RaptorTree.load(host.store_path / FOLDER)
        if tree is not None and tree.generation == host.generation and tree.settings == tree_settings(host):
            return {"nodes": len(tree.nodes), "unchanged": True}
        return rebuild(host, ready(self.generator))

    def resolve(self, doc_ids: Sequence[str]) -> dict[str, list[str]]:
        """The stored ids each of ``doc_ids`` names: itself when it is a stored id (NFC-normalised), else the
        documents read from the file at that path; an empty list when it names none.

        Returns:
            One entry per distinct given string, in the order given.
        """
        stored = self.store.get_documents()
        sources = self.store.get_sources()
        out: dict[str, list[str]] = {}
        for given in doc_ids:
            d = nfc(given)
            if d in stored:
                out[given] = [d]
            elif Path(given).is_file():
                out[given] = list(sources.get(str(Path(given).resolve()), []))
            else:
                out[given] = []
        return out

    def delete(self, doc_ids: Sequence[str], *, on_wait: Callable[[str], None] | None = None) -> list[str]:
        """Delete documents by id (NFC-normalised), or by the path of the file they came from.

        Returns:
            The ids deleted, in the order given; unknown ids are ignored.

        Raises:
            StoreError: the store is read-only.
        """
        with self.store.write_lock(on_wait):
            present = list(dict.fromkeys(d for ids in self.resolve(doc_ids).values() for d in ids))
            if not present:
                return []
            with self.store.transaction():
                removed = self.store.get_chunk_ids(present)
                self.store.delete_documents(present)
                self.store.put_versions(version_links(self.store.get_titles_and_metadata(versioned_only=True)))
                vectors = _Vectors(self) if self.store.get_embedding() is not None else None
                self.store.put_index(removed, [], [], embedder=vectors)
        return present

    def _embed(self, texts: list[str], advance: Callable[[int, float], None] | None = None) -> np.ndarray:
        """Passage vectors for ``texts``: float32 ``[len(texts), dim]`` in input order, computed in batches of
        ``config.embedding.batch_size``; ``advance(n, chars)`` hears each batch's size and characters as it is
        done.

        Records the rate (chunks/s, measured after the first batch, which loads the model) for batch sizes.
        """
        embedder = self.embedder()
        size = max(1, self.config.embedding.batch_size)
        # batches of texts of similar length (less padding), taken in a fixed shuffled order so that the rate
        # measured on the first batches holds for the rest
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        by_length = [texts[i] for i in order]
        starts = [int(i) for i in np.random.default_rng(0).permutation(np.arange(0, len(texts), size))]
        t0 = time.perf_counter()
        parts = []
        warm = t0  # the end of the first batch, which may also load the model: rates are measured after it
        done = first = 0
        if self._runner.distributed:
            results = self._runner.embed(embedder.name, [by_length[i : i + size] for i in starts], size)
        else:
            results = (embedder.embed(by_length[i : i + size], kind="passage", batch_size=size) for i in starts)
        for n, (i, vectors_of_batch) in enumerate(zip(starts, results)):
            parts.append(vectors_of_batch)
            done += len(parts[-1])
            if advance is not None:
                advance(len(parts[-1]), float(sum(len(t) for t in by_length[i : i + size])))
            if n == 0:
                warm, first = time.perf_counter(), done
                continue
            self._embed_rate = (done - first) / max(time.perf_counter() - warm, 1e-9)
        if len(parts) == 1 and len(texts):
            self._embed_rate = len(texts) / max(time.perf_counter() - t0, 1e-9)
        if self._stages is not None:
            self._stages["embed"] += time.perf_counter() - t0
        if not parts:
            return np.zeros((0, embedder.dim), np.float32)
        vectors = np.empty((len(texts), embedder.dim), dtype=np.float32)
        rows = [order[j] for start in starts for j in range(start, min(start + size, len(texts)))]
        vectors[rows] = np.vstack(parts)  # back to input order
        return vectors
