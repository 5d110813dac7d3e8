"""EPUB access lists: a book's package metadata carries its ``acl`` as an HTML page's ``<meta name="acl">``
does, and access metadata that cannot be read refuses the book, never publishes it. Real EPUB files written by
ebooklib, a real BM25 store."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.config import Config
from openbook.errors import IngestError
from openbook.ingest import load_file

SECRET = "The salary band for senior potters is 4,100 EUR a month."


def write_epub(path: Path, metas: list[tuple[str | None, dict[str, str]]] = (), head: str = "") -> Path:
    """A one-chapter EPUB with package ``<meta>`` elements ``metas`` ((text, attributes)) and, with ``head``, a
    ``<meta name="acl" content=HEAD>`` in the chapter's own ``<head>``."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier(path.stem)
    book.set_title("Pay handbook")
    book.set_language("en")
    for text, attrs in metas:
        book.add_metadata(None, "meta", text, attrs)
    chapter = epub.EpubHtml(title="Pay", file_name="pay.xhtml", lang="en")
    chapter.content = f"<html><body><h1>Pay</h1><p>{SECRET}</p></body></html>"
    if head:
        chapter.add_meta(name="acl", content=head)
    book.add_item(chapter)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", chapter]
    epub.write_epub(str(path), book)
    return path


@pytest.mark.parametrize("metas, head, acl", [
    ([(None, {"name": "acl", "content": "hr, finance"})], "", ["hr", "finance"]),  # OPF 2 form
    ([("hr", {"property": "openbook:acl"})], "", ["hr"]),  # EPUB 3 form, prefixed as EPUB 3 wants
    ([(None, {"name": "Roles", "content": "hr"})], "", ["hr"]),  # a spelling front matter reads as acl
    ([], "hr", ["hr"]),  # only a chapter says it: the whole book is hidden
    ([(None, {"name": "acl", "content": "hr"})], "hr", ["hr"]),  # the same list twice
    # the same roles in another order or spacing are one list (they refused the book as "2 different lists")
    ([(None, {"name": "acl", "content": "hr, finance"})], "finance,hr", ["hr", "finance"]),
])
def test_an_epub_access_list_is_read_from_its_metadata(tmp_path, metas, head, acl):
    doc = load_file(write_epub(tmp_path / "pay.epub", metas, head), "pay.epub")[0]
    assert doc.metadata["acl"] == acl


@pytest.mark.parametrize("metas, head, needle", [
    ([(None, {"name": "acl", "content": ""})], "", "malformed acl"),  # empty: never read as public
    ([("", {"property": "acl"})], "", "malformed acl"),
    ([(None, {"name": "acl", "content": "hr"}), (None, {"name": "acl", "content": "finance"})], "",
     "different access lists"),
    ([(None, {"name": "acl", "content": "hr"})], "staff", "different access lists"),
    ([(None, {"name": "acl", "content": "hr, finance"})], "hr", "different access lists"),  # a subset differs
    ([(None, {"name": "acl", "content": "hr"})], " ", "malformed acl"),  # a blank chapter list is never public
])
def test_epub_access_metadata_that_cannot_be_read_refuses_the_book(tmp_path, metas, head, needle):
    with pytest.raises(IngestError, match=needle):
        load_file(write_epub(tmp_path / "pay.epub", metas, head), "pay.epub")


def test_an_epub_without_access_metadata_stays_public(tmp_path):
    doc = load_file(write_epub(tmp_path / "pay.epub", [(None, {"name": "calibre:series", "content": "Pay"})]),
                    "pay.epub")[0]
    assert "acl" not in doc.metadata


def test_a_hidden_epub_is_found_only_by_its_roles_and_a_broken_one_is_not_stored(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_epub(docs / "pay.epub", [(None, {"name": "acl", "content": "hr"})])
    write_epub(docs / "broken.epub", [(None, {"name": "acl", "content": ""})])
    with Engine.open(tmp_path / "store", Config().with_overrides({"embedding.enabled": False}), create=True) as e:
        report = e.ingest([docs])
        assert report.added == ["pay.epub"] and [p.doc_id for p in report.problems] == ["broken.epub"]
        assert e.search("salary band senior potters", k=5) == []
        assert e.search("salary band senior potters", k=5, roles=["staff"]) == []
        assert [h.doc_id for h in e.search("salary band senior potters", k=5, roles=["hr"])] == ["pay.epub"]
        assert e.document("pay.epub") is None and e.document_exists("broken.epub") is False
