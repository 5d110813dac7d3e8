"""Stage 1, ingest: files and folders -> ``Document`` objects with cleaned, Markdown-like text.

One module per format: ``markdown`` (front matter, see ``frontmatter``), ``html`` (main content only),
``text`` (dated header lines), ``tabular`` (CSV/TSV as one pipe table), ``pdf`` (pypdf + pdfplumber: page
offsets, header/footer removal, tables, columns), ``rst`` (docutils), ``office`` (DOCX, PPTX), ``epub``
(ebooklib), ``man`` (roff) and ``beir`` (``corpus.jsonl``, one document per line). A ``.gz`` file of a text
format (``notes.md.gz``, ``ls.1.gz``, ``corpus.jsonl.gz``) is read decompressed by that format's loader. ``discover`` lists the
files of a batch; ``load_file`` turns one file into documents or raises ``IngestError`` with a one-line
message naming the file, so that a batch can report the file and go on; ``UnsupportedFormatError`` (a
subclass) means the file was skipped: an unsupported type, or binary content in a text format.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import IngestError, MissingExtraError, UnsupportedFormatError
from ..types import Document
from ._common import binary_kind, path_text, printable, read_head
from ..dates import body_metadata
from .beir import iter_beir, load_beir
from .epub import load_epub
from .html import load_html
from .limits import ISOLATED_SUFFIXES, ZIP_SUFFIXES, ParseLimits, check_zip, isolated
from .man import load_man
from .markdown import load_markdown
from .office import load_docx, load_pptx
from .pdf import load_pdf
from .rst import load_rst
from .tabular import load_csv
from .text import load_text

__all__ = [
    "SUPPORTED_SUFFIXES",
    "discover",
    "iter_beir",
    "load_file",
    "reads_type",
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
    ".rst": load_rst,
    ".rest": load_rst,
    ".docx": load_docx,
    ".pptx": load_pptx,
    ".epub": load_epub,
    ".man": load_man,
    **{f".{n}": load_man for n in "123456789"},
}
# formats read as text: binary content in them is skipped; each may also come gzip-compressed (``.gz``)
_TEXT_SUFFIXES = frozenset({".md", ".markdown", ".html", ".htm", ".txt", ".csv", ".tsv", ".rst", ".rest", ".man",
                            *(f".{n}" for n in "123456789")})
_MAN_SECTION = re.compile(r"^\.[1-9][a-z]{1,4}$")  # ls.1ssl, perl.3pm

SUPPORTED_SUFFIXES: frozenset[str] = frozenset({*_LOADERS, ".jsonl", ".gz"})


# plain-text files that conventionally have no suffix (or a non-format one: changelog.Debian, NEWS.old)
_TEXT_NAMES = re.compile(
    r"^(?:readme|news|changelog|changes|history|authors|contributors|copying|copyright|license|licence|install|"
    r"todo|thanks|notice|contributing|credits|bugs|faq)(?:\.[^.]*)?$",
    re.IGNORECASE,
)


def _format_suffix(path: Path) -> str:
    """The suffix that picks the loader: ``.md`` for ``a.md``, ``.1`` for ``ls.1.gz`` and ``perl.3pm``,
    ``.txt`` for conventional text names (``README``, ``NEWS.gz``, ``changelog.Debian.gz``)."""
    suffix = path.suffix.lower()
    name = path.stem if suffix == ".gz" else path.name
    inner = Path(name).suffix.lower() if suffix == ".gz" else suffix
    if _MAN_SECTION.match(inner):
        inner = ".1"
    elif inner not in _LOADERS and _TEXT_NAMES.match(name):
        inner = ".txt"
    return (".gz" + inner) if suffix == ".gz" else inner


def reads_type(path: Path) -> bool:
    """Whether a loader reads files of ``path``'s type, by name as ``load_file`` picks the loader (``README``,
    ``NEWS.gz``, ``perl.3pm`` and ``ls.1ssl`` included); its content may still be skipped (binary) or fail."""
    suffix = _format_suffix(Path(path))
    if suffix.startswith(".gz"):
        return suffix.removeprefix(".gz") in _TEXT_SUFFIXES | {".jsonl"}
    return suffix in SUPPORTED_SUFFIXES


def discover(paths: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """Files under the given files and folders, each with its doc id.

    Folders are walked recursively, symbolic links to folders included, each folder once: a link to a folder
    the given folder holds itself (or a loop) is not followed, so files keep their own path as id; hidden files
    and folders (name starting with ``.``) are skipped.
    The doc id is the path relative to the folder given, with POSIX separators; a file given directly gets
    its file name; the bytes of a name that is not UTF-8 are written ``\\xNN`` (``path_text``).
    Files are sorted by doc id within each given path; the paths keep the order given; a file reached twice
    is listed once. Unsupported suffixes are still returned, so that ``load_file`` reports each one; so is a
    folder that cannot be listed (no permission), so that ``load_file`` reports it.

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
            entries = [(root, path_text(root.name))]
        else:
            entries = []
            own = _own_folders(root)
            walked: set[str] = set()
            unreadable: list[OSError] = []
            for folder, dirs, files in os.walk(root, followlinks=True, onerror=unreadable.append):
                real = os.path.realpath(folder)
                if real in walked:  # a symlink loop, or a second link to a folder already listed
                    dirs[:] = []
                    continue
                walked.add(real)
                # a link to a folder that root holds itself is not walked: those files keep their own path as
                # id, whichever name sorts first
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (
                    os.path.islink(os.path.join(folder, d)) and os.path.realpath(os.path.join(folder, d)) in own))
                for name in files:
                    if not name.startswith("."):
                        file = Path(folder) / name
                        entries.append((file, path_text(file.relative_to(root).as_posix())))
            for error in unreadable:  # listed, so that load_file reports it: never silently left out
                folder = Path(error.filename)
                entries.append((folder, path_text(folder.relative_to(root).as_posix()) if folder != root else "."))
            entries.sort(key=lambda entry: entry[1])
        for file, doc_id in entries:
            key = Path(os.path.realpath(file))  # not Path.resolve(): it raises on a link that points to itself
            if key not in seen:
                seen.add(key)
                found.append((file, doc_id))
    return found



def _own_folders(root: Path) -> set[str]:
    """Real paths of the folders under ``root`` (itself included) reached without a symbolic link."""
    own: set[str] = set()
    for folder, dirs, _ in os.walk(root):
        own.add(os.path.realpath(folder))
        dirs[:] = [d for d in dirs if not d.startswith(".")]
    return own

def _with_body_metadata(doc: Document) -> Document:
    """``doc`` with the version facts its opening text states and its metadata lacks (``body_metadata``)."""
    extra = body_metadata(doc.text, doc.metadata)
    return dataclasses.replace(doc, metadata={**doc.metadata, **extra}) if extra else doc


def _load(suffix: str, path: Path, doc_id: str, hidden_slides: bool = False,
          progress: Callable[[int], None] | None = None) -> Document:
    """The loader of ``suffix`` on ``path`` (a PPTX deck with its hidden slides when ``hidden_slides``; a PDF
    calling ``progress`` after each page it reads)."""
    if suffix == ".pptx":
        return load_pptx(path, doc_id, hidden_slides=hidden_slides)
    if suffix == ".pdf":
        return load_pdf(path, doc_id, progress)
    return _LOADERS[suffix](path, doc_id)


def load_file(path: Path, doc_id: str, limits: ParseLimits | None = None, *,
              hidden_slides: bool = False) -> list[Document]:
    """Parse one file into documents: one per file, or one per line of a BEIR ``corpus.jsonl``.

    Args:
        path: the file.
        doc_id: its doc id (see ``discover``); ignored for ``.jsonl``, whose documents use their ``_id``.
        limits: what reading a zip-based file (DOCX, PPTX, EPUB) or a PDF may cost (``openbook.ingest.limits``):
            a zip package is checked before parsing, and both are parsed in a worker process with a time limit
            (per page for a PDF) and a memory limit; None: the defaults of ``ParseLimits``.
        hidden_slides: read the hidden slides of a PPTX deck too, marked (``office.load_pptx``).

    Returns:
        The documents, in file order.

    Plain-text files named by convention (``README``, ``NEWS``, ``changelog.Debian``, ``COPYING`` ..., also
    gzip-compressed) are read as text.

    Raises:
        UnsupportedFormatError: no loader for the suffix (message lists the supported ones), binary
            content in a text format, or the format's optional extra is not installed (the message is the
            one-line hint naming it: ``PDF support needs the pdf extra: pip install 'openbook[pdf]'``).
        IngestError: the file cannot be read or parsed, or is over ``limits`` (a decompression bomb, a parse
            too slow or too large); the message is one line, ``<path>: <reason>``.
    """
    path = Path(path)
    limits = limits or ParseLimits()
    if path.is_dir():  # a folder discover could not list
        try:
            os.listdir(path)
        except OSError as exc:
            raise IngestError(f"{path}: cannot read the folder ({exc.strerror or exc}); its files are not "
                              f"ingested") from exc
    if path.exists() and not path.is_file():  # a FIFO, socket or device would block or never end
        raise UnsupportedFormatError(f"{path}: not a regular file (a pipe, socket or device)")
    beir_part = _beir_non_corpus(path)
    if beir_part:
        raise UnsupportedFormatError(f"{path}: {beir_part}, not documents (a BEIR folder's documents are corpus.jsonl)")
    suffix = _format_suffix(path)
    inner = suffix.removeprefix(".gz")
    if suffix == ".gz" or (suffix.startswith(".gz") and inner not in _TEXT_SUFFIXES | {".jsonl"}):
        raise UnsupportedFormatError(
            f"{path}: unsupported compressed file type {inner or '(none)'!r}.gz; gzip is read for text formats "
            f"({' '.join(sorted((_TEXT_SUFFIXES | {'.jsonl'}) - {f'.{n}' for n in '23456789'}))})"
        )
    if inner not in SUPPORTED_SUFFIXES:
        supported = " ".join(sorted(SUPPORTED_SUFFIXES - {f".{n}" for n in "23456789"}))
        raise UnsupportedFormatError(
            f"{path}: unsupported file type {inner or '(none)'!r}; supported: {supported} (and man sections .1-.9)"
        )
    try:
        if inner in _TEXT_SUFFIXES or inner == ".jsonl":
            kind = binary_kind(read_head(path, 8192))
            if kind:
                raise UnsupportedFormatError(f"binary content ({kind}), not {inner} text")
        if inner == ".jsonl":
            return [_printable(doc) for doc in load_beir(path)]
        if inner in ZIP_SUFFIXES:
            check_zip(path, inner[1:].upper(), limits)
        if inner in ISOLATED_SUFFIXES:
            doc = isolated(inner, path, doc_id, limits, lambda: _load(inner, path, doc_id, hidden_slides),
                           hidden_slides=hidden_slides)
        else:
            doc = _load(inner, path, doc_id, hidden_slides)
        return [_with_body_metadata(_storable(doc))]
    except MissingExtraError as exc:
        raise UnsupportedFormatError(f"{path}: {exc}") from None
    except IngestError as exc:
        raise type(exc)(_one_line(f"{path}: {exc}")) from exc
    except OSError as exc:
        raise IngestError(_one_line(f"{path}: cannot read ({exc.strerror or exc})")) from exc
    except Exception as exc:  # noqa: BLE001 - a parser bug on one file must not stop the batch
        raise IngestError(_one_line(f"{path}: {type(exc).__name__} while parsing: {exc}")) from exc


def _storable(doc: Document) -> Document:
    """``doc`` with a title and source taken from a file name that is not UTF-8 made storable (``path_text``), and
    its title on one line (a front-matter title may hold line breaks: they broke the one-line listings of
    ``documents``, ``search`` and the sources list); text and title without terminal control (``_printable``),
    dropped before the title's white space is joined, so that a control character leaves no double space."""
    doc = _printable(doc)
    title, source = " ".join(path_text(doc.title).split()), path_text(doc.source)
    if (title, source) != (doc.title, doc.source):
        doc = dataclasses.replace(doc, title=title, source=source)
    return doc


def _printable(doc: Document) -> Document:
    """``doc`` with its text, title and metadata strings free of terminal control sequences
    (``_common.printable``)."""
    text, title, metadata = printable(doc.text), printable(doc.title), _printable_value(doc.metadata)
    if (text, title, metadata) == (doc.text, doc.title, doc.metadata):
        return doc
    return dataclasses.replace(doc, text=text, title=title, metadata=metadata)


def _printable_value(value: Any) -> Any:
    """``value`` with every string in it (keys too, in lists and mappings) passed through ``printable``."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [_printable_value(v) for v in value]
    if isinstance(value, dict):
        return {_printable_value(k): _printable_value(v) for k, v in value.items()}
    return value


def _beir_non_corpus(path: Path) -> str:
    """``"BEIR queries"`` / ``"BEIR relevance judgements"`` for the queries and qrels of a BEIR folder (a
    ``corpus.jsonl`` beside them), else ``""``: ingesting the folder must not index its questions as documents
    (their ``_id``s also collide with the corpus's on Cranfield)."""
    if path.name in ("queries.jsonl", "queries.jsonl.gz") and (
            (path.parent / "corpus.jsonl").is_file() or (path.parent / "corpus.jsonl.gz").is_file()):
        return "BEIR queries"
    if path.parent.name == "qrels" and path.suffix == ".tsv" and (
            (path.parent.parent / "corpus.jsonl").is_file() or (path.parent.parent / "corpus.jsonl.gz").is_file()):
        return "BEIR relevance judgements"
    return ""


def _one_line(message: str) -> str:
    return " ".join(message.split())
