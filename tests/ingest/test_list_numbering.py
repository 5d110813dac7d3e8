"""Ordered lists keep their numbers in every loader that sees list structure (HTML and EPUB, DOCX, PPTX, reST,
man pages): "3. Open Settings" stays item 3, so a how-to answer quotes the steps as the document numbers them.
Small real files written by each test."""

from __future__ import annotations

from lxml import etree

from openbook.ingest import load_file

HOW_TO = """<!DOCTYPE html><html lang="en"><head><title>Rotate an API key</title></head><body><main>
<h1>Rotate an API key</h1><p>Steps 1 and 2 (sign in, open the console) are on the previous page.</p>
<ol start="3"><li>Open <b>Settings</b> &gt; API keys.</li><li>Click Rotate next to the key.
<ul><li>The old key keeps working for 24 hours.</li></ul></li><li value="7">Copy the new key.</li>
<li>Close the dialog.</li></ol>
<ol reversed><li>Three</li><li>Two</li><li>One</li></ol>
<ul><li>A bullet item stays a bullet item.</li></ul></main></body></html>"""


def test_html_ordered_list_keeps_start_value_reversed_and_nesting(tmp_path) -> None:
    path = tmp_path / "rotate.html"
    path.write_text(HOW_TO, encoding="utf-8")
    lines = load_file(path, "rotate.html")[0].text.split("\n")
    assert lines[lines.index("3. Open Settings > API keys."):] == [
        "3. Open Settings > API keys.",
        "4. Click Rotate next to the key.",
        "  - The old key keeps working for 24 hours.",  # a nested list, indented under its item
        "7. Copy the new key.",  # <li value="7"> resets the count, as a browser does
        "8. Close the dialog.",
        "",
        "3. Three",  # <ol reversed> counts down from the number of items
        "2. Two",
        "1. One",
        "",
        "- A bullet item stays a bullet item.",
    ]


def test_html_without_main_element_keeps_numbers_through_trafilatura(tmp_path) -> None:
    # no <main>/<article>: trafilatura picks the content (its XML drops ``start``: the numbers restart at 1)
    body = "<p>" + "Rotating a key replaces it without downtime for the services that use it. " * 6 + "</p>"
    page = (f"<html><head><title>Keys</title></head><body><div>{body}<ol><li>Open the console settings page.</li>"
            "<li>Click the rotate button now.</li></ol></div></body></html>")
    path = tmp_path / "keys.html"
    path.write_text(page, encoding="utf-8")
    text = load_file(path, "keys.html")[0].text
    assert "1. Open the console settings page.\n2. Click the rotate button now." in text


def test_docx_numbering_is_replayed_as_word_numbers_it(tmp_path) -> None:
    import docx

    doc = docx.Document()
    doc.add_heading("Rotate an API key", 1)
    doc.add_paragraph("Open Settings.", style="List Number")
    doc.add_paragraph("Click Rotate.", style="List Number")
    doc.add_paragraph("The old key keeps working for a day.", style="List Bullet")
    doc.add_paragraph("Then:")
    doc.add_paragraph("Copy the new key.", style="List Number")  # the same numbering goes on: 3
    doc.add_paragraph("", style="List Paragraph")  # an empty list paragraph adds nothing
    path = tmp_path / "rotate.docx"
    doc.save(str(path))
    assert load_file(path, "rotate.docx")[0].text.split("\n\n") == [
        "# Rotate an API key",
        "1. Open Settings.\n2. Click Rotate.\n- The old key keeps working for a day.",
        "Then:",
        "3. Copy the new key.",
    ]


def test_docx_start_override_and_levels(tmp_path) -> None:
    import docx

    doc = docx.Document()
    items = [doc.add_paragraph(text, style="List Number") for text in ("Sign in.", "Open keys.", "Rotate.")]
    numbering = doc.part.numbering_part.element
    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    # a new numbering instance of the same list definition, starting at 5, for the last two items at level 1
    num_id = items[0].style.element.pPr.numPr.numId.val
    abstract = numbering.find(f"{w}num[@{w}numId='{num_id}']").find(f"{w}abstractNumId").get(f"{w}val")
    num = etree.SubElement(numbering, f"{w}num", {f"{w}numId": "99"})
    etree.SubElement(num, f"{w}abstractNumId", {f"{w}val": abstract})
    override = etree.SubElement(num, f"{w}lvlOverride", {f"{w}ilvl": "1"})
    etree.SubElement(override, f"{w}startOverride", {f"{w}val": "5"})
    for p in items[1:]:
        num_pr = p._p.get_or_add_pPr().get_or_add_numPr()
        num_pr.get_or_add_ilvl().val = 1
        num_pr.get_or_add_numId().val = 99
    path = tmp_path / "levels.docx"
    doc.save(str(path))
    assert load_file(path, "levels.docx")[0].text == "1. Sign in.\n  5. Open keys.\n  6. Rotate."


def test_pptx_auto_numbered_paragraphs(tmp_path) -> None:
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Rotate an API key"
    frame = slide.placeholders[1].text_frame
    frame.text = "Open Settings."
    for text in ("Click Rotate.", "Copy the new key."):
        frame.add_paragraph().text = text
    for i, para in enumerate(frame.paragraphs):
        auto = etree.SubElement(para._p.get_or_add_pPr(),
                                "{http://schemas.openxmlformats.org/drawingml/2006/main}buAutoNum",
                                {"type": "arabicPeriod"})
        if i == 0:
            auto.set("startAt", "2")
    path = tmp_path / "rotate.pptx"
    deck.save(str(path))
    text = load_file(path, "rotate.pptx")[0].text
    assert text.endswith("2. Open Settings.\n3. Click Rotate.\n4. Copy the new key.")


def test_rst_enumerated_list_from_its_start(tmp_path) -> None:
    path = tmp_path / "rotate.rst"
    path.write_text("Rotate an API key\n=================\n\nSteps:\n\n3. Open Settings.\n4. Click Rotate.\n\n"
                    "   - The old key keeps working.\n\n5. Copy the new key.\n\n- A bullet.\n", encoding="utf-8")
    assert load_file(path, "rotate.rst")[0].text.split("\n\n")[-2:] == [
        "3. Open Settings.\n4. Click Rotate.\n  - The old key keeps working.\n5. Copy the new key.", "- A bullet."]


def test_man_page_numbered_items(tmp_path) -> None:
    path = tmp_path / "keytool.1"
    path.write_text(".TH KEYTOOL 1\n.SH ROTATING\nTo rotate a key:\n.IP 1.\nRun keytool list.\n.IP 2.\n"
                    "Run keytool rotate.\n.IP \\(bu\nA bullet.\n", encoding="utf-8")
    text = load_file(path, "keytool.1")[0].text
    assert "1. Run keytool list.\n\n2. Run keytool rotate.\n\n- A bullet." in text


def test_docx_unreadable_numbering_is_still_a_list_item(tmp_path) -> None:
    import zipfile

    import docx

    doc = docx.Document()
    num_pr = doc.add_paragraph("Open Settings.")._p.get_or_add_pPr().get_or_add_numPr()
    num_pr.get_or_add_numId().val = 3
    num_pr.get_or_add_ilvl().val = 0
    path = tmp_path / "broken.docx"
    doc.save(str(path))
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    parts["word/document.xml"] = parts["word/document.xml"].replace(b'w:numId w:val="3"', b'w:numId w:val="x"')
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)
    assert load_file(path, "broken.docx")[0].text == "- Open Settings."  # the file loads; the item stays an item
