"""Markdown loader: front matter -> metadata, body kept as Markdown with links and images reduced to text.

Front matter: YAML, TOML, JSON, a Pandoc title block or MultiMarkdown metadata (see ``frontmatter``); a
block that cannot be parsed, or a malformed ``acl``, refuses the file rather than publish it. Without an ``acl``
there, an access header line with roles among the first lines outside code blocks (``ACL: hr``, ``Roles: hr``, as
in a text file: ``text.find_access``) is the access list, with a warning; an empty one (``Roles:`` over a list)
is text.

Fenced code blocks (``fences.fenced_blocks``: CommonMark's rules, as the chunker and the answerer read them) are
kept as written; indented code blocks (four spaces or a tab, after a blank line, outside lists) become fenced
blocks. Cleaning (outside code blocks and inline code): HTML comments dropped; ``![alt](url)`` -> ``alt``;
``[text](url)`` and ``[text][ref]`` -> ``text``; reference definitions (``[ref]: url``) dropped; ``<url>``
autolinks -> ``url``; raw HTML tables rendered as pipe tables, ``<h1>``..``<h6>`` as ``#`` headings, other raw
HTML tags removed with their text kept: inline tags (``<b>``, ``<span>``) leave nothing, ``<br>`` a line break,
block tags (``<p>``, ``<div>``) a paragraph break, ``<li>`` a ``- `` item, unknown tags a space, and any of
them inside a pipe-table row a space, so words on either side never glue;
setext headings (underlined with ``===``/``---``) become ``#``/``##`` lines; ``*``/``+`` bullets become
``- ``; pipe tables written without outer pipes get them. Title: front matter ``title``, else the first ``#``
heading, else the file name.

Site-generator markup outside code is not text: Jekyll's Liquid tags (``{% include x.html %}``, a
``{% comment %}`` block with its content) and Kramdown's attribute lists and extensions (``{: .note}``,
``{:toc}``, ``{::comment}`` ... ``{:/comment}``) are dropped, and so is emphasis left empty by them
(``**{% include name.html %}**``); a ``{% highlight LANG %}`` ... ``{% endhighlight %}``
block becomes a fenced code block. A Liquid output (``{{ site.ruby_version }}``) stands for a value the page
shows, so in running text it stays as written ("Ruby version {{ site.ruby_version }} or higher", not "Ruby
version  or higher"); inside a link's or an image's target it goes with the target.
"""

from __future__ import annotations

import bisect
import html
import re
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from ..emphasis import strip_emphasis
from ..fences import fenced_blocks
from ..types import Document
from ._common import decode_text, fence_code, normalise_metadata, tidy, title_from_path
from .frontmatter import split_front_matter
from .html import blocks_to_text, render_blocks
from .text import access_warning, find_access, header_roles

# Every pattern here runs in time linear in the text: a bracket, quote or parenthesis class never crosses another
# opener of its kind or a line end, and an open...close pattern runs only up to its last close (``_sub_closed``,
# ``_html_headings``). 100 kB of unclosed "[", "![", "<!--", "<table" or "<h1>" took 30-60 s each, quadratically
# more for a larger file (a writer's upload held the server's writer thread). Nor do two runs of the same class
# meet without a character between them that only one may take (``[ \t]*\|?[ \t]*``): a deeply indented line
# (a list nested hundreds of levels) is split between them in every way, quadratically.
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_COMMENT_CLOSE = re.compile(r"-->")
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\n]*\)|!\[([^\[\]]*)\]\[[^\[\]\n]*\]")
_LINK = re.compile(r"\[([^\[\]]+)\]\((?:[^()\s]|\([^()\n]*\))*(?:\s+\"[^\"\n]*\")?\)|\[([^\[\]]+)\]\[[^\[\]\n]*\]")
_REF_DEF = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*$", re.MULTILINE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.DOTALL | re.IGNORECASE)
_HTML_TABLE_CLOSE = re.compile(r"</table\s*>", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?/?>")
_ROW_START = re.compile(r"\s*\|")
_HTML_HEADING_OPEN = re.compile(r"<h([1-6])(?:\s[^<>]*)?>", re.IGNORECASE)
_HTML_HEADING_CLOSE = re.compile(r"</h([1-6])\s*>", re.IGNORECASE)
_INLINE_TAGS = frozenset(
    "a abbr b bdi bdo cite code data del dfn em font i img ins kbd mark q s samp small span strong sub sup "
    "time u var wbr".split()
)
_BLOCK_TAGS = frozenset(
    "address article aside blockquote center dd details dialog div dl dt fieldset figcaption figure footer "
    "form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr "
    "ul".split()
)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_BULLET = re.compile(r"^([ \t]*)[*+][ \t]+", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}[ \t]+([^\n]+)", re.MULTILINE)  # the title: _heading_title(match)
# Site-generator markup (Jekyll's Liquid, Kramdown's attribute lists and extensions): not text a reader sees.
_LIQUID_HIGHLIGHT = re.compile(r"\{%-?[ \t]*highlight[ \t]+([\w+#.-]+)[^%\n]*%\}[ \t]*\n?(.*?)\n?[ \t]*"
                               r"\{%-?[ \t]*endhighlight[ \t]*-?%\}", re.DOTALL)
_LIQUID_HIGHLIGHT_CLOSE = re.compile(r"\{%-?[ \t]*endhighlight[ \t]*-?%\}")
_LIQUID_COMMENT = re.compile(r"\{%-?[ \t]*comment[ \t]*-?%\}.*?\{%-?[ \t]*endcomment[ \t]*-?%\}", re.DOTALL)
_LIQUID_COMMENT_CLOSE = re.compile(r"\{%-?[ \t]*endcomment[ \t]*-?%\}")
_KRAMDOWN_COMMENT = re.compile(r"\{::comment\}.*?\{:/comment\}", re.DOTALL)
_KRAMDOWN_COMMENT_CLOSE = re.compile(r"\{:/comment\}")
_TEMPLATE_MARK = re.compile(r"\{%-?[^%\n]*-?%\}|\{::?[^{}\n]*\}|\{:/[^{}\n]*\}")
_LIQUID_OUTPUT = re.compile(r"\{\{[^{}\n]*\}\}")
_LINK_TARGET = re.compile(r"\]\((?:[^()\n]|\([^()\n]*\))*\)|^[ \t]{0,3}\[[^\[\]\n]+\]:[^\n]*", re.MULTILINE)
"""A link's or an image's target, or a link reference definition's line: a Liquid output in it is part of a URL."""
_EMPTIED_EMPHASIS = re.compile(rf"(\*\*|__|\*|_|~~)[ \t]*(?:(?:{_TEMPLATE_MARK.pattern})[ \t]*)+\1")
"""Emphasis that holds nothing but template marks (``**{% include name.html %}**``): dropped whole, delimiters too."""
_MARK_AT_EMPHASIS = re.compile(
    rf"(?<![ \t])[ \t]+(?:{_TEMPLATE_MARK.pattern})(?P<close>[*_~]{{1,2}})(?=$|[\s.,;:!?)\]])"
    rf"|(?P<before>^|[\s(\[])(?P<open>[*_~]{{1,2}})(?:{_TEMPLATE_MARK.pattern})[ \t]+", re.MULTILINE)
"""A template mark at the inner edge of emphasis (``**Note {% include x.html %}**``): dropped with the space beside it, so the
emphasis still closes on a word (``**Note**``)."""
_TABLE_SEPARATOR = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+(?:\|[ \t]*)?$")


def _sub_closed(pattern: re.Pattern[str], close: re.Pattern[str], repl: Any, text: str) -> str:
    """``pattern.sub(repl, text)`` for a pattern that opens, skips lazily and ends with ``close``, run only up to
    the end of ``close``'s last match: the same result (no match can end later, and every start before it finds
    its close), without rescanning the rest of the text from each unclosed opener."""
    cut = 0
    for m in close.finditer(text):
        cut = m.end()
    return pattern.sub(repl, text[:cut]) + text[cut:] if cut else text


def _html_headings(text: str) -> str:
    """``<hN ...>content</hN>`` -> a ``#`` heading line, as ``re.sub(r"<h([1-6])(?:\\s[^<>]*)?>(.*?)</h\\1\\s*>")``
    (DOTALL, IGNORECASE) would, leftmost first, each opener ending at the first close of its level after it, but
    linear: the closes of each level are listed once and found by bisection."""
    closes: dict[str, list[tuple[int, int]]] = {}
    for m in _HTML_HEADING_CLOSE.finditer(text):
        closes.setdefault(m[1], []).append((m.start(), m.end()))
    if not closes:
        return text
    out: list[str] = []
    done = 0
    for m in _HTML_HEADING_OPEN.finditer(text):
        if m.start() < done or m[1] not in closes:
            continue
        level = closes[m[1]]
        i = bisect.bisect_left(level, (m.end(), -1))
        if i == len(level):
            continue
        start, end = level[i]
        out.append(text[done:m.start()])
        out.append(f"\n\n{'#' * int(m[1])} {' '.join(text[m.end():start].split())}\n\n")
        done = end
    out.append(text[done:])
    return "".join(out)


def _html_table(match: re.Match[str]) -> str:
    try:
        fragment = lxml_html.fragment_fromstring(match[0], create_parent="div")
    except (etree.ParserError, ValueError):
        return match[0]
    return "\n\n" + blocks_to_text(render_blocks(fragment)) + "\n\n"


def _clean_prose(text: str) -> str:
    """Clean a stretch of Markdown that holds no fenced code."""
    codes: list[str] = []

    def stash_text(kept: str) -> str:
        codes.append(kept)
        return f"\x00{len(codes) - 1}\x00"

    def stash(m: re.Match[str]) -> str:
        return stash_text(m[0])

    text = _INLINE_CODE.sub(stash, text)
    text = _sub_closed(_LIQUID_COMMENT, _LIQUID_COMMENT_CLOSE, "", text)
    text = _sub_closed(_KRAMDOWN_COMMENT, _KRAMDOWN_COMMENT_CLOSE, "", text)
    text = _MARK_AT_EMPHASIS.sub(lambda m: m["close"] or m["before"] + m["open"], _EMPTIED_EMPHASIS.sub("", text))
    text = _TEMPLATE_MARK.sub("", text)
    text = _LINK_TARGET.sub(lambda m: _LIQUID_OUTPUT.sub("", m[0]), text)
    text = _sub_closed(_HTML_TABLE, _HTML_TABLE_CLOSE, lambda m: stash_text(_html_table(m)), text)
    text = _IMAGE.sub(lambda m: m[1] or m[2] or "", text)
    text = _LINK.sub(lambda m: m[1] or m[2], text)
    text = _REF_DEF.sub("", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _html_headings(text)
    line = [0, 0]  # (where the last tag started, the start of its line): each tag looks back only that far

    def boundary(m: re.Match[str]) -> str:
        newline = m.string.rfind("\n", line[0], m.start())
        if newline >= 0:
            line[1] = newline + 1
        line[0] = m.start()
        return _tag_boundary(m, line[1])

    text = html.unescape(_HTML_TAG.sub(boundary, text))
    text = re.sub(r"(?m)^([ \t]*\|.*)$", lambda m: re.sub(r"[ \t]{2,}", " ", m[1]), text)
    text = _BULLET.sub(r"\1- ", text)
    text = _normalise_lines(text)
    return re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m[1])], text)


def _tag_boundary(m: re.Match[str], line_start: int) -> str:
    """What a raw HTML tag leaves behind: nothing (inline tags), a line break, a paragraph break or a bullet.

    Inside a pipe-table row (the tag's line, from ``line_start``, opens with ``|``) any break becomes a space, so
    the row stays one line.
    """
    name = m[1].lower()
    if name in _INLINE_TAGS:
        return ""
    if _ROW_START.match(m.string, line_start, m.start()):  # not a slice of the line: a long line made it quadratic
        return " "
    if name == "br":
        return "\n"
    if name == "li":
        return "" if m[0].startswith("</") else "\n- "
    return "\n\n" if name in _BLOCK_TAGS else " "


def _heading_title(match: re.Match[str]) -> str:
    """The text of an ATX heading line matched by ``_HEADING``, without its closing ``#`` sequence and spaces
    (in linear time: a regular expression's lazy text before ``[ \t#]*$`` is quadratic in a run of spaces) and
    without the emphasis markers CommonMark renders (``# The **Zephyr** manual`` -> ``The Zephyr manual``)."""
    text = match[1]
    return strip_emphasis((text.rstrip(" \t#") or text[:1]).strip())


def _normalise_lines(text: str) -> str:
    """Setext headings to ``#`` lines; pipe tables without outer pipes get them."""
    lines = text.split("\n")
    out: list[str] = []
    in_table = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        prev = out[-1].strip() if out else ""
        if (
            prev
            and re.fullmatch(r"=+|-{2,}", stripped)
            and not prev.startswith(("- ", "|", "#", ">"))
            and not (i >= 2 and lines[i - 2].strip())  # a heading is one line after a blank line
        ):
            out[-1] = ("# " if stripped[0] == "=" else "## ") + prev
            continue
        if _TABLE_SEPARATOR.match(line) and prev and "|" in prev:
            in_table = True
            if not prev.startswith("|"):
                out[-1] = _piped(out[-1])
            out.append(_piped(line))
            continue
        if in_table and stripped and "|" in stripped:
            out.append(_piped(line) if not stripped.startswith("|") else line)
            continue
        in_table = False
        out.append(line)
    return "\n".join(out)


def _piped(line: str) -> str:
    body = line.strip().strip("|").strip()
    return f"| {body} |"


_INDENTED = re.compile(r"^(?: {4}|\t)(?=[ \t]*\S)")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")


def _indented_code(lines: list[str], i: int, prose: list[str]) -> int:
    """The end (exclusive) of the indented code block starting at ``lines[i]``, or ``i`` when none starts there.

    As in CommonMark: lines indented by four spaces or a tab, blank lines between them included, after a blank
    line (an indented line cannot interrupt a paragraph) and not inside a list (after a list item or an indented
    line, indentation continues the item)."""
    if not _INDENTED.match(lines[i]) or (prose and prose[-1].strip()):
        return i
    before = next((p for p in reversed(prose) if p.strip()), "")
    if _LIST_ITEM.match(before) or before[:1] in (" ", "\t"):
        return i
    end = j = i
    while j < len(lines) and (not lines[j].strip() or _INDENTED.match(lines[j])):
        j += 1
        end = j if lines[j - 1].strip() else end
    return end


def _fenced(code: list[str]) -> list[str]:
    """Indented code lines as a fenced block, each line without its four columns of indentation."""
    return fence_code([line[1:] if line.startswith("\t") else line[4:] for line in code])


def clean_markdown(body: str) -> str:
    """Markdown body -> openbook text: links/images to text, comments and HTML tags removed (code kept;
    indented code blocks become fenced ones, so that the chunker and the answerer see one kind of code block)."""
    body = _sub_closed(_COMMENT, _COMMENT_CLOSE, "", body.replace("\r\n", "\n"))
    body = _sub_closed(_LIQUID_HIGHLIGHT, _LIQUID_HIGHLIGHT_CLOSE,
                       lambda m: f"\n```{m[1]}\n{m[2]}\n```\n", body)
    out: list[str] = []
    prose: list[str] = []
    lines = body.split("\n")
    fenced = {b.start: b.end for b in fenced_blocks(lines)}  # the same blocks the chunker and answerer read
    i = 0
    while i < len(lines):
        fence_end = fenced.get(i)
        end = _indented_code(lines, i, prose) if fence_end is None else fence_end
        if end <= i:
            prose.append(lines[i])
            i += 1
            continue
        out.append(_clean_prose("\n".join(prose)))
        prose = []
        out.extend(_fenced(lines[i:end]) if fence_end is None else lines[i:end])
        i = end
    out.append(_clean_prose("\n".join(prose)))
    return tidy("\n".join(out))


def load_markdown(path: Path, doc_id: str) -> Document:
    """Load one Markdown file (optional front matter) as a Document.

    Raises:
        IngestError: a front-matter block cannot be parsed, is not closed, or its ``acl`` is malformed.
    """
    decoded = decode_text(path)
    front, body = split_front_matter(decoded.text)
    notes: tuple[str, ...] = decoded.warnings
    if "acl" not in front:
        # an "ACL: hr" / "Roles: hr" line at the top but outside a metadata block (under a heading, beside prose)
        # is the access list, as in a text file: read as prose it published the file to everyone. An empty one
        # ("Roles:" over a list) is a label here, and the reading is said, since the file then leaves public view
        access = find_access(body, skip_code=True)
        if access and access[1]:
            front = {**front, "acl": header_roles(access[1])}
            notes = (*notes, access_warning(front["acl"]))
    text = clean_markdown(body)
    metadata = normalise_metadata(front)
    title = str(front.get("title") or "").strip()
    if not title:
        m = _HEADING.search(text)
        title = _heading_title(m) if m else title_from_path(path)
    return Document(
        doc_id=doc_id,
        text=text,
        title=title,
        source=str(path.resolve()),
        format="markdown",
        metadata=metadata,
        warnings=notes,
    )
