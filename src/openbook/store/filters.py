"""Metadata filters (``--where``) and access roles, evaluated per document before ranking.

This module sits under the store so that every backend (which applies it before ranking) and the layers above
(which parse ``--where``) share one definition; it imports nothing but ``openbook.errors``.

Expression grammar, one clause per ``--where`` (clauses combine with AND)::

    FIELD OP VALUE          OP in  =  ==  !=  >  >=  <  <=
    FIELD in [V1, V2, ...]  FIELD not in [V1, ...]

FIELD is a metadata key (front matter, CSV/BEIR metadata; matched case-insensitively when no key has the exact
spelling) or one of the fields every document has: ``doc_id``, ``title``, ``format`` (``markdown``, ``html``,
``text``, ``csv``, ``pdf``, ``beir``, ...) and ``path`` (the file's absolute path); a metadata key of the same
name wins. Values compare by type: two ISO dates (``2024-01-01``) compare as dates, two numbers as numbers,
otherwise as case-insensitive strings in Unicode NFC (so "Jose\u0301" equals "José"). A list-valued field
(``tags``) matches ``=``/``in`` when any element matches, and ``!=``/``not in`` when no element does.

Missing fields: a document without the field (or with a null or empty value) matches no positive clause
(``=``, ``in``, ``>``, ...) and every negative one (``!=``, ``not in``): ``status!=archived`` keeps the documents
that have no ``status``. This is SQL's ``status IS NULL OR status <> 'archived'`` and Chroma's behaviour
since 0.5.12; write ``status in [current, draft]`` to require the field.

Access: a document whose metadata has a non-empty ``acl`` list is visible only to a user holding one of
those roles; a user with no roles sees only documents without ``acl``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..dates import iso_value
from ..errors import QueryError

_CLAUSE_RE = re.compile(
    r"^\s*(?P<field>[A-Za-z_][\w.\-]*)\s*"
    r"(?P<op>not\s+in\b|in\b|==|!=|>=|<=|=|>|<)\s*(?P<value>.*?)\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    """One parsed ``FIELD OP VALUE`` clause."""

    field: str
    op: str
    values: tuple[str, ...]

    @property
    def negative(self) -> bool:
        """``!=`` and ``not in``: true for a document that lacks the field."""
        return self.op in ("!=", "not in")

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether a document with this metadata satisfies the clause (see the module docstring)."""
        actual = _field_value(metadata, self.field)
        items = [] if actual is None else list(actual) if isinstance(actual, (list, tuple, set)) else [actual]
        items = [a for a in items if a is not None]
        if not items:
            return self.negative
        if self.op == "in":
            return any(_compare(a, v) == 0 for a in items for v in self.values)
        if self.op == "not in":
            return not any(_compare(a, v) == 0 for a in items for v in self.values)
        target = self.values[0]
        if self.op == "=":
            return any(_compare(a, target) == 0 for a in items)
        if self.op == "!=":
            return all(_compare(a, target) != 0 for a in items)
        results = [_compare(a, target) for a in items]
        ok = {">": lambda c: c is not None and c > 0, ">=": lambda c: c is not None and c >= 0,
              "<": lambda c: c is not None and c < 0, "<=": lambda c: c is not None and c <= 0}[self.op]
        return any(ok(c) for c in results)


def _field_value(metadata: Mapping[str, Any], name: str) -> Any:
    """The value of field ``name``: the exact key, else the one key equal to it case-insensitively."""
    if name in metadata:
        return metadata[name]
    folded = name.casefold()
    for key, value in metadata.items():
        if isinstance(key, str) and key.casefold() == folded:
            return value
    return None


def parse_where(expr: str) -> Clause:
    """Parse one ``--where`` expression.

    Raises:
        QueryError: the expression is not ``FIELD OP VALUE`` or ``FIELD in [..]``.
    """
    m = _CLAUSE_RE.match(expr)
    if not m or not m.group("value"):
        raise QueryError(
            f"cannot parse filter {expr!r}: write FIELD OP VALUE with OP one of = != > >= < <=, "
            f"or FIELD in [a,b] (e.g. updated>=2024-01-01, author=Ana, tags in [a,b])"
        )
    op = re.sub(r"\s+", " ", m.group("op").lower())
    op = "=" if op == "==" else op
    raw = m.group("value")
    if op in ("in", "not in"):
        if not (raw.startswith("[") and raw.endswith("]")):
            raise QueryError(f"filter {expr!r}: the value of '{op}' must be a list like [a,b]")
        values = tuple(_unquote(v) for v in raw[1:-1].split(",") if v.strip())
        if not values:
            raise QueryError(f"filter {expr!r}: empty list")
    else:
        values = (_unquote(raw),)
        if values[0][:1] in "<>=!":
            raise QueryError(f"cannot parse filter {expr!r}: the value starts with {values[0][:1]!r}; write "
                             f"one operator, e.g. updated>=2024-01-01")
        if op in (">", ">=", "<", "<=") and iso_value(values[0]) is None and _as_number(values[0]) is None:
            raise QueryError(f"filter {expr!r}: {op} compares dates (YYYY-MM-DD) or numbers, not {values[0]!r}")
    return Clause(m.group("field"), op, tuple(unicodedata.normalize("NFC", v) for v in values))


def parse_filters(exprs: Sequence[str]) -> tuple[Clause, ...]:
    """Parse every ``--where`` clause (AND)."""
    return tuple(parse_where(e) for e in exprs)


def acl_roles(acl: Any) -> tuple[str, ...]:
    """The roles an ``acl`` value names: a string is one role, a list or tuple lists them, any other non-empty
    value (a number) is one role in its text form so that it fails closed; empty or missing: () (public)."""
    if acl is None or acl == "" or (isinstance(acl, (list, tuple, set)) and not acl):
        return ()
    if isinstance(acl, str):
        return (acl,)
    if isinstance(acl, (list, tuple, set)):
        return tuple(str(a) for a in acl)
    return (str(acl),)


def access_allows(acl: Any, roles: Sequence[str]) -> bool:
    """THE access rule (every mask, filter and backend derives from it): a document with no (or an empty) ``acl``
    is public; otherwise the caller needs one of its roles, compared case-insensitively."""
    listed = acl_roles(acl)
    if not listed:
        return True
    held = {r.casefold() for r in roles}
    return any(a.casefold() in held for a in listed)


def visible(metadata: Mapping[str, Any], roles: Sequence[str]) -> bool:
    """Access check of a document's metadata (its ``acl`` key): see ``access_allows``."""
    return access_allows(metadata.get("acl"), roles)


def document_passes(metadata: Mapping[str, Any], clauses: Sequence[Clause], roles: Sequence[str]) -> bool:
    """Visible to ``roles`` and matching every clause."""
    return visible(metadata, roles) and all(c.matches(metadata) for c in clauses)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _as_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return None


def _fold(text: Any) -> str:
    """NFC, case-folded text: the form string values compare in."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", str(text)).casefold())


def _compare(actual: Any, target: str) -> int | None:
    """-1/0/1 comparing actual to target by the richest common type; None when incomparable."""
    da, dt = iso_value(actual), iso_value(target)
    if da is not None and dt is not None:
        return (da > dt) - (da < dt)
    na, nt = _as_number(actual), _as_number(target)
    if na is not None and nt is not None:
        return (na > nt) - (na < nt)
    if da is not None or dt is not None or (na is not None) != (nt is not None):
        # a date or number against a plain word: equal only as identical text
        sa, st = _fold(actual), _fold(target)
        return 0 if sa == st else None
    sa, st = _fold(actual), _fold(target)
    return (sa > st) - (sa < st)
