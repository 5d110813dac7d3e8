"""Whether a file is unchanged since the store read it, decided from its bytes before it is parsed.

A stored document's digest (``StoredDocument.content_hash``) is ``<text digest>.<file part>``:

- the *text digest* (SHA-256 of the parsed document, the pipeline settings and the chunker revision) decides, after
  a parse, whether the document's chunks must be written again;
- the *file part* is SHA-256 of the file's ``file_digest`` and the number of documents stored from it: an ingest
  that finds every document stored from a file (``Store.get_sources``) carrying the file part its bytes give now
  leaves the file unread (not parsed, not chunked). A store written before file parts existed has digests without
  one: its files are parsed once, and their documents get their file part then.

``file_digest`` is SHA-256 over the file's size and bytes, what decides how it is read (``settings``: pipeline
signature, parse limits, hidden slides) and ``code_fingerprint()``: openbook's own source files and the versions of
the parser libraries, so that a new openbook or a new pypdf reads every file once again. A touched file (new
modification time, same bytes) keeps its digest and stays unread; a file with other bytes is parsed, and when its
text is what the store holds it is unchanged all the same and its documents get the new file part.

Cost: one pass of SHA-256 over each file's bytes (about 1 GB/s on one core), against parsing it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from importlib import metadata
from pathlib import Path

from ..types import content_hash

PARSER_DISTRIBUTIONS = ("pypdf", "pdfplumber", "pdfminer.six", "pypdfium2", "wordfreq", "python-docx",
                        "python-pptx", "ebooklib", "docutils", "trafilatura", "readability-lxml", "lxml",
                        "markdown-it-py", "chardet", "PyYAML", "blingfire", "PyStemmer", "py3langid")
"""Distributions whose version changes what a file's text is (loaders, cleaning, chunking, analysis)."""

_BLOCK = 1 << 20  # bytes hashed per read


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 over openbook's ``.py`` files (relative path and bytes) and ``PARSER_DISTRIBUTIONS``' versions
    (``""`` for one not installed): what a stored file digest is valid for. Computed once per process."""
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode("utf-8", "surrogateescape") + b"\0")
        h.update(path.read_bytes() + b"\0")
    for name in PARSER_DISTRIBUTIONS:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = ""
        h.update(f"{name}={version}\0".encode())
    return h.hexdigest()


def file_digest(path: Path, settings: str) -> str | None:
    """SHA-256 (hex) of ``path``'s size and bytes, ``settings`` and ``code_fingerprint()``; None when the file
    cannot be read or is not a regular file (never opened: a FIFO would block; the parse then reports why)."""
    h = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a pipe, socket or device: opening it may block, and the loader refuses it
        with open(path, "rb") as fh:
            size = 0
            while block := fh.read(_BLOCK):
                size += len(block)
                h.update(block)
    except OSError:
        return None
    return content_hash(h.hexdigest(), str(size), settings, code_fingerprint())


def file_part(digest: str, documents: int) -> str:
    """The file part of the digests of the ``documents`` stored from a file whose ``file_digest`` is ``digest``."""
    return content_hash(digest, str(documents))


def stored_digest(text_digest: str, part: str) -> str:
    """What a document's stored digest holds: ``<text digest>.<file part>`` (the text digest alone without one)."""
    return f"{text_digest}.{part}" if part else text_digest


def split_digest(stored: str) -> tuple[str, str]:
    """``(text digest, file part)`` of a stored digest (``""`` for the file part of one written without it)."""
    text, _, part = stored.partition(".")
    return text, part


__all__ = ["PARSER_DISTRIBUTIONS", "code_fingerprint", "file_digest", "file_part", "split_digest", "stored_digest"]
