"""Generate the lab's PDF (hand-written PDF 1.4, Helvetica, two pages with running header and footer and a
sentence split across the page break) and DOCX (python-docx) documents. Run from the lab folder."""
from pathlib import Path

HEADER = "Marrowgate University Library - Interlibrary Loans Guide"
PAGES = [
    [
        ("h", "Interlibrary Loans Guide"),
        ("p", "Updated: 2025-05-20"),
        ("p", "If Marrowgate University Library does not hold a book or journal article that you need for your"),
        ("p", "studies or research, we can usually obtain it from another library through interlibrary loan (ILL)."),
        ("h", "Who can use the service"),
        ("p", "Postgraduate research students and staff can make an unlimited number of requests free of charge."),
        ("p", "Undergraduates receive 10 free requests per academic year; each further request costs GBP 3.00."),
        ("p", "Associate members cannot use the interlibrary loan service."),
        ("h", "How to request an item"),
        ("p", "1. Search Library Search first to make sure that we do not already hold the item."),
        ("p", "2. Sign in to Library Search and open the Interlibrary Loan request form from your account."),
        ("p", "3. Give the ISBN for a book, or the DOI for an article, and the date by which you need the item."),
        ("p", "4. Submit the form. You will receive an email when the item arrives, normally within 10 working days."),
        ("h", "Collecting and returning books"),
        ("p", "Books are collected from the Issue Desk of the Main Library. Book loans from other libraries are normally kept for"),
    ],
    [
        ("p", "four weeks and may be renewed once if the lending library agrees. Some lending libraries allow"),
        ("p", "their books to be used only inside the library; these are kept behind the Issue Desk."),
        ("h", "Articles"),
        ("p", "Articles are delivered electronically to your university email and can be downloaded for 30 days."),
        ("p", "Copyright law allows one copy of one article from a journal issue for each requester."),
        ("h", "Cancelling a request"),
        ("p", "Requests can be cancelled in Library Search until they have been sent to a lending library."),
    ],
]


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(path: Path) -> None:
    objs: list[bytes] = []
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    n = len(PAGES)
    page_ids = [5 + 2 * i for i in range(n)]
    objs.append(("<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{p} 0 R" for p in page_ids), n)).encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>")
    for i, lines in enumerate(PAGES):
        ops = ["BT", "/F1 8 Tf", "50 810 Td", f"({_esc(HEADER)}) Tj", "ET"]
        y = 770
        for kind, text in lines:
            if kind == "h":
                y -= 10
                ops += ["BT", "/F2 13 Tf", f"50 {y} Td", f"({_esc(text)}) Tj", "ET"]
                y -= 22
            else:
                ops += ["BT", "/F1 10 Tf", f"50 {y} Td", f"({_esc(text)}) Tj", "ET"]
                y -= 15
        ops += ["BT", "/F1 8 Tf", "50 30 Td", f"(Page {i + 1} of {n}  -  Interlibrary Loans Guide, May 2025) Tj", "ET"]
        stream = "\n".join(ops).encode("latin-1")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {page_ids[i] + 1} 0 R >>".encode())
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objs.append(b"<< /Title (Interlibrary Loans Guide) /Author (Marrowgate University Library) /CreationDate (D:20250520090000Z) >>")
    info_id = len(objs)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info {info_id} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def make_docx(path: Path) -> None:
    from docx import Document

    d = Document()
    d.core_properties.title = "Special Collections Reading Room: Rules for Readers"
    d.core_properties.author = "Special Collections"
    d.add_heading("Special Collections Reading Room: Rules for Readers", 0)
    d.add_paragraph("Last reviewed: 2025-04-02")
    d.add_paragraph(
        "The Special Collections reading room is the Percival Room on the first floor of Ashdown House, inside the "
        "Law Library. It holds manuscripts, early printed books, the university archive and other material that "
        "cannot be borrowed.")
    d.add_heading("Booking a seat", 1)
    d.add_paragraph(
        "Seats must be booked at least 48 hours in advance through the Special Collections request system, and the "
        "items you want to see must be requested at the same time. The room has 12 seats.")
    d.add_heading("What you may bring", 1)
    d.add_paragraph("Use pencils only; ink pens, highlighters and correction fluid are not permitted.", style="List Bullet")
    d.add_paragraph("Laptops, tablets and phones on silent are allowed.", style="List Bullet")
    d.add_paragraph(
        "Bags and coats must be left in the lockers outside the room. The lockers take a £1 coin, which is returned "
        "when you open the locker again.", style="List Bullet")
    d.add_paragraph("No food or drink of any kind, including water.", style="List Bullet")
    d.add_heading("Handling material", 1)
    d.add_paragraph(
        "Readers may have at most 3 items on their desk at a time. Use the foam book supports and weights provided, "
        "and turn pages by their top corner.")
    d.add_heading("Photography", 1)
    d.add_paragraph(
        "You may take photographs with your own camera or phone for your personal research, without flash, after you "
        "have completed a photography permission form at the supervisor's desk. Photographs for publication need the "
        "written permission of the Keeper of Special Collections.")
    t = d.add_table(rows=1, cols=2)
    t.rows[0].cells[0].text = "Service"
    t.rows[0].cells[1].text = "Charge"
    for a, b in [("Digitisation by staff, per image", "£4.00"), ("Certified copy of an archive record", "£15.00")]:
        r = t.add_row().cells
        r[0].text, r[1].text = a, b
    d.save(str(path))


if __name__ == "__main__":
    make_pdf(Path("docs/doc-006-interlibrary-loans-guide.pdf"))
    make_docx(Path("docs/doc-007-special-collections-reading-room.docx"))
