"""DOCX and PPTX text as the office suite shows it: real files written by python-docx / python-pptx, with the
WordprocessingML and PresentationML those libraries cannot write (tracked changes, footnotes, endnotes, content
controls, hidden slides) added as raw XML, then read through ``load_file`` as an ingest reads them."""

from __future__ import annotations

import pytest

from openbook.chunking import chunk_document
from openbook.config import ChunkingConfig, Config
from openbook.ingest import load_file

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W = f'xmlns:w="{W_NS}"'
_REVISION = 'w:author="Ana" w:date="2026-01-05T10:00:00Z"'


def _xml(text: str):
    from docx.oxml.parser import parse_xml

    return parse_xml(text)


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def _notes_part(doc, kind: str, notes: dict[int, str]):
    """Add a footnotes or endnotes part with these notes (id -> text), and Word's two separator notes."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    body = "".join(
        f'<w:{kind} w:id="{i}"><w:p><w:r><w:rPr><w:rStyle w:val="{kind.title()}Text"/></w:rPr><w:{kind}Ref/></w:r>'
        f'{_run(" " + text)}</w:p></w:{kind}>' for i, text in notes.items())
    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:{kind}s {W}>'
           f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
           f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
           f'</w:{kind}>{body}</w:{kind}s>')
    content_type = f"application/vnd.openxmlformats-officedocument.wordprocessingml.{kind}s+xml"
    part = Part(PackURI(f"/word/{kind}s.xml"), content_type, xml.encode("utf-8"), doc.part.package)
    doc.part.relate_to(part, RT.FOOTNOTES if kind == "footnote" else RT.ENDNOTES)


def _paragraph(doc, inner_xml: str):
    p = doc.add_paragraph()
    for element in _xml(f"<w:p {W}>{inner_xml}</w:p>"):
        p._p.append(element)
    return p


def test_a_tracked_insertion_is_read_and_a_tracked_deletion_is_not(tmp_path):
    import docx

    doc = docx.Document()
    doc.add_heading("Deposits", 1)
    _paragraph(doc, _run("The deposit is ")
               + f'<w:del w:id="1" {_REVISION}><w:r><w:delText>200</w:delText></w:r></w:del>'
               + f'<w:ins w:id="2" {_REVISION}>{_run("300")}</w:ins>' + _run(" marks."))
    _paragraph(doc, _run("Refunds take ") + f'<w:moveFrom w:id="3" {_REVISION}>{_run("ten ")}</w:moveFrom>'
               + _run("five days") + f'<w:moveTo w:id="4" {_REVISION}>{_run(", ten at most")}</w:moveTo>' + _run("."))
    _paragraph(doc, f'<w:hyperlink w:anchor="x"><w:ins w:id="5" {_REVISION}>{_run("Linked and inserted")}</w:ins>'
                    f'</w:hyperlink>')
    table = doc.add_table(rows=1, cols=2)
    table.cell(0, 0).paragraphs[0]._p.append(_xml(f'<w:ins {W} w:id="6" {_REVISION}>{_run("Fee")}</w:ins>'))
    table.cell(0, 1).paragraphs[0].add_run("12 marks")
    path = tmp_path / "deposit.docx"
    doc.save(path)
    [d] = load_file(path, "deposit.docx")
    assert "The deposit is 300 marks." in d.text
    assert "200" not in d.text and "  marks" not in d.text
    assert "Refunds take five days, ten at most." in d.text
    assert "Linked and inserted" in d.text
    assert "| Fee | 12 marks |" in d.text


def test_footnotes_and_endnotes_belong_to_the_document(tmp_path):
    import docx

    doc = docx.Document()
    doc.add_heading("Handbook", 0)
    doc.add_heading("Leave", 1)
    _paragraph(doc, _run("Leave is 25 days.") + '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr>'
                                               '<w:footnoteReference w:id="7"/></w:r>'
               + _run(" Carry-over needs approval.") + '<w:r><w:endnoteReference w:id="2"/></w:r>')
    _paragraph(doc, _run("Sick days are separate.") + '<w:r><w:footnoteReference w:id="3"/></w:r>')
    _notes_part(doc, "footnote", {3: "A doctor's note from day three.", 7: "Part-time staff: pro rata.",
                                  9: "A note nothing references."})
    _notes_part(doc, "endnote", {2: "See the collective agreement, section 4."})
    path = tmp_path / "handbook.docx"
    doc.save(path)
    [d] = load_file(path, "handbook.docx")
    # numbered as Word shows them: footnotes 1, 2 in the order referenced, endnotes i, ii
    assert "Leave is 25 days.[^1] Carry-over needs approval.[^i]" in d.text
    assert "Sick days are separate.[^2]" in d.text
    assert "## Footnotes\n\n[^1] Part-time staff: pro rata.\n\n[^2] A doctor's note from day three." in d.text
    assert "## Endnotes\n\n[^i] See the collective agreement, section 4." in d.text
    assert "nothing references" not in d.text  # Word does not show a note without a reference
    assert "separator" not in d.text.lower()
    chunks = chunk_document(d, ChunkingConfig())
    note = next(c for c in chunks if "pro rata" in c.text)
    assert note.headings[-1] == "Footnotes" and note.doc_id == "handbook.docx"


def test_content_control_paragraphs_are_read(tmp_path):
    import docx

    doc = docx.Document()
    doc.add_paragraph("Before the form.")
    sdt = _xml(f'<w:sdt {W}><w:sdtPr><w:alias w:val="Policy owner"/></w:sdtPr><w:sdtContent>'
               f'<w:p>{_run("Owner: the finance team.")}</w:p>'
               f'<w:sdt><w:sdtContent><w:p>{_run("Review every March.")}</w:p></w:sdtContent></w:sdt>'
               f'</w:sdtContent></w:sdt>')
    doc.element.body.insert(len(doc.element.body) - 1, sdt)  # before the final sectPr
    _paragraph(doc, _run("Contact ") + f'<w:sdt><w:sdtContent>{_run("Ana Ruiz")}</w:sdtContent></w:sdt>'
               + _run(" for changes."))
    path = tmp_path / "form.docx"
    doc.save(path)
    [d] = load_file(path, "form.docx")
    assert d.text.index("Before the form.") < d.text.index("Owner: the finance team.") \
        < d.text.index("Review every March.") < d.text.index("Contact Ana Ruiz for changes.")
    assert "Policy owner" not in d.text  # the control's properties are not text


def _deck(path, hidden: set[int]):
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    for n, (title, body, notes) in enumerate([
        ("Roadmap", "Launch in spring.", "Say the date twice."),
        ("Draft pricing", "Price stays at 40 marks.", "Do not share the 40 marks yet."),
        ("Questions", "Ask the team.", ""),
    ], 1):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
        slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text_frame.text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
        if n in hidden:
            slide._element.set("show", "0")
    deck.save(path)


def test_a_hidden_slide_and_its_notes_are_left_out_and_later_slides_keep_their_numbers(tmp_path):
    path = tmp_path / "deck.pptx"
    _deck(path, hidden={2})
    [d] = load_file(path, "deck.pptx")
    assert "Draft pricing" not in d.text and "40 marks" not in d.text
    assert "Roadmap" in d.text and "Questions" in d.text
    assert d.metadata["slide_count"] == 3 and "hidden_slides" not in d.metadata
    assert d.page_at(d.text.index("Ask the team")) == 3  # slide 3 is still cited as slide 3
    assert d.page_at(d.text.index("Launch in spring")) == 1
    assert any("hidden slide(s) 2 left out" in w and "hidden_slides = true" in w for w in d.warnings)


def test_hidden_slides_included_by_the_setting_are_marked_hidden(tmp_path):
    path = tmp_path / "deck.pptx"
    _deck(path, hidden={2})
    [d] = load_file(path, "deck.pptx", hidden_slides=True)
    assert "## Draft pricing (hidden slide)" in d.text and "Notes: Do not share the 40 marks yet." in d.text
    assert "## Roadmap\n" in d.text and "Roadmap (hidden" not in d.text
    assert d.metadata["hidden_slides"] == [2]
    assert d.page_at(d.text.index("Price stays")) == 2 and d.page_at(d.text.index("Ask the team")) == 3
    chunks = chunk_document(d, ChunkingConfig())
    hidden = [c for c in chunks if "40 marks" in c.text]
    assert hidden and all(c.headings[-1] == "Draft pricing (hidden slide)" for c in hidden)
    assert all("(hidden slide)" not in " ".join(c.headings) for c in chunks if "Ask the team" in c.text)


@pytest.mark.parametrize("setting", [False, True])
def test_an_ingest_follows_the_hidden_slides_setting(tmp_path, setting):
    from openbook.api import Engine

    folder = tmp_path / "docs"
    folder.mkdir()
    _deck(folder / "deck.pptx", hidden={2})
    config = Config().with_overrides({"embedding.enabled": False, "ingest.hidden_slides": setting})
    engine = Engine.open(tmp_path / "store", config, create=True)
    try:
        report = engine.ingest([folder])
        assert report.ok
        hits = engine.search("draft pricing marks", k=5)
        assert bool(hits) is setting
        if setting:
            assert "(hidden slide)" in hits[0].chunk.headings[-1]
        else:
            assert any("hidden slide(s) 2" in w for _, w in report.warnings)
    finally:
        engine.close()
