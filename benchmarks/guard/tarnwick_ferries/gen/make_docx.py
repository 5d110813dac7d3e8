"""Writes docs/doc-016-onboard-services.docx (python-docx). Run from the lab folder: python gen/make_docx.py"""
import datetime
from pathlib import Path

from docx import Document

doc = Document()
doc.core_properties.title = "On-board services guide"
doc.core_properties.author = "Hospitality Manager"
doc.core_properties.modified = datetime.datetime(2026, 3, 20, 9, 0, 0)
doc.add_heading("On-board services guide", level=0)
doc.add_paragraph("Tarnwick Sound Ferries - for passengers and hospitality staff. Edition March 2026.")

doc.add_heading("The Galley cafe", level=1)
doc.add_paragraph(
    "The Galley cafe is on every vessel. It opens 15 minutes after departure and closes 20 minutes before arrival, "
    "so that the crew can prepare for berthing. On MV Petrel the cafe is a self-service counter with hot drinks and "
    "snacks only.")
doc.add_paragraph(
    "The menu includes breakfast rolls until 11:00, soup, sandwiches and a hot dish of the day. Vegetarian options "
    "are always available. Ask the cafe team for allergen information; all dishes are labelled for the 14 major "
    "allergens.")

doc.add_heading("Cabins", level=1)
doc.add_paragraph(
    "Private cabins are available on Route R2 only, on MV Gannet. A cabin has two berths, a washbasin and a window, "
    "and costs 18.00 GBP per sailing, whatever the number of occupants. Cabins can be booked online with your "
    "ticket or at the purser's desk if any are free.")

doc.add_heading("Shop", level=1)
doc.add_paragraph(
    "The shop on MV Curlew and MV Gannet sells island crafts, maps, newspapers, travel sickness tablets and "
    "children's games. Card payments only on board.")

doc.add_heading("Quiet lounge", level=1)
doc.add_paragraph(
    "MV Gannet has a quiet lounge on deck 5 for passengers aged 16 and over. Phone calls and music are not allowed "
    "there.")

table = doc.add_table(rows=1, cols=3)
table.style = "Table Grid"
hdr = table.rows[0].cells
hdr[0].text, hdr[1].text, hdr[2].text = "Service", "Vessels", "Price"
for row in (("Cabin (2 berths)", "MV Gannet", "18.00 GBP per sailing"),
            ("Reclining seat lounge", "MV Gannet, MV Curlew", "4.50 GBP per sailing"),
            ("Quiet lounge", "MV Gannet", "free, 16+")):
    cells = table.add_row().cells
    for c, v in zip(cells, row):
        c.text = v

out = Path(__file__).resolve().parent.parent / "docs" / "doc-016-onboard-services.docx"
doc.save(out)
print(out)
