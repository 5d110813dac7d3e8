"""Man page loader: roff source (man(7) and the common mdoc(7) macros) -> Markdown-like text, pure Python.

No well-kept Python library renders roff, and ``groff``/``mandoc`` are not on every machine, so this module
reads the macros man pages actually use and leaves the rest as text:

- ``.TH name section date source manual`` (mdoc: ``.Dt``/``.Dd``) -> title ``name(section)`` and ``updated``;
- ``.SH``/``.Sh`` -> ``##`` headings, ``.SS``/``.Ss`` -> ``###``; ``NAME`` section's line becomes the
  description (``name - what it does``);
- paragraphs: ``.PP``/``.LP``/``.P``/``.Pp``/``.sp``/blank lines; ``.TP``/``.IP``/``.It`` items become
  ``- tag: text`` lines (``.IP 3.``: a ``3. text`` line); ``.nf``/``.fi``, ``.EX``/``.EE``, ``.Bd``/``.Ed``
  keep their lines verbatim;
- tables (``.TS``/``.TE``, tbl(1)) become pipe tables, first row the header;
- font macros (``.B``, ``.I``, ``.BR``, ``.IR``, ``.RB``, ...; mdoc ``.Nm``, ``.Fl``, ``.Ar``, ``.Xr`` ...) keep
  their words; escapes ``\\fB`` ``\\fI`` ``\\fR`` ``\\f(CW`` ``\\-`` ``\\(em`` ``\\(aq`` ``\\e`` ``\\&`` ``\\*(lq``
  and others are resolved; comments (``.\\"``, ``\\"``) and unknown requests are dropped.

A file without ``.TH``/``.Dt``/``.Dd``/``.SH`` macros (a rotated log named ``syslog.1``) is read by the
plain-text loader instead. Raises nothing of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..types import Document
from ._common import decode_text, iso_date, normalise_metadata, pipe_table, tidy, title_from_path

_NAMED = {
    "em": "—", "en": "–", "hy": "-", "aq": "'", "dq": '"', "lq": "“", "rq": "”", "oq": "‘", "cq": "’",
    "co": "©", "rg": "®", "tm": "™", "bu": "•", "de": "°", "mu": "×", "di": "÷", "+-": "±", "<=": "≤",
    ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "ga": "`", "ti": "~", "ha": "^", "rs": "\\", "ba": "|",
    "Fo": "«", "Fc": "»", "ss": "ß", "sh": "#", "Do": "$",
}
_STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™", "(lq": "“", "(rq": "”"}
_ESCAPE = re.compile(
    r"\\(?:f(?:\[[^\]]*\]|\(..|.)|\((..)|\[([^\]]*)\]|\*(?:\((..)|\[([^\]]*)\]|(.))|s[-+]?\d+|"
    r"[kmnz]?(?:\(..|\[[^\]]*\]|.)?(?<=[kmnz].)|[hvwoxlLbDNZXYR]'[^']*'|\"[^\n]*|(.))"
)
_FONT_MACROS = {"B", "I", "SM", "SB", "BI", "BR", "IB", "IR", "RB", "RI", "CW", "UR", "UE", "MT", "ME", "OP"}
_MDOC_INLINE = {
    "Nm", "Fl", "Ar", "Cm", "Ic", "Op", "Oo", "Oc", "Xr", "Pa", "Ev", "Va", "Dv", "Er", "Em", "Sy", "Li", "Ql",
    "Dq", "Sq", "Pq", "Qq", "Ms", "Fn", "Fa", "Ft", "Fd", "Ad", "An", "Lk", "Mt", "Tn", "Ux", "Bx", "At", "No",
    "Ns", "Ap", "Brq", "Bq", "Aq", "Eo", "Ec", "Xo", "Xc", "Ta", "St", "Lb", "Cd", "Vt", "In", "Ot", "Rv", "Ex",
}
_BREAKS = {"PP", "LP", "P", "Pp", "sp", "br", "HP", "RS", "RE", "in", "ti", "Bl", "El", "ne", "bp", "ad", "na",
           "hy", "nh", "ft", "ps", "vs", "ll", "so", "ie", "el", "if", "ds", "de", "nr", "tr", "cc", "ig", "ns",
           "rs", "PD", "UC", "Os", "Dd", "Dt", "Sm", "Bk", "Ek", "Pf", "Db", "Rs", "Re"}


_NUMBER_TAG = re.compile(r"\(?(\d{1,3})[.)]?\Z")
_NUMBER_ITEM = re.compile(r"\d{1,3}\. ")

def _escape(m: re.Match[str]) -> str:
    named = m[1] or m[2]
    if named is not None:
        return _NAMED.get(named, "")
    string = m[3] or m[4] or m[5]
    if string is not None:
        return _STRINGS.get(string, "")
    other = m[6]
    if other is None:
        return ""
    return {"-": "-", "e": "\\", "\\": "\\", "&": "", "|": "", "^": "", "0": " ", " ": " ", "~": " ", "c": "",
            "%": "", ":": "", ".": ".", "'": "'", "`": "`", "t": " ", "/": "", ",": "", "!": "", "p": ""}.get(other, other)


def unescape(text: str) -> str:
    """Resolve roff escapes (fonts, named characters, strings); comments and size changes removed."""
    return _ESCAPE.sub(_escape, text)


def _args(rest: str) -> list[str]:
    """A macro's arguments: blank-separated, double quotes group words."""
    return [a[1:-1] if a.startswith('"') and a.endswith('"') and len(a) > 1 else a
            for a in re.findall(r'"[^"]*"?|\S+', rest)]


def _inline(name: str, rest: str) -> str:
    """The words of a font macro (man) or of a line of callable mdoc macros (``.Op Fl v Ar file``)."""
    args = _args(rest)
    if name in ("BR", "RB", "IR", "RI", "BI", "IB"):
        return unescape("".join(args))
    if name in _FONT_MACROS:
        return unescape(" ".join(args))
    out: list[str] = []
    macro = name
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _MDOC_INLINE:
            macro = arg
            if arg == "Fl" and (i + 1 == len(args) or args[i + 1] in _MDOC_INLINE):
                out.append("-")
        elif macro == "Fl":
            out.append("-" + unescape(arg))
        elif macro == "Xr" and i + 1 < len(args) and args[i + 1].isdigit():
            out.append(f"{unescape(arg)}({args[i + 1]})")
            i += 1
        else:
            out.append(unescape(arg))
        i += 1
    return " ".join(out)


def _table(lines: list[str]) -> list[str]:
    """tbl(1) data lines -> pipe table lines (options and format lines dropped)."""
    body = list(lines)
    tab = "\t"
    if body and body[0].rstrip().endswith(";"):
        m = re.search(r"tab\s*\((.)\)", body[0])
        tab = m[1] if m else tab
        body = body[1:]
    while body and not body[0].rstrip().endswith("."):  # format lines end with a full stop
        body = body[1:]
    body = body[1:]
    rows = []
    for line in body:
        if line.startswith(".") or line.strip() in ("_", "=", ""):
            continue
        rows.append([" ".join(unescape(c).replace("T{", "").replace("T}", "").split()).replace("|", "\\|")
                     for c in line.split(tab)])
    if len(rows) < 2:
        return [" ".join(r) for r in rows]
    return pipe_table(rows)


def roff_to_text(source: str) -> tuple[str, dict[str, str]]:
    """Convert man/mdoc roff source to (Markdown-like text, {"name", "section", "date", "source"})."""
    out: list[str] = []
    head: dict[str, str] = {}
    verbatim = False
    pending_tag = False
    lines = source.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith((".\\\"", "'\\\"", '.\\"')) or line.strip() in (".", "'"):
            continue
        if line.startswith((".", "'")) and len(line) > 1:
            m = re.match(r"^[.']\s*(\S+)\s*(.*)$", line)
            if not m:
                continue
            name, rest = m[1], m[2]
            if name in ("de", "de1", "dei", "am", "am1", "ami", "ig"):  # a macro definition or a comment block:
                while i < len(lines) and lines[i].strip() != "..":  # its body is roff, never page text
                    i += 1
                i += 1
                continue
            if name == "TS":
                block = []
                while i < len(lines) and not lines[i].startswith(".TE"):
                    block.append(lines[i])
                    i += 1
                i += 1
                out.extend(["", *_table(block), ""])
                continue
            if name in ("nf", "EX", "Bd"):
                verbatim = True
                out.append("")
                continue
            if name in ("fi", "EE", "Ed"):
                verbatim = False
                out.append("")
                continue
            if name == "TH" or name == "Dt":
                args = _args(rest)
                head.update(zip(("name", "section", "date", "source"), map(unescape, args)))
                continue
            if name == "Dd":
                head["date"] = unescape(" ".join(_args(rest))).replace("$Mdocdate:", "").strip(" $")
                continue
            if name == "Nm":  # mdoc: the first .Nm names the page; a bare .Nm repeats that name
                args = _args(rest)
                if args and "nm" not in head and args[0] not in _MDOC_INLINE:
                    head["nm"] = unescape(args[0])
                if not args:
                    rest = head.get("nm", "")
            if name in ("SH", "Sh", "SS", "Ss"):
                text = unescape(" ".join(_args(rest))) if rest.strip() else unescape(lines[i] if i < len(lines) else "")
                if not rest.strip():
                    i += 1
                level = "##" if name in ("SH", "Sh") else "###"
                out.extend(["", f"{level} {text.strip()}", ""])
                continue
            if name in ("TP", "TQ"):
                pending_tag = True
                out.append("")
                continue
            if name in ("IP", "It"):
                args = _args(rest)
                tag = _inline("It", rest) if name == "It" else (unescape(args[0]) if args else "")
                number = _NUMBER_TAG.match(tag.strip())  # ".IP 3." is item 3 of an ordered list
                out.extend(["", f"{number[1]}. " if number else
                            f"- {tag}:" if tag and tag not in ("•", "-", "*") else "- "])
                continue
            if name in _BREAKS:
                if name in ("PP", "LP", "P", "Pp", "sp", "HP"):
                    out.append("")
                elif name == "br" and out:
                    out.append("")
                continue
            if name in _FONT_MACROS or name in _MDOC_INLINE:
                text = _inline(name, rest) if rest.strip() else ""
                if not rest.strip() and name in ("B", "I", "SM", "SB") and i < len(lines):
                    text = unescape(lines[i])
                    i += 1
            elif name == "Nd":
                if out and out[-1].strip():
                    out[-1] = f"{out[-1].strip()} - {unescape(rest).strip()}"
                else:
                    out.append(unescape(rest))
                continue
            else:
                continue  # an unknown request: dropped
        else:
            text = unescape(line)
        if verbatim:
            out.append(text)
            continue
        if pending_tag:
            out.append(f"- {text.strip()}:")
            pending_tag = False
            continue
        if out and out[-1].startswith("- ") and out[-1].endswith(":"):
            out[-1] = f"{out[-1]} {text.strip()}"
        elif out and (out[-1] == "- " or _NUMBER_ITEM.fullmatch(out[-1])):
            out[-1] = f"{out[-1]}{text.strip()}"
        else:
            out.append(text)
    return _join(out), head


def _join(lines: list[str]) -> str:
    """The converted lines as one text (``tidy``: trailing spaces and runs of blank lines removed); paragraph
    lines stay as the roff source broke them."""
    return tidy("\n".join(lines))


def load_man(path: Path, doc_id: str) -> Document:
    """Load one man page (roff source, ``.1``..``.9``, ``.man``, optionally ``.gz``) as a Document.

    Title: ``name(section)`` from ``.TH``/``.Dt`` plus the NAME line's description, else the file name.
    Metadata: ``updated`` from the ``.TH``/``.Dd`` date, ``source`` and ``manual`` when given.
    """
    decoded = decode_text(path)
    source = decoded.text
    if not re.search(r"^[.'][ \t]*(?:TH|Dt|Dd|SH|Sh)\b", source[:20000], re.MULTILINE):
        from .text import load_text  # a rotated log (syslog.1) or notes named like a man page

        return load_text(path, doc_id)
    text, head = roff_to_text(source)
    name = head.get("name", "").strip()
    title = f"{name.lower() if name.isupper() else name}({head['section']})" if name and head.get("section") else name
    m = re.search(r"^## NAME\s*\n+((?:.+\n?)+)", text, re.MULTILINE | re.IGNORECASE)
    if m and title:  # the NAME paragraph, whose roff source may continue on lines (".BR adduser (8)")
        what = " ".join(m[1].split())
        title = f"{title}: {what.split(' - ', 1)[1].strip()}" if " - " in what else title
    metadata: dict[str, object] = {}
    if head.get("date") and iso_date(head["date"]):
        metadata["updated"] = head["date"]
    if head.get("source"):
        metadata["source_package"] = head["source"]
    return Document(
        doc_id=doc_id,
        text=text,
        title=title or title_from_path(path),
        source=str(path.resolve()),
        format="man",
        metadata=normalise_metadata(metadata),
        warnings=decoded.warnings,
    )
