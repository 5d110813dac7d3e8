"""Writes manifest.json (Skyladder schema) and checks every must_contain string against the extracted text
of a relevant document (PDF via pypdf, DOCX via python-docx; HTML main text only, without scripts).
Run from the lab folder: python gen/make_manifest.py"""
import json
import re
from pathlib import Path

import docx
import pypdf

LAB = Path(__file__).resolve().parent.parent
META = {  # id: (lang, title, updated, acl)
    "doc-001": ("en", "Tarnwick Sound Ferries - Passenger Conditions of Carriage", "2026-03-01", None),
    "doc-002": ("en", "winter timetable 2026", "", None),
    "doc-003": ("en", "fares 2026", "", None),
    "doc-004": ("en", "Adding or changing a vehicle on your booking | Tarnwick Sound Ferries Help", "2026-06-18", None),
    "doc-005": ("en", "Travelling with pets | Tarnwick Sound Ferries", "2026-04-09", None),
    "doc-006": ("en", "", "", None),
    "doc-007": ("en", "Baggage Allowance Policy", "2025-02-10", None),
    "doc-008": ("en", "", "", None),
    "doc-009": ("en", "TARNWICK SOUND FERRIES - CREW HOURS OF WORK AND REST (FLEET STANDING ORDER 14)", "2026-04-02", None),
    "doc-010": ("en", "Our fleet", "2026-01-20", None),
    "doc-011": ("en", "FY2027 Fuel and Energy Budget (Board paper)", "2026-10-14", ["finance"]),
    "doc-012": ("es", "Guía para visitantes de las islas", "2026-05-02", None),
    "doc-013": ("zh", "Tarnwick Sound Ferries 团体出行指南（中文）", "2026-05-10", None),
    "doc-014": ("en", "Disruption and Weather Policy | Tarnwick Sound Ferries", "2026-09-01", None),
    "doc-015": ("en", "DEPARTURE BOARD AND STATUS PAGE CODES - TERMINAL STAFF REFERENCE", "2026-07-15", None),
    "doc-016": ("en", "On-board services guide", "2026-03-20", None),
    "doc-017": ("en", "Passenger muster procedure", "2026-05-28", None),
    "doc-018": ("en", "Season tickets for regular travellers", "2026-02-12", None),
    "doc-019": ("en", "DANGEROUS GOODS IN PASSENGERS' VEHICLES AND ON FREIGHT SAILINGS", "2026-06-30", None),
}


def text_of(path: Path) -> str:
    if path.suffix == ".pdf":
        return "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(path).pages)
    if path.suffix == ".docx":
        d = docx.Document(path)
        cells = [c.text for t in d.tables for r in t.rows for c in r.cells]
        return "\n".join([p.text for p in d.paragraphs] + cells)
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        main = re.search(r"<main>(.*)</main>", raw, re.S).group(1)
        return re.sub(r"<[^>]+>", " ", main).replace("&gt;", ">").replace("&amp;", "&")
    return raw


files = {p.name[:7]: p for p in sorted((LAB / "docs").iterdir())}
assert set(files) == set(META), set(files) ^ set(META)
manifest, texts = [], {}
for doc_id, path in files.items():
    lang, title, updated, acl = META[doc_id]
    text = texts[doc_id] = text_of(path)
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    manifest.append({"id": doc_id, "file": f"docs/{path.name}", "format": path.suffix[1:], "lang": lang,
                     "title": title, "updated": updated, "acl": acl, "words": len(text.split()), "cjk_chars": cjk})
(LAB / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

bad = 0
for line in (LAB / "questions.jsonl").read_text(encoding="utf-8").splitlines():
    q = json.loads(line)
    for s in q["must_contain"]:
        norm = lambda t: re.sub(r"\s+", "", t.casefold())
        if not any(norm(s) in norm(texts[d]) for d in q["relevant"]):
            bad += 1
            print(f"{q['id']}: {s!r} not verbatim in {q['relevant']}")
print(f"manifest: {len(manifest)} docs; must_contain problems: {bad}")
