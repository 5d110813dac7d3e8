"""BEIR ``corpus.jsonl`` loader: one Document per line, ``doc_id`` = ``_id``.

Each line is a JSON object ``{"_id": ..., "title": ..., "text": ..., "metadata": {...}}`` (``title`` and
``metadata`` optional). The title is NOT prepended to the text: ``Chunk.indexed_text`` adds it later.
Parsing uses orjson when installed (faster than the stdlib ``json``), else ``json``; the per-line work is one
parse plus one ``Document``.
"""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import IngestError
from ..types import Document
from ._common import normalise_metadata

try:
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
    _DecodeError: type[Exception] = orjson.JSONDecodeError
except ImportError:  # pragma: no cover - orjson is optional
    import json

    _loads = json.loads
    _DecodeError = json.JSONDecodeError


def iter_beir(path: Path) -> Iterator[Document]:
    """Yield the documents of a BEIR ``corpus.jsonl`` (or ``corpus.jsonl.gz``, read as a stream) in file order
    (blank lines skipped).

    A malformed line (not JSON, not an object with ``_id``, a non-string ``text``/``title``, metadata that
    ``normalise_metadata`` refuses: nested too deeply, a malformed ``acl``) is skipped, never
    the file: the skip is reported in ``Document.warnings`` of the next document in the file (of the last
    one, for bad lines at the end), as ``corpus.jsonl line N skipped: <reason>``.

    Raises:
        IngestError: the file holds no valid record at all; the message names the first bad line.
    """
    source = str(path.resolve())
    pending: list[str] = []
    held: Document | None = None  # one document of look-ahead, to give it the warnings of trailing bad lines
    with (gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            doc = _parse_line(line, lineno, source)
            if isinstance(doc, str):
                pending.append(f"{path.name} line {doc}")
                continue
            if pending:
                doc = replace(doc, warnings=(*doc.warnings, *pending))
                pending = []
            if held is not None:
                yield held
            held = doc
    if held is None:
        if pending:
            raise IngestError(f"no valid BEIR record; {pending[0].split(' ', 1)[1]}")
        return
    yield replace(held, warnings=(*held.warnings, *pending)) if pending else held


def _parse_line(line: bytes, lineno: int, source: str) -> Document | str:
    """The document of one corpus line, or ``"N skipped: <reason>"`` for a malformed one."""
    try:
        record = _loads(line)
        doc_id = record["_id"]
        text = record.get("text") or ""
        title = record.get("title") or ""
        meta = record.get("metadata")
    except _DecodeError as exc:
        if any(word in str(exc).lower() for word in ("depth", "recursion")):  # orjson's nesting limit
            return f"{lineno} skipped: JSON nested too deeply to parse"
        return f"{lineno} skipped: malformed JSON ({' '.join(str(exc).split())})"
    except RecursionError:  # the stdlib parser, past Python's recursion limit
        return f"{lineno} skipped: JSON nested too deeply to parse"
    except (KeyError, AttributeError, TypeError):
        return f'{lineno} skipped: not a BEIR corpus record (needs an object with "_id" and "text")'
    if not isinstance(text, str) or not isinstance(title, str) or isinstance(doc_id, (dict, list)) \
            or doc_id is None or not str(doc_id).strip():
        return f'{lineno} skipped: "_id" must be a non-empty string or number and "text"/"title" strings'
    try:
        metadata = normalise_metadata(meta) if isinstance(meta, dict) and meta else {}
    except IngestError as exc:  # nested too deeply, a malformed acl
        return f"{lineno} skipped: {exc}"
    return Document(doc_id=str(doc_id), text=text, title=title, source=source, format="beir", metadata=metadata)


def load_beir(path: Path) -> list[Document]:
    """All documents of a BEIR ``corpus.jsonl``, in file order (see ``iter_beir``)."""
    return list(iter_beir(path))
