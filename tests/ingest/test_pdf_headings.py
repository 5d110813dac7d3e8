"""PDF headings become sections: from fonts (size, bold) where the PDF has them, from line shape otherwise."""

import shutil

import pytest

from openbook.chunking import chunk_document
from openbook.ingest import load_file
from openbook.ingest.pdf import reflow
from openbook.ingest.pdf_layout import FontLine, heading_key, heading_levels

from ingest_minipdf import write_pdf

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

_MUSTER = """<html><head><title>about:blank</title></head><body style="font-family:sans-serif;font-size:11pt">
<h1>Passenger Muster Procedure</h1>
<h2>1. Purpose</h2>
<p>This procedure sets out how passengers are mustered on the car deck before an evacuation of the vessel.</p>
<h2>2. Alarm signals</h2>
<p>The alarm is seven short blasts followed by one long blast on the ship's whistle and the general alarm bell.</p>
<h3>Crew duties</h3>
<ol><li>Close the watertight doors.</li><li>Open the muster stations.</li></ol>
<p><b>Lifeboats</b></p>
<p>Lifeboats are lowered on the master's order only.</p>
</body></html>"""


def _chromium_pdf(path, html):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM:
        pytest.skip("no system Chromium here (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_content(html)
            page.pdf(path=str(path))
        finally:
            browser.close()
    return path


def test_numbered_headings_are_not_glued_to_their_paragraph():
    text = reflow(["Title", "1. Purpose", "This procedure sets out how passengers are mustered.",
                   "2. Alarm signals", "The alarm is seven short blasts."], opening=True)
    assert text.split("\n\n") == [
        "# Title", "## 1. Purpose", "This procedure sets out how passengers are mustered.",
        "## 2. Alarm signals", "The alarm is seven short blasts.",
    ]


def test_subsection_numbers_nest():
    text = reflow(["2. Scope", "2.1 Vessels", "All vessels of the fleet are covered by this procedure."])
    assert text.split("\n\n")[:2] == ["## 2. Scope", "### 2.1 Vessels"]


def test_numbered_list_items_stay_items():
    text = reflow(["Checks", "1. Lifejackets", "2. Flares", "3. Whistles",
                   "All equipment is checked weekly by the crew on duty."])
    assert text.split("\n\n") == [
        "## Checks", "1. Lifejackets", "2. Flares", "3. Whistles", "All equipment is checked weekly by the crew on duty.",
    ]


def test_short_line_cut_mid_sentence_is_no_heading():
    text = reflow(["The pumps are tested every week by the engineer on watch.", "Monthly Checks",
                   "include the hoses, the hydrants and the couplings on each of the three decks."])
    assert "#" not in text


def test_steps_are_separate_paragraphs():
    text = reflow(["Step 3. Close the watertight doors on every deck of the vessel and report it to the",
                   "bridge.", "Step 4. Open the muster stations and count the passengers on every deck."])
    assert text.split("\n\n") == [
        "Step 3. Close the watertight doors on every deck of the vessel and report it to the bridge.",
        "Step 4. Open the muster stations and count the passengers on every deck.",
    ]


def test_wrapped_list_item_keeps_its_hyphenated_word():
    text = reflow(["(b) A visualization of a simple feed-",
                   "forward neural network. The five input nodes are red and the bias nodes are grey."])
    assert text.startswith("(b) A visualization of a simple feed-forward neural network.")


def test_font_levels_by_size_and_bold():
    body = [FontLine("Body text of the page that runs on and on.", 11.0, 0.0, 400) for _ in range(3)]
    page = [FontLine("Muster Procedure", 22.0, 1.0, 15), FontLine("1. Purpose", 16.0, 1.0, 9), *body,
            FontLine("Lifeboats", 11.0, 1.0, 9), FontLine("Ends with a full stop.", 16.0, 1.0, 18)]
    levels = heading_levels([page])
    assert levels == [{heading_key("Muster Procedure"): 1, heading_key("1. Purpose"): 2, heading_key("Lifeboats"): 3}]


def test_fonts_that_are_all_large_tell_nothing():
    assert heading_levels([[FontLine("Slide Title", 30.0, 1.0, 10), FontLine("Big Point", 24.0, 0.0, 8),
                            FontLine("x", 11.0, 0.0, 1)]]) is None


def test_shape_headings_become_sections_in_a_uniform_font_pdf(tmp_path):
    pdf = write_pdf(tmp_path / "muster.pdf", [[
        "Passenger Muster Procedure",
        "1. Purpose",
        "This procedure sets out how passengers are mustered on the car deck before an",
        "evacuation of the vessel, and who leads each group to the lifeboats.",
        "2. Alarm signals",
        "The alarm is seven short blasts followed by one long blast on the ship's whistle and",
        "the general alarm bell, repeated until every passenger has reached a muster station.",
    ]])
    doc = load_file(pdf, "muster.pdf")[0]
    assert doc.title == "Passenger Muster Procedure"
    chunks = chunk_document(doc)
    alarm = next(c for c in chunks if "seven short blasts" in c.text)
    assert alarm.headings == ("Passenger Muster Procedure", "2. Alarm signals")
    assert not alarm.text.startswith(("2. Alarm", "Passenger"))
    assert all("Purpose This" not in c.text for c in chunks)


@pytest.mark.slow  # Chromium prints the PDF
def test_font_headings_become_sections_in_a_browser_pdf(tmp_path):
    doc = load_file(_chromium_pdf(tmp_path / "muster.pdf", _MUSTER), "muster.pdf")[0]
    assert doc.title == "Passenger Muster Procedure"  # not the browser's "about:blank"
    chunks = chunk_document(doc)
    by_text = {c.text: c for c in chunks}
    alarm = next(c for t, c in by_text.items() if "seven short blasts" in t)
    assert alarm.section == "Passenger Muster Procedure > 2. Alarm signals"
    # tiny sections merge into their parent's chunk (chunking step 3), so the text shows the nesting
    assert "\n\n### Crew duties\n\n1. Close the watertight doors.\n\n2. Open the muster stations.\n\n" in doc.text
    assert "\n\n#### Lifeboats\n\nLifeboats are lowered" in doc.text  # bold at the body size: a heading


def test_headings_on_later_pages_and_footer_dropped(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM:
        pytest.skip("no system Chromium here (apt-get install -y chromium)")
    body = "<p>" + "The crew checks every lifejacket and flare before the vessel leaves the berth. " * 6 + "</p>"
    html = (f"<html><body style='font-family:serif;font-size:11pt'><h1>Safety Manual</h1><h2>1. Equipment</h2>{body}"
            f"<h3>1.1 Lifejackets</h3>{body}<div style='page-break-before:always'></div><h2>2. Drills</h2>"
            "<p>Fire drills are held every Tuesday.</p><ol><li>Sound the alarm.</li><li>Muster the crew.</li></ol>"
            "</body></html>")
    path = tmp_path / "manual.pdf"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.set_content(html)
            page.pdf(path=str(path), display_header_footer=True, margin={"top": "40px", "bottom": "60px"},
                     footer_template='<div style="font-size:8px">Rev 3 - page <span class="pageNumber"></span></div>')
        finally:
            browser.close()
    doc = load_file(path, "manual.pdf")[0]
    assert "Rev 3" not in doc.text  # running footer
    assert doc.text[doc.pages[1]:].startswith("## 2. Drills\n\nFire drills")
    sections = {c.section for c in chunk_document(doc)}
    assert {"Safety Manual > 1. Equipment", "Safety Manual > 1. Equipment > 1.1 Lifejackets",
            "Safety Manual > 2. Drills"} <= sections
    assert "1. Sound the alarm.\n\n2. Muster the crew." in doc.text
