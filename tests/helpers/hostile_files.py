"""Hostile files for the ingest tests, each built small in a folder: zip bombs of every zip-based format, a
zip nested in a package, deep XML, entity expansion, deep HTML and Markdown, PDFs with a cyclic object graph
and with a flate bomb, a BEIR corpus with a deeply nested line. ``build_corpus`` writes them all beside one
honest file; each builder returns the path it wrote."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

from .pdf_objects import pdf_bytes
from .zip_packages import docx_with_body, repeated

SENTENCE = b"The deposit is forty marks and is paid back when the key is returned. "
HONEST_TEXT = "The night porter keeps the spare keys of the east wing in the blue cabinet."
"""The one sentence of the honest file, searchable after the ingest."""

LAUGHS = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
          + b"".join(b'<!ENTITY lol%d "%s">\n' % (n, (b"&lol%d;" % (n - 1) if n > 1 else b"&lol;") * 10)
                     for n in range(1, 10)))
"""A DTD whose ``&lol9;`` expands to 10^9 ``lol``s (the "billion laughs" of XML entity expansion)."""


# ---------------------------------------------------------------------- zip packages
def docx_size_bomb(path: Path) -> Path:
    """A DOCX of about 1 MiB whose document.xml inflates to 300 MiB (over the decompressed total)."""
    return docx_with_body(path, repeated(SENTENCE, 300 * 2**20))


def _rewrite(template: Path, path: Path, replace: dict[str, bytes], add: dict[str, bytes] | None = None) -> Path:
    """``template``'s entries into ``path``, those named in ``replace`` with new content, ``add`` appended."""
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, replace.get(info.filename, src.read(info)), zipfile.ZIP_DEFLATED)
        for name, data in (add or {}).items():
            dst.writestr(name, data, zipfile.ZIP_STORED if data[:2] == b"PK" else zipfile.ZIP_DEFLATED)
    template.unlink()
    return path


def pptx_ratio_bomb(path: Path) -> Path:
    """A PPTX whose slide title, 20 MiB of "ha", compresses about 1,000 times (over the ratio)."""
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "MARKER"
    template = path.with_suffix(".template.pptx")
    deck.save(str(template))
    with zipfile.ZipFile(template) as zf:
        xml = zf.read("ppt/slides/slide1.xml")
    body = xml.replace(b"<a:t>MARKER</a:t>", b"<a:t>MARKER " + b"ha" * (10 * 2**20) + b"</a:t>")
    return _rewrite(template, path, {"ppt/slides/slide1.xml": body})


def _epub_template(path: Path, chapter: str = "<h1>One</h1><p>Text.</p>") -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("id-hostile")
    book.set_title("A book")
    book.set_language("en")
    ch = epub.EpubHtml(title="One", file_name="one.xhtml", content=chapter)
    book.add_item(ch)
    book.spine = [ch]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    template = path.with_suffix(".template.epub")
    epub.write_epub(str(template), book)
    return template


def epub_entry_bomb(path: Path, entries: int = 10_050) -> Path:
    """An EPUB of more entries than the limit (10,000): tiny files, each its own central-directory record."""
    return _rewrite(_epub_template(path), path, {}, {f"OEBPS/x/{n}.txt": b"x" for n in range(entries)})


def docx_nested_zip(path: Path) -> Path:
    """A DOCX that carries, stored, a zip whose one entry inflates to 256 MiB (a bomb inside the package): the
    package itself is small and within every limit; its embedded zip is never to be inflated."""
    inner = io.BytesIO()
    entry = zipfile.ZipInfo("payload.bin")
    entry.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open(entry, "w", force_zip64=True) as out:
            block = b"\0" * (64 * 2**20)
            for _ in range(4):
                out.write(block)
    import docx

    d = docx.Document()
    d.add_paragraph("The embedded archive is attached for the auditors.")
    template = path.with_suffix(".template.docx")
    d.save(str(template))
    return _rewrite(template, path, {}, {"word/embeddings/archive.zip": inner.getvalue()})


def docx_deep_xml(path: Path, depth: int = 20_000) -> Path:
    """A DOCX whose body nests ``depth`` tables, one in each cell of the one before (document.xml stays under
    1 MiB, below the zip ratio check)."""
    return docx_with_body(path, [b"</w:t></w:r></w:p>" + b"<w:tbl><w:tr><w:tc>" * depth + b"<w:p><w:r><w:t>deep"
                                 + b"</w:t></w:r></w:p>" + b"</w:tc></w:tr></w:tbl>" * depth
                                 + b"<w:p><w:r><w:t>end"])


def docx_billion_laughs(path: Path) -> Path:
    """A DOCX whose document.xml declares the billion-laughs DTD and uses ``&lol9;`` in a paragraph."""
    import docx

    d = docx.Document()
    d.add_paragraph("LAUGH")
    template = path.with_suffix(".template.docx")
    d.save(str(template))
    with zipfile.ZipFile(template) as zf:
        xml = zf.read("word/document.xml")
    head, body = xml.split(b"?>", 1)
    doctype = LAUGHS.split(b"?>", 1)[1].replace(b"lolz", b"w:document") + b"]>"
    return _rewrite(template, path, {"word/document.xml": head + b"?>" + doctype + body.replace(b"LAUGH",
                                                                                                 b"&lol9;")})


def epub_billion_laughs(path: Path) -> Path:
    """An EPUB whose chapter (XHTML) declares the billion-laughs DTD and uses ``&lol9;``."""
    template = _epub_template(path, "<h1>Laughs</h1><p>LAUGH</p>")
    with zipfile.ZipFile(template) as zf:
        xml = zf.read("EPUB/one.xhtml")
    head, body = xml.split(b"?>", 1)
    body = body.split(b">", 1)[1] if body.lstrip().startswith(b"<!DOCTYPE") else body  # its own DOCTYPE off
    doctype = LAUGHS.split(b"?>", 1)[1].replace(b"lolz", b"html") + b"]>"
    return _rewrite(template, path, {"EPUB/one.xhtml": head + b"?>" + doctype + body.replace(b"LAUGH", b"&lol9;")})


# ---------------------------------------------------------------------- markup
def deep_html(path: Path, depth: int = 10_000) -> Path:
    """An HTML page of ``depth`` nested ``<div>`` (and lists) around one sentence."""
    path.write_text("<html><body>" + "<div><ul><li>" * depth + "deep" + "</li></ul></div>" * depth
                    + "</body></html>", encoding="utf-8")
    return path


def deep_markdown(path: Path, depth: int = 10_000) -> Path:
    """A Markdown file of ``depth`` nested block quotes, then a list nested ``depth`` levels (each marker
    opening the next level's item on the same line)."""
    path.write_text("# Deep\n\n" + ">" * depth + " quoted\n\n" + "- " * depth + "listed\n", encoding="utf-8")
    return path


def deep_xhtml_laughs_html(path: Path) -> Path:
    """An ``.html`` file that is XHTML with the billion-laughs DTD."""
    doctype = LAUGHS + b"]>"
    path.write_bytes(doctype.replace(b"lolz", b"html") + b'<html xmlns="http://www.w3.org/1999/xhtml"><body>'
                     b"<p>&lol9;</p></body></html>")
    return path


# ---------------------------------------------------------------------- PDF
def _pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF 1.7 file of ``objects`` (``pdf_objects.pdf_bytes``), with the binary-marker comment line."""
    return pdf_bytes(objects, root, header=b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")


def _stream(data: bytes, flate: bool = False, extra: bytes = b"") -> bytes:
    body = zlib.compress(data) if flate else data
    return (b"<< /Length %d%s%s >>\nstream\n" % (len(body), b" /Filter /FlateDecode" if flate else b"", extra)
            + body + b"\nendstream")


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _page(parent: int, contents: bytes, font: int) -> bytes:
    return (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %s "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (parent, contents, font))


def _text_ops(text: bytes) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td (" + text + b") Tj ET"


def pdf_cyclic(path: Path) -> Path:
    """A PDF whose page tree loops: the Pages node lists itself among its /Kids."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>",
        _page(2, b"4 0 R", 5),
        _stream(_text_ops(b"Cyclic page text")),
        _FONT,
    ]
    path.write_bytes(_pdf(objects))
    return path


def pdf_self_reference(path: Path) -> Path:
    """A PDF whose page's /Parent is a Pages node that is its own /Parent, whose /Resources and content
    stream /Length are objects that refer to themselves, and whose /Contents array holds itself."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 2 0 R /Resources 8 0 R >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [4 0 R 9 0 R] >>",
        b"<< /Length 6 0 R >>\nstream\n" + _text_ops(b"Self referring page text") + b"\nendstream",
        _FONT,
        b"6 0 R",
        b"null",
        b"8 0 R",
        b"[9 0 R 4 0 R]",
    ]
    path.write_bytes(_pdf(objects))
    return path


def markdown_deep_front_matter(path: Path, depth: int = 10_000) -> Path:
    """A Markdown file whose YAML front matter holds a list nested ``depth`` levels."""
    path.write_text("---\ntitle: Deep\ntags: " + "[" * depth + "]" * depth + "\n---\n\n# Deep\n\nBody.\n",
                    encoding="utf-8")
    return path


def markdown_yaml_laughs(path: Path) -> Path:
    """A Markdown file whose YAML front matter is the billion laughs of YAML aliases (nine lists of nine
    aliases of the list before)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[n]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    path.write_text("---\n" + "\n".join(lines) + "\n---\n\n# Laughs\n\nBody.\n", encoding="utf-8")
    return path


def pdf_flate_bomb(path: Path, inflated_mib: int = 2048) -> Path:
    """A two-page PDF of a few MiB: page 1 holds honest text, page 2's content stream is a FlateDecode stream
    that inflates to ``inflated_mib`` MiB of text-showing operators (a flate bomb)."""
    op = _text_ops(b"Bomb") + b"\n"
    block = (op * (2**20 // len(op) + 1))[:2**20]
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: one block compressed once, then repeated
    deflated = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)  # (a full flush: each copy stands alone)
    adler = 1
    for _ in range(inflated_mib):
        adler = zlib.adler32(block, adler)
    bomb = b"\x78\xda" + deflated * inflated_mib + b"\x03\x00" + adler.to_bytes(4, "big")  # zlib's frame
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        _page(2, b"5 0 R", 7),
        _page(2, b"6 0 R", 7),
        _stream(_text_ops(b"The first page of the flate bomb report is honest text.")),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(bomb) + bomb + b"\nendstream",
        _FONT,
    ]
    path.write_bytes(_pdf(objects))
    return path


def pdf_honest(path: Path, pages: int = 2) -> Path:
    """An honest PDF of ``pages`` pages, page n saying "The room N keeps its spare key in the cabinet." with
    n's digits written as letters (1 -> b, 2 -> c)."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(pages))
    objects.append(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages))
    objects.append(_FONT)
    for i in range(pages):
        objects.append(_page(2, b"%d 0 R" % (5 + 2 * i), 3))
        name = bytes(97 + int(d) for d in str(i + 1))  # page 12: "bc", not a number the furniture check folds
        objects.append(_stream(_text_ops(b"The room %s keeps its spare key in the cabinet." % name)))
    path.write_bytes(_pdf(objects))
    return path


# ---------------------------------------------------------------------- JSON
def jsonl_deep_line(path: Path, depth: int = 100_000) -> Path:
    """A BEIR ``corpus.jsonl``: an honest record, a record whose metadata nests ``depth`` arrays, and
    another honest record."""
    deep = b'{"_id": "deep", "text": "nested", "metadata": {"x": ' + b"[" * depth + b"]" * depth + b"}}"
    path.write_bytes(b'{"_id": "j1", "text": "The lift to the archive is out of order on Sundays."}\n' + deep
                     + b'\n{"_id": "j2", "text": "The archive opens at nine."}\n')
    return path


# ---------------------------------------------------------------------- the corpus
HOSTILE = {
    "size-bomb.docx": docx_size_bomb,
    "ratio-bomb.pptx": pptx_ratio_bomb,
    "entry-bomb.epub": epub_entry_bomb,
    "nested-zip.docx": docx_nested_zip,
    "deep-xml.docx": docx_deep_xml,
    "laughs.docx": docx_billion_laughs,
    "laughs.epub": epub_billion_laughs,
    "laughs.html": deep_xhtml_laughs_html,
    "deep.html": deep_html,
    "deep.md": deep_markdown,
    "cyclic.pdf": pdf_cyclic,
    "self-reference.pdf": pdf_self_reference,
    "deep-front-matter.md": markdown_deep_front_matter,
    "laughs-yaml.md": markdown_yaml_laughs,
    "flate-bomb.pdf": pdf_flate_bomb,
}


def build_corpus(folder: Path) -> Path:
    """Every hostile file of ``HOSTILE`` under ``folder``, a BEIR corpus with a deep line in
    ``folder/beir/corpus.jsonl``, and the honest ``folder/honest.md``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, build in HOSTILE.items():
        build(folder / name)
    (folder / "beir").mkdir(exist_ok=True)
    jsonl_deep_line(folder / "beir" / "corpus.jsonl")
    (folder / "honest.md").write_text(f"# Keys\n\n{HONEST_TEXT}\n", encoding="utf-8")
    return folder
