"""Metadata blocks at the top of a text file (front matter), parsed in every common form, failing closed.

Forms read (after an optional BOM or other invisible characters, and blank lines):

- YAML between ``---`` and ``---`` (or ``...``): Jekyll, Hugo, Docusaurus, MkDocs, Obsidian, Pandoc;
- TOML between ``+++`` and ``+++`` (Hugo, Zola), read with ``tomllib``;
- JSON, an object whose ``{`` stands alone on the first line (Hugo);
- a Pandoc title block (``% title`` / ``% author`` / ``% date`` lines);
- MultiMarkdown metadata: a first paragraph made only of ``Key: value`` lines, one of whose keys is a
  metadata key openbook knows (``title``, ``author``, ``date``, ``tags``, ``acl``, ...).

Access metadata fails closed: a block that looks like metadata (its first line is ``key: value`` /
``key = value``, or any line names an access key) but cannot be parsed, is never closed, or is not a
mapping raises ``IngestError`` with the reason and how to fix it, instead of publishing the file with its
metadata indexed as prose. A ``---`` line followed by prose is a Markdown thematic break, not metadata.

Reserved keys (``title``, ``author``, ``tags``, ``acl``, the date keys ...) are matched case-insensitively,
with ``-`` and spaces read as ``_`` (``ACL``, ``Tags``, ``Last-Updated``); two spellings of one reserved key in
one block (``acl`` and ``ACL``) are refused. ``acls`` and ``allowed_roles`` are read as ``acl``.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import yaml

from ..errors import IngestError
from ._common import ACCESS_KEYS, RESERVED_KEYS, key_text

__all__ = ["canonical_key", "split_front_matter"]

_FENCES = {"---": ("YAML", ("---", "...")), "+++": ("TOML", ("+++",))}
_YAML_KEY_LINE = re.compile(r"^\s*(?:-\s+)?[\"']?[^\s:#\"'][^:#]{0,80}?[\"']?\s*:(?:\s|$)")
_TOML_KEY_LINE = re.compile(r"^\s*(?:\[[^\]]+\]|[\"']?[\w.-]+[\"']?\s*=)")
_MMD_LINE = re.compile(r"^([A-Za-z][\w -]{0,40}?)\s*:\s*(.*)$")
_MAX_BLOCK_LINES = 400
_INVISIBLE_RE = re.compile("[\ufeff\u200b-\u200f\u2060\u00ad]+")


def canonical_key(key: object) -> str:
    """``ACL`` -> ``acl``, ``Last-Updated`` -> ``last_updated`` when the key is reserved (matched on ``key_text``:
    ``ａｃｌ`` and ``ac<soft hyphen>l`` are ``acl`` too); others unchanged."""
    text = str(key)
    folded = re.sub(r"[\s-]+", "_", key_text(text).strip().casefold())
    if folded in ACCESS_KEYS:
        return "acl"
    return folded if folded in RESERVED_KEYS else text


def _canonical_mapping(data: dict[Any, Any], form: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in data.items():
        name = canonical_key(key)
        if name in out:
            raise IngestError(
                f"{form} front matter sets {name!r} twice ({spelled[name]!r} and {str(key)!r}); keep one"
            )
        out[name] = value
        spelled[name] = str(key)
    return out


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (PyYAML silently keeps the last one) and aliases (``*name``): nine
    nested lists of nine aliases ("billion laughs") load as shared references, then expand to 9^8 values when the
    metadata is copied and stored, which held an ingest (and a server's upload) for minutes."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.events.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, f"alias *{event.anchor} (YAML aliases are not read in "
                                                          f"front matter; write the value out)", event.start_mark)
        return super().compose_node(parent, index)


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:  # an unhashable key: let SafeLoader report it
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


_TOO_DEEP = "{form} front matter nested too deeply to parse (lists or mappings hundreds of levels deep); flatten it"


def _parse_yaml(block: str) -> Any:
    try:
        return yaml.load(block, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise IngestError(f"bad YAML front matter ({_first_line(exc)}); fix the block between the '---' lines") from exc
    except RecursionError:  # PyYAML's composer recurses per level
        raise IngestError(_TOO_DEEP.format(form="YAML")) from None


def _parse_toml(block: str) -> Any:
    try:
        return tomllib.loads(block)
    except tomllib.TOMLDecodeError as exc:
        raise IngestError(f"bad TOML front matter ({_first_line(exc)}); fix the block between the '+++' lines") from exc
    except RecursionError:
        raise IngestError(_TOO_DEEP.format(form="TOML")) from None


def _names_access_key(lines: list[str]) -> bool:
    for line in lines:
        line = re.sub(r"^\s*(?:-\s+)?", "", line)
        m = re.match(r"^[\"']?([A-Za-z][\w -]*?)[\"']?\s*[:=]", line) or re.match(r"^([A-Za-z][\w-]*)\b", line)
        if m and re.sub(r"[\s-]+", "_", m[1].strip().casefold()) in ACCESS_KEYS:
            return True
    return False


def _looks_like_metadata(lines: list[str], form: str) -> bool:
    """Whether a fenced block is meant as metadata: a ``key: value`` first line, or an access key anywhere."""
    first = next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), "")
    pattern = _TOML_KEY_LINE if form == "TOML" else _YAML_KEY_LINE
    return bool(pattern.match(first)) or _names_access_key(lines)


def _fenced(lines: list[str], start: int) -> tuple[dict[str, Any], int] | None:
    """Parse a ``---``/``+++`` block opening at ``lines[start]``: (mapping, index of the first body line)."""
    fence = lines[start].strip()
    form, closers = _FENCES[fence]
    end = next((i for i in range(start + 1, len(lines)) if lines[i].rstrip() in closers), None)
    block_lines = lines[start + 1: end if end is not None else min(len(lines), start + 1 + _MAX_BLOCK_LINES)]
    if end is None:
        # no closing fence: metadata if it looks like metadata up to the first blank line, else a thematic break
        head: list[str] = []
        for line in block_lines:
            if not line.strip():
                break
            head.append(line)
        if _looks_like_metadata(head, form) or (form == "TOML" and head):
            raise IngestError(
                f"{form} front matter opened with {fence!r} on line {start + 1} is never closed; "
                f"add a {fence!r} line after the last key"
            )
        return None
    if not "".join(block_lines).strip():
        return {}, end + 1
    meant = _looks_like_metadata(block_lines, form)
    if not meant and form == "YAML":
        return None  # e.g. a thematic break followed by a setext heading
    block = "\n".join(block_lines)
    data = _parse_toml(block) if form == "TOML" else _parse_yaml(block)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise IngestError(
            f"{form} front matter is not a 'key: value' mapping; fix the block between the {fence!r} lines"
        )
    return _canonical_mapping(data, form), end + 1


def _json_block(text: str, offset: int) -> tuple[dict[str, Any], int]:
    try:
        data, end = json.JSONDecoder().raw_decode(text, offset)
    except json.JSONDecodeError as exc:
        raise IngestError(f"bad JSON front matter ({_first_line(exc)}); fix the object at the top of the file") from exc
    except RecursionError:
        raise IngestError(_TOO_DEEP.format(form="JSON")) from None
    if not isinstance(data, dict):
        raise IngestError("JSON front matter is not an object; fix the block at the top of the file")
    return _canonical_mapping(data, "JSON"), end


def _pandoc_title_block(lines: list[str], start: int) -> tuple[dict[str, Any], int]:
    fields: list[str] = []
    i = start
    while i < len(lines) and lines[i].startswith("%") and len(fields) < 3:
        value = lines[i][1:].strip()
        i += 1
        while i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():  # continuation lines
            value += " " + lines[i].strip()
            i += 1
        fields.append(value)
    data: dict[str, Any] = {}
    for key, value in zip(("title", "author", "date"), fields):
        if value:
            data[key] = [a.strip() for a in value.split(";") if a.strip()] if key == "author" else value
    return data, i


def _multimarkdown(lines: list[str], start: int) -> tuple[dict[str, Any], int] | None:
    data: dict[str, Any] = {}
    keys: list[str] = []
    i = start
    while i < len(lines) and lines[i].strip():
        line = lines[i]
        m = _MMD_LINE.match(line)
        if m and not line.startswith((" ", "\t")):
            keys.append(m[1])
            name = canonical_key(m[1])
            if name in data:
                raise IngestError(f"metadata block sets {name!r} twice; keep one")
            data[name] = m[2].strip()
        elif keys and line.startswith((" ", "\t")):
            data[canonical_key(keys[-1])] += " " + line.strip()
        else:
            return None
        i += 1
    if not keys or not any(canonical_key(k) in RESERVED_KEYS for k in keys):
        return None
    for key in ("tags", "acl"):
        if isinstance(data.get(key), str):
            data[key] = [part.strip() for part in re.split(r"[,;]", data[key]) if part.strip()]
    return data, i


def split_front_matter(source: str, *, plain_metadata: bool = True) -> tuple[dict[str, Any], str]:
    """Split ``source`` into (metadata mapping, body); no metadata block gives ``({}, source)``.

    Args:
        source: the decoded file.
        plain_metadata: also read the forms without a ``---``/``+++`` fence (JSON object, Pandoc ``%`` title
            block, MultiMarkdown ``Key: value``); the Markdown loader does, others read fenced blocks only.

    Returns:
        The block's mapping, reserved keys in canonical spelling (values as parsed: lists, dates, numbers),
        and the text after the block.

    Raises:
        IngestError: a block meant as metadata is malformed, not closed, not a mapping, or sets a reserved
            key twice (see the module docstring).
    """
    text = source[1:] if source.startswith("\ufeff") else source
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines):
        return {}, source
    lines[start] = _INVISIBLE_RE.sub("", lines[start])  # a BOM or a zero-width space pasted before the fence
    first = lines[start].strip()
    if first in _FENCES:
        found = _fenced([line.rstrip("\r") for line in lines], start)
        if found is None:
            return {}, source
        data, body_start = found
        return data, "\n".join(lines[body_start:])
    if not plain_metadata:
        return {}, source
    if first == "{":
        offset = sum(len(line) + 1 for line in lines[:start])
        data, end = _json_block("\n".join(lines), offset)
        return data, "\n".join(lines)[end:].lstrip(" \t\r").removeprefix("\n")
    if first.startswith("%") and start == 0:
        data, body_start = _pandoc_title_block(lines, start)
        return data, "\n".join(lines[body_start:])
    found = _multimarkdown([line.rstrip("\r") for line in lines], start)
    if found is not None:
        data, body_start = found
        return data, "\n".join(lines[body_start:])
    return {}, source
