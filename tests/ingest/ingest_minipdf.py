"""Write small, valid text PDFs (Helvetica, one text line per entry) for the PDF loader tests."""

from __future__ import annotations

from pathlib import Path

from helpers.pdf_objects import pdf_bytes


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    """Write ``pages`` (each a list of text lines, top to bottom) as a PDF at ``path``; returns ``path``."""
    objects: list[bytes] = []
    n_pages = len(pages)
    font_id = 3
    page_ids = [4 + 2 * i for i in range(n_pages)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 760 Td"]
        for line in lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font_id} 0 R >> >>"
            f" /Contents {page_ids[i] + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    path.write_bytes(pdf_bytes(objects))
    return path


def write_layout_pdf(path: Path, pages: list[list[tuple]], width: int = 612, height: int = 792) -> Path:
    """Write a PDF whose pages are lists of drawing items; returns ``path``.

    Items: ``("text", x, y, string)`` draws Helvetica 10 pt text with its baseline at (x, y);
    ``("row", y, [(x, string), ...])`` draws the strings on one baseline in a single text object (a PDF that
    writes a two-column page row by row); ``("tjrow", y, [(x, string), ...])`` the same as one ``TJ`` string
    in Courier 10 pt whose kerning jumps across the gutter;
    ``("line", x0, y0, x1, y1)`` strokes a ruling line; ``("image",)`` paints an 8x8 grey image over the
    page (a scanned page). Coordinates are PDF points from the bottom-left corner.
    """
    objects: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    objects.append(
        b"<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Length 64 >>\nstream\n" + bytes(range(64, 128)) + b"\nendstream"
    )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>")
    page_ids = []
    for items in pages:
        ops = []
        for item in items:
            if item[0] == "text":
                _, x, y, string = item
                ops.append(f"BT /F1 10 Tf {x} {y} Td ({_escape(string)}) Tj ET")
            elif item[0] == "row":  # one text object across the page: ("row", y, [(x, string), ...])
                _, y, parts = item
                moves, at = [], 0
                for x, string in parts:
                    moves.append(f"{x - at} {y if at == 0 else 0} Td ({_escape(string)}) Tj")
                    at = x
                ops.append("BT /F1 10 Tf " + " ".join(moves) + " ET")
            elif item[0] == "tjrow":  # one string with kerning jumps, Courier 10 pt (6 pt a character)
                _, y, parts = item
                array, end = [], parts[0][0]
                for x, string in parts:
                    if x != end:
                        array.append(str(-round((x - end) * 100)))  # thousandths of the 10 pt text size
                    array.append(f"({_escape(string)})")
                    end = x + 6 * len(string)
                ops.append(f"BT /F2 10 Tf {parts[0][0]} {y} Td [{' '.join(array)}] TJ ET")
            elif item[0] == "line":
                _, x0, y0, x1, y1 = item
                ops.append(f"0.5 w {x0} {y0} m {x1} {y1} l S")
            elif item[0] == "image":
                ops.append(f"q {width} 0 0 {height} 0 0 cm /Im1 Do Q")
        stream = "\n".join(ops).encode("latin-1")
        page_ids.append(len(objects) + 1)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Resources << /Font << /F1 3 0 R /F2 5 0 R >>"
            f" /XObject << /Im1 4 0 R >> >> /Contents {len(objects) + 2} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objects[1] = f"<< /Type /Pages /Kids [{kids}] /Count {len(page_ids)} >>".encode()
    path.write_bytes(pdf_bytes(objects))
    return path
