"""DOCX, PPTX, EPUB, reStructuredText, man pages and gzip-compressed text: structure and metadata kept.

Every input is written here, with the same libraries that read it (python-docx, python-pptx, ebooklib).
"""

import datetime as dt
import gzip
import zipfile

import pytest

from openbook.errors import IngestError
from openbook.ingest import load_file

CUSTOM_XML = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" '
    'xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">'
    '<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="2" name="{name}"><vt:lpwstr>{value}</vt:lpwstr>'
    "</property></Properties>"
)


def _add_custom(path, name, value):
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("docProps/custom.xml", CUSTOM_XML.replace("{name}", name).replace("{value}", value))


def _docx(path, acl=None):
    import docx

    doc = docx.Document()
    doc.add_paragraph("Relay Handbook", style="Title")
    doc.add_heading("Ports", level=1)
    doc.add_paragraph("The relay listens on port 9090.")
    doc.add_paragraph("Check the socket", style="List Bullet")
    doc.add_paragraph("Reload the daemon", style="List Number")
    table = doc.add_table(rows=3, cols=2)
    for r, row in enumerate([("Mode", "Port"), ("fast", "9090"), ("safe", "9091")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    doc.add_heading("Limits", level=2)
    doc.add_paragraph("At most 64 sessions.")
    props = doc.core_properties
    props.author, props.keywords = "Ana Lind", "relay; ops"
    props.created, props.modified = dt.datetime(2023, 1, 2), dt.datetime(2024, 5, 1)
    doc.save(str(path))
    if acl is not None:
        _add_custom(path, "ACL", acl)
    return path


def test_docx_headings_lists_tables_metadata(tmp_path):
    doc = load_file(_docx(tmp_path / "handbook.docx", acl="hr, ops"), "handbook.docx")[0]
    assert doc.format == "docx" and doc.title == "Relay Handbook"
    assert doc.text.split("\n\n") == [
        "# Relay Handbook",
        "## Ports",
        "The relay listens on port 9090.",
        "- Check the socket\n1. Reload the daemon",  # a List Number paragraph keeps Word's number
        "| Mode | Port |\n| --- | --- |\n| fast | 9090 |\n| safe | 9091 |",
        "### Limits",
        "At most 64 sessions.",
    ]
    meta = doc.metadata
    assert meta["author"] == "Ana Lind" and meta["tags"] == ["relay", "ops"]
    assert meta["created"] == "2023-01-02" and meta["updated"] == "2024-05-01" and meta["acl"] == ["hr", "ops"]


def test_docx_headings_sit_below_the_title(tmp_path):
    import docx

    from openbook.chunking import chunk_document

    # a Title paragraph is the top heading, so a section's path keeps it ("Relay Handbook > Ports"), as in
    # Markdown; a document without one keeps Heading 1 as its top level
    chunks = chunk_document(load_file(_docx(tmp_path / "handbook.docx"), "handbook.docx")[0])
    assert any(c.section == "Relay Handbook > Ports" for c in chunks)
    doc = docx.Document()
    doc.add_heading("Ports", level=1)
    doc.add_paragraph("The relay listens on port 9090.")
    doc.save(str(tmp_path / "plain.docx"))
    assert load_file(tmp_path / "plain.docx", "plain.docx")[0].text.startswith("# Ports\n")


def test_docx_malformed_acl_and_broken_file_refused(tmp_path):
    with pytest.raises(IngestError, match="malformed acl"):
        load_file(_docx(tmp_path / "a.docx", acl=" "), "a.docx")
    bad = tmp_path / "b.docx"
    bad.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(IngestError, match="b.docx: not a valid DOCX"):
        load_file(bad, "b.docx")


def test_pptx_one_page_per_slide(tmp_path):
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    s1 = deck.slides.add_slide(deck.slide_layouts[1])
    s1.shapes.title.text = "Relay rollout"
    body = s1.placeholders[1].text_frame
    body.text = "Week 1: staging"
    p = body.add_paragraph()
    p.text, p.level = "Week 2: production", 1
    s1.notes_slide.notes_text_frame.text = "Mention the 9090 port."
    s2 = deck.slides.add_slide(deck.slide_layouts[5])
    s2.shapes.title.text = "Budget"
    rows = [("Item", "Cost"), ("Servers", "1200"), ("Support", "300")]
    table = s2.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    deck.core_properties.title = "Rollout plan"
    deck.core_properties.author = "Bo Chen"
    path = tmp_path / "plan.pptx"
    deck.save(str(path))
    doc = load_file(path, "plan.pptx")[0]
    assert doc.format == "pptx" and doc.title == "Rollout plan" and doc.metadata["slide_count"] == 2
    assert len(doc.pages) == 2 and doc.text[doc.pages[1]:].startswith("## Budget")
    assert "## Relay rollout\n\n- Week 1: staging\n- Week 2: production\n\nNotes: Mention the 9090 port." in doc.text
    assert "| Item | Cost |\n| --- | --- |\n| Servers | 1200 |" in doc.text
    assert doc.page_at(doc.text.index("Servers")) == 2
    assert doc.warnings == ()
    # the deck never set its dates: python-pptx's template dates (2013) are not the document's
    assert "updated" not in doc.metadata and "created" not in doc.metadata


def test_docx_template_dates_are_not_the_document_s(tmp_path):
    import docx

    doc = docx.Document()
    doc.add_paragraph("Generated by a script that never set the core dates.")
    doc.save(str(tmp_path / "generated.docx"))
    meta = load_file(tmp_path / "generated.docx", "generated.docx")[0].metadata
    assert "updated" not in meta and "created" not in meta and "author" not in meta


def test_pptx_picture_only_slide_warns(tmp_path):
    import pptx
    from pptx.util import Inches

    png = tmp_path / "dot.png"
    png.write_bytes(
        bytes.fromhex(
            "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
            "0001e221bc330000000049454e44ae426082"
        )
    )
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[5])
    first.shapes.title.text = "Overview"
    pictures = deck.slides.add_slide(deck.slide_layouts[6])
    pictures.shapes.add_picture(str(png), Inches(1), Inches(1))
    path = tmp_path / "deck.pptx"
    deck.save(str(path))
    doc = load_file(path, "deck.pptx")[0]
    assert doc.warnings == ("slide 2 has only pictures, no text: its content is missing",)


def test_epub_chapters_in_spine_order(tmp_path):
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("relay-guide-1")
    book.set_title("Relay Guide")
    book.set_language("en")
    book.add_author("Ana Lind")
    book.add_metadata("DC", "date", "2024-05-01")
    book.add_metadata("DC", "subject", "networking")
    chapters = []
    for i, (head, body) in enumerate([
        ("Install", "<p>Install the relay first.</p><pre>apt install relay\nrelayctl start</pre>"),
        ("Tune", "<p>Tune the buffers.</p><table><tr><th>Knob</th><th>Value</th></tr><tr><td>buf</td><td>64k</td></tr></table>"),
    ]):
        ch = epub.EpubHtml(title=head, file_name=f"c{i}.xhtml", lang="en")
        ch.content = f"<html><body><h1>{head}</h1>{body}</body></html>"
        book.add_item(ch)
        chapters.append(ch)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    path = tmp_path / "guide.epub"
    epub.write_epub(str(path), book, {"mtime": dt.datetime(2024, 6, 2, 9, 30)})  # dcterms:modified
    doc = load_file(path, "guide.epub")[0]
    assert doc.format == "epub" and doc.title == "Relay Guide"
    assert doc.metadata["author"] == "Ana Lind" and doc.metadata["created"] == "2024-05-01"
    assert doc.metadata["updated"] == "2024-06-02"
    assert doc.metadata["tags"] == ["networking"] and doc.metadata["lang"] == "en"
    assert doc.text.index("# Install") < doc.text.index("# Tune") and len(doc.pages) == 2
    assert "apt install relay\nrelayctl start" in doc.text
    assert "| Knob | Value |\n| --- | --- |\n| buf | 64k |" in doc.text


RST = """\
==============
Relay Handbook
==============

:Author: Ana Lind
:Date: 2024-05-01
:Tags: relay, ops
:ACL: hr

Intro paragraph with *emphasis*.

Setup
=====

.. code-block:: bash

   relayctl reload

===== =====
Mode  Port
===== =====
fast  9090
===== =====

Limits
------

- one
- two
"""


def test_rst_structure_and_docinfo(tmp_path):
    path = tmp_path / "handbook.rst"
    path.write_text(RST, encoding="utf-8")
    doc = load_file(path, "handbook.rst")[0]
    assert doc.format == "rst" and doc.title == "Relay Handbook"
    assert doc.metadata["acl"] == ["hr"] and doc.metadata["tags"] == ["relay", "ops"]
    assert doc.metadata["updated"] == "2024-05-01" and doc.metadata["author"] == "Ana Lind"
    assert doc.text.split("\n\n") == [
        "Intro paragraph with emphasis.", "# Setup", "relayctl reload",
        "| Mode | Port |\n| --- | --- |\n| fast | 9090 |", "## Limits", "- one\n- two",
    ]
    path.write_text(RST.replace(":ACL: hr", ":ACL:"), encoding="utf-8")
    with pytest.raises(IngestError, match="malformed acl"):
        load_file(path, "handbook.rst")


MAN = r""".\" a comment
.TH RELAYCTL 8 "2024-05-01" "relay 2.3" "System Manager's Manual"
.SH NAME
relayctl \- control the Harrow relay daemon
.SH DESCRIPTION
.B relayctl
talks to the relay over its \fIcontrol\fR socket.
.SS Options
.TP
.BR \-p ", " \-\-port
Port of the control socket.
.SH EXAMPLES
.nf
relayctl -p 9090 status
relayctl reload
.fi
.SH EXIT STATUS
.TS
tab(;);
l l.
Code;Meaning
2;socket unreachable
.TE
"""


def test_man_page_and_gzip(tmp_path):
    plain = tmp_path / "relayctl.8"
    plain.write_text(MAN, encoding="utf-8")
    packed = tmp_path / "relayctl.8.gz"
    packed.write_bytes(gzip.compress(MAN.encode()))
    for path in (plain, packed):
        doc = load_file(path, path.name)[0]
        assert doc.format == "man" and doc.title == "relayctl(8): control the Harrow relay daemon"
        assert doc.metadata["updated"] == "2024-05-01"
        assert "## DESCRIPTION\n\nrelayctl\ntalks to the relay over its control socket." in doc.text
        assert "### Options\n\n- -p, --port: Port of the control socket." in doc.text
        assert "relayctl -p 9090 status\nrelayctl reload" in doc.text
        assert "| Code | Meaning |\n| --- | --- |\n| 2 | socket unreachable |" in doc.text


def test_mdoc_page(tmp_path):
    path = tmp_path / "relayd.8"
    path.write_text(
        ".Dd $Mdocdate: May 1 2024 $\n.Dt RELAYD 8\n.Os\n.Sh NAME\n.Nm relayd\n.Nd relay daemon\n.Sh SYNOPSIS\n"
        ".Nm\n.Op Fl dv\n.Op Fl f Ar file\n.Sh DESCRIPTION\n.Nm\nforwards traffic, see\n.Xr relayctl 8 .\n",
        encoding="utf-8",
    )
    doc = load_file(path, "relayd.8")[0]
    assert doc.title == "relayd(8): relay daemon" and doc.metadata["updated"] == "2024-05-01"
    assert "relayd\n-dv\n-f file" in doc.text and "relayctl(8)" in doc.text


def test_gzip_markdown_and_text(tmp_path):
    (tmp_path / "notes.md.gz").write_bytes(gzip.compress(b"---\nacl: [hr]\n---\n# Notes\n\nPort 9090.\n"))
    doc = load_file(tmp_path / "notes.md.gz", "notes.md.gz")[0]
    assert doc.format == "markdown" and doc.metadata["acl"] == ["hr"] and doc.title == "Notes"
    (tmp_path / "corrupt.txt.gz").write_bytes(b"\x1f\x8b\x08\x00broken")
    with pytest.raises(IngestError, match="corrupt gzip"):
        load_file(tmp_path / "corrupt.txt.gz", "corrupt.txt.gz")


def test_numbered_file_without_macros_is_text(tmp_path):
    path = tmp_path / "relay.log.1"
    path.write_text("2024-05-01 relay started on port 9090\n2024-05-01 relay stopped\n", encoding="utf-8")
    doc = load_file(path, "relay.log.1")[0]
    assert doc.format == "text" and "port 9090" in doc.text


def test_man_title_takes_the_whole_name_paragraph(tmp_path):
    # a NAME description continued on macro lines (as in adduser.conf(5)) is not cut at its first line
    path = tmp_path / "relay.conf.5"
    path.write_text(".TH RELAY.CONF 5 2024-05-01\n.SH NAME\n/etc/relay.conf \\- configuration file for\n"
                    ".BR relayd (8)\nand\n.BR relayctl (8)\n.SH DESCRIPTION\nOne option per line.\n", encoding="utf-8")
    doc = load_file(path, path.name)[0]
    assert doc.title == "relay.conf(5): configuration file for relayd(8) and relayctl(8)"


def test_man_macro_definitions_are_not_text(tmp_path):
    # rst2man pages define macros (.de1 ... ..) inside NAME: their bodies were indexed and shown as text
    path = tmp_path / "tags.5"
    path.write_text(".TH TAGS 5\n.SH NAME\ntags \\- Vi tags file format\n.\n.nr rst2man-indent-level 0\n"
                    ".de1 rstReportMargin\n\\\\$1 \\\\n[an-margin]\nlevel \\\\n[rst2man-indent-level]\n..\n"
                    ".ig\nan ignored block\n..\n.SH DESCRIPTION\nOne tag per line.\n", encoding="utf-8")
    doc = load_file(path, path.name)[0]
    assert doc.title == "tags(5): Vi tags file format"
    assert "an-margin" not in doc.text and "ignored block" not in doc.text and "One tag per line." in doc.text
