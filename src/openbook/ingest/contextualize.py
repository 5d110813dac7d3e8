"""Contextual retrieval at ingest: a short situating context per chunk, indexed with it but never shown.

A chunk cut from a long document often lacks the words a query uses for it ("the company's revenue grew 3%"
without the company's name). Contextual retrieval (Anthropic, "Introducing Contextual Retrieval", 2024) asks an
LLM, for every chunk, for a short context that situates the chunk within the whole document, and prepends that
context to the text given to BM25 and the embedder. The passage an answer shows and cites stays the chunk's own
text: the context lives in ``Chunk.context`` and only ``Chunk.indexed_text()`` reads it.

The prompt is the seeds' (Anthropic's cookbook) shape::

    <document>
    {whole document}
    </document>
    Here is the chunk we want to situate within the whole document
    <chunk>
    {chunk}
    </chunk>
    Please give a short succinct context to situate this chunk within the overall document for the purposes of
    improving search retrieval of the chunk. Answer only with the succinct context and nothing else.

With the ``anthropic`` backend the document block carries ``cache_control: {"type": "ephemeral"}`` so the
document's tokens are written to Anthropic's prompt cache once and read (at a tenth of the price) for every
further chunk of the same document; with OpenAI-compatible servers the document comes first in one message, so
their automatic prefix caching applies.

Every context is cached by (document hash, chunk hash, model) in ``contexts.sqlite`` in the store folder: a
re-ingest (after a resumed interruption, a deleted and re-added document, a changed analyzer setting) costs no
LLM call for a chunk already situated. ``ContextStats`` counts calls, cache hits, failures and tokens for the
ingest report.

Offline (no LLM configured) a deterministic fallback writes the context from the document itself: the
document's first sentence (its summary sentence, for an abstract or an encyclopedia article) when the chunk
does not already contain it; the title and heading path are already part of ``indexed_text``. See BENCHMARKS.md
("Contextual retrieval") for what it gave on SciFact and HotpotQA; it is off by default.

The document text is untrusted: an LLM context is cut to ``MAX_CONTEXT_CHARS``, flattened to one line, and
only ever indexed, never put in front of a reader or another prompt. A failed LLM call never fails the ingest:
that chunk gets the offline context, and the failure is counted.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol, Sequence

from ..errors import GenerationError
from ..llm import Generator, ready
from ..types import Chunk, Document, content_hash

__all__ = ["ContextStats", "ContextCache", "Contextualizer", "OfflineContextualizer", "LLMContextualizer",
           "situate_prompt", "contextualize_chunks", "OFFLINE_MODEL", "CACHE_NAME"]

CACHE_NAME = "contexts.sqlite"
"""The cache file's name inside the store folder."""

OFFLINE_MODEL = "offline-first-sentence-v1"
"""The cache key's model part for the deterministic fallback (bump when its output changes)."""

MAX_CONTEXT_CHARS = 600
"""An LLM context longer than this many characters is cut (a model that rambles, or an injected document)."""

MAX_DOCUMENT_CHARS = 120_000
"""A document longer than this many characters is sent as a window of this size around the chunk (about
30,000 tokens), so one huge file never exceeds a model's context."""

CONTEXT_MAX_TOKENS = 150
"""``max_tokens`` of one context request."""

DOCUMENT_PROMPT = "<document>\n{document}\n</document>"
CHUNK_PROMPT = ("Here is the chunk we want to situate within the whole document\n<chunk>\n{chunk}\n</chunk>\n\n"
                "Please give a short succinct context to situate this chunk within the overall document for the "
                "purposes of improving search retrieval of the chunk.\n"
                "Answer only with the succinct context and nothing else.")


@dataclass
class ContextStats:
    """What contextualization cost during one ingest.

    Attributes:
        model: ``backend:model`` of the LLM, or ``OFFLINE_MODEL``.
        chunks: chunks that received a context.
        calls: LLM requests made; cached: contexts read from the cache instead; failed: LLM calls that
            failed (those chunks got the offline context).
        input_tokens, output_tokens: as the backend reported them (0 when it reports none);
            cache_read_tokens / cache_write_tokens: Anthropic prompt-cache reads and writes (OpenAI: cached
            prompt tokens are counted as reads).
        seconds: wall time spent writing contexts (LLM calls included).
    """

    model: str = ""
    chunks: int = 0
    calls: int = 0
    cached: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ContextCache:
    """Contexts by (document hash, chunk hash, model) in one SQLite file; written through, so an interrupted
    ingest keeps what it paid for. ``path`` None keeps them in memory (tests, read-only stores)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._conn = sqlite3.connect(str(path) if path is not None else ":memory:", isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL" if path is not None else "PRAGMA journal_mode=MEMORY")
        self._conn.execute("CREATE TABLE IF NOT EXISTS contexts (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                           "context TEXT NOT NULL)")

    @staticmethod
    def key(document_hash: str, chunk_text: str, model: str) -> str:
        """SHA-256 of the document's content hash, the chunk text's hash and the model name."""
        return content_hash(document_hash, content_hash(chunk_text), model)

    def get(self, key: str) -> str | None:
        row = self._conn.execute("SELECT context FROM contexts WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, model: str, context: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO contexts VALUES (?, ?, ?)", (key, model, context))

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM contexts").fetchone()[0])

    def close(self) -> None:
        self._conn.close()


class Contextualizer(Protocol):
    """Writes one situating context per chunk of one document."""

    model: str

    def contexts(self, doc: Document, chunks: Sequence[Chunk], stats: ContextStats) -> list[str | None]:
        """One context per chunk, in order: '' for none, None when writing it failed (not cached; the chunk
        gets the offline context). Counts its work in ``stats``."""
        ...


def _one_line(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit].strip()


def _first_sentence(doc: Document) -> str:
    """The document's first sentence of body text (headings and table rows skipped), '' when none."""
    from ..chunking import split_sentences

    for block in doc.text.split("\n\n"):
        block = block.strip()
        if not block or block.startswith(("#", "|")):
            continue
        spans = split_sentences(block)
        if spans:
            s, e = spans[0]
            return _one_line(block[s:e], 400)
    return ""


class OfflineContextualizer:
    """The deterministic fallback: the document's first sentence, for chunks that do not already hold it."""

    model = OFFLINE_MODEL

    def contexts(self, doc: Document, chunks: Sequence[Chunk], stats: ContextStats) -> list[str | None]:
        first = _first_sentence(doc)
        key = " ".join(first.split())
        return ["" if not first or key in " ".join(c.text.split()) else first for c in chunks]


def situate_prompt(document: str, chunk: str, anthropic: bool) -> list[dict[str, Any]]:
    """The chat messages asking for one chunk's context (the seeds' prompt shape, see the module docstring).

    Anthropic: one user message of two text blocks, the document block marked ``cache_control: ephemeral``.
    Others: one user message, the document first (a shared prefix for automatic prompt caching).
    """
    doc_part = DOCUMENT_PROMPT.format(document=document)
    chunk_part = CHUNK_PROMPT.format(chunk=chunk)
    if anthropic:
        return [{"role": "user", "content": [
            {"type": "text", "text": doc_part, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": chunk_part}]}]
    return [{"role": "user", "content": doc_part + "\n" + chunk_part}]


def _window(doc: Document, chunk: Chunk) -> str:
    """The document text, or a ``MAX_DOCUMENT_CHARS`` window centred on the chunk when the document is longer."""
    text = doc.text
    if len(text) <= MAX_DOCUMENT_CHARS:
        return text
    mid = (chunk.start + chunk.end) // 2
    start = max(0, min(mid - MAX_DOCUMENT_CHARS // 2, len(text) - MAX_DOCUMENT_CHARS))
    return text[start : start + MAX_DOCUMENT_CHARS]


def _usage(generator: Any) -> dict[str, int]:
    usage = getattr(generator, "last_usage", None)
    return usage if isinstance(usage, dict) else {}


class LLMContextualizer:
    """Contexts written by a chat model (``openbook.llm.Generator``), one request per chunk.

    Args:
        generator: the chat backend; ``generator.name == "anthropic"`` turns on prompt caching of the document.
        model: the name recorded in cache keys (``backend:model``).
        max_tokens: per request.
    """

    def __init__(self, generator: Any, model: str, max_tokens: int = CONTEXT_MAX_TOKENS) -> None:
        self.generator, self.model, self.max_tokens = generator, model, max_tokens

    def contexts(self, doc: Document, chunks: Sequence[Chunk], stats: ContextStats) -> list[str | None]:
        anthropic = getattr(self.generator, "name", "") == "anthropic"
        out: list[str | None] = []
        for c in chunks:
            messages = situate_prompt(_window(doc, c), c.text, anthropic)
            stats.calls += 1
            try:
                reply = self.generator.generate(messages, max_tokens=self.max_tokens)
            except GenerationError:
                stats.failed += 1
                out.append(None)
                continue
            usage = _usage(self.generator)
            stats.input_tokens += int(usage.get("input_tokens", 0))
            stats.output_tokens += int(usage.get("output_tokens", 0))
            stats.cache_read_tokens += int(usage.get("cache_read_tokens", 0))
            stats.cache_write_tokens += int(usage.get("cache_write_tokens", 0))
            out.append(_one_line(reply, MAX_CONTEXT_CHARS))
        return out


def contextualize_chunks(doc: Document, chunks: Sequence[Chunk], contextualizer: Contextualizer,
                         cache: ContextCache, stats: ContextStats) -> list[Chunk]:
    """``chunks`` with ``Chunk.context`` set, from ``cache`` where it holds them, else from ``contextualizer``
    (LLM contexts are cached; the offline fallback is recomputed).

    Args:
        doc: the chunks' document (its ``content_hash`` is part of every cache key).
        chunks: the document's chunks, in order.

    Returns:
        The same chunks, same order, each with its context (text, ids and offsets unchanged).
    """
    t0 = time.perf_counter()
    model = contextualizer.model
    stats.model = model
    cacheable = model != OFFLINE_MODEL  # the fallback is cheaper to recompute than to store
    keys = [ContextCache.key(doc.content_hash, c.text, model) for c in chunks]
    found = [cache.get(k) if cacheable else None for k in keys]
    todo = [i for i, f in enumerate(found) if f is None]
    stats.cached += len(chunks) - len(todo)
    if todo:
        written = contextualizer.contexts(doc, [chunks[i] for i in todo], stats)
        fallback: list[str | None] | None = None
        for j, (i, context) in enumerate(zip(todo, written)):
            if context is None:  # the LLM failed: the offline context, not cached (the next ingest retries)
                if fallback is None:
                    fallback = OfflineContextualizer().contexts(doc, [chunks[i] for i in todo], stats)
                found[i] = fallback[j] or ""
            else:
                found[i] = context
                if cacheable:
                    cache.put(keys[i], model, context)
    stats.chunks += len(chunks)
    stats.seconds += time.perf_counter() - t0
    return [replace(c, context=f or "") for c, f in zip(chunks, found)]


def context_model(config: Any) -> str:
    """The cache key's model part for a ``Config``: ``backend:model`` of ``[llm]``, else ``OFFLINE_MODEL``."""
    llm = config.llm
    return f"{llm.backend.strip().lower()}:{llm.model.strip()}" if llm.backend else OFFLINE_MODEL


class Situator:
    """One ingest's contextualization: the contextualizer ``config`` asks for, the store's cache, the counts.

    Args:
        config: an ``openbook.config.Config``; ``[llm]`` names the model in cache keys.
        store_path: the store folder (the cache file goes there); None or a read-only folder: in memory.
        generator: the LLM that writes the contexts (built from ``config.llm`` by the caller); None: the offline
            fallback.

    Raises:
        ConfigError: ``generator``'s backend cannot be built (no key, unknown backend), checked here, before
            any document is read.
    """

    def __init__(self, config: Any, store_path: Path | None, generator: Generator | None = None) -> None:
        self.stats = ContextStats(model=context_model(config))
        if generator is not None:
            self.contextualizer: Contextualizer = LLMContextualizer(ready(generator), self.stats.model)
        else:
            self.contextualizer = OfflineContextualizer()
        path = store_path / CACHE_NAME if store_path is not None else None
        try:
            self.cache = ContextCache(path)
        except sqlite3.Error:
            self.cache = ContextCache(None)

    def apply(self, doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        """``contextualize_chunks`` with this ingest's contextualizer, cache and counts."""
        return contextualize_chunks(doc, chunks, self.contextualizer, self.cache, self.stats)

    def close(self) -> None:
        self.cache.close()
