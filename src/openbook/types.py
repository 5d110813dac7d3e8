"""The few frozen types that flow through every stage.

``Document`` (ingest) -> ``Chunk`` (chunking) -> ``Hit`` (retrieve) -> ``Passage`` / ``Citation`` / ``Answer``
(answer). All are immutable dataclasses; mappings inside them are treated as read-only by convention. ``Message``
is one turn of a chat with a model (``openbook.llm``).

Document text convention (the contract between loaders and the chunker): ``Document.text`` is cleaned,
Markdown-like text. Headings are lines ``# Title`` .. ``###### Title``; paragraphs are separated by a blank
line; list items start with ``- ``; a table is a block of consecutive lines that start with ``|``, whose first
line is the header row and whose second line is a ``| --- | --- |`` separator; a fenced code block
(```` ``` ```` or ``~~~``, read by ``openbook.fences`` as CommonMark does) is code, its ``#`` lines no headings.
Page ``n`` (1-based) of a paged source starts at character offset ``pages[n - 1]`` of ``text``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

Message = Mapping[str, str]
"""One chat turn handed to a model: ``{"role": "system" | "user" | "assistant", "content": str}``."""


def content_hash(*parts: str) -> str:
    """Hex SHA-256 of the parts joined by NUL; used for document and chunk ids."""
    import hashlib  # ids are made at ingest: a search imports no hash library

    h = hashlib.sha256()
    for i, part in enumerate(parts):
        if i:
            h.update(b"\0")
        h.update(part.encode("utf-8"))
    return h.hexdigest()


@dataclass(frozen=True)
class Document:
    """One source document after cleaning.

    Attributes:
        doc_id: path relative to the folder given to ``ingest`` (POSIX separators), or the BEIR ``_id``.
        text: cleaned, Markdown-like text (see the module docstring).
        title: title from front matter, ``<title>``, first heading, or the file name.
        source: absolute path of the file it came from.
        format: loader name: ``markdown``, ``html``, ``text``, ``csv``, ``pdf``, ``rst``, ``docx``, ``pptx``,
            ``epub``, ``man``, ``beir``.
        metadata: ``updated``/``created`` as ISO dates ``YYYY-MM-DD``, ``author``, ``tags`` (list of str),
            ``acl`` (list of role names), any other front-matter key as parsed.
        pages: start character offset of each page (PDF page, PPTX slide, EPUB spine document) in ``text``;
            empty for unpaged sources.
        warnings: one-line notes on what the loader could not read fully (a page with no text layer, a
            truncated table); the ingest report lists them. Not part of ``content_hash``.
    """

    doc_id: str
    text: str
    title: str
    source: str
    format: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    pages: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def content_hash(self) -> str:
        """SHA-256 over text, title and metadata: equal hashes mean nothing to re-index."""
        meta = json.dumps(dict(self.metadata), sort_keys=True, default=str, ensure_ascii=False)
        return content_hash(self.doc_id, self.title, meta, self.text)

    def page_at(self, offset: int) -> int | None:
        """1-based page number holding character ``offset``, or None for unpaged documents."""
        if not self.pages:
            return None
        import bisect

        return max(1, bisect.bisect_right(self.pages, offset))


BlockKind = Literal["heading", "paragraph", "list_item", "table_row", "code"]


@dataclass(frozen=True)
class Block:
    """One block of a Markdown text (``openbook.blocks.parse_blocks``; on a ``Chunk``, of the chunk's text).

    ``start``/``end``: character offsets of the block in the text parsed, its leading and trailing spaces and line
    breaks excluded (``text[start:end]`` is the block as written, markers included: ``# Title``, ``- item``,
    ``| a | b |``, a code block's fences). ``lines``: (first line, end line exclusive), lines counted from 0 at
    ``\\n``. ``level``: a heading's level (1-6); a list item's depth (1 for a top-level item); for other blocks
    the depth of the list items holding them (0 outside lists). ``header``: a table row's header cells (``()``
    for the header row itself); ``cells``: a table row's cells, inline text as written, trimmed. ``fence``: a
    fenced code block's opening fence (```` ``` ````, ``~~~~``; ``""`` for indented code). ``info``: a
    fenced code block's info string, trimmed (``""`` for indented code). ``closed``: a fenced code block ends
    with its closing fence (False when the text or its list item ended first; True for indented code).
    ``quoted``: the block is inside a block quote."""

    kind: BlockKind
    level: int
    start: int
    end: int
    lines: tuple[int, int]
    header: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    fence: str = ""
    info: str = ""
    closed: bool = True
    quoted: bool = False


@dataclass(frozen=True)
class Chunk:
    """A retrievable piece of one document.

    Attributes:
        chunk_id: hex digest derived from ``doc_id`` and the chunk's text (see ``make_chunk_id``).
        doc_id: id of the parent document.
        text: the chunk's own text, a slice of ``Document.text`` (tables may repeat their header row; a part of a
            long code block repeats the block's opening fence line and closes it, ``openbook.chunking``).
        title: the parent document's title.
        headings: heading path from the top-level heading down to the chunk's section.
        start, end: character offsets of the chunk in ``Document.text`` (end exclusive).
        page: 1-based page of ``start`` for paged documents, else None.
        metadata: the parent document's metadata.
        context: a short text situating the chunk in its document (contextual retrieval,
            ``openbook.ingest.contextualize``); indexed with the chunk, never shown as its text; '' when off.
        format: the parent document's loader name (``Document.format``); '' when not known. It tells whether
            the text keeps its author's inline Markdown (``openbook.emphasis.MARKDOWN_FORMATS``).
        blocks: the Markdown blocks of ``text`` (``Block``: offsets and lines into the chunk's text), as the
            chunker took them from its one parse of a Markdown document (``openbook.chunking``); empty for other
            loaders' text, for a chunk the chunker could not map them onto, and for chunks of stores written
            before blocks were stored: a reader then parses ``text`` itself (``openbook.blocks.parse_blocks``).
    """

    chunk_id: str
    doc_id: str
    text: str
    title: str = ""
    headings: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    page: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    context: str = ""
    format: str = ""
    blocks: tuple[Block, ...] = ()

    @property
    def section(self) -> str:
        """Heading path joined with ' > ', or '' when the chunk sits above every heading."""
        return " > ".join(self.headings)

    def indexed_text(self, context: bool = True) -> str:
        """Text given to the analyzer and the embedder: title, heading path, context (unless ``context`` is
        False: what a reader sees of the chunk), then the chunk text."""
        head = [p for p in (self.title, self.section, self.context if context else "") if p]
        return "\n".join([*head, self.text])


def make_chunk_id(doc_id: str, text: str, occurrence: int = 0) -> str:
    """Stable chunk id: first 20 hex chars of SHA-256(doc_id, text[, occurrence]).

    ``occurrence`` separates identical chunk texts inside one document (0 for the first).
    """
    parts = (doc_id, text) if occurrence == 0 else (doc_id, text, str(occurrence))
    return content_hash(*parts)[:20]


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk with its fused score and each retrieval leg's rank and score.

    Attributes:
        chunk_id, doc_id: ids of the chunk and its document.
        score: the final score used for ordering (raw BM25 for ``bm25`` mode, cosine for ``dense``,
            RRF for ``hybrid``, reranker score after reranking); higher is better.
        legs: leg name (``bm25``, ``dense``, ``rerank``; ``hop2`` and ``llm-hop`` for a second hop, ``raptor``
            for a chunk brought in by a RAPTOR summary, ``option`` for a chunk put first as the manual entry of an
            option the query names and ``entry`` for one put first in its document as the entry of a keyword the
            query names, ``openbook.retrieve.options``) -> ``(rank, score)``; rank is 1-based.
        chunk: the chunk itself, when loaded.
    """

    chunk_id: str
    doc_id: str
    score: float
    legs: Mapping[str, tuple[int, float]] = field(default_factory=dict)
    chunk: Chunk | None = None


@dataclass(frozen=True)
class Passage:
    """A numbered passage of the assembled context; ``n`` is what ``[n]`` cites."""

    n: int
    hit: Hit

    @property
    def chunk(self) -> Chunk:
        assert self.hit.chunk is not None
        return self.hit.chunk


@dataclass(frozen=True)
class Citation:
    """One entry of an answer's sources list: passage number -> where it came from."""

    n: int
    doc_id: str
    chunk_id: str
    title: str = ""
    page: int | None = None
    section: str = ""
    updated: str | None = None


@dataclass(frozen=True)
class Answer:
    """The result of ``ask``.

    Attributes:
        text: the answer with ``[n]`` markers, or the refusal sentence.
        refused: True when the passages did not support an answer (machine-readable signal).
        citations: the sources the answer cites, one per source (document, section, page), numbered 1, 2, ...
            in order of first citation (``openbook.answer.numbering``).
        passages: every passage that was in the context, numbered 1..len(passages) to match: ``[k]`` opens
            passage k (source k's first-cited passage); the other passages follow in context order.
        unsupported: answer sentences that no cited passage supports (LLM answers).
        notes: human-readable remarks (dropped citation ids, conflicts noticed, ...).
        confidence: the offline answerer's answerability score (0-1; it refuses below its threshold), None
            when no score was computed (an LLM answer, no passages).
        retrieval: ``search`` (passages retrieved) or ``whole-corpus`` (every visible document fit the LLM's
            context, retrieval skipped: ``[answer] skip_retrieval_small_corpus``).
        transforms: what each LLM query transform did, ``{"name", "generated", "note"}`` (none when off).
        features: what the answerability model read (``openbook.answer.refusal.FEATURES``, name -> value) for
            the offline answerer's best candidate; empty when none was scored.
    """

    text: str
    refused: bool
    citations: tuple[Citation, ...] = ()
    passages: tuple[Passage, ...] = ()
    unsupported: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    confidence: float | None = None
    retrieval: str = "search"
    transforms: tuple[dict, ...] = ()
    features: Mapping[str, float] = field(default_factory=dict)
