"""A document that calls another one older in its body ("Some older material, including the user manual chapter
on ... still mentions a longer period") supersedes it: the newer is cited first and the older is named as older.

Real analyzer and real BM25 stores on small hand-made documents; ``named_as_older`` on its own for the rules
that decide between two titles and two dates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook.answer.context import named_as_older, superseded_docs
from openbook.index.analyzer import Analyzer

from helpers.stores import bm25_engine

MANUAL = ("manual/chapter-2.md", "---\ntitle: \"Acme Drive User Manual - Chapter 2: File Versions and the Recycle "
          "Bin\"\nupdated: 2023-02-14\n---\n\n# Chapter 2: File Versions and the Recycle Bin\n\n## Restoring "
          "deleted items\n\nDeleted files and folders stay in the Recycle Bin for 30 days. Tick the items you "
          "want back and click Restore.\n")
QUESTION = ("A customer deleted a folder three weeks ago and now wants it back from the Recycle Bin. Can they "
            "restore it themselves?")


def support_answer(background: str, updated: str = "2024-10-21") -> tuple[str, str]:
    return ("support/deleted-files.md", f"---\ntitle: \"Support answer: How long can I recover deleted files?\"\n"
            f"updated: {updated}\n---\n\n# How long can I recover deleted files?\n\nDeleted files and folders "
            f"are kept in the Recycle Bin for 14 days. Within those 14 days the customer can restore them "
            f"from the web app. After 14 days they are permanently deleted and cannot be recovered.\n\n"
            f"## Background\n\n"
            f"{background}\n")


@pytest.mark.parametrize("background", [
    "The retention period changed in September 2024. Some older material, including the user manual chapter on "
    "file versions and the Recycle Bin, still mentions a longer period; that chapter is being revised.",
    "The user manual chapter on file versions and the Recycle Bin is outdated.",
    "The user manual chapter on file versions and the Recycle Bin still says 30 days.",
    "The previous version of the user manual chapter on file versions and the Recycle Bin gave a longer period.",
    "The user manual chapter on file versions and the Recycle Bin (now withdrawn) gave a longer period.",
])
def test_a_document_naming_another_as_older_is_cited_first_and_the_older_named(tmp_path: Path,
                                                                                background: str) -> None:
    with bm25_engine(tmp_path, dict([MANUAL, support_answer(background)])) as engine:
        answer = engine.ask(QUESTION)
    assert not answer.refused
    assert answer.citations[0].doc_id == "support/deleted-files.md"
    assert "14 days" in answer.text
    assert "supersedes an older version, Acme Drive User Manual - Chapter 2" in answer.text
    assert "updated 2023-02-14" in answer.text
    assert all(c.doc_id != "manual/chapter-2.md" for c in answer.citations)


def test_a_document_merely_referring_to_another_changes_nothing(tmp_path: Path) -> None:
    background = "For screenshots, see the user manual chapter on file versions and the Recycle Bin."
    with bm25_engine(tmp_path, dict([MANUAL, support_answer(background)])) as engine:
        answer = engine.ask(QUESTION)
    assert {p.chunk.doc_id for p in answer.passages} >= {"manual/chapter-2.md", "support/deleted-files.md"}
    assert superseded_docs(answer.passages, None, Analyzer()) == {}
    assert "supersedes" not in answer.text


def test_this_guide_replaces_an_older_title_named_by_some_of_its_words(tmp_path: Path) -> None:
    docs = {"hr/handbook-2022.md": "---\ntitle: Employee Handbook 2022\nupdated: 2022-01-10\n---\n\n# Employee "
            "Handbook 2022\n\nEmployees may carry over 5 days of unused annual leave into the next year.\n",
            "hr/people-guide.md": "---\ntitle: People Guide\nupdated: 2024-01-08\n---\n\n# People Guide\n\nThis "
            "guide replaces the 2022 handbook. Employees may carry over 10 days of unused annual leave into the "
            "next year.\n"}
    with bm25_engine(tmp_path, docs) as engine:
        answer = engine.ask("How many days of unused annual leave may employees carry over?")
    assert answer.citations[0].doc_id == "hr/people-guide.md"
    assert "10 days" in answer.text and "5 days" not in answer.text
    assert "supersedes an older version, Employee Handbook 2022" in answer.text


TITLES = {"support": ("Support answer: How long can I recover deleted files?", {"updated": "2024-10-21"}),
          "manual-2": ("User Manual - Chapter 2: Versions and the Trash", {"updated": "2023-02-14"}),
          "manual-3": ("User Manual - Chapter 3: Versions and Sharing", {"updated": "2023-02-14"})}


def test_a_name_matching_two_titles_equally_names_neither() -> None:
    texts = {"support": ["The user manual chapter on versions is outdated."]}
    assert named_as_older(TITLES, texts, Analyzer()) == {}
    texts = {"support": ["The user manual chapter on versions and the Trash is outdated."]}
    assert named_as_older(TITLES, texts, Analyzer()) == {"manual-2": "support"}


def test_an_older_document_calling_a_newer_one_outdated_changes_nothing() -> None:
    # the rule: the naming document must be dated, and the named one not dated later than it
    texts = {"manual-2": ["The support answer on how long you can recover deleted files is outdated."]}
    assert named_as_older(TITLES, texts, Analyzer()) == {}
    undated = {**TITLES, "support": (TITLES["support"][0], {})}
    texts = {"support": ["The user manual chapter on versions and the Trash is outdated."]}
    assert named_as_older(undated, texts, Analyzer()) == {}


def test_a_document_calling_itself_outdated_names_nothing() -> None:
    texts = {"manual-2": ["This chapter on versions and the Trash is being revised.",
                          "The user manual chapter 2 on versions and the Trash is outdated."]}
    assert named_as_older(TITLES, texts, Analyzer()) == {}


def test_one_shared_word_is_no_name() -> None:
    texts = {"support": ["The old manual is outdated.", "Older material, including the Trash FAQ, says 30 days."]}
    assert named_as_older(TITLES, texts, Analyzer()) == {}


def test_a_thing_named_by_a_few_words_of_a_long_title_is_not_the_document() -> None:
    docs = {"news": ("IT news, March 2024", {"updated": "2024-03-01"}),
            "guide": ("VPN Client Installation and Troubleshooting Guide for Windows", {"updated": "2023-05-01"})}
    assert named_as_older(docs, {"news": ["The old VPN client is deprecated."]}, Analyzer()) == {}
    assert named_as_older(docs, {"news": ["The VPN client troubleshooting guide for Windows is outdated."]},
                          Analyzer()) == {"guide": "news"}


def test_a_thing_named_by_most_of_a_short_title_is_not_the_document(tmp_path: Path) -> None:
    # "The old VPN client is deprecated" is about the software: it must not make the setup guide an older version
    # of the news item (which then answered "How do I set up the VPN client?" in its place)
    docs = {"vpn-setup.md": "---\ntitle: VPN client setup guide\nupdated: 2024-02-01\n---\n\n# VPN client setup "
            "guide\n\nInstall the VPN client from the software centre and sign in with your staff account.\nThe VPN "
            "client connects to gateway vpn.example.com on port 443.\n",
            "network-news.md": "---\ntitle: Network news March 2025\nupdated: 2025-03-10\n---\n\n# Network news "
            "March 2025\n\nThe old VPN client is deprecated on Windows 7 machines; the VPN client setup stays the "
            "same elsewhere.\nThe wireless network was upgraded in all buildings.\n"}
    with bm25_engine(tmp_path, docs) as engine:
        answer = engine.ask("How do I set up the VPN client?")
        assert superseded_docs(answer.passages, None, Analyzer()) == {}
    assert "supersedes" not in answer.text
    titles = {"news": ("Network news March 2025", {"updated": "2025-03-10"}),
              "guide": ("VPN client setup guide", {"updated": "2024-02-01"})}
    for said in ("The old VPN client is deprecated.", "The old VPN client version is deprecated."):
        assert named_as_older(titles, {"news": [said]}, Analyzer()) == {}, said
    # named as a document, or by its whole title, it is the document
    for said in ("The VPN client guide is outdated.", "The VPN client setup guide is outdated.",
                 "Older material, including the VPN client setup guide, still says port 80."):
        assert named_as_older(titles, {"news": [said]}, Analyzer()) == {"guide": "news"}, said
    titles["guide"] = ("VPN client setup", {"updated": "2024-02-01"})
    assert named_as_older(titles, {"news": ["The old VPN client setup is outdated."]}, Analyzer()) == {
        "guide": "news"}
