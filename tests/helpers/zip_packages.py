"""DOCX packages for the tests of the zip guard (``openbook.ingest.limits``): python-docx's own template with its
``word/document.xml`` body replaced by generated paragraphs, written as a real zip with ``zipfile``."""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path
from typing import Iterable


def docx_with_body(path: Path, paragraphs: Iterable[bytes]) -> Path:
    """A DOCX whose body holds one ``<w:p>`` per item of ``paragraphs`` (UTF-8 text, XML-escaped by the
    caller), streamed into a deflated ``word/document.xml``."""
    import docx

    template = path.with_suffix(".template.docx")
    docx.Document().save(str(template))
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename != "word/document.xml":
                dst.writestr(info, data)
                continue
            head, tail = data.split(b"<w:body>", 1)
            entry = zipfile.ZipInfo(info.filename)
            entry.compress_type = zipfile.ZIP_DEFLATED
            with dst.open(entry, "w", force_zip64=True) as out:
                out.write(head + b"<w:body>")
                for text in paragraphs:
                    out.write(b"<w:p><w:r><w:t>" + text + b"</w:t></w:r></w:p>")
                out.write(tail)
    template.unlink()
    return path


def repeated(sentence: bytes, total_bytes: int, per_paragraph: int = 36) -> Iterable[bytes]:
    """Paragraphs of ``sentence`` repeated, ``total_bytes`` of text in all (a decompression bomb's body)."""
    block = sentence * per_paragraph
    for _ in range(total_bytes // len(block) + 1):
        yield block


def random_words(total_bytes: int, paragraph_bytes: int = 1 << 20) -> Iterable[bytes]:
    """Paragraphs of random lower-case "words", ``total_bytes`` in all (compresses less than 2:1, less than
    text)."""
    table = bytes((b"abcdefghijklmnopqrstuvwxyz" * 10 + b" " * 6)[i] for i in range(256))
    for _ in range(total_bytes // paragraph_bytes + 1):
        yield os.urandom(paragraph_bytes).translate(table)


def understate(path: Path, entry: str, size: int) -> Path:
    """Rewrite ``path``'s central directory so that ``entry`` claims to decompress to ``size`` bytes (a header
    that lies)."""
    data = bytearray(path.read_bytes())
    name = entry.encode()
    at = data.find(b"PK\x01\x02")
    while at != -1:
        name_len = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46:at + 46 + name_len]) == name:
            struct.pack_into("<I", data, at + 24, size)
            path.write_bytes(bytes(data))
            return path
        at = data.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{entry} not in {path}")
