"""Context assembly shared by every answerer: numbered passages, sources list, version awareness.

A passage number ``n`` is what an answer cites as ``[n]``; ``sources`` maps each number to its document id,
title, page or section, and ``updated`` date.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ..types import Citation, Hit, Passage

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


def superseded_docs(passages: Sequence[Passage]) -> dict[str, str]:
    """Documents among the passages that another passage's document supersedes: doc id -> newer doc id.

    A document supersedes another when its metadata names it in ``supersedes`` (by doc id, file name, or
    title, case-insensitive) or when both share a title-like version family (same title once version numbers
    and words such as "v2" are removed) and it has the later ``updated`` date.
    """
    docs: dict[str, Mapping[str, Any]] = {}
    titles: dict[str, str] = {}
    for p in passages:
        docs[p.chunk.doc_id] = p.chunk.metadata
        titles[p.chunk.doc_id] = p.chunk.title
    out: dict[str, str] = {}
    for newer, meta in docs.items():
        sup = meta.get("supersedes")
        names = [sup] if isinstance(sup, str) else list(sup or [])
        for name in names:
            key = str(name).casefold().strip()
            if not key:
                continue
            for older in docs:
                if older == newer:
                    continue
                if key in older.casefold() or key == titles[older].casefold() or \
                        _family(key) == _family(titles[older]):
                    out[older] = newer
    for a in docs:
        for b in docs:
            if a >= b or a in out or b in out:
                continue
            fa, fb = _family(titles[a]), _family(titles[b])
            if fa and fa == fb:
                da, db = str(docs[a].get("updated") or ""), str(docs[b].get("updated") or "")
                if da and db and da != db:
                    older, newer = (a, b) if da < db else (b, a)
                    out[older] = newer
    return out


_VERSION_RE = re.compile(r"\b(v(ersion)?\s*\d+(\.\d+)*|\d+(\.\d+)+|\(.*?\)|draft|old|new|latest)\b", re.I)


_SITE_SUFFIX_RE = re.compile(r"\s+[|–—-]\s+[^|–—-]+$")


def _family(title: str) -> str:
    """A title without version marks and without a trailing ``| Site name`` / ``- Site name``."""
    base = _SITE_SUFFIX_RE.sub("", title.casefold()) if _SITE_SUFFIX_RE.search(title) else title.casefold()
    return _WS_RE.sub(" ", _VERSION_RE.sub(" ", base)).strip(" -–—:|")
