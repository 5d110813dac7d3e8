"""HTML loader: main content only, rendered to openbook's Markdown-like text.

How the main content is found:

1. The page is parsed with lxml; permalink marks (Sphinx's ``¶`` after a heading: ``drop_permalinks``),
   ``<script>`` (JSON-LD included), ``<style>``, ``<noscript>``, ``<template>``, ``<svg>``, ``<iframe>``, forms
   and their controls, ``<nav>``, ``<aside>``, page-level ``<header>`` / ``<footer>``, ARIA landmarks for
   navigation/banner/footer/sidebar/dialogs and hidden elements are removed (``clean_tree``); class and id
   names are left to the two libraries, which weigh them by their own lists.
2. Two libraries extract the main content of the cleaned page: readability-lxml (the ``html`` extra; a port of
   the Readability algorithm) and trafilatura (its default settings, tables included). readability-lxml's
   extraction is kept unless it holds less than ``MIN_SHARE`` of trafilatura's words, then trafilatura's
   (``choose_extraction``); without the ``html`` extra, trafilatura's with ``favor_recall`` takes
   readability-lxml's place. Both are rendered as below.

Rendering: ``h1``..``h6`` -> ``#`` lines, paragraphs separated by blank lines, list items as ``- `` lines
(``<ol>`` items as ``1. `` lines numbered as a browser numbers them: ``start``, ``value``, ``reversed``; a
nested list indented two spaces per level),
data tables as pipe tables (first row is the header row, then a ``| --- |`` separator), ``<pre>`` as a fenced
code block, its lines kept verbatim and a ``language-xxx`` class as its info string (also where trafilatura
re-flowed it onto one line or dropped the class: ``fenced_code``; trafilatura's own Markdown output fences only
``<pre><code>``, without the language, and escapes a bare ``<pre>``'s text as prose), definition lists as
``- term: definition`` lines.

Quality: token precision / recall / F1 against Mozilla Readability's expected main content of the pages of
``shared/samples/html``, on all of them and on a held-out half: BENCHMARKS.md, "Ingest: HTML main content"
(``tests/ingest/ingest_html_quality.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Iterable

from lxml import etree
from lxml import html as lxml_html

from .._extras import require
from ..errors import IngestError
from ..fences import fenced_blocks
from ..types import Document
from ._common import decode_text, fence_code, heading_title, iso_date, normalise_metadata, tidy
from .frontmatter import canonical_key, split_front_matter
from .text import structure_text

_DROP_TAGS = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "form", "button",
    "select", "input", "textarea", "label", "nav", "aside", "dialog", "link", "meta", "head",
)
_DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary", "dialog", "alertdialog", "search", "menu",
               "menubar", "toolbar"}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_BLOCKS = {
    "p", "div", "section", "article", "main", "header", "footer", "blockquote", "figure", "figcaption", "address",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "pre", "hr", "details", "summary", "center", "body", "html",
    "tr", "td", "th", "thead", "tbody", "tfoot", "caption", *_HEADINGS,
    # trafilatura's XML vocabulary
    "doc", "head", "list", "item", "row", "cell", "quote", "code", "graphic",
}


# --------------------------------------------------------------------------------------------------- cleaning


def _is_hidden(el: etree._Element) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    return (
        el.get("hidden") is not None
        or el.get("aria-hidden") == "true"
        or "display:none" in style
        or "visibility:hidden" in style
    )


def _inside(el: etree._Element, tags: set[str]) -> bool:
    return any(a.tag in tags for a in el.iterancestors())


_PERMALINK_NAME = re.compile(
    r"(?:^|\s)(?:headerlink|header-?anchor|heading-?(?:anchor|link)|anchor-?link|anchor-?heading|anchorjs-link|"
    r"hash-?link|doc-anchor|permalink|anchor)(?:$|\s)", re.IGNORECASE)
_PERMALINK_LABEL = re.compile(r"^\s*(?:permalink|permanent link|link to this|direct link to|anchor link)",
                              re.IGNORECASE)
_MARK_HOLDERS = frozenset({f"h{i}" for i in range(1, 7)} | {"dt", "caption", "figcaption", "summary"})


def _is_mark(text: str) -> bool:
    """Whether a link's text is a permalink mark: empty, or at most 3 symbols and punctuation ("¶", "#", "§",
    "🔗"), invisible characters aside."""
    shown = "".join(ch for ch in text if not ch.isspace() and unicodedata.category(ch) != "Cf")
    return len(shown) <= 3 and all(unicodedata.category(ch)[0] in "PS" for ch in shown)


def drop_permalinks(root: etree._Element) -> None:
    """Remove, in place, the permalink anchors that documentation generators put after a heading or a definition
    (Sphinx's ``<a class="headerlink" href="#id" title="Link to this heading">¶</a>``, MkDocs' "Permanent link",
    VitePress' ``header-anchor``, Docusaurus' ``hash-link``, rustdoc's ``§``): a link to a place on the same page
    whose text is only a mark (``_is_mark``), and whose class or ``title`` / ``aria-label`` names it a permalink or
    that sits in a heading, a ``<dt>`` or a caption. A same-page link with words ("see Encoders") is kept."""
    doomed = []
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        if href and not href.startswith("#") or not _is_mark(a.text_content()):
            continue
        label = f"{a.get('title', '')} {a.get('aria-label', '')}"
        if _PERMALINK_NAME.search(a.get("class", "")) or _PERMALINK_LABEL.match(label) or \
                any(isinstance(x.tag, str) and x.tag.lower() in _MARK_HOLDERS for x in a.iterancestors()):
            doomed.append(a)
    for a in doomed:
        _drop(a)


def clean_tree(root: etree._Element) -> None:
    """Remove boilerplate elements from a parsed page in place (see the module docstring, step 1)."""
    drop_permalinks(root)
    for el in root.iter(etree.Comment, etree.ProcessingInstruction):
        _drop(el)
    doomed = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.lower()
        if tag in _DROP_TAGS or el.get("role", "").lower() in _DROP_ROLES or _is_hidden(el):
            doomed.append(el)
        elif tag in ("header", "footer") and not _inside(el, {"article", "main", "section"}):
            doomed.append(el)
    for el in doomed:
        _drop(el)


def _drop(el: etree._Element) -> None:
    """Remove ``el`` but keep its tail text."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail and tail.strip():
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


# -------------------------------------------------------------------------------------------------- rendering


def _is_block(node: etree._Element, tag: str) -> bool:
    """Whether an element starts a block of its own: a one-line ``<code>`` is inline code (HTML's, and
    trafilatura's for it), part of the sentence around it; a multi-line one is a code block."""
    return tag in _BLOCKS and not (tag == "code" and "\n" not in "".join(node.itertext()))


def _inline(el: etree._Element) -> str:
    """All text under ``el`` on one line (``<br>`` kept as newlines), whitespace collapsed."""
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                tag = child.tag.lower()
                if tag in ("br", "lb"):
                    parts.append("\n")
                else:
                    block = _is_block(child, tag)
                    if block:
                        parts.append(" ")
                    walk(child)
                    if block:
                        parts.append(" ")
            if child.tail:
                parts.append(child.tail)

    walk(el)
    lines = ("".join(parts)).split("\n")
    return "\n".join(" ".join(line.split()) for line in lines).strip("\n ")


def _cell_text(cell: etree._Element) -> str:
    return " ".join(_inline(cell).split()).replace("|", "\\|")


def _table_rows(table: etree._Element) -> list[list[etree._Element]]:
    rows = []
    for row in table.iter("tr", "row"):
        # skip rows of nested tables: their nearest table ancestor is not this one
        owner = next((a for a in row.iterancestors() if a.tag in ("table",)), None)
        if owner is not table:
            continue
        rows.append([c for c in row if isinstance(c.tag, str) and c.tag.lower() in ("td", "th", "cell")])
    return [r for r in rows if r]


def _is_layout_table(table: etree._Element, rows: list[list[etree._Element]]) -> bool:
    """A table used for page layout (one row or column, or tables nested in it): render its content instead."""
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return True
    return any(inner is not table for inner in table.iter("table"))


def _render_table(table: etree._Element, rows: list[list[etree._Element]]) -> str:
    grid = [[_cell_text(c) for c in row] for row in rows]
    grid = [r for r in grid if any(r)]
    width = max(len(r) for r in grid)
    lines = []
    for i, row in enumerate(grid):
        row = row + [""] * (width - len(row))
        lines.append("| " + " | ".join(row) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _ordinal(value: str | None) -> int | None:
    """An ``<ol start>`` / ``<li value>`` attribute as an int, None when absent or not an integer."""
    try:
        return int((value or "").strip())
    except ValueError:
        return None


def _is_ordered(lst: etree._Element) -> bool:
    """``<ol>``, or trafilatura's ``<list rend="ol">``."""
    tag = lst.tag.lower()
    return tag == "ol" or (tag == "list" and (lst.get("rend") or "").lower() == "ol")


def list_marker(number: int | None) -> str:
    """The Markdown marker of a list item: ``"N. "`` for item number ``N`` of an ordered list, ``"- "`` for an
    unordered one (None)."""
    return "- " if number is None else f"{number}. "


def _list_items(lst: etree._Element, depth: int = 0) -> list[str]:
    """Markdown list lines for a list's items: ``N. `` for an ordered list (numbered from its ``start``,
    counting down when ``reversed``, an item's ``value`` resetting the count, as browsers number them), ``- ``
    for an unordered one; a nested list follows its parent item, indented two spaces per level."""
    out: list[str] = []
    ordered = _is_ordered(lst)
    items = [c for c in lst if isinstance(c.tag, str) and c.tag.lower() not in ("ul", "ol", "list")]
    down = ordered and lst.get("reversed") is not None
    number = _ordinal(lst.get("start"))
    if number is None:
        number = len(items) if down else 1
    indent = "  " * depth
    for item in lst:
        if not isinstance(item.tag, str):
            continue
        tag = item.tag.lower()
        if tag in ("ul", "ol", "list"):
            out.extend(_list_items(item, depth))
            continue
        nested = [c for c in item.iter("ul", "ol", "list") if c is not item]
        nested = [c for c in nested if not any(a in nested for a in c.iterancestors())]
        tails = []
        for c in nested:  # detach nested lists to read the item's own text, then restore them
            tails.append((c.getparent(), c.getparent().index(c), c))
        for parent, _, c in tails:
            parent.remove(c)
        text = " ".join(_inline(item).split())
        for parent, index, c in tails:
            parent.insert(index, c)
        value = _ordinal(item.get("value")) if ordered else None
        number = value if value is not None else number
        if text:
            out.append(indent + list_marker(number if ordered else None) + text)
        number += -1 if down else 1
        for c in nested:
            out.extend(_list_items(c, depth + 1))
    return out


def _is_definition_list(el: etree._Element, tag: str) -> bool:
    """``<dl>``, or trafilatura's ``<list rend="dl">`` (its items ``rend="dt-N"`` / ``rend="dd-N"``)."""
    return tag == "dl" or (tag == "list" and (el.get("rend") or "").lower() == "dl")


def _definition_items(dl: etree._Element) -> list[str]:
    """One ``- term: definition`` line per ``<dt>`` with its ``<dd>`` elements (trafilatura's items alike)."""
    out: list[str] = []
    for item in dl:
        if not isinstance(item.tag, str):
            continue
        text = " ".join(_inline(item).split())
        if not text:
            continue
        is_dd = item.tag.lower() == "dd" or (item.get("rend") or "").lower().startswith("dd")
        if is_dd and out and out[-1].startswith("- "):
            sep = " " if out[-1].endswith(":") else ": "
            out[-1] = out[-1] + sep + text
        else:
            out.append("- " + text)
    return out


_LANGUAGE_CLASS = re.compile(r"(?:^|\s)lang(?:uage)?-([\w+#.-]+)", re.IGNORECASE)


def fenced_code(pre: etree._Element) -> str:
    """A ``<pre>`` (or trafilatura's multi-line ``<code>``) as a Markdown fenced code block, "" when it holds no
    text.

    Its lines and indentation are kept as written (leading and trailing blank lines dropped); the info string is
    the language named by a ``language-xxx`` / ``lang-xxx`` class of the element or of a ``<code>`` inside it
    (highlight.js, Prism, Pandoc); the fence is ```` ``` ````, or ``~~~~`` when a line of the code starts like a
    fence (``fences.fence_for``). The Markdown loader fences indented code the same way, so the chunker and the
    answerer (one unit, quoted only for a how-to question) treat HTML and Markdown code alike.
    """
    code = "".join(pre.itertext()).strip("\n")
    if not code.strip():
        return ""
    lines = [line.rstrip() for line in code.split("\n")]
    language = ""
    for el in (pre, *pre.iter("code")):
        m = _LANGUAGE_CLASS.search(el.get("class") or "")
        if m:
            language = m[1].lower()
            break
    return "\n".join(fence_code(lines, language))


def _unfenced(block: str) -> str:
    """A rendered block without the fence lines of a fenced code block (the block unchanged otherwise)."""
    lines = block.split("\n")
    fenced = fenced_blocks(lines)
    if len(fenced) == 1 and fenced[0].start == 0 and fenced[0].end == len(lines) and fenced[0].closed:
        return "\n".join(lines[1:-1])
    return block


def render_blocks(el: etree._Element) -> list[str]:
    """Render an (X)HTML or trafilatura-XML element as blocks of Markdown-like text, in document order."""
    blocks: list[str] = []
    buffer: list[str] = []

    def flush() -> None:
        text = "\n".join(" ".join(line.split()) for line in "".join(buffer).split("\n"))
        text = "\n".join(line for line in text.split("\n") if line)
        if text.strip():
            blocks.append(text.strip())
        buffer.clear()

    def walk(node: etree._Element) -> None:
        if node.text:
            buffer.append(node.text)
        for child in node:
            if not isinstance(child.tag, str):
                if child.tail:
                    buffer.append(child.tail)
                continue
            tag = child.tag.lower()
            level = _HEADINGS.get(tag)
            if tag == "head":  # trafilatura: <head rend="h2">
                level = _HEADINGS.get(child.get("rend", "h2"), 2)
            if level:
                flush()
                text = " ".join(_inline(child).split())
                if text:
                    blocks.append("#" * level + " " + text)
            elif tag in ("br", "lb"):
                buffer.append("\n")
            elif _is_definition_list(child, tag):
                flush()
                items = _definition_items(child)
                if items:
                    blocks.append("\n".join(items))
            elif tag in ("ul", "ol", "list"):
                flush()
                items = _list_items(child)
                if items:
                    blocks.append("\n".join(items))
            elif tag == "table":
                flush()
                rows = _table_rows(child)
                if _is_layout_table(child, rows):
                    walk(child)
                    flush()
                else:
                    caption = child.find("caption")
                    if caption is not None and _inline(caption):
                        blocks.append(" ".join(_inline(caption).split()))
                    blocks.append(_render_table(child, rows))
            elif tag in ("pre", "code") and (tag == "pre" or "\n" in (child.text or "")):
                flush()
                fenced = fenced_code(child)
                if fenced:
                    blocks.append(fenced)
            elif tag == "hr":
                flush()
            elif _is_block(child, tag):
                flush()
                walk(child)
                flush()
            else:
                walk(child)
            if child.tail:
                buffer.append(child.tail)

    walk(el)
    flush()
    return blocks


def blocks_to_text(blocks: Iterable[str]) -> str:
    """Join rendered blocks with blank lines (a list or a table is one block, its lines adjacent)."""
    return tidy("\n\n".join(blocks))


# ------------------------------------------------------------------------------------------- main content

MIN_SHARE = 0.85
"""Share of the checking extraction's tokens that the first extraction must hold to be kept
(``choose_extraction``).

Chosen on the tuning half of ``shared/samples/html`` (the pages at even positions of the sorted names) for
readability-lxml checked by trafilatura: the middle of the values (0.70 to 0.95) that give that half its best
macro F1 (trafilatura with ``favor_recall`` checked by trafilatura scores the same, to three decimals, for every
value from 0.05 to 1); run ``PYTHONPATH=src python3 tests/ingest/ingest_html_quality.py --choose``."""

STRATEGIES = ("auto", "auto-core", "readability", "trafilatura", "trafilatura-recall")
"""The values of ``extract_main_text``'s ``strategy``."""

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+")


def _tokens(text: str) -> Counter[str]:
    """Bag of lower-cased word tokens; each CJK character is one token."""
    return Counter(t.lower() for t in _TOKEN.findall(text))


def _readability_installed() -> bool:
    """Whether readability-lxml (the ``html`` extra) can be imported (another package named ``readability``
    does not count)."""
    try:
        from readability import Document  # noqa: F401
        from readability.readability import Unparseable  # noqa: F401
    except ImportError:
        return False
    return True


def _readability_blocks(cleaned: etree._Element) -> list[str]:
    """readability-lxml's main content of a page (``Document.summary``), rendered; [] when it finds none.

    Raises:
        MissingExtraError: readability-lxml (the ``html`` extra) is not installed.
    """
    import copy

    readability = require("readability.readability", "html", "The readability HTML strategy")
    try:
        summary = readability.Document(copy.deepcopy(cleaned)).summary()
    except readability.Unparseable:
        return []
    if not summary.strip():
        return []
    tree = lxml_html.document_fromstring(summary)
    body = tree.find(".//body")
    return render_blocks(body if body is not None else tree)


def _trafilatura_blocks(cleaned: etree._Element, favor_recall: bool = False) -> list[str]:
    """trafilatura's main content of a page (its default settings, tables included; ``favor_recall``: its
    setting of that name), rendered; ``<pre>`` blocks it re-flowed get their lines back, and ordered-list items
    the page's numbers (``_restore_numbers``). [] when it finds none."""
    import copy

    import trafilatura

    verbatim = {}
    for pre in cleaned.iter("pre"):
        fenced = fenced_code(pre)
        if fenced:
            verbatim[" ".join(_unfenced(fenced).split())] = fenced
    xml = trafilatura.extract(
        copy.deepcopy(cleaned), output_format="xml", include_tables=True, include_comments=False,
        include_images=False, include_links=False, with_metadata=False, favor_recall=favor_recall,
    )
    if not xml:
        return []
    tree = etree.fromstring(xml.encode("utf-8"), parser=etree.XMLParser(recover=True))
    main = tree.find(".//main")
    blocks = render_blocks(main if main is not None else tree)
    if verbatim:
        blocks = [_restore_pre(block, verbatim) for block in blocks]
    numbers = _page_numbers(cleaned)
    return [_restore_numbers(block, numbers) for block in blocks] if numbers else blocks


_NUMBERED = re.compile(r"^(\s*)\d+\. (.*)$")


def _page_numbers(cleaned: etree._Element) -> dict[str, str]:
    """{item text: its ``"N. text"`` line} for the ordered-list items of a page, numbered as ``_list_items``
    numbers them; a text that two items with different numbers share is left out."""
    numbers: dict[str, str] = {}
    clashes = set()
    for ol in cleaned.iter("ol"):
        for line in _list_items(ol):
            m = _NUMBERED.match(line)
            if m:
                if numbers.setdefault(m[2], line.strip()) != line.strip():
                    clashes.add(m[2])
    return {text: line for text, line in numbers.items() if text not in clashes}


def _restore_numbers(block: str, numbers: dict[str, str]) -> str:
    """A rendered block with each ``"N. text"`` line numbered as the page numbers that item (``_page_numbers``):
    trafilatura's XML can drop ``<ol start>``, ``<li value>`` and ``reversed`` (for a list in ``<main>``, it
    does), and its items then count from 1."""
    lines = block.split("\n")
    for i, line in enumerate(lines):
        m = _NUMBERED.match(line)
        if m and m[2] in numbers:
            lines[i] = m[1] + numbers[m[2]]
    return "\n".join(lines)


def _restore_pre(block: str, verbatim: dict[str, str]) -> str:
    """A ``<pre>`` block of the page as ``fenced_code`` renders it where trafilatura collapsed its lines onto
    one line (a bare ``<pre>`` becomes a ``<quote>``) or dropped its language class."""
    flat = " ".join(_unfenced(block).split())
    if flat in verbatim:
        return verbatim[flat]
    for key, code in verbatim.items():
        if len(key) > 20 and key in flat:
            head, _, tail = flat.partition(key)
            return "\n\n".join(part for part in (head.strip(), code, tail.strip()) if part)
    return block


def choose_extraction(first: list[str], check: list[str], min_share: float = MIN_SHARE) -> list[str]:
    """``auto``'s choice between two extractions of one page (rendered blocks): ``first``, unless it holds less
    than ``min_share`` of the tokens of ``check`` (bag of lower-cased words, CJK characters one token each; the
    share is 0 when ``first`` is empty), then ``check``.

    ``first`` is the extraction that keeps a page's text as the reader sees it (readability-lxml's; without it,
    trafilatura's with ``favor_recall``, which keeps the headings of a short page), ``check`` trafilatura's with
    its default settings: readability keeps the best-scoring element and its siblings, so where an article is
    split over several elements it can keep one of them, and trafilatura's ``favor_recall`` can lose an article
    its default finds; the checking extraction holds the text they left out.
    """
    if not first:
        return check
    held = _tokens("\n".join(first))
    wanted = _tokens("\n".join(check))
    if sum((held & wanted).values()) < min_share * sum(wanted.values()):
        return check
    return first


def extract_main_text(root: etree._Element, strategy: str = "auto") -> str:
    """Main content of a parsed page as Markdown-like text ("" when none is found).

    Args:
        root: the page parsed by ``lxml.html``; it is cleaned in place (``clean_tree``).
        strategy: ``auto`` (the default): ``choose_extraction`` between readability-lxml's extraction of the
            cleaned page and trafilatura's, or, where readability-lxml (the ``html`` extra) is not installed,
            ``auto-core``: the same choice between trafilatura's with ``favor_recall`` and trafilatura's.
            ``readability``, ``trafilatura`` and ``trafilatura-recall`` are one extraction alone; they and
            ``auto-core`` exist for measurement (``tests/ingest/ingest_html_quality.py``).

    Raises:
        ValueError: an unknown ``strategy``.
        MissingExtraError: ``strategy`` ``readability`` without the ``html`` extra.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown HTML main-content strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    clean_tree(root)
    if strategy == "readability":
        return blocks_to_text(_readability_blocks(root))
    if strategy in ("trafilatura", "trafilatura-recall"):
        return blocks_to_text(_trafilatura_blocks(root, favor_recall=strategy == "trafilatura-recall"))
    if strategy == "auto" and _readability_installed():
        first = _readability_blocks(root)
    else:
        first = _trafilatura_blocks(root, favor_recall=True)
    return blocks_to_text(choose_extraction(first, _trafilatura_blocks(root)))


# ----------------------------------------------------------------------------------------------- metadata

_DATE_META = {
    "updated": ("updated", "last-modified", "last_modified", "lastmod", "article:modified_time", "og:updated_time",
                "dc.date.modified", "dcterms.modified", "modified", "date.modified"),
    "created": ("article:published_time", "date", "dc.date", "dcterms.date", "dc.date.issued", "dcterms.created",
                "pubdate", "publish-date", "published", "datepublished", "sailthru.date", "parsely-pub-date"),
}


def page_metadata(root: etree._Element) -> tuple[str, dict[str, object]]:
    """Title and metadata (``updated``, ``created``, ``author``, ``tags``, ``acl``, ``lang``) from a raw page."""
    metas: dict[str, str] = {}
    access: list[str] = []
    for m in root.iter("meta"):
        key = (m.get("name") or m.get("property") or m.get("itemprop") or m.get("http-equiv") or "").strip()
        content = (m.get("content") or "").strip()
        if canonical_key(key) == "acl":
            access.append(content)  # every <meta name="acl">, empty ones included: they fail closed below
        elif key and content and key.lower() not in metas:
            metas[key.lower()] = content
    raw: dict[str, object] = {}
    for target, keys in _DATE_META.items():
        for key in keys:
            if key in metas and iso_date(metas[key]):
                raw[target] = metas[key]
                break
    if "created" not in raw or "updated" not in raw:
        times = [t.get("datetime") for t in root.iter("time") if t.get("datetime")]
        dated = [d for d in (iso_date(t) for t in times) if d]
        if dated:
            raw.setdefault("created", min(dated))
    if "updated" not in raw and "created" in raw:
        raw["updated"] = raw["created"]
    if metas.get("author"):
        raw["author"] = metas["author"]
    if metas.get("keywords"):
        raw["tags"] = [k.strip() for k in metas["keywords"].split(",") if k.strip()]
    if len(set(access)) > 1:
        raise IngestError(f"{len(access)} different <meta name=\"acl\"> tags; keep one listing every role")
    if access:
        raw["acl"] = access[0]  # normalise_metadata splits it at commas and refuses an empty one
    if metas.get("description"):
        raw["description"] = metas["description"]
    lang = root.get("lang") or metas.get("content-language")
    if lang:
        raw["lang"] = lang
    title_el = root.find(".//title")
    title = " ".join((title_el.text_content() if title_el is not None else "").split())
    if not title:
        title = metas.get("og:title", "")
    if not title:
        h1 = root.find(".//h1")
        title = " ".join(h1.text_content().split()) if h1 is not None else ""
    return title, normalise_metadata(raw)


MAX_HTML_DEPTH = 256
"""Element nesting libxml2's HTML parser reads (its limit without ``XML_PARSE_HUGE``): the content nested
deeper is not in the tree (``too_deep``)."""

TOO_DEEP = (f"elements nested more than {MAX_HTML_DEPTH} levels deep (the HTML parser's limit); the content "
            f"below that depth is not read")


def parse_html(source: str | bytes) -> etree._Element:
    """Parse page source with lxml's forgiving HTML parser; raises IngestError for an empty page."""
    return parse_html_depth(source)[0]


def parse_html_depth(source: str | bytes) -> tuple[etree._Element, bool]:
    """Parse page source as ``parse_html`` does: ``(root, too_deep)``, ``too_deep`` when the page nests elements
    deeper than ``MAX_HTML_DEPTH`` levels, whose content the tree then lacks.

    Raises:
        IngestError: an empty or unparseable page.
    """
    if not source.strip():
        raise IngestError("empty HTML file")
    if isinstance(source, str):
        source = re.sub(r"^\s*<\?xml[^>]*\?>", "", source)  # lxml refuses str input with an encoding declaration
    parser = lxml_html.HTMLParser()
    try:
        root = lxml_html.document_fromstring(source, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise IngestError(f"unparseable HTML: {exc}") from exc
    return root, any(e.type_name == "ERR_RESOURCE_LIMIT" and "depth" in e.message for e in parser.error_log)


def plain_text_page(text: str) -> str | None:
    """The text of a page whose main content is nothing but ``<pre>`` blocks that name no language (an RFC, a
    plain-text file served as HTML), read as a plain-text file is (``text.structure_text``: heading-like lines
    become headings, the rest is prose the answerer can quote); None for any other page, whose ``<pre>`` blocks
    stay fenced code."""
    lines = text.split("\n")
    fenced = fenced_blocks(lines)
    if not fenced or any(b.info or not b.closed for b in fenced):
        return None
    inside = {i for b in fenced for i in range(b.start, b.end)}
    if any(line.strip() for i, line in enumerate(lines) if i not in inside):
        return None
    body = "\n\n".join("\n".join(lines[b.start + 1:b.end - 1]) for b in fenced)
    return tidy(structure_text(body))


def load_html(path: Path, doc_id: str) -> Document:
    """Load one HTML page as a Document holding its main content only (a page of nothing but plain ``<pre>``
    text is read as a plain-text file is: ``plain_text_page``).

    Metadata comes from ``<meta>`` tags (``acl`` as a comma-separated role list; two different ``acl`` tags or
    an empty one are refused) and from a front-matter block before ``<html>`` (Jekyll, Hugo), which wins.

    A page nesting elements deeper than ``MAX_HTML_DEPTH`` levels keeps the text above that depth, with a
    warning (``TOO_DEEP``).

    Raises:
        IngestError: the file is empty, unparseable, has no main text (also: no text above the depth limit), or
            malformed access metadata.
    """
    decoded = decode_text(path, declared=True)
    front, source = split_front_matter(decoded.text, plain_metadata=False)  # Jekyll/Hugo HTML pages
    root, too_deep = parse_html_depth(source)
    title, metadata = page_metadata(root)
    if front:
        metadata = {**metadata, **normalise_metadata(front)}
        title = str(front.get("title") or "").strip() or title
    text = extract_main_text(root)
    text = plain_text_page(text) or text
    if not text:
        raise IngestError(f"no main text found in the HTML page: {TOO_DEEP}" if too_deep
                          else "no main text found in the HTML page")
    return Document(
        doc_id=doc_id,
        text=text,
        title=title or heading_title(text, path),
        source=str(path.resolve()),
        format="html",
        metadata=metadata,
        warnings=(*decoded.warnings, TOO_DEEP) if too_deep else decoded.warnings,
    )
