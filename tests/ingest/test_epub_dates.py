"""An EPUB's dates: ``updated`` from EPUB 3's ``dcterms:modified``, else EPUB 2's ``<dc:date
opf:event="modification">``, else its one ``dc:date``; ``created`` from the other ``dc:date``. Books written by
ebooklib here (ebooklib writes ``dcterms:modified`` from its ``mtime`` option), EPUB 2 ones with that element
taken out, as an EPUB 2 package has none."""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path

from openbook.api import Engine
from openbook.ingest import load_file


def _book(path: Path, dates: list[tuple[str, dict[str, str]]], mtime: dt.datetime | None) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("relay-guide")
    book.set_title("Relay Guide")
    book.set_language("en")
    for value, attrs in dates:
        book.add_metadata("DC", "date", value, attrs)
    chapter = epub.EpubHtml(title="Ports", file_name="ports.xhtml", lang="en")
    chapter.content = "<html><body><h1>Ports</h1><p>The relay listens on port 9090.</p></body></html>"
    book.add_item(chapter)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = [chapter]
    epub.write_epub(str(path), book, {"mtime": mtime} if mtime else {})
    if mtime is None:  # an EPUB 2 package: no dcterms:modified
        with zipfile.ZipFile(path) as zf:
            entries = [(info, zf.read(info)) for info in zf.infolist()]
        with zipfile.ZipFile(path, "w") as zf:
            for info, data in entries:
                if info.filename.endswith(".opf"):
                    data = re.sub(rb'\s*<meta property="dcterms:modified">[^<]*</meta>', b"", data)
                    assert b"dcterms:modified" not in data
                zf.writestr(info, data)
    return path


EVENT = "{http://www.idpf.org/2007/opf}event"


def test_epub3_updated_is_its_dcterms_modified(tmp_path):
    path = _book(tmp_path / "guide.epub", [("2019-05-01", {})], dt.datetime(2023, 3, 14, 8, 0))
    meta = load_file(path, "guide.epub")[0].metadata
    assert (meta["created"], meta["updated"]) == ("2019-05-01", "2023-03-14")


def test_epub2_updated_is_its_modification_date(tmp_path):
    dates = [("2018-01-02", {EVENT: "publication"}), ("2021-07-08", {EVENT: "modification"})]
    meta = load_file(_book(tmp_path / "guide.epub", dates, None), "guide.epub")[0].metadata
    assert (meta["created"], meta["updated"]) == ("2018-01-02", "2021-07-08")
    dates = [("2021-07-08", {EVENT: "modification"}), ("2018-01-02", {})]  # in any order
    meta = load_file(_book(tmp_path / "other.epub", dates, None), "other.epub")[0].metadata
    assert (meta["created"], meta["updated"]) == ("2018-01-02", "2021-07-08")


def test_an_epub2_with_one_date_has_it_as_both(tmp_path):
    meta = load_file(_book(tmp_path / "guide.epub", [("2020-09-10", {})], None), "guide.epub")[0].metadata
    assert (meta["created"], meta["updated"]) == ("2020-09-10", "2020-09-10")
    meta = load_file(_book(tmp_path / "bare.epub", [], None), "bare.epub")[0].metadata
    assert "created" not in meta and "updated" not in meta


def test_an_epub_is_filtered_by_its_modified_date(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    _book(docs / "new.epub", [("2019-05-01", {})], dt.datetime(2025, 1, 20))
    _book(docs / "old.epub", [("2019-05-01", {EVENT: "publication"}), ("2020-02-02", {EVENT: "modification"})], None)
    with Engine.open(tmp_path / "kb", create=True) as engine:
        assert sorted(engine.ingest([docs], embed=False).added) == ["new.epub", "old.epub"]
        hits = engine.search("relay port", k=5, mode="bm25", where=["updated >= 2024-01-01"])
    assert [hit.doc_id for hit in hits] == ["new.epub"]
