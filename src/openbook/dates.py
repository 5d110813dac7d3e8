"""Dates in text: ``iso_date`` (any date value to ISO), ``iso_value`` (a stored ISO value to a ``date``), and
the version facts a document states in its own opening text, for documents whose metadata lacks them. Neutral
ground, like ``openbook.versions``: the loaders and the answerers both read it without importing each other.

Many policies, guides and release notes carry no front matter but open with "Effective date: 2024-06-01",
"Last updated 12 March 2024" or "This version supersedes the VPN guide of March 2022". ``body_metadata`` reads
those from the head of the cleaned text so that ``openbook.versions.version_links`` can tell the newer version:

- ``updated``: the date after a label such as "effective date", "effective from", "valid from", "as of",
  "last updated", "revised", "reviewed", "revision", "version date", "date of issue", "生效日期", "更新日期",
  "最終更新", "改訂日", "施行日" in the first ``HEAD_CHARS`` characters; the latest one when several are stated
  (a revision history lists the newest change last or first). Not a release date (the notes of two releases
  are two documents, not two versions of one) and not a bare "Date:" line (meeting notes of one series share a
  title but do not supersede each other);
- ``supersedes_text``: what the document says it supersedes or replaces ("This version supersedes X",
  "Supersedes: X", "replaces X", "取代X", "代替X"), a short phrase that ``version_links`` matches against other
  documents' titles.

Front matter always wins: a key the loader already set is never replaced.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from typing import Any, Mapping

_CJK_DATE = re.compile(r"(\d{4})\s*[年./-]\s*(\d{1,2})\s*[月./-]\s*(\d{1,2})\s*[日号]?")
_ISO_PREFIX = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})(?:$|[T\s])")


def iso_value(value: Any) -> _dt.date | None:
    """``value`` as a ``date`` when it already is one or is written in ISO form, else None.

    Accepts ``date``/``datetime`` objects (a datetime gives its date) and anything whose text, stripped, starts
    with ``YYYY-MM-DD`` followed by nothing, ``T`` or whitespace (``2024-05-01``, ``2024-05-01T10:00:00Z``); an
    impossible day (``2024-02-30``) is None. The strict reading of a stored metadata value: ``iso_date`` is the
    lenient one for values as written by people.
    """
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    m = _ISO_PREFIX.match(str(value).strip())
    if not m:
        return None
    try:
        return _dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def iso_date(value: Any) -> str | None:
    """Return ``value`` as an ISO ``YYYY-MM-DD`` string, or None when it is not a recognisable date.

    Accepts ``date``/``datetime`` objects and ISO strings (``iso_value``), Chinese/Japanese dates
    (``2024年5月1日``) and anything ``dateutil`` parses (``1 May 2024``, ``May 1, 2024``, ``2024/05/01``;
    ambiguous ``01/05/2024`` is read month first, as dateutil does).
    """
    if isinstance(value, _dt.datetime):
        return value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if _ISO_PREFIX.match(text):
        parsed = iso_value(text)
        return parsed.isoformat() if parsed else None
    m = _CJK_DATE.search(text)
    if m:
        try:
            return _dt.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        except ValueError:
            return None
    if not re.search(r"\d", text):
        return None  # dateutil would fill a bare month name with today's year and day
    from dateutil import parser as _dateparser  # imported by the first lenient reading, not by every process

    try:
        # ignoretz: only the date is kept, and an unknown zone name (EDT) would warn, later raise, in dateutil
        return _dateparser.parse(text, default=_dt.datetime(2000, 1, 1), ignoretz=True).date().isoformat()
    except (ValueError, OverflowError):
        return None


HEAD_CHARS = 1500
"""How much of a document's opening text is read for its version facts (characters)."""

_DATE_TOKEN = (r"(\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}|\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日?|"
               r"\d{1,2}\.?\s+[A-Z][a-z]{2,8}\.?,?\s+\d{4}|[A-Z][a-z]{2,8}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})")
_DATE_LABELS = (  # compiled on first use (_patterns)
    r"(?:\b(?:effective(?:\s+(?:date|from|as\s+of|on))?|valid\s+from|in\s+force\s+from|as\s+of|"
    r"last\s+(?:updated|revised|modified|reviewed)|(?:date\s+)?(?:updated|revised|reviewed|modified)(?:\s+on)?|"
    r"revision(?:\s+date)?|version\s+date|date\s+of\s+issue|issued(?:\s+on)?|publication\s+date)|"
    r"生效日期|更新日期|更新时间|更新時間|最后更新|最後更新|修订日期|修訂日期|発効日|"
    r"最終更新日?|改訂日|施行日|更新日)"
    r"\s*[:：\-–]?\s*(?:on\s+)?" + _DATE_TOKEN
)
# A release date is not an "updated" date: release notes of 5.2 and 5.3 are two documents, not two versions of
# one, and dating them would mark the 5.2 notes as superseded.
_SUPERSEDES = (
    r"(?:\b(?:supersedes|replaces)\s*:?\s+|\bsupersedes\s*:\s*|取代|替代|代替|に代わる)"
    r"(?P<what>(?:[^.\n;。；]|(?<=\d)\.(?=\d)){3,160})"  # a dot between digits ("version 1.0") is no sentence end
)
# "replaces" is ordinary prose ("the new pump replaces the old one"); only a document speaking of itself
# (this version/policy/guide/document ..., or a "Supersedes:" label) states a version fact
_SELF = (r"(?:\b(?:this|the\s+present|the\s+current)\s+(?:\w+\s+){0,2}?(?:version|edition|revision|"
         r"release|policy|guide|document|procedure|standard|manual|handbook|page|plan|agreement|"
         r"guideline|guidelines|notice)\b[^.\n]{0,40}$|^\s*$|本(?:版|文件|政策|规定|规范)\s*$)")


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """``_DATE_LABELS``, ``_SUPERSEDES`` and ``_SELF`` compiled (case-insensitive), once per process, by the first
    caller: a process that reads no document head (a search) never compiles them."""
    return (re.compile(_DATE_LABELS, re.IGNORECASE), re.compile(_SUPERSEDES, re.IGNORECASE),
            re.compile(_SELF, re.IGNORECASE))


def labelled_date(text: str) -> str | None:
    """The latest date ``text`` states after a date label ("Effective date:", "Last updated", "Revised on",
    "更新日期：" ...; see the module docstring), as ISO ``YYYY-MM-DD``, or None."""
    dates = [d for d in (iso_date(m.group(1)) for m in _patterns()[0].finditer(text)) if d]
    return max(dates) if dates else None


def body_metadata(text: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The version facts ``text`` states in its head that ``metadata`` lacks (see the module docstring).

    Returns:
        A dict with ``updated`` (ISO ``YYYY-MM-DD``) and/or ``supersedes_text`` (str), only for keys absent
        from ``metadata`` (``supersedes`` in front matter also suppresses ``supersedes_text``); empty when the
        head states neither.
    """
    head = text[:HEAD_CHARS]
    out: dict[str, Any] = {}
    if not metadata.get("updated"):
        date = labelled_date(head)
        if date:
            out["updated"] = date
    if not metadata.get("supersedes") and not metadata.get("supersedes_text"):
        _, supersedes, self_named = _patterns()
        for m in supersedes.finditer(head):
            before = head[max(0, m.start() - 80):m.start()]
            line_start = before.rfind("\n")
            if self_named.search(before[line_start + 1:] if line_start >= 0 else before):
                out["supersedes_text"] = " ".join(m.group("what").split())
                break
    return out
