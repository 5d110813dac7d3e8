"""Context assembly shared by every answerer: numbered passages, sources list, version awareness.

A passage number ``n`` is what an answer cites as ``[n]``; ``sources`` maps each number to its document id,
title, page or section, and ``updated`` date.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ..dates import labelled_date
from ..index.analyzer import ENGLISH_STOP_WORDS, Analyzer
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


def superseded_docs(passages: Sequence[Passage], recorded: Mapping[str, str] | None = None,
                    analyzer: Analyzer | None = None) -> dict[str, str]:
    """Which of the passages' documents another one of them supersedes: older doc id -> newer doc id.

    The links are, in this order of precedence: links ``recorded`` at ingest for them; ``version_links`` among
    the passages' documents, with what their text says ("replaces / supersedes / obsoletes NAME" names an older
    document, and a labelled date such as "Effective date:", "valid from", "as of", "Last updated":
    ``dates.labelled_date``, stands in for a missing ``updated`` date); and ``named_as_older``: a dated
    document that calls another one older in its body ("Some older material, including the onboarding
    guide's chapter on leave, still mentions a longer notice period") supersedes it.

    Args:
        passages: the retrieved passages; only their documents are linked.
        recorded: older -> newer links the store recorded at ingest (``Store.get_versions()``).
        analyzer: matches a phrase against titles (``named_as_older``); the default English analyzer when None.
    """
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
    texts: dict[str, list[str]] = {}
    for p in passages:
        texts.setdefault(p.chunk.doc_id, []).append(p.chunk.text)
    for old, new in named_as_older(docs, texts, analyzer or Analyzer()).items():
        # a link the documents state as a version (front matter, "supersedes", a title family) wins, and a
        # named link never makes a pair circular
        if old not in out and out.get(new) != old:
            out[old] = new
    return out


_REPLACES_RE = re.compile(r"\b(?:replaces|supersedes|obsoletes|supercedes)\s+(?:the\s+)?([^.;\n]{3,80})", re.I)

_STALE = (r"outdated|out[\s-]of[\s-]date|obsolete|deprecated|superseded|withdrawn|retired|"
          r"no\s+longer\s+(?:current|valid|accurate|correct|in\s+force|maintained|up[\s-]to[\s-]date)|"
          r"being\s+(?:revised|updated|rewritten|reworked)")
# the name stands before these: "the 2022 handbook is outdated", "X still mentions a longer period",
# "X has been superseded", "X (now withdrawn)"
_NAME_BEFORE_RE = re.compile(
    rf"\b(?:(?:is|are|was|were)\s+(?:now\s+|also\s+|currently\s+|partly\s+)?(?:{_STALE})|"
    r"(?:has|have)\s+(?:now\s+)?been\s+(?:superseded|replaced|withdrawn|retired)|"
    r"still\s+(?:says|say|mentions?|states?|lists?|shows?|describes?|refers\s+to|quotes?|gives?)|"
    r"no\s+longer\s+(?:applies|apply|reflects?))\b|"
    rf"\(\s*(?:now\s+)?(?:{_STALE})\s*\)", re.I)
# the name follows these: "older material, including X", "the previous version of X", "the outdated X",
# "this guide replaces X" (``version_links`` reads X as a title or title family; here X may be a few of a title's
# words: "the 2022 handbook" for "Employee Handbook 2022")
_NAME_AFTER_RE = re.compile(
    r"\b(?:(?:older|outdated|out-of-date|earlier|previous|prior|superseded|obsolete)\s+"
    r"(?:material|materials|documentation|docs|documents?|guides?|articles?|pages?|version|edition|revision|"
    r"copies|copy)\b(?:\s*,?\s*(?:including|such\s+as|like|e\.g\.|for\s+example|of|in)\b)?|"
    r"\b(?:the|an?)\s+(?:outdated|out-of-date|obsolete|superseded|withdrawn|deprecated)\b|"
    r"\b(?:replaces|supersedes|supercedes|obsoletes|takes\s+the\s+place\s+of)\b)", re.I)
_CLAUSE_END_RE = re.compile(r"[.;:!?\n]\s|[;!?\n]|\.$")
_SELF_RE = re.compile(r"^\W*(?:this|these|our|the\s+present|the\s+current)\b", re.I)
NAME_MAX_CHARS = 120  # a name is looked for this far before or after its cue, within the clause
NAME_MIN_WORDS = 2  # words of a name that must be words of the title it names (stop words aside)
NAME_MIN_SHARE = 0.4  # and this share of the name's words and of the title's (stop words aside)
DOCUMENT_WORDS = ("manual handbook guide guidebook guideline policy chapter section page article document "
                  "documentation doc docs faq answer note notes memo procedure instruction rule readme wiki "
                  "tutorial bulletin newsletter announcement edition revision")
"""Words that make a name the name of a document ("the VPN client setup guide", "the 2022 handbook"), not of
the thing a document is about ("the old VPN client is deprecated"): a name without one must hold every word of
the title it names. ("version" and "release" are left out: they name software as often as documents.)"""


def named_as_older(docs: Mapping[str, tuple[str, Mapping[str, Any]]], texts: Mapping[str, Sequence[str]],
                   analyzer: Analyzer) -> dict[str, str]:
    """Documents another one calls older in its body: older doc id -> the doc id that says so.

    A document calls another older when a clause of its text names the other ("the onboarding guide's chapter on
    leave") beside a cue: before "is outdated / out of date / obsolete / superseded / no longer
    current / being revised", "has been superseded / replaced", "still says / mentions / lists", or "(now
    withdrawn)"; after "older material, including", "the previous version of", "the outdated", "replaces /
    supersedes". Merely naming another document ("see the user manual") is no cue.

    The name is the clause's text next to the cue, at most ``NAME_MAX_CHARS`` characters: before a cue, back to
    the nearest ``. ; : ! ?`` or line break; after one, up to the first comma or clause end. It names the title
    holding the most of its words (a word counts when one of its analyzer terms is one of the title's; stop
    words aside): at least ``NAME_MIN_WORDS`` words, at least ``NAME_MIN_SHARE`` of the name's words and of the
    title's ("the VPN client is deprecated" does not name "VPN Client Installation and Troubleshooting Guide for
    Windows"), and strictly more than any other title, the naming document's own included; and a name without a
    word saying it is a document (``DOCUMENT_WORDS``: manual, guide, chapter, ...) must hold every word of the
    title ("the old VPN client is deprecated" names the software, not "VPN client setup guide"). A tie, a name
    starting with "this / our / the current", or the naming document's own title names nothing ("this guide is
    outdated").

    Dates decide who may say it: the naming document must be dated (``updated``, from front matter or a
    labelled date in its text) and the named one must not be dated later. An undated text calling something
    "outdated" (a Wikipedia page's "the former album", a forum post) changes nothing, and neither does an
    older document calling a newer one outdated.

    Args:
        docs: doc id -> (title, metadata with ``updated`` as ISO ``YYYY-MM-DD`` where known).
        texts: doc id -> the texts of that document to read (the retrieved passages).
        analyzer: turns names and titles into terms (``Analyzer.analyze``: stop words dropped, stemmed).

    Returns:
        older doc id -> naming doc id; each older document at most once (the first naming document, in
        ``texts`` order).
    """
    titles = {d: _words(title, analyzer) for d, (title, _) in docs.items() if title}
    out: dict[str, str] = {}
    for newer, chunks in texts.items():
        mine = str(docs.get(newer, ("", {}))[1].get("updated") or "")
        if not mine:
            continue
        for text in chunks:
            for name in _older_names(text):
                older = _title_named(name, titles, analyzer)
                if older is None or older == newer or older in out:
                    continue
                theirs = str(docs[older][1].get("updated") or "")
                if theirs and theirs > mine:
                    continue
                out[older] = newer
    return out


def _older_names(text: str) -> list[str]:
    """The phrases beside an "older" cue in ``text`` that may name a document (see ``named_as_older``)."""
    names = []
    for m in _NAME_BEFORE_RE.finditer(text):
        head = text[max(0, m.start() - NAME_MAX_CHARS):m.start()]
        ends = list(_CLAUSE_END_RE.finditer(head))
        names.append(head[ends[-1].end():] if ends else head)
    for m in _NAME_AFTER_RE.finditer(text):
        tail = text[m.end():m.end() + NAME_MAX_CHARS]
        end = _CLAUSE_END_RE.search(tail)
        tail = tail[:end.start()] if end else tail
        names.append(tail.split(",")[0])
    return [n.strip() for n in names if n.strip() and not _SELF_RE.match(n)]


def _title_named(name: str, titles: Mapping[str, list[frozenset[str]]], analyzer: Analyzer) -> str | None:
    """The doc id whose title ``name`` names clearly (see ``named_as_older``), or None.

    Words are counted, not terms: "v1.3" or "sign-in" gives several analyzer terms but is one word of a name."""
    words = _words(name, analyzer)
    if not words:
        return None
    said = frozenset().union(*words)
    documentary = bool(said & frozenset(analyzer.analyze(DOCUMENT_WORDS)))
    ranked = []
    for doc, title in titles.items():
        held = frozenset().union(*title) if title else frozenset()
        shared = sum(1 for w in words if w & held)
        covered = sum(1 for t in title if t & said)
        ranked.append((shared, shared >= NAME_MIN_WORDS and shared >= NAME_MIN_SHARE * len(words) and
                       covered >= (NAME_MIN_SHARE * len(title) if documentary else len(title)), doc))
    ranked.sort(key=lambda x: x[0], reverse=True)
    if not ranked or not ranked[0][1] or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
        return None
    return ranked[0][2]


def _words(text: str, analyzer: Analyzer) -> list[frozenset[str]]:
    """The analyzer terms of each whitespace-separated word of ``text``, stop words and punctuation left out."""
    return [t for t in (frozenset(analyzer.analyze(w)) for w in text.split()) if t and not t <= ENGLISH_STOP_WORDS]
