"""Version links between documents (which one supersedes which), from titles and metadata.

Neutral ground: ingest records the links for the whole corpus at every commit, and the answerers
(``openbook.answer.context.superseded_docs``) use the same rule on the passages they cite.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_WS_RE = re.compile(r"\s+")


def version_links(docs: Mapping[str, tuple[str, Mapping[str, Any]]]) -> dict[str, str]:
    """Which documents another one supersedes: older doc id -> newer doc id.

    Args:
        docs: doc id -> (title, metadata).

    A document supersedes another when its metadata names it in ``supersedes`` (by doc id, part of a doc id,
    title, or title family), when its body says it supersedes the other's title or title family, or a phrase
    naming a title family of two words or more (``supersedes_text``, read at ingest by
    ``openbook.dates``; never by doc id, and never a document with a later ``updated`` date), or
    when both share a title family (the title without version marks such as "v2", "1.3", "(draft)" and without
    a trailing "| Site name") and it has the later ``updated`` date, or, when the two are not both dated, the
    higher version number in its title ("Leave policy v2" over "Leave policy v1", "version 1.3" over "version
    1.2"). Runs in about linear time, so the store records the links for the whole corpus at ingest.
    """
    out: dict[str, str] = {}
    by_title: dict[str, list[str]] = {}
    by_family: dict[str, list[str]] = {}
    for doc_id, (title, _) in docs.items():
        by_title.setdefault(title.casefold(), []).append(doc_id)
        fam = _family(title)
        if fam:
            by_family.setdefault(fam, []).append(doc_id)
    for newer, (_, meta) in docs.items():
        sup = meta.get("supersedes")
        names = [sup] if isinstance(sup, str) else list(sup or [])
        # what the body says (untrusted text, "Supersedes: notes") names titles, never file paths
        from_body = bool(meta.get("supersedes_text")) and not names
        if from_body:
            names = [meta["supersedes_text"]]
        mine = str(meta.get("updated") or "")
        for name in names:
            key = str(name).casefold().strip()
            if not key:
                continue
            targets = set(by_title.get(key, [])) | set(by_family.get(_family(key), []))
            targets |= {d for d in docs if key in d.casefold()} if len(key) >= 4 and not from_body else set()
            if not targets:
                # a phrase ("the VPN access guide of March 2022") names the documents whose title family it
                # contains, a family of two words or more so that one common word never links unrelated ones
                said = _family(key)
                targets = {older for family, members in by_family.items() if " " in family
                           and re.search(rf"(?<!\w){re.escape(family)}(?!\w)", said) for older in members}
            if from_body:  # and never a document dated later than this one
                targets = {d for d in targets if not (mine and str(docs[d][1].get("updated") or "") > mine)}
            for older in targets - {newer}:
                out[older] = newer
    for members in by_family.values():
        numbered = [(v, d) for v, d in ((_version_number(docs[d][0]), d) for d in members) if v is not None]
        if len(numbered) >= 2:
            top_version, top_doc = max(numbered)
            top_dated = bool(docs[top_doc][1].get("updated"))
            for version, d in numbered:
                # "v1" beside "v2": the number orders them unless both are dated (then the dates below do)
                if version < top_version and d not in out and not (top_dated and docs[d][1].get("updated")):
                    out[d] = top_doc
        dated = [(str(docs[d][1].get("updated") or ""), d) for d in members]
        dated = [x for x in dated if x[0]]
        if len(dated) < 2:
            continue
        newest_date, newest = max(dated)
        for date, d in dated:
            if date < newest_date and d not in out:
                out[d] = newest
    return out


_VERSION_RE = re.compile(r"\b(v(ersion)?\s*\d+(\.\d+)*|\d+(\.\d+)+|\(.*?\)|draft|old|new|latest)\b", re.I)


_VERSION_NUMBER_RE = re.compile(r"\bv(?:ersion)?\s*(\d+(?:\.\d+)*)\b", re.I)


def _version_number(title: str) -> tuple[int, ...] | None:
    """The version a title states (``Policy v2`` -> (2,), ``version 1.3`` -> (1, 3)), or None."""
    m = _VERSION_NUMBER_RE.search(title)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


_SITE_SUFFIX_RE = re.compile(r"\s+[|–—-]\s+[^|–—-]+$")


def _family(title: str) -> str:
    """A title without version marks and without a trailing ``| Site name`` / ``- Site name``.

    A trailing part with a digit or a colon ("- Chapter 2: File Versions", "- Part 3") names a part of the
    work, not a site, and stays: chapters of one manual are not versions of each other."""
    suffix = _SITE_SUFFIX_RE.search(title)
    site = suffix is not None and not re.search(r"[\d:：]", suffix.group(0))
    base = _SITE_SUFFIX_RE.sub("", title.casefold()) if site else title.casefold()
    return _WS_RE.sub(" ", _VERSION_RE.sub(" ", base)).strip(" -–—:|")
