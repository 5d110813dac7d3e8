"""CSV/TSV loader: the whole file as one pipe table, header row first, every data row kept.

The dialect (delimiter, quoting) is sniffed with ``csv.Sniffer`` on the first 64 KiB (falling back to the
comma, or to tab for ``.tsv``); a first line ``sep=;`` (Excel's delimiter hint) names the delimiter instead and
is not a row. Ragged rows are kept: short rows are padded with empty cells and the header is
widened with empty column names for rows that carry extra cells. Blank lines are skipped. Pipes inside cells
are escaped as ``\\|`` and newlines inside quoted cells become spaces. A fenced front-matter block (``---`` YAML,
``+++`` TOML; see ``frontmatter``) at the top is metadata, its ``acl`` the access list, failing closed as in the
text loader: it was read as table rows and published the file. (Named ``tabular`` so that it does not shadow the
stdlib ``csv`` module.)
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..errors import IngestError
from ..types import Document
from ._common import decode_text, normalise_metadata, title_from_path
from .frontmatter import split_front_matter

_SNIFF_BYTES = 64 * 1024
_EXCEL_SEP = re.compile(r"\A[ \t]*sep=(.)[ \t]*\n", re.IGNORECASE)


def _dialect(sample: str, suffix: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel_tab if suffix == ".tsv" else csv.excel


def _cell(value: str) -> str:
    return " ".join(value.split()).replace("|", "\\|")


def rows_to_table(rows: list[list[str]]) -> str:
    """Render rows (first = header) as a pipe table; rows are padded to the widest row."""
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [_cell(c) for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def load_csv(path: Path, doc_id: str) -> Document:
    """Load one CSV/TSV file as a Document whose text is a single pipe table.

    Raises:
        IngestError: the file has no rows, or is not parseable as delimited text, or its front matter cannot be
            parsed or has a malformed ``acl``.
    """
    decoded = decode_text(path)
    front, source = split_front_matter(decoded.text, plain_metadata=False)
    if not source.strip():
        raise IngestError("empty CSV file")
    hint = _EXCEL_SEP.match(source)
    if hint:
        source = source[hint.end():]
    dialect = _dialect(source[:_SNIFF_BYTES], path.suffix.lower())
    options = {"delimiter": hint[1]} if hint else {}
    try:
        rows = [row for row in csv.reader(io.StringIO(source, newline=""), dialect, **options)
                if any(c.strip() for c in row)]
    except csv.Error as exc:
        raise IngestError(f"malformed CSV: {exc}") from exc
    if not rows:
        raise IngestError("empty CSV file")
    return Document(
        doc_id=doc_id,
        text=rows_to_table(rows),
        title=str(front.get("title") or "").strip() or title_from_path(path),
        source=str(path.resolve()),
        format="csv",
        metadata={**normalise_metadata(front), "rows": len(rows) - 1, "columns": [c.strip() for c in rows[0]]},
        warnings=decoded.warnings,
    )
