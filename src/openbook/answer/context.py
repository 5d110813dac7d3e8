"""Context assembly shared by every answerer: numbered passages, sources list, version awareness.

A passage number ``n`` is what an answer cites as ``[n]``; ``sources`` maps each number to its document id,
title, page or section, and ``updated`` date.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ..dates import labelled_date
from ..types import Citation, Hit, Passage
from ..versions import version_links  # noqa: F401 - re-exported: answerers import it from here

_WS_RE = re.compile(r"\s+")


def assemble_passages(hits: Sequence[Hit], n: int) -> list[Passage]:
    """The first ``n`` distinct hits (by chunk id and by normalised text), numbered from 1 in rank order.

    Hits without a loaded chunk are skipped.
    """
    out: list[Passage] = []
    seen_ids: set[str] = set()
    seen_text: set[tuple[str, str]] = set()
    for hit in hits:
        if hit.chunk is None or hit.chunk_id in seen_ids:
            continue
        key = (hit.doc_id, _WS_RE.sub(" ", hit.chunk.text).strip().casefold())
        if key in seen_text:
            continue
        seen_ids.add(hit.chunk_id)
        seen_text.add(key)
        out.append(Passage(n=len(out) + 1, hit=hit))
        if len(out) >= n:
            break
    return out


def citation_for(passage: Passage) -> Citation:
    """The sources-list entry of a passage."""
    c = passage.chunk
    updated = c.metadata.get("updated")
    return Citation(n=passage.n, doc_id=c.doc_id, chunk_id=c.chunk_id, title=c.title, page=c.page,
                    section=c.section, updated=str(updated) if updated else None)


def format_sources(citations: Sequence[Citation]) -> str:
    """One line per citation: ``[n] doc_id — title, p. 3 / § section (updated YYYY-MM-DD)``."""
    lines = []
    for c in citations:
        where = f"p. {c.page}" if c.page else (f"§ {c.section}" if c.section else "")
        parts = [f"[{c.n}] {c.doc_id}"]
        if c.title:
            parts.append(f"— {c.title}")
        line = " ".join(parts) + (f", {where}" if where else "")
        if c.updated:
            line += f" (updated {c.updated})"
        lines.append(line)
    return "\n".join(lines)


def superseded_docs(passages: Sequence[Passage], recorded: Mapping[str, str] | None = None) -> dict[str, str]:
    """``version_links`` among the passages' documents, plus links ``recorded`` at ingest for them, plus what
    their text says: "replaces / supersedes / obsoletes NAME" names an older document, and a labelled date
    ("Effective date:", "valid from", "as of", "Last updated" ...: ``dates.labelled_date``) stands
    in for a missing ``updated`` date."""
    docs: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for p in passages:
        meta = dict(p.chunk.metadata)
        if not meta.get("updated"):
            stated = labelled_date(p.chunk.text)
            if stated:
                meta["updated"] = stated
        said = [m.group(1).strip(" .,;:\"'“”") for m in _REPLACES_RE.finditer(p.chunk.text)]
        if said and not meta.get("supersedes"):
            meta["supersedes"] = said
        if p.chunk.doc_id not in docs or meta.get("supersedes") or meta.get("updated"):
            docs[p.chunk.doc_id] = (p.chunk.title, meta)
    out = {old: new for old, new in (recorded or {}).items() if old in docs}
    out.update(version_links(docs))
    return out


_REPLACES_RE = re.compile(r"\b(?:replaces|supersedes|obsoletes|supercedes)\s+(?:the\s+)?([^.;\n]{3,80})", re.I)
