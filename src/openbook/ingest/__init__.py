"""Stage 1, ingest: files and folders -> ``Document`` objects with cleaned, Markdown-like text.

One module per format: ``markdown`` (YAML front matter), ``html`` (main content only), ``text`` (dated header
lines), ``tabular`` (CSV/TSV as one pipe table), ``pdf`` (pypdf, page offsets, header/footer removal) and
``beir`` (``corpus.jsonl``, one document per line). ``discover`` lists the files of a batch; ``load_file``
turns one file into documents or raises ``IngestError`` with a one-line message naming the file, so that a
batch can report the file and go on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from ..errors import IngestError, UnsupportedFormatError
from ..types import Document
from .beir import iter_beir, load_beir
from .html import load_html
from .markdown import load_markdown
from .pdf import load_pdf
from .tabular import load_csv
from .text import load_text

__all__ = [
    "SUPPORTED_SUFFIXES",
    "discover",
    "iter_beir",
    "load_file",
]

_LOADERS: dict[str, Callable[[Path, str], Document]] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".txt": load_text,
    ".csv": load_csv,
    ".tsv": load_csv,
    ".pdf": load_pdf,
}

SUPPORTED_SUFFIXES: frozenset[str] = frozenset({*_LOADERS, ".jsonl"})


def discover(paths: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """Files under the given files and folders, each with its doc id.

    Folders are walked recursively; hidden files and folders (name starting with ``.``) are skipped. The doc id
    is the path relative to the folder given, with POSIX separators; a file given directly gets its file name.
    Files are sorted by doc id within each given path; the paths keep the order given; a file reached twice
    is listed once. Unsupported suffixes are still returned, so that ``load_file`` reports each one.

    Raises:
        IngestError: a given path does not exist.
    """
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for given in paths:
        root = Path(given).expanduser()
        if not root.exists():
            raise IngestError(f"{given}: no such file or folder; check the path")
        if root.is_file():
            entries = [(root, root.name)]
        else:
            entries = []
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in files:
                    if not name.startswith("."):
                        file = Path(folder) / name
                        entries.append((file, file.relative_to(root).as_posix()))
            entries.sort(key=lambda entry: entry[1])
        for file, doc_id in entries:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                found.append((file, doc_id))
    return found


def load_file(path: Path, doc_id: str) -> list[Document]:
    """Parse one file into documents: one per file, or one per line of a BEIR ``corpus.jsonl``.

    Args:
        path: the file.
        doc_id: its doc id (see ``discover``); ignored for ``.jsonl``, whose documents use their ``_id``.

    Returns:
        The documents, in file order.

    Raises:
        UnsupportedFormatError: no loader for the suffix (message lists the supported ones).
        IngestError: the file cannot be read or parsed; the message is one line, ``<path>: <reason>``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        supported = " ".join(sorted(SUPPORTED_SUFFIXES))
        raise UnsupportedFormatError(f"{path}: unsupported file type {suffix or '(none)'!r}; supported: {supported}")
    try:
        if suffix == ".jsonl":
            return load_beir(path)
        return [_LOADERS[suffix](path, doc_id)]
    except IngestError as exc:
        raise type(exc)(_one_line(f"{path}: {exc}")) from exc
    except OSError as exc:
        raise IngestError(_one_line(f"{path}: cannot read ({exc.strerror or exc})")) from exc
    except Exception as exc:  # noqa: BLE001 - a parser bug on one file must not stop the batch
        raise IngestError(_one_line(f"{path}: {type(exc).__name__} while parsing: {exc}")) from exc


def _one_line(message: str) -> str:
    return " ".join(message.split())
