"""Helpers every loader shares: date parsing, metadata normalisation, titles from file names, text tidying."""

from __future__ import annotations

import codecs
import datetime as _dt
import logging
import re
import unicodedata
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import regex

from ..dates import iso_date  # noqa: F401 - re-exported: the loaders import it from here
from ..errors import IngestError
from ..fences import fence_for

logger = logging.getLogger("openbook.ingest")

# Keys that hold the "last changed" and "first published" dates, in order of preference.
_UPDATED_KEYS = ("updated", "last_updated", "last_modified", "lastmod", "modified", "date_modified")
_CREATED_KEYS = ("created", "date_created", "published")
# Keys openbook gives a meaning to; front matter matches them case-insensitively (see ``frontmatter``).
RESERVED_KEYS = frozenset(
    {"title", "author", "authors", "tags", "keywords", "acl", "date", "lang", "description", "summary",
     *_UPDATED_KEYS, *_CREATED_KEYS}
)
# Spellings of the access list; every one is read as ``acl``. "roles" and "access_roles" are what a user writes
# who has not read that the key is ``acl``: read as an unknown key they published the file to everyone (fail open);
# read as the access list, a file that uses "roles" for something else is at worst hidden (fail closed).
ACCESS_KEYS = frozenset({"acl", "acls", "allowed_roles", "roles", "access_roles"})

def fence_code(lines: list[str], info: str = "") -> list[str]:
    """Code lines as a Markdown fenced block: ```` ```info ````, the lines, ```` ``` ````; ``~~~~`` (or a longer
    tilde fence) instead when a line of the code itself starts like a fence (``fences.fence_for``). The Markdown
    loader (indented code) and the HTML loader (``<pre>``) both write code this way, so the chunker and the
    answerer see one kind."""
    fence = fence_for(lines)
    return [fence + info, *lines, fence]


_ID_PREFIX = re.compile(r"^(?:\d{4}-\d{2}-\d{2}[-_ ]+|(?:[A-Za-z]{1,5}[-_])?\d{2,}[-_ ]+(?=\D))")
_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n)+")  # (not the indent of the line after: code keeps it)


def xml_error_reason(exc: BaseException) -> str:
    """One line for an XML parser's error (lxml): libxml2's resource limits in words, its message otherwise."""
    message = " ".join(str(exc).split())
    if "Excessive depth" in message:
        return "XML nested more than 256 levels deep (the XML parser's limit)"
    if "amplification" in message or "entity reference loop" in message.lower():
        return ("refused as an entity-expansion bomb ('billion laughs'): its XML entities expand past the XML "
                "parser's limit")
    return message[:150]


MAX_METADATA_DEPTH = 32
"""Levels of nested mappings and lists a metadata value may hold; deeper is refused (``normalise_metadata``):
no front matter or corpus record people write comes near, and each level costs a stack frame in every stage
that walks the value (the store's JSON, filters)."""


def _jsonable(value: Any, depth: int = 1) -> Any:
    """Dates become ISO strings, recursively; everything else YAML can produce is left as is. IngestError
    past ``MAX_METADATA_DEPTH`` levels."""
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (Mapping, list, tuple, set)) and depth > MAX_METADATA_DEPTH:
        raise IngestError(f"metadata nested more than {MAX_METADATA_DEPTH} levels deep; flatten it")
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v, depth + 1) for v in value]
    return value


def _string_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    text = str(value).strip()
    return [text] if text else []


def access_list(value: Any) -> list[str]:
    """An ``acl`` value as a list of role names; fails closed on anything that is not clearly a role list.

    Accepts a role name, a comma-separated string of role names, or a list of role names (strings or
    numbers). Raises ``IngestError`` for an empty value (``acl:``, ``[]``, ``""``: the file would become
    public), a mapping, a boolean, a nested list or an empty role name.
    """
    fix = "write the role names, e.g. acl: [hr, finance], or remove the key to make the file public"
    if value is None or isinstance(value, bool) or isinstance(value, (Mapping, bytes, bytearray)):
        shown = "empty" if value is None else type(value).__name__
        raise IngestError(f"malformed acl ({shown}); {fix}")
    items = value if isinstance(value, (list, tuple, set)) else str(value).split(",")
    roles: list[str] = []
    for item in items:
        if item is None or isinstance(item, (bool, Mapping, list, tuple, set, bytes, bytearray)):
            raise IngestError(f"malformed acl entry {item!r}; {fix}")
        role = str(item).strip()
        if not role:
            raise IngestError(f"malformed acl (an empty role name); {fix}")
        roles.append(role)
    if not roles:
        raise IngestError(f"malformed acl (no roles); {fix}")
    return roles


def _author(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("name") or next(iter(value.values()), "")).strip()
    if isinstance(value, (list, tuple)):
        return ", ".join(_author(v) for v in value if v)
    return str(value).strip()


def normalise_metadata(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Normalise loader metadata to the shape ``Document.metadata`` promises.

    ``updated``/``created`` become ISO ``YYYY-MM-DD`` (taken from the first of their usual aliases present,
    ``updated`` falling back to ``date``); an unparseable value is kept under ``updated_raw``/``created_raw``.
    ``tags`` becomes a list of strings and ``acl`` a list of role names (``access_list``: a malformed or empty
    ``acl`` raises ``IngestError``, never reads as public), ``author`` a string; every other key is kept, with dates
    turned into ISO strings so that the result is JSON-serialisable. Keys whose value is None are dropped. A
    value nested more than ``MAX_METADATA_DEPTH`` levels deep raises ``IngestError``.
    """
    meta: dict[str, Any] = {str(k): _jsonable(v) for k, v in raw.items() if v is not None or k == "acl"}
    for target, aliases in (("updated", _UPDATED_KEYS + ("date",)), ("created", _CREATED_KEYS)):
        source = next((k for k in aliases if raw.get(k) not in (None, "")), None)
        if source is None:
            continue
        parsed = iso_date(raw[source])
        if parsed is not None:
            meta[target] = parsed
        elif source == target:
            del meta[target]
            meta[f"{target}_raw"] = str(raw[source])
    if "acl" in meta:
        meta["acl"] = access_list(meta["acl"])
    if "tags" in meta:
        meta["tags"] = _string_list(meta["tags"])
    if "author" in meta:
        meta["author"] = _author(meta["author"])
    return meta


def pipe_table(rows: list[list[str]]) -> list[str]:
    """Pipe-table lines from rows of escaped cell texts (the first row is the header; short rows padded)."""
    width = max((len(r) for r in rows), default=0)
    lines = []
    for i, row in enumerate(rows):
        lines.append("| " + " | ".join(row + [""] * (width - len(row))) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return lines


_FIRST_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def heading_title(text: str, path: Path) -> str:
    """The first ``# Heading`` of a loader's cleaned text, else ``title_from_path(path)``."""
    m = _FIRST_HEADING.search(text)
    return m[1].strip() if m else title_from_path(path)


def title_from_path(path: Path) -> str:
    """A readable title from a file name: ``doc-031-shift-rota.csv`` -> ``shift rota``.

    A leading sort or id prefix (``01-``, ``doc-027-``, ``2024-06-23-``) is dropped when something remains;
    ``-`` and ``_`` become spaces.
    """
    stem = Path(path.stem).stem if path.suffix.lower() == ".gz" else path.stem
    trimmed = _ID_PREFIX.sub("", stem)
    words = re.sub(r"[-_\s]+", " ", trimmed or stem).strip()
    return words or stem


_INVISIBLE_RE = regex.compile(r"[\p{Cf}\p{Default_Ignorable_Code_Point}]+")


def key_text(text: str) -> str:
    """``text`` as a reader sees it, for matching metadata key names: invisible characters (format characters
    such as a zero-width space or soft hyphen, other default-ignorable code points) removed, then NFKC (full-width
    ``ＡＣＬ：`` -> ``ACL:``). Access keys are matched on this form, so an ``acl`` that a reader sees as ``acl``
    is never read as some other key (which would publish the file)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", _INVISIBLE_RE.sub("", text))


def path_text(text: str) -> str:
    """``text`` (a path or file name) with the bytes of a name that is not UTF-8 (which Python keeps as lone
    surrogates, PEP 383) written as ``\\xNN``: ``name_\\xe9.txt``. Stable across runs, and storable (a lone
    surrogate cannot be encoded, so it fails hashing and storing)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text


# terminal control in a document: ESC sequences whole (CSI, OSC up to BEL or ST, DCS/SOS/PM/APC strings, two-character
# escapes), a lone ESC, C0 controls but tab, line feed, carriage return and form feed, and DEL; a character overstruck
# with backspace (nroff's bold and underline) keeps the character written last
_TERMINAL_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -~]?"
    r"|[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")
_OVERSTRIKE = re.compile(r"[^\x08\n]\x08")
# C1 controls (U+0080 to U+009F; U+009B is a one-character CSI) are Windows-1252 punctuation decoded as Latin-1 (a PDF's
# "\x93quoted\x94"): read as cp1252, as ftfy's fix_c1_controls does; the five bytes cp1252 leaves undefined go
_C1 = re.compile(r"[\x80-\x9f]")


def _c1_as_cp1252(m: re.Match[str]) -> str:
    return bytes([ord(m[0])]).decode("cp1252", errors="ignore")


def printable(text: str) -> str:
    """``text`` without terminal control (``_TERMINAL_CONTROL``; C1 controls read as cp1252, ``_C1``): a document's
    text is printed by the CLI, and a sequence in it would clear the screen, recolour or rewrite an answer, or set
    the window title or clipboard (OSC 52) on the reader's terminal. Tabs, line ends and form feeds stay."""
    if _TERMINAL_CONTROL.search(text):
        text = _TERMINAL_CONTROL.sub("", _OVERSTRIKE.sub("", text))
    return _C1.sub(_c1_as_cp1252, text) if _C1.search(text) else text


SENTENCE_END = tuple(".!?:;。！？：；")  # a page (or a line) ending in one of these ends its sentence there
_BLOCK_OPENING = re.compile(r"^[ \t]*(?:#{1,6}(?:[ \t]|$)|\||[-*+•][ \t]|\d{1,9}[.)][ \t]|```|~~~)")
NO_SENTENCE_START = frozenset(",;)]}，、；）」』】》")  # marks that go on a sentence, never start one
_LIST_LINE = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,9}[.)])[ \t]")


def runs_on(before: str, after: str) -> bool:
    """Whether the sentence that ends ``before`` (a page's text) goes on at the start of ``after`` (the next
    page's text), so that the page break between them is no sentence or paragraph break.

    True when ``before`` ends in prose without closing punctuation (``SENTENCE_END``; its last line is no
    heading, table row or code fence) and ``after`` opens with prose (no heading, table row, list item or fence)
    starting with a lower-case letter or with a mark no sentence starts with (a comma, a closing bracket, CJK
    ``，、``). A capital, a digit or a CJK character after the break is read as a new paragraph: on
    ``shared/samples/pdf`` those joins were mostly wrong (a title page's two lines, a figure caption before "In
    summary", a page number the furniture filter kept, a Chinese report's date before its heading), also when
    only pages whose last line runs to the margin were joined (7 right, in one file, 11 wrong)."""
    before, after = before.rstrip(), after.lstrip()
    if not before or not after:
        return False
    last = before.rsplit("\n", 1)[-1]
    first = after.split("\n", 1)[0]
    if before.endswith(SENTENCE_END) or _BLOCK_OPENING.match(first) or \
            _BLOCK_OPENING.match(last) and not _LIST_LINE.match(last):
        return False
    return after[0].islower() or after[0] in NO_SENTENCE_START


def _join_form_feeds(text: str) -> str:
    """``text`` with each form feed (a page break) replaced by a line break where the sentence runs on to the
    next page (``runs_on``), else by a paragraph break: a page break never cuts a sentence."""
    pages = text.split("\f")
    out = pages[0]
    for page in pages[1:]:
        if not page.strip():
            continue
        if not out.strip():
            out += page
            continue
        out = out.rstrip(" \t\n") + ("\n" if runs_on(out, page) else "\n\n") + page.lstrip(" \t\n")
    return out


def tidy(text: str) -> str:
    """Strip trailing spaces per line, collapse runs of blank lines to one (the next line keeps its indent: an
    indented code line), strip the ends. A form feed (a page break) becomes a paragraph break, or a line break
    where the sentence runs on to the next page (``runs_on``)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _join_form_feeds(text) if "\f" in text else text
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUN.sub("\n\n", text).strip()


_MAX_DECOMPRESSED = 256 * 1024 * 1024  # bytes: a larger .gz member is refused (a decompression bomb)
_SNIFF = 8192  # bytes read to tell text from binary content
_MAGIC = (
    (b"\x7fELF", "an ELF executable"), (b"MZ", "a Windows executable"), (b"PK\x03\x04", "a zip archive"),
    (b"\x1f\x8b", "gzip data"), (b"%PDF", "a PDF"), (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"), (b"SQLite format 3\x00", "an SQLite database"), (b"\xca\xfe\xba\xbe", "a Mach-O or Java class file"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"), (b"7z\xbc\xaf", "a 7-zip archive"), (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ\x00", "xz data"), (b"\x00asm", "WebAssembly"), (b"OggS", "Ogg media"), (b"RIFF", "RIFF media"),
)
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_CONTROL = frozenset(range(32)) - {9, 10, 12, 13, 27, 8} | {127}
_NUL_RUN_RE = re.compile(rb"\x00+")
_MAX_NUL_RUNS = 2


def binary_kind(data: bytes) -> str | None:
    """What binary content ``data`` (the start of a file) holds, or None when it reads as text.

    Binary: a known file signature (ELF, zip, PNG, ...), NUL bytes, or more than 10% control characters
    (random bytes have about 12%), unless the data starts with a UTF-16/32 byte-order mark or reads as UTF-16
    without one (``utf16_without_bom``). NUL bytes in at most ``_MAX_NUL_RUNS`` runs, around at least 64 other
    bytes (half the data, for a shorter one) that pass the control test, are text: a log a crash or power loss
    left a run of NULs in, a note with a stray NUL (``decode_text`` leaves them out and says so). On the heads of
    1,109 binary files here (shared libraries, executables, .pyc, .mo, fonts, PNG, gzip), their signatures taken
    off, that rule let none through.
    """
    head = data[:_SNIFF]
    if any(head.startswith(bom) for bom, _ in _BOMS) or utf16_without_bom(head):
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic) and (magic != b"MZ" or b"\x00" in head[:64]):
            return kind
    if b"\x00" in head:
        text = _NUL_RUN_RE.sub(b"", head)
        if len(_NUL_RUN_RE.findall(head)) > _MAX_NUL_RUNS or len(text) < min(64, len(head) / 2) or _controls(text):
            return "NUL bytes"
        return None
    return "control characters" if _controls(head) else None


def _controls(data: bytes) -> bool:
    return bool(data) and sum(b in _CONTROL for b in data) > 0.1 * len(data)


def read_bytes(path: Path) -> bytes:
    """The file's bytes; a ``.gz`` file is decompressed (``IngestError`` when corrupt or too large)."""
    if path.suffix.lower() != ".gz":
        return path.read_bytes()
    import gzip
    import zlib

    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read(_MAX_DECOMPRESSED + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise IngestError(f"corrupt gzip file ({' '.join(str(exc).split())}); check the file") from exc
    if len(data) > _MAX_DECOMPRESSED:
        raise IngestError(f"decompresses to more than {_MAX_DECOMPRESSED // 2**20} MiB; decompress it first")
    return data


def read_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of the file's content (of the decompressed content for ``.gz``, without
    decompressing the rest); ``IngestError`` for a corrupt ``.gz``."""
    if path.suffix.lower() != ".gz":
        with open(path, "rb") as fh:
            return fh.read(size)
    import gzip
    import zlib

    try:
        with gzip.open(path, "rb") as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error) as exc:
        raise IngestError(f"corrupt gzip file ({' '.join(str(exc).split())}); check the file") from exc


class DecodedText(NamedTuple):
    """A text file's content and the warnings its decoding raised (``decode_text``)."""

    text: str
    warnings: tuple[str, ...] = ()


def read_text(path: Path, declared: bool = False) -> str:
    """``decode_text(path, declared).text``: the file's text, its decoding warnings dropped."""
    return decode_text(path, declared).text


def decode_text(path: Path, declared: bool = False) -> DecodedText:
    """Decode a text file (``.gz`` decompressed), with universal line ends (``\\r\\n`` and a lone ``\\r``, the
    classic Mac line end, become ``\\n``, as Python's text mode reads them: front matter and header lines are
    found by line). The first of these encodings that decodes the bytes strictly wins:

    1. a UTF-16/32 byte-order mark's encoding, or UTF-16 without a mark (every other byte NUL: ASCII-range
       text that Windows tools saved as "Unicode");
    2. UTF-8 (a BOM stripped); a UTF-8 file with a few stray bytes of another encoding (a pasted Windows ``’``)
       stays UTF-8, the stray bytes read as cp1252;
    3. with ``declared`` (HTML, XML), the charset that a ``<meta charset>`` / ``<?xml encoding?>`` in the first
       bytes names, when it is a non-Latin one (``shift_jis``, ``gb2312``, ``windows-1251``, ...): a declared
       Latin-1 or windows-1252 says nothing the last step does not do, and is often wrong;
    4. the legacy encoding ``chardet`` (7.x) guesses, when it reads the text as a non-Latin script
       (GB18030, Big5, Shift-JIS, EUC-JP, EUC-KR, windows-1251, KOI8-R, cp866, windows-1253, ...) with a
       confidence of at least ``_MIN_CONFIDENCE``; chardet 7 tells these apart on a one-line file, where
       ``charset_normalizer`` reads a two-line KOI8-R note as Shift-JIS half-width katakana;
    5. cp1252 (Western text; the detector is unreliable between the Latin code pages), else latin-1 (never
       fails).

    A guess the file's bytes cannot settle is reported, never silent: a step-4 guess below ``_SURE_CONFIDENCE``,
    or step 5 unless the detector guessed a Western encoding at ``_SURE_CONFIDENCE`` or more, adds a line to
    ``DecodedText.warnings`` naming the encoding read, the detector's guess and its confidence (0-1, chardet's
    own score). Loaders copy it to ``Document.warnings``; the ingest report lists it.

    Raises:
        IngestError: the file starts with a UTF-16/32 BOM but is not valid text in that encoding.
    """
    text, warning = _decode(read_bytes(path), declared)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    notes = (warning,) if warning else ()
    if "\x00" in text:
        count = text.count("\x00")
        notes = (*notes, f"{count} NUL {'byte' if count == 1 else 'bytes'} left out (a log cut by a crash or a power "
                         f"loss?)")
        text = text.replace("\x00", "")
    return DecodedText(text, notes)


def _decode(data: bytes, declared: bool) -> tuple[str, str | None]:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), None
            except UnicodeDecodeError as exc:
                raise IngestError(f"not valid {encoding.upper()} text ({exc.reason}); re-save the file as UTF-8") from exc
    candidates = (  # tried in order, each worked out only when those before it failed
        lambda: utf16_without_bom(data),
        lambda: "utf-8-sig",
        lambda: _declared_charset(data) if declared else None,
    )
    for candidate in candidates:
        encoding = candidate()
        if encoding:
            try:
                return data.decode(encoding), None
            except (UnicodeDecodeError, LookupError):
                if encoding == "utf-8-sig":
                    mixed = _mostly_utf8(data)
                    if mixed is not None:
                        return mixed, None
                continue
    guess, confidence = _detected(data, markup=declared)
    if guess:
        try:
            text = data.decode(guess)
        except (UnicodeDecodeError, LookupError):
            text = None
        if text is not None and not _is_latin(text) and confidence >= _MIN_CONFIDENCE:
            return text, None if confidence >= _SURE_CONFIDENCE else _guess_warning(guess, guess, confidence)
    try:
        text, used = data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        text, used = data.decode("latin-1"), "latin-1"
    if guess in _WESTERN and confidence >= _SURE_CONFIDENCE:
        return text, None
    return text, _guess_warning(used, guess, confidence)


def _guess_warning(used: str, guess: str | None, confidence: float) -> str:
    said = f"chardet's guess {guess}, confidence {confidence:.2f}" if guess else "chardet had no guess"
    return (f"encoding not declared, guessed: read as {used} ({said}); if its text reads wrong, re-save the file "
            f"as UTF-8")


def _stray_as_cp1252(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the undecodable bytes read as cp1252."""
    assert isinstance(exc, UnicodeDecodeError)
    return exc.object[exc.start:exc.end].decode("cp1252", errors="replace"), exc.end


codecs.register_error("openbook-stray-cp1252", _stray_as_cp1252)


def _mostly_utf8(data: bytes) -> str | None:
    """``data`` as UTF-8 with its few invalid bytes read as cp1252 (a UTF-8 file with a pasted Windows ``’`` or
    ``é``), when its valid non-ASCII UTF-8 characters outnumber the invalid stretches three to one; else None (a
    legacy-encoded file: its bytes rarely form valid UTF-8 sequences; on CMRC passages saved as GBK, Big5,
    Shift-JIS, EUC-JP or EUC-KR no 60-character piece of 7,600 reaches two to one)."""
    replaced = data.decode("utf-8-sig", errors="replace")
    invalid = replaced.count("\ufffd") - data.count(b"\xef\xbf\xbd")  # U+FFFD written in the file is valid
    valid = sum(1 for c in replaced if ord(c) > 0x7F) - invalid
    return data.decode("utf-8-sig", errors="openbook-stray-cp1252") if valid >= 3 * invalid else None


def utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"`` / ``"utf-16-be"`` when ``data`` reads as UTF-16 text without a byte-order mark, else None:
    a NUL in every other byte of at least 90% of the leading characters, and none in the other byte (ASCII-range
    text); or, for an alphabetic script (Cyrillic, Greek, Hebrew, Arabic, Thai, ...: the high bytes are not NUL),
    a NUL somewhere, at most 4 distinct high bytes (NUL for ASCII spaces and digits, the script's block, 0x20 for
    punctuation such as ``–``) and ``_reads_as_utf16`` in that byte order. CJK text without a mark (its high bytes
    vary as much as a binary string table's) stays unrecognised: Windows tools write the mark."""
    head = data[:_SNIFF - _SNIFF % 2]
    if len(head) < 4 or len(data) % 2:
        return None
    even, odd = head[0::2], head[1::2]
    for encoding, nul_half, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if (nul_half.count(0) >= 0.9 * len(nul_half) and other.count(0) == 0
                and sum(b in _CONTROL for b in other) <= 0.1 * len(other)):
            return encoding
    if b"\x00" in head:
        for encoding, high in (("utf-16-le", odd), ("utf-16-be", even)):
            if len(set(high)) <= 4 and _reads_as_utf16(head, encoding):
                return encoding
    return None


def _reads_as_utf16(head: bytes, encoding: str) -> bool:
    """Whether ``head`` (an even number of bytes) decodes in ``encoding`` to text: every character assigned, none
    a control (tab and line ends aside), private-use or lone surrogate, and at least half of the non-space ones
    letters. Binary data fails: its aligned ``00 00`` pairs decode to U+0000, a control (``chardet`` 7 reads
    pieces of shared libraries as UTF-16, so it is not asked)."""
    try:
        text = head.decode(encoding)
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 2:  # only a surrogate pair cut at the end of the head is allowed
            return False
        text = head[:exc.start].decode(encoding)
    letters = other = 0
    for char in text:
        category = unicodedata.category(char)
        if category in ("Cn", "Co", "Cs") or (category == "Cc" and char not in "\t\n\r\f"):
            return False
        if category[0] == "L":
            letters += 1
        elif not char.isspace():
            other += 1
    return letters > 0 and letters >= other


# WHATWG "prescan": a charset named in a <meta> tag or an XML declaration near the start of the page
_DECLARED_RE = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)|<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""",
    re.IGNORECASE)
# Declared names whose Python codec is a subset of what pages so labelled actually use (as WHATWG maps them)
_CHARSET_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "shift_jis": "cp932",
                      "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932", "euc-kr": "cp949", "big5": "big5hkscs"}
_DETECT_BYTES = 64 * 1024  # the detector reads the start of a file only
# chardet confidences (0-1) on one- and two-line notes (tests/ingest/test_ingest_encodings.py's kinds, other
# sentences): right non-Latin guesses 0.11-0.98 (two-word KOI8-R, cp1251 and EUC-KR lines 0.11-0.14), wrong ones
# on Western cp1252 lines 0.045-0.05 (Greek, Urdu): a guess below 0.08 is not followed. Below 0.2 it is
# followed and reported (a one-line file: the guess may be wrong).
_MIN_CONFIDENCE = 0.08
_SURE_CONFIDENCE = 0.2
# Encodings chardet is not asked about: Mac OS Classic and EBCDIC pages, and the DOS pages but Russian cp866.
# On one-line notes they win on text they were never used for ("5 €" in cp1252 read as DOS Hebrew cp862 at
# 0.11, "Straße" as mac-turkish): on 89 hand-made short notes, 13 decoded wrong with them, 11 without.
_NOT_GUESSED = (
    "mac-cyrillic", "mac-greek", "mac-iceland", "mac-latin2", "mac-roman", "mac-turkish",
    "cp1140", "cp424", "cp500", "cp875", "cp1026", "cp273",
    "cp437", "cp737", "cp775", "cp850", "cp852", "cp855", "cp856", "cp857", "cp858", "cp860", "cp861", "cp862",
    "cp863", "cp864", "cp865", "cp869",
)
# guesses that reading as cp1252 agrees with (no warning when confident)
_WESTERN = frozenset({"cp1252", "iso8859-1", "latin-1", "iso8859-15"})


def _declared_charset(data: bytes) -> str | None:
    match = _DECLARED_RE.search(data[:4096])
    if not match:
        return None
    name = (match.group(1) or match.group(2)).decode("ascii").lower()
    name = _CHARSET_SUPERSETS.get(name, name)
    try:
        probe = bytes(range(0xA0, 0x100)).decode(name, errors="replace")
    except LookupError:
        return None
    return None if _is_latin(probe) else name


_TAG_RE = re.compile(rb"<[^<>]*>")


def _detected(data: bytes, markup: bool = False) -> tuple[str | None, float]:
    """``chardet``'s guess for ``data`` (a Python codec name, its decode-safe superset: cp949 for EUC-KR,
    cp932 for Shift-JIS) and its confidence (0-1), read from the first ``_DETECT_BYTES`` in whole lines; (None,
    0.0) for a UTF-32, UTF-8 or ASCII guess (``read_text`` tells those by their byte-order mark or UTF-8
    validity), or when nothing fits. A UTF-16 guess counts only where the bytes pass ``_reads_as_utf16``.
    With ``markup`` (HTML, XML) the tags are left out of what chardet reads: their ASCII drowned the text (a
    cp1251 page without a charset: the right guess at confidence 0.06, its text alone 0.24)."""
    import chardet

    sample = data[:_DETECT_BYTES]
    if len(data) > _DETECT_BYTES and b"\n" in sample:
        sample = sample[: sample.rindex(b"\n") + 1]  # whole lines: no multi-byte character cut in two
    if markup:
        sample = _TAG_RE.sub(b" ", sample)
    found = chardet.detect(sample, prefer_superset=True, compat_names=False,  # nothing fits: cp1252
                           exclude_encodings=_NOT_GUESSED)
    encoding = found.get("encoding") or ""
    even = sample[: len(sample) // 2 * 2]
    if encoding in ("utf-16-le", "utf-16-be") and not len(data) % 2 and _reads_as_utf16(even, encoding):
        return encoding, float(found.get("confidence") or 0.0)  # CJK UTF-16 without a mark (no NUL byte)
    if not encoding or encoding.startswith(("utf", "ascii")):
        return None, 0.0
    return encoding, float(found.get("confidence") or 0.0)


# letters of a script other than Latin (Common and Inherited letters such as ``ˆ`` or ``ª`` count for neither)
_NON_LATIN_RE = regex.compile(r"[\p{L}--\p{Latin}--\p{Common}--\p{Inherited}]", regex.V1)
_LATIN_RE = regex.compile(r"[\p{Latin}--\p{ASCII}]", regex.V1)


def _is_latin(text: str) -> bool:
    """Whether ``text`` holds no more letters of other scripts than non-ASCII Latin letters."""
    return len(_NON_LATIN_RE.findall(text)) <= len(_LATIN_RE.findall(text))
