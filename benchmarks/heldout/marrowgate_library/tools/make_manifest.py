"""Write manifest.json (per-document metadata, the same fields as the Skyladder lab's manifest)."""
import json
import re
from pathlib import Path

META = {  # id: (title, updated, acl, lang)
    "doc-001": ("Marrowgate University Library - Borrowing Regulations", "2025-08-01", None, "en"),
    "doc-002": ("", "", None, "en"),
    "doc-003": ("Printing and copying charges | Marrowgate University Library", "2023-09-01", None, "en"),
    "doc-004": ("Printing, Copying and Scanning", "2025-09-15", None, "en"),
    "doc-005": ("Self-service kiosk messages | Marrowgate University Library", "2025-02-11", None, "en"),
    "doc-006": ("Interlibrary Loans Guide", "2025-05-20", None, "en"),
    "doc-007": ("Special Collections Reading Room: Rules for Readers", "2025-04-02", None, "en"),
    "doc-008": ("Richtlinie für externe Leserinnen und Leser", "2025-06-30", None, "de"),
    "doc-009": ("马罗盖特大学图书馆 国际学生指南", "2025-03-10", None, "zh"),
    "doc-010": ("Issue Desk Staff Handbook", "2025-01-08", ["staff"], "en"),
    "doc-011": ("Library Acquisitions Budget 2025/26", "2025-07-14", ["finance"], "en"),
    "doc-012": ("Group Study Rooms: How to Book and Use Them", "2025-01-20", None, "en"),
    "doc-013": ("", "", None, "en"),
    "doc-014": ("Wi-Fi, computers and laptops in the library | Marrowgate University Library", "2025-08-25", None, "en"),
    "doc-015": ("Accessibility Services", "", None, "en"),
    "doc-016": ("Library News - Summer 2025 | Marrowgate University Library", "2025-06-02", None, "en"),
    "doc-017": ("Marrowgate Research Data Repository: Deposit Guidelines", "2024-11-05", None, "en"),
    "doc-018": ("Lost and Damaged Items", "2024-10-01", None, "en"),
}


def text_of(path: Path) -> str:
    if path.suffix == ".pdf":
        import pypdf
        return "\n".join(p.extract_text() for p in pypdf.PdfReader(str(path)).pages)
    if path.suffix == ".docx":
        import docx
        d = docx.Document(str(path))
        return "\n".join(p.text for p in d.paragraphs)
    t = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        t = re.sub(r"<[^>]+>", " ", t)
    return t


out = []
for f in sorted(Path("docs").iterdir()):
    i = f.name[:7]
    title, updated, acl, lang = META[i]
    t = text_of(f)
    out.append({"id": i, "file": f"docs/{f.name}", "format": f.suffix[1:], "lang": lang, "title": title,
                "updated": updated, "acl": acl, "words": len(re.findall(r"[A-Za-zÀ-ÿ0-9£€.,'-]+", t)),
                "cjk_chars": len(re.findall(r"[\u4e00-\u9fff]", t))})
Path("manifest.json").write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
print(len(out))
