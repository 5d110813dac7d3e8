"""PDF loader (pypdf, plus pdfplumber for layout): text by page with page offsets, furniture removed, re-flowed.

Steps:

1. Open with pypdf; an encrypted file is tried with the empty user password (many "protected" PDFs only
   restrict printing), otherwise ``IngestError("... needs a password ...")``.
2. ``extract_text()`` per page (all text orientations, so rotated pages work). pypdf's warnings and log
   records are kept out of the caller's output: its logger is raised to ERROR while a file is read and
   ``warnings`` it emits are logged at DEBUG on ``openbook.ingest``.
   Pages with ruled tables or two columns of prose are laid out with pdfplumber instead (``pdf_layout``):
   tables become pipe tables (first row the header), columns are read left first. A page with no text but an
   image, in a PDF with text elsewhere, adds a warning ("page 2 of 4 has no text layer ...") to
   ``Document.warnings``. Cost: pypdfium2 reads every page's text boxes and paths (fast); pdfplumber parses
   again only the pages whose paths could form a ruled table, so pages of ruled tables cost the most to
   read.
3. Repeated page furniture is removed: a line among the first or last ``_EDGE_LINES`` non-blank lines of a page
   whose digit-blind form (digits -> ``#``, case and spaces folded, so ``Page 3 of 9`` matches ``Page 4 of 9``)
   sits at the top or bottom of at least ``_FURNITURE_SHARE`` of the pages (table rows never count) (and at least 2; 40% so that running
   heads alternating between odd and even pages are caught) is dropped there. Nothing is lost to it: a line
   is not furniture when every page it recurs on reads the same, digits included (copies of one page, a form
   printed twice).
4. Words hyphenated across a line or page break are re-joined (``infor-`` + ``mation`` -> ``information``,
   only when the continuation starts with a lower-case letter), except real compounds (``self-`` +
   ``service`` -> ``self-service``; see ``keeps_hyphen``) and capitalised continuations (``Anti-Corruption``); the lines of a paragraph are joined with spaces
   (no space between CJK characters). A paragraph ends at a blank line, or after a line that ends a sentence and
   is clearly shorter than the page's longest lines, before a bullet / numbered item / ``Step N``, and after a
   short line of a list item when a capitalised line follows.
5. Headings become Markdown heading lines of their own (``## 1. Purpose``), as the DOCX and HTML loaders write
   them, so that the chunker gives each chunk its heading path (``Chunk.headings``). Where the fonts tell
   (``pdf_layout.heading_levels``: pdfium's character sizes and bold fonts),
   a short line larger than the body text, or bold in a document whose body is not, is a heading, levels by
   size; the line is matched to pypdf's text by its letters and digits. Where they do not (one font
   throughout), the line's shape decides: a short numbered line (``1. Purpose`` level 2, ``2.1 Scope`` level
   3) with no closing punctuation that is not one of a run of items, or a short capitalised line without
   closing punctuation after a finished sentence (level 2); such a line opening the document is its title
   (level 1). A heading wrapped over two lines is joined.
6. Pages are joined with a blank line, except a sentence that runs on to the next page (``_common.runs_on``: no
   closing punctuation in prose, the next page opening with lower-case prose or a comma), which is joined with a
   space (nothing between CJK characters). ``Document.pages[n - 1]`` is the offset where page ``n`` starts.

Dates: ``updated`` is /ModDate, else /CreationDate, from the /Info dictionary; a date printed in a running
header or footer is removed with the furniture (step 3) and is not read.

Hostile content: a page whose content stream decompresses past pypdf's limit (75 MB, a flate bomb) gets no
text, is read by neither pdfium nor pdfplumber (which would inflate it whole), and adds a warning; a PDF with
no other text fails. The caller bounds the time per page and the memory (``openbook.ingest.limits``): the
loader calls ``progress`` after each page of each pass.

Errors (``IngestError``, one line): ``empty file``, ``needs a password``, ``malformed PDF: <reason>``,
``no text layer (scanned?)``, ``refused as a possible decompression bomb``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator

from .._extras import install_command, require
from ..errors import IngestError
from ..types import Document
from ._common import SENTENCE_END as _SENTENCE_END
from ._common import NO_SENTENCE_START, iso_date, logger, normalise_metadata, runs_on, title_from_path
from .frontmatter import canonical_key
from .pdf_layout import _WIDE, analyse_pages, heading_key

PDF_MODULES = ("pypdf", "pdfplumber", "pdfminer", "wordfreq")
"""The import names of the ``pdf`` extra's packages, each required before a PDF is read."""

_EDGE_LINES = 3
_FURNITURE_SHARE = 0.4
_STREAM_LIMIT_MB = 75  # pypdf's Configuration: a stream inflating to more is refused (LimitReachedError)
_JOIN_TAIL = 4096  # characters of the text so far that joining the next page reads (its last line, at most)
_MIN_CHARS_PER_PAGE = 3  # fewer non-blank characters per page on average: no text layer (scanned)
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
_ITEM = re.compile(r"^(?:[-•▪●◦*–]\s|\(?\d{1,3}[.)]\s|\(?[a-z][.)]\s|\d{1,2}(?:\.\d{1,2})+\.?\s|Step\s+\d{1,3}\b)")
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2})+|\d{1,2}(?=[.)]))[.)]?\s+(\S.*)$")
_MD_HEADING = re.compile(r"^#{1,6} ")
_HEADING_WIDTH = 0.6  # a heading line is shorter than this share of the page's full line width
_HEADING_WORDS = 8
_HYPHEN_END = re.compile(r"(\w)-$")
_TABLE_ROW = re.compile(r"^\|.*\|$")
_LAST_WORD = re.compile(r"([^\W\d_]+)-$")
_FIRST_WORD = re.compile(r"^([^\W\d_]+)")
_COMMON = 3.0  # Zipf frequency (wordfreq) from which a fragment counts as a word of its own
_RARER = 1.5  # how much rarer (Zipf) the joined form must be than its parts for the hyphen to stay


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """Keep pypdf's log records and warnings out of the caller's output (warnings go to DEBUG)."""
    pypdf_logger = logging.getLogger("pypdf")
    previous = pypdf_logger.level
    pypdf_logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            logger.debug("pypdf: %s", w.message)
    finally:
        pypdf_logger.setLevel(previous)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _open(path: Path):  # -> pypdf.PdfReader
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, EmptyFileError, FileNotDecryptedError, PdfReadError

    if path.stat().st_size == 0:
        raise IngestError("empty file (0 bytes)")
    try:
        reader = PdfReader(str(path), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise IngestError("needs a password (encrypted PDF); decrypt it first, e.g. qpdf --decrypt")
        len(reader.pages)  # forces the page tree to be read
    except IngestError:
        raise
    except FileNotDecryptedError as exc:
        raise IngestError("needs a password (encrypted PDF); decrypt it first, e.g. qpdf --decrypt") from exc
    except DependencyError as exc:
        raise IngestError(f"cannot decrypt: {_one_line(exc)}; the pdf extra installs cryptography: "
                          f"{install_command('pdf')}") from exc
    except EmptyFileError as exc:
        raise IngestError("empty file") from exc
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, RecursionError, OSError) as exc:
        raise IngestError(f"malformed PDF: {_one_line(exc)}") from exc
    return reader


def _page_texts(reader, progress: Callable[[int], None] | None = None,
                ) -> tuple[list[str], frozenset[int]]:  # reader: pypdf.PdfReader
    """Each page's text (pypdf), and the pages (0-based) whose content decompresses past pypdf's limit (a
    possible decompression bomb: their text is "", and no other parser is to read them)."""
    from pypdf.errors import LimitReachedError

    texts: list[str] = []
    bombs: set[int] = set()
    for number, page in enumerate(reader.pages, 1):
        try:
            texts.append(page.extract_text() or "")
        except LimitReachedError as exc:
            logger.debug("pypdf refused page %d: %s", number, _one_line(exc))
            bombs.add(number - 1)
            texts.append("")
        except Exception as exc:  # noqa: BLE001 - pypdf raises many types on broken content streams
            logger.debug("pypdf could not read page %d: %s", number, _one_line(exc))
            texts.append("")
        if progress is not None:
            progress(number - 1)
    return texts, frozenset(bombs)


def _bomb_warning(bombs: frozenset[int], n: int) -> str:
    shown = ", ".join(str(i + 1) for i in sorted(bombs)[:10]) + (", ..." if len(bombs) > 10 else "")
    return (f"page{'s' if len(bombs) > 1 else ''} {shown} of {n} not read: {'their' if len(bombs) > 1 else 'its'} "
            f"content decompresses to more than pypdf's limit ({_STREAM_LIMIT_MB} MB; a possible "
            f"decompression bomb)")


def _furniture_key(line: str) -> str:
    if _TABLE_ROW.match(line.strip()):
        return "\0table"  # a table's header row repeated on every page is content, not furniture
    return re.sub(r"\d+", "#", " ".join(line.lower().split()))


def _edge(body: list[str]) -> int:
    """How many lines at each end of a page may be furniture: ``_EDGE_LINES``, fewer on very short pages."""
    return min(_EDGE_LINES, max(1, len(body) // 3))


def strip_headers_footers(pages: list[list[str]]) -> list[list[str]]:
    """Drop lines that recur at the top or bottom of most pages (see the module docstring, step 3)."""
    n = len(pages)
    if n < 2:
        return pages
    top: Counter[str] = Counter()
    bottom: Counter[str] = Counter()
    for lines in pages:
        body = [line for line in lines if line.strip()]
        k = _edge(body)
        top.update({_furniture_key(line) for line in body[:k]})
        bottom.update({_furniture_key(line) for line in body[len(body) - k:]})
    needed = max(2, math.ceil(_FURNITURE_SHARE * n))
    heads = {k for k, c in top.items() if c >= needed} - {"\0table"}
    foots = {k for k, c in bottom.items() if c >= needed} - {"\0table"}
    if not heads and not foots:
        return pages
    keys = [{_furniture_key(line) for line in lines if line.strip()} for lines in pages]
    bodies = [tuple(" ".join(line.split()) for line in lines if line.strip()) for lines in pages]
    for found in (heads, foots):  # recurring only on copies of one page (digits included): that page's own text
        for key in list(found):
            if len({body for body, mine in zip(bodies, keys) if key in mine}) == 1:
                found.discard(key)
    out = []
    for lines in pages:
        body = [line for line in lines if line.strip()]
        k = _edge(body)
        first = set(map(id, body[:k]))
        last = set(map(id, body[len(body) - k:]))
        kept = [
            line for line in body
            if not ((id(line) in first and _furniture_key(line) in heads)
                    or (id(line) in last and _furniture_key(line) in foots))
        ]
        out.append(kept)
    return out


def keeps_hyphen(head: str, tail: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``head-`` at a line end + ``tail`` on the next line is a real compound (``self-service``).

    The document's own spelling decides first: ``head-tail`` written elsewhere in it keeps the hyphen,
    ``headtail`` removes it. Otherwise word frequencies (wordfreq, English) decide: the hyphen stays when
    both parts are common words (Zipf >= ``_COMMON``) and the joined form is at least ``_RARER`` rarer than
    the rarer part ("self"/"service" vs "selfservice"); a syllable break ("infor"/"mation") is joined.
    """
    h, t = head.lower(), tail.lower()
    if f"{h}-{t}" in seen:
        return True
    if h + t in seen:
        return False
    from wordfreq import zipf_frequency  # the pdf extra, required by load_pdf
    parts = min(zipf_frequency(h, "en"), zipf_frequency(t, "en"))
    return len(h) > 1 and parts >= _COMMON and zipf_frequency(h + t, "en") <= parts - _RARER


def _vocabulary(text: str) -> frozenset[str]:
    """Lower-cased words and hyphenated compounds written inside lines (for ``keeps_hyphen``)."""
    return frozenset(w.lower() for w in re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*(?!-\n)", text) if w)


def _join(left: str, right: str, seen: frozenset[str] = frozenset()) -> str:
    """Join two pieces of one paragraph: de-hyphenate (compounds keep their hyphen), else a space."""
    if not left:
        return right
    if _HYPHEN_END.search(left) and right[:1].isalnum():
        head, tail = _LAST_WORD.search(left), _FIRST_WORD.match(right)
        if not right[:1].islower() or (head and tail and keeps_hyphen(head[1], tail[1], seen)):
            return left + right  # "self-" + "service", "Anti-" + "Corruption", "COVID-" + "19"
        return left[:-1] + right
    if _CJK.match(left[-1]) and _CJK.match(right[0]):
        return left + right
    return left + " " + right


def _numbered(line: str) -> tuple[tuple[int, ...], str] | None:
    """(number parts, rest) of a line that starts with a section or item number (``2.``, ``2.1``, ``3)``)."""
    m = _NUMBERED.match(line)
    return (tuple(int(p) for p in m[1].split(".")), m[2]) if m else None


def _continued(lines: list[str], i: int) -> bool:
    """Whether the next non-blank line after line ``i`` starts lower-case (line ``i`` is cut mid-sentence)."""
    return next((later for later in lines[i + 1:] if later), "")[:1].islower()


def _shape_heading(lines: list[str], i: int, full: int) -> int:
    """Heading level (2 for ``1.``/unnumbered, 3 for ``1.1`` ...) that line ``i``'s shape shows, 0 for none.

    A numbered heading is short (under ``_HEADING_WIDTH`` of the page's full line width, at most
    ``_HEADING_WORDS`` words after its number), starts upper-case after the number and has no closing
    punctuation; it is not one of a run of items (the nearest line before or after it is not the item
    numbered one less or one more at the same depth).
    """
    line = lines[i]
    if not line or len(line) >= _HEADING_WIDTH * full or not line[-1:].isalnum() or _continued(lines, i):
        return 0
    numbered = _numbered(line)
    if numbered is None:
        return 0
    number, rest = numbered
    if not rest[:1].isupper() or len(rest.split()) > _HEADING_WORDS:
        return 0
    before = next((n for line_ in reversed(lines[:i]) if line_ and (n := _numbered(line_))), None)
    after = next((n for line_ in lines[i + 1:] if line_ and (n := _numbered(line_))), None)
    prev = next((line_ for line_ in reversed(lines[:i]) if line_), "")
    nxt = next((line_ for line_ in lines[i + 1:] if line_), "")
    sibling = (*number[:-1], number[-1] + 1)
    if after is not None and _numbered(nxt) and after[0] == sibling:
        return 0  # "1. Lifejackets" directly followed by "2. Flares": a list
    if before is not None and _numbered(prev) and before[0] == (*number[:-1], number[-1] - 1):
        return 0  # the last item of a list
    return min(6, 1 + len(number))


def reflow(lines: list[str], seen: frozenset[str] = frozenset(), headings: dict[str, int] | None = None,
           opening: bool = False) -> str:
    """Join a page's lines into paragraphs separated by blank lines (see the module docstring, step 4); a
    heading line becomes a Markdown heading line of its own (``## 1. Purpose``), as the other loaders write them.

    ``seen``: the document's vocabulary (``_vocabulary``), which decides line-end hyphens first.
    ``headings``: the headings the page's fonts show (``pdf_layout.heading_levels``: ``heading_key`` ->
    level); None when fonts show none, and then a line's shape decides (``_shape_heading``, and a short
    capitalised line without closing punctuation after a finished sentence, level 2).
    ``opening``: the page opens the document: a heading-shaped first line is its title (level 1).
    """
    lines = [" ".join(line.split()) for line in lines]
    widths = sorted(len(line) for line in lines if line)
    full = widths[int(len(widths) * 0.8)] if widths else 0
    paragraphs: list[str] = []
    current = ""
    first = next((i for i, line in enumerate(lines) if line), -1)

    def close() -> None:
        nonlocal current
        if current:
            paragraphs.append(current)
        current = ""

    for i, line in enumerate(lines):
        if _TABLE_ROW.match(line):
            if current and not _TABLE_ROW.match(current.rsplit("\n", 1)[-1]):
                close()
            current = f"{current}\n{line}" if current else line
            continue
        if current and _TABLE_ROW.match(current.rsplit("\n", 1)[-1]):
            close()
        if not line:
            close()
            continue
        level = 0
        if headings is not None:
            level = headings.get(heading_key(line), 0) if not _ITEM.match(line) or _numbered(line) else 0
        else:
            level = _shape_heading(lines, i, full)
            # unnumbered: short, capitalised, no closing punctuation, after a finished sentence
            if not level and (not current or current.endswith(_SENTENCE_END)) and not _ITEM.match(line) \
                    and not _continued(lines, i):
                if len(line) < _HEADING_WIDTH * full and line[:1].isupper() and line[-1:].isalnum() \
                        and len(line.split()) <= _HEADING_WORDS:
                    level = 2
            if level and opening and i == first and not _numbered(line):
                level = 1
        if level:
            close()
            text = line.lstrip("#").strip() or line
            previous = paragraphs[-1] if paragraphs else ""
            mark = "#" * level + " "
            wrapped = i > 0 and lines[i - 1] and not _numbered(line)
            if wrapped and previous.startswith(mark) and not previous.startswith(mark + "#") \
                    and len(previous.split()) + len(text.split()) <= 2 + _HEADING_WORDS * 2:
                paragraphs[-1] = _join(previous, text, seen)  # a heading wrapped over two lines
            else:
                paragraphs.append(mark + text)
            continue
        if current and _ITEM.match(line):
            close()
        current = _join(current, line, seen)
        nxt = next((later for later in lines[i + 1:] if later), "")
        item_ends = _ITEM.match(current) and line[-1:].isalnum() and nxt[:1].isupper()
        if len(line) < 0.75 * full and (line.endswith(_SENTENCE_END) or item_ends):
            close()  # a short line ends a paragraph that ends a sentence, and a list item before a capital
    close()
    return "\n\n".join(paragraphs)


def _pdf_metadata(reader) -> tuple[str, dict[str, object]]:
    """Title and metadata from the /Info dictionary: author, dates, /Keywords as tags, a custom /ACL entry as
    the access list (malformed: ``IngestError``, the file is refused)."""
    raw: dict[str, object] = {"page_count": len(reader.pages)}
    title = ""
    try:
        info = reader.metadata
        if info is not None:
            title = str(info.title or "").strip()
            if info.author:
                raw["author"] = str(info.author)
            keywords = info.get("/Keywords")
            if isinstance(keywords, str) and keywords.strip():
                raw["tags"] = [k.strip() for k in re.split(r"[,;]", keywords) if k.strip()]
            for key in list(info.keys()):
                if canonical_key(str(key).lstrip("/")) == "acl":  # a custom /ACL entry: the access list
                    raw["acl"] = str(info[key])
            for key, target in (("/ModDate", "updated"), ("/CreationDate", "created")):
                value = info.get(key)
                if isinstance(value, str):
                    parsed = iso_date(value[2:10] if value.startswith("D:") and len(value) >= 10 else value)
                    if parsed:
                        raw[target] = parsed
    except Exception as exc:  # noqa: BLE001 - a broken /Info dictionary must not lose the text
        logger.debug("unreadable PDF metadata: %s", _one_line(exc))
    if "updated" not in raw and raw.get("created"):
        raw["updated"] = raw["created"]
    title = re.sub(r"^Microsoft (?:Word|PowerPoint|Excel) - ", "", title)
    if sum(c.isalpha() for c in title) < 3 or re.fullmatch(r"[a-z][a-z0-9+.-]*:\S*", title) or title.lower() in {"untitled", "title", "document"} or (" " not in title and re.search(r"[\d_.-]", title)):
        title = ""
    return title, normalise_metadata({k: v for k, v in raw.items() if v is not None})


# a CJK character (pdf_layout's wide characters), or a run of letters
_TITLE_TOKEN = re.compile(rf"{_WIDE.pattern}|(?:(?!{_WIDE.pattern})[^\W\d_])+")
_BORNE_OUT = 0.8  # share of the metadata title's words on the first page that keeps it over the page's own heading


def _title(metadata_title: str, text: str, offsets: list[int], path: Path) -> str:
    """The document's title: the /Info title when the first page bears it out, else the first page's opening.

    A metadata title is often left over from a template or an earlier draft ("example", "PDF avec Structure" over
    a page headed "Titre du document"). It is kept when at least ``_BORNE_OUT`` of its words (letters; a CJK
    character counts as a word) occur on the first page, or when some do and the page opens with no heading;
    otherwise the first line that is not a table row is the title (``#`` marks removed) when it is at most 100
    characters long, else the file's name.
    """
    first_page = text[: offsets[1]] if len(offsets) > 1 else text
    first = next((line for line in first_page.split("\n") if line.strip() and not line.startswith("|")), "")
    heading = bool(_MD_HEADING.match(first))
    if metadata_title:
        words = _TITLE_TOKEN.findall(metadata_title.casefold())
        on_page = set(_TITLE_TOKEN.findall(first_page.casefold()))
        share = sum(w in on_page for w in words) / len(words) if words else 0.0
        if share >= _BORNE_OUT or (share > 0 and not heading):
            return metadata_title
    first = first.lstrip("#").strip() if heading else first.strip()
    return first if 0 < len(first) <= 100 else title_from_path(path)


def _has_image(page) -> bool:  # page: pypdf.PageObject
    """Whether a page paints an XObject (``Do``) or an inline image (``BI``) and has an image among them."""
    try:
        contents = page.get_contents()
        data = contents.get_data() if contents is not None else b""
        return bool(re.search(rb"\bDo\b|\bBI\b", data)) and bool(page.images)
    except Exception:  # noqa: BLE001 - a broken resource dictionary: read as no image
        return False


def _scan_warnings(raw_pages: list[str], reader, bombs: frozenset[int] = frozenset()) -> list[str]:
    """One warning per page that has no text layer but an image on it (a scanned page), e.g. pages 2-4; the
    pages of ``bombs`` (0-based) are not looked at.  ``reader``: a pypdf.PdfReader."""
    n = len(raw_pages)
    out = []
    for number, text in enumerate(raw_pages, 1):
        if (len("".join(text.split())) < _MIN_CHARS_PER_PAGE and number - 1 not in bombs
                and _has_image(reader.pages[number - 1])):
            out.append(
                f"page {number} of {n} has no text layer (a scanned image?): its text is missing; "
                "run OCR first, e.g. ocrmypdf --skip-text"
            )
    return out


def load_pdf(path: Path, doc_id: str, progress: Callable[[int], None] | None = None) -> Document:
    """Load one PDF as a paged Document (``pages`` holds each page's start offset in ``text``).

    Pages with ruled tables or several columns are laid out with pdfplumber (``pdf_layout``: tables as pipe
    tables, columns in reading order); other pages keep pypdf's text. A page without a text layer in a PDF
    that has text elsewhere adds one line to ``Document.warnings`` ("page 3 of 4 has no text layer ...");
    so does a page whose content decompresses to more than pypdf's limit (75 MB), which no parser then
    reads. ``progress(i)`` is called after each page ``i`` (0-based) of each pass over the pages (a page
    may be reported more than once), so that a caller can bound the time one page takes.

    Raises:
        IngestError: empty, password-protected, malformed, or text-less (scanned) file, or every page over the
            decompression limit; one-line message.
        MissingExtraError: the ``pdf`` extra (pypdf, pdfplumber, pdfminer.six, wordfreq) is not installed.
    """
    for module in PDF_MODULES:
        require(module, "pdf", "PDF support")
    with _quiet_pypdf():
        reader = _open(path)
        try:
            raw_pages, bombs = _page_texts(reader, progress)
        except (RecursionError, Exception) as exc:  # noqa: BLE001 - broken page tree
            raise IngestError(f"malformed PDF: {_one_line(exc)}") from exc
        title, metadata = _pdf_metadata(reader)
        if raw_pages and sum(len("".join(t.split())) for t in raw_pages) >= _MIN_CHARS_PER_PAGE * len(raw_pages):
            warnings_ = _scan_warnings(raw_pages, reader, bombs)
        else:
            warnings_ = []
    if not raw_pages:
        raise IngestError("malformed PDF: no pages")
    if bombs:
        if len(bombs) == len(raw_pages) or not any(t.strip() for t in raw_pages):
            raise IngestError(f"refused as a possible decompression bomb: {_bomb_warning(bombs, len(raw_pages))}, "
                              f"and no other page has text")
        warnings_.insert(0, _bomb_warning(bombs, len(raw_pages)))
    elif sum(len("".join(t.split())) for t in raw_pages) < _MIN_CHARS_PER_PAGE * len(raw_pages):
        raise IngestError("no text layer (scanned?); run OCR first, e.g. ocrmypdf")
    with _quiet_pypdf():
        layouts, headings = analyse_pages(path, len(raw_pages), bombs, progress)
    page_lines = [
        layout if layout is not None else text.replace("\r", "\n").split("\n")
        for text, layout in zip(raw_pages, layouts)
    ]
    page_lines = [[line.translate(_LIGATURES) for line in lines] for lines in page_lines]
    seen = _vocabulary("\n".join("\n".join(lines) for lines in page_lines))
    pages = strip_headers_footers(page_lines)
    texts = []
    for i, lines in enumerate(pages):
        texts.append(reflow(lines, seen, headings[i] if headings is not None else None, opening=i == 0))
        if progress is not None:
            progress(i)
    text, offsets = _join_pages(texts, seen)
    title = _title(title, text, offsets, path)
    return Document(
        doc_id=doc_id,
        text=text,
        title=title,
        source=str(path.resolve()),
        format="pdf",
        metadata=metadata,
        pages=tuple(offsets),
        warnings=tuple(warnings_),
    )


def _join_pages(texts: list[str], seen: frozenset[str] = frozenset()) -> tuple[str, list[int]]:
    """Concatenate page texts; a word or sentence broken across pages is re-joined onto the earlier page."""
    out = ""
    offsets: list[int] = []
    for page in texts:
        page = page.strip()
        if out and page:
            # the end of the text so far, its last line (out never ends in white space): what the joins read,
            # so that a PDF of many pages is joined in linear time
            cut = max(0, len(out) - _JOIN_TAIL)
            end = out[out.rfind("\n", cut) + 1 or cut:]
            if _HYPHEN_END.search(end) and page[:1].islower():
                word, _, rest = page.partition(" ")
                head, tail = _LAST_WORD.search(end), _FIRST_WORD.match(word)
                keep = bool(head and tail and keeps_hyphen(head[1], tail[1], seen))
                out = (out if keep else out[:-1]) + word
                page = rest.lstrip()
                sep = " " if page else ""
            elif runs_on(end, page):
                # (no space before a comma or a closing bracket, nor between CJK characters)
                sep = "" if page[0] in NO_SENTENCE_START or _CJK.match(out[-1]) and _CJK.match(page[0]) else " "
            else:
                sep = "\n\n"
            out += sep
        offsets.append(len(out))
        out += page
    return out, offsets
