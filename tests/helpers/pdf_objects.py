"""The bytes of a PDF file from its numbered objects: the one writer of the test PDFs' file structure."""

from __future__ import annotations


def pdf_bytes(objects: list[bytes], root: int = 1, header: bytes = b"%PDF-1.4\n") -> bytes:
    """A PDF file of ``objects`` (object n is ``objects[n - 1]``, without ``obj``/``endobj``), with its xref table
    and a trailer whose ``/Root`` is object ``root``, after ``header``."""
    out = bytearray(header)
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)
