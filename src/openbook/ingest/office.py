"""Office loaders: DOCX (python-docx) and PPTX (python-pptx) -> openbook's Markdown-like text.

DOCX: the body in document order; ``Title`` and ``Heading 1``..``Heading 6`` paragraphs become ``#``
headings (the ``Title`` paragraph, else the core ``title`` property, is the Document's title), list
paragraphs (``List ...`` styles or numbering) become ``- `` lines, tables become pipe tables with the first
row as the header (merged cells read once). PPTX: one page per slide (``Document.pages`` holds each slide's
offset, so a citation names the slide): ``## <slide title>`` (or ``## Slide n``), its text frames in
reading order (top, then left), indented paragraphs as ``- `` lines, tables as pipe tables, speaker notes
after ``Notes:``; grouped shapes are read too. A slide made only of pictures adds a line to
``Document.warnings``.

Metadata of both: core properties ``title``, ``author``, ``created``, ``updated`` (modified), ``tags``
(keywords, comma- or semicolon-separated), ``subject``, ``category``; custom properties
(``docProps/custom.xml``) are kept, and an ``acl`` there is the access list (malformed: refused).

Errors (``IngestError``): not a valid DOCX/PPTX (zip) file, a password-protected (encrypted) file.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any, Iterable

from lxml import etree

from ..errors import IngestError
from ..types import Document
from ._common import heading_title, normalise_metadata, pipe_table, tidy, title_from_path
from .frontmatter import canonical_key

_CUSTOM_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/custom-properties}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rows_to_table(rows: list[list[str]]) -> str:
    """Pipe table from rows of cell texts (first row the header); empty when no row has text."""
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    return "\n".join(pipe_table([[_cell(c) for c in row] for row in rows]))


def _open_zip(path: Path, kind: str) -> None:
    """Refuse a file that is not a zip package (an encrypted Office file is an OLE container)."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise IngestError(f"password-protected or legacy binary {kind} file; save it as an unencrypted .{kind.lower()}")
    if not zipfile.is_zipfile(path):
        raise IngestError(f"not a valid {kind} file (not a zip package); re-save it from the office suite")


def _custom_properties(path: Path) -> dict[str, Any]:
    try:
        with zipfile.ZipFile(path) as zf:
            if "docProps/custom.xml" not in zf.namelist():
                return {}
            root = etree.fromstring(zf.read("docProps/custom.xml"))
    except (zipfile.BadZipFile, etree.XMLSyntaxError, KeyError) as exc:
        raise IngestError(f"unreadable custom properties ({exc}); re-save the file") from exc
    out: dict[str, Any] = {}
    for prop in root.iter(f"{_CUSTOM_NS}property"):
        name = prop.get("name")
        value = next((child.text for child in prop), None)
        if name:
            out[canonical_key(name)] = value
    return out


def _core_metadata(core: Any, path: Path) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for source, target in (("title", "title"), ("author", "author"), ("subject", "subject"), ("category", "category"),
                           ("created", "created"), ("modified", "updated")):
        value = getattr(core, source, None)
        if value not in (None, ""):
            raw[target] = value
    keywords = getattr(core, "keywords", "") or ""
    if keywords.strip():
        raw["tags"] = [k.strip() for k in re.split(r"[,;]", keywords) if k.strip()]
    custom = _custom_properties(path)
    return {**raw, **{k: v for k, v in custom.items() if k not in raw or k == "acl"}}


# ----------------------------------------------------------------------------------------------------- DOCX


def _docx_table(table: Any) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if previous is not None and cell._tc is previous:  # a merged cell repeats; read it once
                cells.append("")
                continue
            previous = cell._tc
            cells.append(" ".join(p.text for p in cell.paragraphs))
        rows.append(cells)
    return rows_to_table(rows)


def _docx_blocks(doc: Any) -> Iterable[tuple[str, str]]:
    """(style name, text) for paragraphs and ("table", pipe table) for tables, in body order."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for item in doc.iter_inner_content():
        if isinstance(item, Paragraph):
            style = item.style.name if item.style is not None else ""
            numbered = item._p.pPr is not None and item._p.pPr.numPr is not None
            yield ("List" if numbered and not style.startswith("Heading") else style or ""), item.text
        elif isinstance(item, Table):
            yield "table", _docx_table(item)


def load_docx(path: Path, doc_id: str) -> Document:
    """Load one Word document (.docx) as a Document (see the module docstring)."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    _open_zip(path, "DOCX")
    try:
        doc = docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, etree.XMLSyntaxError) as exc:
        raise IngestError(f"not a valid DOCX file ({' '.join(str(exc).split())[:150]})") from exc
    out: list[str] = []
    title = ""
    for style, text in _docx_blocks(doc):
        if style == "table":
            if text:
                out.append(text)
            continue
        text = text.strip()
        if not text:
            continue
        m = re.match(r"Heading (\d)", style)
        if style == "Title":
            title = title or " ".join(text.split())
            out.append("# " + " ".join(text.split()))
        elif m:
            out.append("#" * min(6, int(m[1])) + " " + " ".join(text.split()))
        elif style.startswith("List") or "List" in style:
            out.append("- " + " ".join(text.split()))
        else:
            out.append(text)
    raw = _core_metadata(doc.core_properties, path)
    title = title or str(raw.get("title") or "").strip()
    text = tidy(_join_lists(out))
    title = title or heading_title(text, path)
    return Document(
        doc_id=doc_id, text=text, title=title, source=str(path.resolve()), format="docx",
        metadata=normalise_metadata(raw),
    )


def _join_lists(blocks: list[str]) -> str:
    """Blank lines between blocks, none between consecutive ``- `` items."""
    out = ""
    for i, block in enumerate(blocks):
        if i:
            out += "\n" if block.startswith("- ") and blocks[i - 1].startswith("- ") else "\n\n"
        out += block
    return out


# ----------------------------------------------------------------------------------------------------- PPTX


def _shapes(shapes: Iterable[Any]) -> list[Any]:
    """Shapes in reading order (top, then left), groups flattened."""
    flat = []
    for shape in shapes:
        if shape.shape_type is not None and int(shape.shape_type) == 6 and hasattr(shape, "shapes"):  # a group
            flat.extend(_shapes(shape.shapes))
        else:
            flat.append(shape)
    return sorted(flat, key=lambda s: ((s.top or 0) // 10000, s.left or 0))


def _slide_blocks(slide: Any) -> tuple[str, list[str]]:
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None and title_shape.has_text_frame else ""
    blocks: list[str] = []
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            table = rows_to_table(rows)
            if table:
                blocks.append(table)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            lines = []
            for para in shape.text_frame.paragraphs:
                text = " ".join("".join(run.text for run in para.runs).split()) or " ".join(para.text.split())
                if text:
                    lines.append(("- " if para.level > 0 or len(shape.text_frame.paragraphs) > 1 else "") + text)
            if lines:
                blocks.append("\n".join(lines))
    if slide.has_notes_slide:
        notes = " ".join(slide.notes_slide.notes_text_frame.text.split()) if slide.notes_slide.notes_text_frame else ""
        if notes:
            blocks.append("Notes: " + notes)
    return title, blocks


def load_pptx(path: Path, doc_id: str) -> Document:
    """Load one PowerPoint deck (.pptx) as a paged Document, one page per slide (see the module docstring)."""
    import pptx
    from pptx.exc import PackageNotFoundError

    _open_zip(path, "PPTX")
    try:
        deck = pptx.Presentation(str(path))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, etree.XMLSyntaxError) as exc:
        raise IngestError(f"not a valid PPTX file ({' '.join(str(exc).split())[:150]})") from exc
    text = ""
    offsets: list[int] = []
    first_title = ""
    notes: list[str] = []
    for number, slide in enumerate(deck.slides, 1):
        title, blocks = _slide_blocks(slide)
        first_title = first_title or title
        if not title and not blocks and any(getattr(shape, "shape_type", None) == 13 for shape in slide.shapes):
            notes.append(f"slide {number} has only pictures, no text: its content is missing")
        page = "\n\n".join([f"## {title or f'Slide {number}'}", *blocks])
        if text:
            text += "\n\n"
        offsets.append(len(text))
        text += tidy(page)
    raw = _core_metadata(deck.core_properties, path)
    raw["slide_count"] = len(offsets)
    title = str(raw.get("title") or "").strip() or first_title or title_from_path(path)
    return Document(
        doc_id=doc_id, text=text, title=title, source=str(path.resolve()), format="pptx",
        metadata=normalise_metadata(raw), pages=tuple(offsets), warnings=tuple(notes),
    )
