"""EPUB loader (ebooklib): the spine's XHTML documents in reading order, rendered like HTML pages.

Each spine item is parsed with lxml and its ``<body>`` rendered by the HTML loader's renderer (headings,
lists, tables as pipe tables, ``<pre>`` verbatim); navigation documents are skipped. One page per spine
item (``Document.pages``), so a citation names the chapter file's position. Metadata from the OPF's Dublin
Core: ``title``, ``author`` (creators), ``created``/``updated`` (``dc:date``; ``dcterms:modified``),
``lang``, ``tags`` (``dc:subject``), ``publisher``.

A spine document that cannot be parsed adds a line to ``Document.warnings``.

Errors (``IngestError``): not a zip package, or ebooklib cannot read the package (missing OPF, bad XML).
"""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from ..errors import IngestError
from ..types import Document
from ._common import normalise_metadata, title_from_path
from .html import blocks_to_text, clean_tree, render_blocks


def _dc(book: Any, name: str) -> list[str]:
    values = []
    for value, _attrs in book.get_metadata("DC", name) or []:
        if value and str(value).strip():
            values.append(" ".join(str(value).split()))
    return values


def _modified(book: Any) -> str | None:
    for value, attrs in book.get_metadata("OPF", None) or []:
        if (attrs or {}).get("property") == "dcterms:modified" and value:
            return str(value)
    return None


def load_epub(path: Path, doc_id: str) -> Document:
    """Load one EPUB book as a paged Document (one page per spine document; see the module docstring)."""
    import ebooklib
    from ebooklib import epub

    if not zipfile.is_zipfile(path):
        raise IngestError("not a valid EPUB file (not a zip package)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ebooklib warns about its own future defaults
            book = epub.read_epub(str(path), options={"ignore_ncx": True})
    except (epub.EpubException, KeyError, ValueError, zipfile.BadZipFile, etree.XMLSyntaxError, AttributeError) as exc:
        raise IngestError(f"not a readable EPUB ({' '.join(str(exc).split())[:150]})") from exc
    text = ""
    offsets: list[int] = []
    notes: list[str] = []
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        content = item.get_content()
        if not content.strip():
            continue
        try:
            root = lxml_html.document_fromstring(content)
        except (etree.ParserError, ValueError) as exc:
            notes.append(f"{item.get_name()} could not be parsed ({' '.join(str(exc).split())[:80]}); its text is missing")
            continue
        clean_tree(root)
        body = root.find(".//body")
        chapter = blocks_to_text(render_blocks(body if body is not None else root))
        if not chapter:
            continue
        if text:
            text += "\n\n"
        offsets.append(len(text))
        text += chapter
    if not text:
        raise IngestError("EPUB has no readable text (DRM-protected or image-only?)")
    raw: dict[str, Any] = {}
    titles = _dc(book, "title")
    creators = _dc(book, "creator")
    if creators:
        raw["author"] = creators
    dates = _dc(book, "date")
    if dates:
        raw["created"] = dates[0]
    modified = _modified(book)
    if modified or dates:
        raw["updated"] = modified or dates[0]
    for name, key in (("language", "lang"), ("publisher", "publisher"), ("description", "description")):
        values = _dc(book, name)
        if values:
            raw[key] = values[0]
    subjects = _dc(book, "subject")
    if subjects:
        raw["tags"] = subjects
    if titles:
        raw["title"] = titles[0]
    return Document(
        doc_id=doc_id,
        text=text,
        title=titles[0] if titles else title_from_path(path),
        source=str(path.resolve()),
        format="epub",
        metadata=normalise_metadata(raw),
        pages=tuple(offsets),
        warnings=tuple(notes),
    )
