import pytest

from openbook.ingest import load_file
from openbook.ingest.text import find_updated


@pytest.mark.parametrize(
    "header, expected",
    [
        ("Updated: 2024-05-01", "2024-05-01"),
        ("Last updated: 1 May 2024", "2024-05-01"),
        ("Revised 2024-03-02", "2024-03-02"),
        ("Revised on March 2, 2024", "2024-03-02"),
        ("Version 3.2 | Owner: People Team | Last reviewed: 2024-02-01 | Audience: all", "2024-02-01"),
        ("Owner: SRE | Applies to: all engineers | Revision: 2024-09-02", "2024-09-02"),
        ("更新日期：2024年5月1日", "2024-05-01"),
        ("更新日期：2024-11-05　维护：上海客服团队", "2024-11-05"),
        ("Revision: 3", None),
        ("Release date: 2024-09-17", None),
    ],
)
def test_header_date_styles(tmp_path, header, expected):
    path = tmp_path / "note.txt"
    path.write_text(f"SOME POLICY\n{header}\n\nBody text.\n", encoding="utf-8")
    assert find_updated(path.read_text(encoding="utf-8")) == expected
    doc = load_file(path, "note.txt")[0]
    assert doc.metadata.get("updated") == expected
    assert doc.format == "text"


def test_title_and_headings(tmp_path):
    path = tmp_path / "leave.txt"
    path.write_text(
        "LEAVE POLICY\nUpdated: 2024-02-01\n\n1. SCOPE\n\nThis policy covers staff.\n\n"
        "Overview\n========\n\nMore text here.\n\nSUMMARY\nNo more.\n",
        encoding="utf-8",
    )
    doc = load_file(path, "leave.txt")[0]
    assert doc.title == "LEAVE POLICY"
    lines = doc.text.split("\n")
    assert lines[0] == "# LEAVE POLICY"
    assert "# 1. SCOPE" in lines and "# Overview" in lines and "# SUMMARY" in lines
    assert "This policy covers staff." in lines


def test_title_line_and_fallback_to_file_name(tmp_path):
    titled = tmp_path / "a.txt"
    titled.write_text("Title: Release checklist\nStep one is long enough to be a sentence.\n", encoding="utf-8")
    assert load_file(titled, "a.txt")[0].title == "Release checklist"
    untitled = tmp_path / "02-meeting-notes.txt"
    untitled.write_text("We met and agreed on a lot of things in a long first sentence.\n", encoding="utf-8")
    assert load_file(untitled, "x")[0].title == "meeting notes"


def test_a_caption_above_a_list_is_its_heading(tmp_path):
    path = tmp_path / "trading.txt"
    path.write_text(
        "STREET TRADING\n\nAnyone who trades on a street needs a licence.\n\nTypes of licence\n- Annual consent.\n"
        "- Temporary consent.\n\nWhat you need to apply\n1. A completed form.\n2. A photograph.\n\n"
        "You will also need:\n- Insurance.\n\nthe lower-case line\n- An item.\n\nA sentence ending in a stop.\n"
        "- An item.\n",
        encoding="utf-8",
    )
    lines = load_file(path, "trading.txt")[0].text.split("\n")
    assert "## Types of licence" in lines and "## What you need to apply" in lines
    # a line that introduces its list with a colon, starts lower-case or ends a sentence stays text
    assert "You will also need:" in lines and "the lower-case line" in lines
    assert "A sentence ending in a stop." in lines
