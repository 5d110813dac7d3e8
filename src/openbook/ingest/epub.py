"""EPUB loader (ebooklib): the spine's XHTML documents in reading order, rendered like HTML pages.

Each spine item is parsed with lxml and its ``<body>`` rendered by the HTML loader's renderer (headings,
lists, tables as pipe tables, ``<pre>`` verbatim); navigation documents are skipped. One page per spine
item (``Document.pages``), so a citation names the chapter file's position. Metadata from the OPF's Dublin
Core: ``title``, ``author`` (creators), ``created`` (``dc:date``), ``updated`` (EPUB 3's ``dcterms:modified``,
else EPUB 2's ``<dc:date opf:event="modification">``, else ``created``), ``lang``, ``tags`` (``dc:subject``),
``publisher``.

Access list, read as the HTML loader reads ``<meta name="acl">``: a ``<meta>`` of the package metadata named
``acl`` (or any spelling front matter reads as ``acl``: ``roles``, ``allowed_roles``, ...; with or without a
prefix, as EPUB 3 wants for a property outside its vocabulary), in the OPF 2 form
``<meta name="acl" content="hr, finance"/>`` or the EPUB 3 form ``<meta property="openbook:acl">hr</meta>``; a
chapter's own ``<meta name="acl">`` counts too (the book is one document; the same roles written in another
order or spacing are one list). It fails closed: an empty value, two different access lists (different sets of
roles, package and chapters included), or a package ebooklib cannot read refuses the file.

A spine document that cannot be parsed adds a line to ``Document.warnings``.

Errors (``IngestError``): not a zip package, or ebooklib cannot read the package (missing OPF, bad XML); an
access list that is empty, malformed or given twice differently.
"""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from .._extras import require
from ..errors import IngestError
from ..types import Document
from ._common import access_list, normalise_metadata, title_from_path, xml_error_reason
from .frontmatter import canonical_key
from .html import TOO_DEEP, blocks_to_text, clean_tree, parse_html_depth, render_blocks

_OPF_NS = "http://www.idpf.org/2007/opf"


def _dc(book: Any, name: str) -> list[str]:
    values = []
    for value, _attrs in book.get_metadata("DC", name) or []:
        if value and str(value).strip():
            values.append(" ".join(str(value).split()))
    return values


def _modified(book: Any) -> str | None:
    """EPUB 3's ``<meta property="dcterms:modified">`` (the package's last change), else None.

    Read from every entry ebooklib filed under the OPF namespace, whatever its key (ebooklib's reader files
    ``<meta>`` elements under the key ``meta``, not ``None``)."""
    for items in ((book.metadata or {}).get(_OPF_NS) or {}).values():
        for value, attrs in items:
            attrs = attrs or {}
            if attrs.get("property") == "dcterms:modified" or attrs.get("name") == "dcterms:modified":
                value = attrs.get("content") if value is None else value
                if value and str(value).strip():
                    return str(value).strip()
    return None


def _dates(book: Any) -> tuple[str | None, str | None]:
    """``(created, updated)`` from the package's ``dc:date`` elements and EPUB 3's ``dcterms:modified``.

    EPUB 2 tells dates apart by ``opf:event``: ``modification`` is the last change, any other event
    (``publication``, ``creation``) or none is the first publication. ``updated`` is ``dcterms:modified``, else
    the ``modification`` date, else ``created`` (as the other loaders read a lone date); None when absent.
    """
    created = changed = None
    for value, attrs in book.get_metadata("DC", "date") or []:
        value = " ".join(str(value or "").split())
        if not value:
            continue
        event = next((str(v).strip().lower() for k, v in (attrs or {}).items()
                      if str(k).rsplit("}", 1)[-1].rsplit(":", 1)[-1] == "event"), "")
        if event == "modification":
            changed = changed or value
        else:
            created = created or value
    return created, _modified(book) or changed or created


def _is_access_key(name: object) -> bool:
    """Whether a ``<meta>`` name or property names the access list (``acl``, ``roles``, ``openbook:acl``, ...)."""
    return bool(name) and canonical_key(str(name).rsplit(":", 1)[-1]) == "acl"


def _package_access(book: Any) -> list[str]:
    """Every access-list value of the package metadata, empty ones included (they fail closed later).

    Read from every namespace ebooklib filed the ``<meta>`` elements under (its reader files them under the OPF
    namespace as ``meta``, or under their name), so a version that files them elsewhere still finds them."""
    found = []
    for entries in (book.metadata or {}).values():
        for items in entries.values():
            for value, attrs in items:
                attrs = attrs or {}
                if _is_access_key(attrs.get("name")) or _is_access_key(attrs.get("property")):
                    content = attrs["content"] if "content" in attrs else value
                    found.append(" ".join(str(content or "").split()))
    return found


def _chapter_access(item: Any) -> list[str]:
    """The access lists a chapter's own ``<meta name="acl">`` tags give (as the HTML loader reads them), read
    from the chapter file as stored (ebooklib's ``get_content`` rebuilds the ``<head>`` without them).

    Raises:
        IngestError: the chapter file cannot be parsed, so whether it names an access list is unknown.
    """
    raw = item.content or b""
    if not raw.strip():
        return []
    try:
        root = lxml_html.document_fromstring(raw)
    except (etree.ParserError, ValueError) as exc:
        raise IngestError(f"{item.get_name()} cannot be parsed to read its access metadata "
                          f"({' '.join(str(exc).split())[:80]}); repair the book") from exc
    return [" ".join((m.get("content") or "").split()) for m in root.iter("meta")
            if _is_access_key(m.get("name") or m.get("property") or m.get("itemprop") or m.get("http-equiv"))]


def load_epub(path: Path, doc_id: str) -> Document:
    """Load one EPUB book as a paged Document (one page per spine document; see the module docstring).

    Raises:
        IngestError: not a readable EPUB. MissingExtraError: the ``office`` extra is not installed.
    """
    ebooklib = require("ebooklib", "office", "EPUB support")
    from ebooklib import epub

    if not zipfile.is_zipfile(path):
        raise IngestError("not a valid EPUB file (not a zip package)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ebooklib warns about its own future defaults
            book = epub.read_epub(str(path), options={"ignore_ncx": True})
    except etree.XMLSyntaxError as exc:
        raise IngestError(f"not a readable EPUB ({xml_error_reason(exc)})") from exc
    except (epub.EpubException, KeyError, ValueError, zipfile.BadZipFile, AttributeError) as exc:
        raise IngestError(f"not a readable EPUB ({' '.join(str(exc).split())[:150]})") from exc
    text = ""
    offsets: list[int] = []
    notes: list[str] = []
    access = _package_access(book)
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        access.extend(_chapter_access(item))
        content = item.get_content()
        if not content.strip():
            continue
        try:
            root, too_deep = parse_html_depth(content)
        except IngestError as exc:
            notes.append(f"{item.get_name()} could not be parsed ({' '.join(str(exc).split())[:80]}); its text is missing")
            continue
        if too_deep:
            notes.append(f"{item.get_name()}: {TOO_DEEP}")
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
        raise IngestError(f"EPUB has no readable text ({notes[0]})" if notes
                          else "EPUB has no readable text (DRM-protected or image-only?)")
    raw: dict[str, Any] = {}
    titles = _dc(book, "title")
    creators = _dc(book, "creator")
    if creators:
        raw["author"] = creators
    created, updated = _dates(book)
    if created:
        raw["created"] = created
    if updated:
        raw["updated"] = updated
    for name, key in (("language", "lang"), ("publisher", "publisher"), ("description", "description")):
        values = _dc(book, name)
        if values:
            raw[key] = values[0]
    subjects = _dc(book, "subject")
    if subjects:
        raw["tags"] = subjects
    if titles:
        raw["title"] = titles[0]
    # compared as sets of roles ("hr, finance" in the package and "finance,hr" in a chapter are one list);
    # access_list raises IngestError on an empty or malformed value, which never reads as public
    lists = {frozenset(access_list(value)): value for value in access}
    if len(lists) > 1:
        raise IngestError(f"{len(lists)} different access lists ({'; '.join(sorted(lists.values()))}) in the "
                          f"package metadata and chapters; keep one <meta name=\"acl\"> in the package metadata "
                          f"listing every role")
    if access:
        raw["acl"] = access[0]  # normalise_metadata splits it at commas
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
