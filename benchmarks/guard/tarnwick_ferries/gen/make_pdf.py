"""Writes docs/doc-017-muster-procedure.pdf: HTML printed to PDF by headless Chromium through Playwright.

A fixed-position header and footer repeat on every printed page (the boilerplate a PDF extractor must drop).
Run from the lab folder: python gen/make_pdf.py (needs the system chromium at /usr/bin/chromium).
"""
from pathlib import Path

from playwright.sync_api import sync_playwright

HEADER = "TARNWICK SOUND FERRIES - SAFETY MANAGEMENT SYSTEM - SMS-07 - CONTROLLED COPY"
FOOTER = "Uncontrolled when printed. Issue 6, 2026-05-28. Approved by the Designated Person Ashore."

SECTIONS = [
    ("1. Purpose", [
        "This procedure sets out how passengers are mustered and accounted for in an emergency on any vessel of the "
        "fleet, and how muster drills are carried out. It applies to MV Curlew, MV Gannet and MV Petrel.",
    ]),
    ("2. Alarm signals", [
        "The general emergency alarm is seven short blasts followed by one long blast on the ship's whistle and the "
        "alarm bells. On hearing it, all passengers go to their muster station and all crew go to the stations shown "
        "on the muster list.",
        "The abandon-ship order is given by the Master by voice, over the public address system, and never by the "
        "alarm alone.",
        "The fire alarm for crew is a continuous ring of the alarm bells for at least 10 seconds.",
    ]),
    ("3. Muster stations", [
        "Muster station A is the forward passenger lounge. Muster station B is the aft open deck, next to the "
        "liferafts. On MV Petrel, which has one lounge only, both stations are on the upper deck, port and "
        "starboard.",
        "Passengers on the vehicle deck with the Purser's permission are escorted to muster station A by the crew "
        "member assigned on the muster list.",
    ]),
    ("4. Procedure for crew", [
        "Step 1. On the general alarm, put on your lifejacket and go to your station; collect the station bag with "
        "the torch, the radio and the passenger count sheet.",
        "Step 2. Direct passengers to the nearest muster station, checking the toilets, the cafe and the shop on "
        "your route.",
        "Step 3. Hand out lifejackets at the station and help passengers to put them on; children's and infants' "
        "lifejackets are in the marked lockers.",
        "Step 4. Count the passengers at your station and report the headcount to the bridge by radio within 10 "
        "minutes of the alarm.",
        "Step 5. The bridge compares the headcount with the passenger manifest. Any shortfall starts a search of the "
        "vessel by the search parties named on the muster list.",
        "Step 6. Wait at the station for the Master's orders. Do not send passengers back to the lounges until the "
        "Master stands the muster down.",
    ]),
    ("5. Drills", [
        "A crew muster drill is held every week on each vessel in service, at a time when no passengers are on board. "
        "An abandon-ship drill, including the launch of a rescue boat, is held every month.",
        "A passenger safety announcement is made before each departure, and safety cards showing the muster stations "
        "are placed in every lounge.",
        "Drills are recorded in the official log book with the time, the duration and any defects found. Defects "
        "must be reported to the Marine Superintendent within 24 hours and corrected before the next drill.",
    ]),
    ("6. Training", [
        "New crew members are shown their muster duties before the vessel first sails with them on board. They "
        "take part in a muster drill within their first two weeks.",
        "All crew complete crowd management training every five years, and the Master and officers complete "
        "crisis management training every five years.",
    ]),
    ("7. Records and review", [
        "This procedure is reviewed every year by the Designated Person Ashore and after any real muster. Proposed "
        "changes are sent to the Marine Superintendent, who consults the masters of all three vessels before a new "
        "issue is approved.",
    ]),
]

body = "".join(
    f"<h2>{title}</h2>" + "".join(f"<p>{p}</p>" for p in paras) for title, paras in SECTIONS
)
html = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Passenger muster procedure</title>
<style>
@page {{ size: A5; margin: 28mm 16mm 22mm 16mm; }}
body {{ font-family: serif; font-size: 11pt; line-height: 1.45; }}
.hdr {{ position: fixed; top: -18mm; left: 0; right: 0; font-size: 8pt; border-bottom: 1px solid #000; }}
.ftr {{ position: fixed; bottom: -14mm; left: 0; right: 0; font-size: 8pt; border-top: 1px solid #000; }}
h1 {{ font-size: 15pt; }} h2 {{ font-size: 12pt; margin-top: 10pt; }}
</style></head><body>
<div class="hdr">{HEADER}</div><div class="ftr">{FOOTER}</div>
<h1>Passenger muster procedure</h1>
{body}
</body></html>"""

out = Path(__file__).resolve().parent.parent / "docs" / "doc-017-muster-procedure.pdf"
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_page()
    page.set_content(html)
    page.pdf(path=str(out), format="A5", prefer_css_page_size=True, print_background=False)
    browser.close()
print(out)
