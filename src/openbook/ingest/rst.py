"""reStructuredText loader (docutils): the document tree rendered as openbook's Markdown-like text.

docutils parses the file (file inclusion and raw HTML disabled, its messages kept out of the output); the
tree is walked in order: section titles become ``#`` headings by depth (the document title, promoted by
docutils, is the Document's title), paragraphs stay paragraphs, bullet/definition/field lists
become ``- `` lines and enumerated lists ``N. `` lines from their start (a nested list indented two spaces), literal blocks are kept verbatim, grid and simple tables (and ``list-table`` /
``csv-table``) become pipe tables with their header row first. Directives docutils does not know (Sphinx's
``toctree``, ``code-block`` ...) keep their text. Metadata: the bibliographic fields (``:Author:``,
``:Date:``, ``:Tags:``, ``:ACL:`` ..., matched case-insensitively) and a ``---`` front-matter block, failing
closed like the Markdown loader (``frontmatter``).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from .._extras import require
from ..types import Document
from ._common import decode_text, heading_title, normalise_metadata, pipe_table, tidy
from .frontmatter import canonical_key, split_front_matter

_SKIP = {"comment", "substitution_definition", "target", "raw", "pending", "footnote_reference", "citation_reference"}


def _text(node: Any) -> str:
    return " ".join(node.astext().split())


def _cell(node: Any) -> str:
    return _text(node).replace("|", "\\|")


def _table(node: Any) -> str:
    rows: list[list[str]] = []
    for part in node.findall(lambda n: n.tagname in ("thead", "tbody")):
        for row in part.children:
            if row.tagname == "row":
                rows.append([_cell(entry) for entry in row.children if entry.tagname == "entry"])
    rows = [r for r in rows if any(r)]
    if not rows:
        return ""
    return "\n".join(pipe_table(rows))


def _render(node: Any, depth: int, out: list[str]) -> None:
    tag = node.tagname
    if tag in _SKIP or tag == "docinfo" or tag == "title" and depth == 0:
        return
    if tag == "system_message":  # an unknown directive: keep its literal text, drop the message
        for child in node.children:
            if child.tagname == "literal_block":
                body = re.sub(r"^\.\. [\w:-]+::[^\n]*\n?", "", child.astext()).strip("\n")
                if body.strip():
                    out.append("\n".join(line.strip() for line in body.split("\n")))
        return
    if tag == "section":
        for child in node.children:
            if child.tagname == "title":
                out.append("#" * min(6, depth + 1) + " " + _text(child))
            else:
                _render(child, depth + 1, out)
        return
    if tag in ("paragraph", "line_block", "rubric", "attribution", "caption"):
        text = _text(node)
        if text:
            out.append(text)
        return
    if tag in ("literal_block", "doctest_block", "math_block"):
        out.append(node.astext())
        return
    if tag in ("bullet_list", "enumerated_list"):
        items = []
        number = node.get("start", 1) if tag == "enumerated_list" else None  # (1. 2. for a. b. and i. ii. too)
        for item in node.children:
            parts: list[str] = []
            for child in item.children:
                if child.tagname in ("bullet_list", "enumerated_list"):
                    continue
                parts.append(_text(child))
            text = " ".join(p for p in parts if p)
            if text:
                items.append(("- " if number is None else f"{number}. ") + text)
            number = None if number is None else number + 1
            for child in item.children:
                if child.tagname in ("bullet_list", "enumerated_list"):
                    sub: list[str] = []
                    _render(child, depth, sub)
                    items.extend("  " + line for block in sub for line in block.split("\n"))  # nested: indented
        out.append("\n".join(items))
        return
    if tag in ("definition_list", "field_list", "option_list"):
        items = []
        for item in node.children:
            texts = [_text(c) for c in item.children]
            if texts:
                items.append("- " + texts[0] + (": " + " ".join(texts[1:]) if len(texts) > 1 else ""))
        out.append("\n".join(items))
        return
    if tag == "table":
        for child in node.children:
            if child.tagname == "title":
                out.append(_text(child))
        rendered = _table(node)
        if rendered:
            out.append(rendered)
        return
    if tag == "title":  # a topic/sidebar/admonition title
        out.append(_text(node))
        return
    if tag in ("image", "figure") and not node.children:
        return
    for child in getattr(node, "children", ()):
        if child.tagname == "#text":
            text = " ".join(child.astext().split())
            if text:
                out.append(text)
        else:
            _render(child, depth, out)


def _docinfo(doctree: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for info in doctree.findall(lambda n: n.tagname == "docinfo"):
        for field in info.children:
            if field.tagname == "field":
                name = _text(field.children[0])
                value = _text(field.children[1]) if len(field.children) > 1 else ""
            elif field.tagname == "authors":
                name, value = "author", ", ".join(_text(a) for a in field.children)
            else:
                name, value = field.tagname, _text(field)
            meta[canonical_key(name)] = value
    return meta


def load_rst(path: Path, doc_id: str) -> Document:
    """Load one reStructuredText file as a Document.

    Raises:
        IngestError: a front-matter block or an ``acl`` field cannot be parsed (fails closed).
        MissingExtraError: the ``rst`` extra (docutils) is not installed.
    """
    publish_doctree = require("docutils.core", "rst", "reStructuredText support").publish_doctree

    decoded = decode_text(path)
    front, source = split_front_matter(decoded.text, plain_metadata=False)
    doctree = publish_doctree(
        source,
        source_path=str(path),
        settings_overrides={
            "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False,
            "raw_enabled": False, "input_encoding": "unicode", "_disable_config": True, "exit_status_level": 5,
        },
    )
    out: list[str] = []
    _render(doctree, 0, out)
    raw = {**_docinfo(doctree), **front}
    for key in ("tags", "keywords"):
        if isinstance(raw.get(key), str):
            raw[key] = [t.strip() for t in raw[key].split(",") if t.strip()]
    if "tags" not in raw and "keywords" in raw:
        raw["tags"] = raw.pop("keywords")
    title = str(front.get("title") or doctree.get("title") or "").strip()
    text = tidy("\n\n".join(out))
    title = title or heading_title(text, path)
    return Document(
        doc_id=doc_id,
        text=text,
        title=title,
        source=str(path.resolve()),
        format="rst",
        metadata=normalise_metadata(raw),
        warnings=decoded.warnings,
    )
