"""Plain-text loader: a dated header line becomes ``updated``; heading-like lines become ``#`` headings.

A fenced front-matter block (see ``frontmatter``) is read first. An ``ACL:`` / ``acl =`` / ``Allowed roles:``
line among the first ``_HEADER_LINES`` lines (any spelling of ``_common.ACCESS_KEYS``: ``Roles:`` and
``Access roles:`` too, as in front matter) is the access list (comma-separated roles; an empty or malformed
one refuses the file). Header lines read as the update date (within the first ``_HEADER_LINES`` lines, anywhere on the line, so
``Owner: SRE | Revision: 2024-09-02`` works): ``Updated:``, ``Last updated:``, ``Revised``, ``Last revised``,
``Last reviewed:``, ``Reviewed:``, ``Revision:``, ``Modified:``, ``更新日期：``/``更新时间：``/``最后更新：``/``修订日期：``
and ``更新日：``. Dates in any form python-dateutil reads, or Chinese/Japanese ``2024年5月1日``.
Title: a ``Title:`` line, else a short first line (at most ``_MAX_TITLE_CHARS`` characters, not ending in
a full stop), else the file name.

Headings: a line underlined with ``===``/``---``, a short ALL-CAPS line, or a short numbered section line
(``1. SCOPE AND DEFINITIONS``, ``Section 4``, ``8.2 New joiners``) after a blank line becomes a ``#``/``##``
heading (a numbered one only when a blank line or a list follows it), so that the chunker keeps section
context; so does, as a ``##`` heading, a short capitalised line without closing punctuation after a blank line
and directly above a list (``What you need to apply`` over its ``- `` or ``1.`` items). ``*``/``•`` bullets become ``- ``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import IngestError
from ..fences import fenced_blocks
from ..types import Document
from ._common import ACCESS_KEYS, decode_text, key_text, normalise_metadata, tidy, title_from_path
from ..dates import labelled_date
from .frontmatter import split_front_matter

_HEADER_LINES = 12
_MAX_TITLE_CHARS = 120
# every spelling front matter reads as ``acl`` (``ACCESS_KEYS``): a "Roles: hr" header line read as prose published
# the file to everyone while the same line in Markdown restricted it
_ACCESS_LINE = re.compile(
    r"^\s*(" + "|".join(sorted((k.replace("_", "[ _-]") for k in ACCESS_KEYS), key=len, reverse=True))
    + r")\s*[:=：]\s*(.*?)\s*$", re.IGNORECASE)
# "Roles:" with nothing after it labels a list of an application's roles far more often than it grants none: text
_LABEL_KEYS = re.compile(r"^(?:access[ _-])?roles$", re.IGNORECASE)
_TITLE_LINE = re.compile(r"^\s*title\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_BULLET = re.compile(r"^([ \t]*)[*•·][ \t]+")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•·]|\d{1,2}[.)])[ \t]+\S")
# a short capitalised line without closing punctuation (at most 8 words): the caption of the list below it
_CAPTION = re.compile(r"^(?=.{3,60}$)[A-Z][^\s|#]*(?:\s+[^\s|#]+){0,7}(?<![.,:;!?])$")
_NUMBERED = re.compile(r"^(?:section|chapter|part|article|appendix)\s+[\dA-Z]+\b|^\d+(?:\.\d+)*\.?\s+\S", re.IGNORECASE)


def find_updated(text: str) -> str | None:
    """ISO date of the latest "updated"-style label among the first lines of ``text`` (``labelled_date``), or
    None."""
    return labelled_date("\n".join(text.split("\n")[:_HEADER_LINES]))


def _is_heading(line: str) -> int:
    """Heading level (1 or 2) for a heading-like line, 0 otherwise."""
    s = line.strip()
    if not s or len(s) > 80 or s.startswith(("-", "*", "•", "[", "|", "#")) or s.endswith((".", ",", ":", ";")):
        return 0
    letters = [c for c in re.sub(r"\([^)]*\)", "", s) if c.isalpha()]
    if len(letters) >= 3 and all(c.isupper() for c in letters if c.isascii()) and any(c.isascii() for c in letters):
        return 1
    if _NUMBERED.match(s) and len(s.split()) <= 10:
        return 2 if re.match(r"^\d+\.\d+", s) else 1
    return 0


def structure_text(text: str) -> str:
    """Mark heading-like lines (see the module docstring) as ``#``/``##`` lines; everything else unchanged."""
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        prev_blank = i == 0 or not lines[i - 1].strip()
        next_line = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _UNDERLINE.match(next_line) and prev_blank and len(line.strip()) <= 80:
            out.append(("# " if next_line.strip()[0] == "=" else "## ") + line.strip())
            continue
        if _UNDERLINE.match(line) and out and out[-1].startswith("#"):
            continue  # the underline of the heading just written
        level = _is_heading(line) if prev_blank else 0
        if not level and prev_blank and _LIST_ITEM.match(next_line) and _CAPTION.match(line.strip()):
            level = 2  # "What you need to apply" directly above its list: the list's heading
        if level and next_line.strip() and _NUMBERED.match(line.strip()):
            # a numbered heading directly followed by text only when that text is not the next numbered item
            if _NUMBERED.match(next_line.strip()) or not next_line.lstrip().startswith(("- ", "* ", "• ")):
                level = 0
        if level:
            out.append("#" * level + " " + line.strip())
        else:
            out.append(_BULLET.sub(r"\1- ", line))
    return "\n".join(out)


def _title(text: str, path: Path) -> str:
    m = _TITLE_LINE.search("\n".join(text.split("\n")[:_HEADER_LINES]))
    if m:
        return m[1]
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    if first and len(first) <= _MAX_TITLE_CHARS and not first.endswith((".", "。")):
        return first
    return title_from_path(path)


def find_access(text: str, *, skip_code: bool = False) -> tuple[str, str] | None:
    """The key and value of an ``ACL:`` / ``acl =`` / ``Allowed roles:`` / ``Roles:`` header line among the first lines, or None; the
    line is read as ``key_text`` (full-width ``ＡＣＬ：``, a zero-width space before ``ACL``). ``skip_code``: lines
    inside a Markdown fenced code block (an example, not this file's access list) are not read. An empty
    ``Roles:`` / ``Access roles:`` line is a label over a list, not an access line (an empty ``ACL:`` is one: it
    refuses the file)."""
    lines = text.split("\n")[:_HEADER_LINES]
    code = {n for b in fenced_blocks(lines) for n in range(b.start, b.end)} if skip_code else set()
    for n, line in enumerate(lines):
        if n in code:  # (fences read as the Markdown loader, the chunker and the answerer read them)
            continue
        m = _ACCESS_LINE.match(key_text(line))
        if m and (m[2] or not _LABEL_KEYS.match(m[1])):
            return m[1], m[2]
    return None


def access_warning(roles: list[str]) -> str:
    """The ingest warning for a file that an access line outside front matter restricts to ``roles``."""
    return (f"an access line near the top (roles {', '.join(roles)}) was read as the file's access list: only "
            f"those roles see it; put it in front matter (acl: [...] between --- lines) to silence this warning, or "
            f"reword the line to publish the file")


def header_roles(access: str) -> list[str] | None:
    """The roles of an access header line's value (``hr, finance`` or ``[hr, finance]``); None for an empty
    value (``normalise_metadata`` refuses it)."""
    inner = access[1:-1] if access.startswith("[") and access.endswith("]") else access
    return [role.strip().strip("'\"") for role in inner.split(",")] if inner.strip() else None


def load_text(path: Path, doc_id: str) -> Document:
    """Load one plain-text file as a Document (title, ``updated`` and ``acl`` from its header lines).

    A fenced front-matter block (``---`` YAML, ``+++`` TOML) at the top is read as metadata and removed.

    Raises:
        IngestError: a front-matter block or an ``acl`` header line cannot be parsed (fails closed).
    """
    decoded = decode_text(path)
    front, source = split_front_matter(decoded.text, plain_metadata=False)
    raw = tidy(source)
    metadata: dict[str, object] = dict(front)
    updated = find_updated(raw)
    if updated and not any(k in front for k in ("updated", "last_updated", "last_modified", "lastmod", "modified")):
        metadata["updated"] = updated
    access = find_access(raw)
    notes: tuple[str, ...] = ()
    if access is not None:
        if "acl" in front:
            raise IngestError("access list given twice (front matter and an 'acl:' header line); keep one")
        metadata["acl"] = header_roles(access[1])
        if _LABEL_KEYS.match(access[0]):  # "Roles: a, b" restricts the file yet reads like prose: warn
            notes = (access_warning(metadata["acl"] or []),)
    notes = (*decoded.warnings, *notes)
    title = str(front.get("title") or "").strip() or _title(raw, path)
    lines = raw.split("\n")
    if lines and lines[0].strip() == title:  # the title line becomes the top heading
        lines[0] = "# " + title
        body = lines[0] + "\n" + structure_text("\n".join(lines[1:]))
    else:
        body = structure_text(raw)
    return Document(
        doc_id=doc_id,
        text=tidy(body),
        title=title,
        source=str(path.resolve()),
        format="text",
        metadata=normalise_metadata(metadata),
        warnings=notes,
    )
