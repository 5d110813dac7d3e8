"""Version facts read from a document's opening text (``openbook.dates``) and the links they make."""

from __future__ import annotations

import pytest

from openbook.ingest import load_file
from openbook.dates import body_metadata
from openbook.versions import version_links


@pytest.mark.parametrize("head,updated", [
    ("# Guide\n\nEffective date: 2024-06-01\n\nText.", "2024-06-01"),
    ("Last updated 12 March 2024. Revised: June 3, 2024.", "2024-06-03"),  # the latest stated date
    ("MEETING NOTES\nDate: 2024-07-09\nChair: Ana", None),  # notes of one series are not versions
    ("RELEASE NOTES\nRelease date: 2024-09-17\n", None),  # notes of two releases are not two versions
    ("差旅政策\n生效日期：2024年3月1日\n", "2024-03-01"),
    ("We met on 2024-01-01 to plan the move.", None),  # a date without a label is not the document's
])
def test_labelled_dates_in_the_head(head: str, updated: str | None) -> None:
    assert body_metadata(head, {}).get("updated") == updated


def test_front_matter_wins_and_only_self_statements_supersede() -> None:
    assert body_metadata("Effective date: 2024-06-01", {"updated": "2023-01-01"}) == {}
    said = body_metadata("This version supersedes the VPN access guide of March 2022.", {})
    assert said == {"supersedes_text": "the VPN access guide of March 2022"}
    assert body_metadata("Supersedes: Travel Guidelines 2019\n", {}) == {"supersedes_text": "Travel Guidelines 2019"}
    assert body_metadata("The new pump replaces the old one every spring.", {}) == {}


def test_a_body_statement_links_the_older_version(tmp_path) -> None:
    (tmp_path / "vpn-1.md").write_text("# VPN access guide\n\nEffective date: 2022-03-01\n\nSessions time out "
                                       "after 8 hours.\n")
    (tmp_path / "vpn-2.md").write_text("# VPN access guide v2\n\nThis version supersedes the VPN access guide of "
                                       "March 2022.\n\nSessions time out after 2 hours.\n")
    (tmp_path / "faq.md").write_text("# Guide FAQ\n\nQuestions about the guide.\n")
    docs = {}
    for name in ("vpn-1.md", "vpn-2.md", "faq.md"):
        doc = load_file(tmp_path / name, name)[0]
        docs[name] = (doc.title, doc.metadata)
    assert docs["vpn-1.md"][1]["updated"] == "2022-03-01"
    assert version_links(docs) == {"vpn-1.md": "vpn-2.md"}  # the one-word family "guide faq" is not named


def test_a_later_dated_document_is_never_the_older_one() -> None:
    docs = {"a": ("Travel policy v2", {"updated": "2023-01-01", "supersedes_text": "the Travel policy v1"}),
            "b": ("Travel policy v3", {"updated": "2024-01-01"}),
            "c": ("Travel policy v1", {"updated": "2021-01-01"})}
    links = version_links(docs)
    assert links.get("b") is None and links["c"] in ("a", "b")


def test_a_body_statement_names_titles_never_file_paths() -> None:
    # "Supersedes: notes" in a document's text is no claim over every file whose path holds "notes"
    docs = {"notes/a.md": ("Canteen menu", {}), "notes/b.md": ("Parking permit", {}),
            "x.md": ("Office notes", {"supersedes_text": "notes"})}
    assert version_links(docs) == {}


def test_a_body_statement_naming_a_family_never_makes_a_later_version_older() -> None:
    docs = {"a": ("Travel policy v2", {"updated": "2023-01-01", "supersedes_text": "Travel policy"}),
            "b": ("Travel policy v3", {"updated": "2024-01-01"}),
            "c": ("Travel policy v1", {"updated": "2021-01-01"})}
    assert version_links(docs) == {"c": "a", "a": "b"}


def test_chapters_of_one_manual_are_not_versions_of_each_other() -> None:
    docs = {"ch1": ("Manual - Chapter 1: Getting Started", {"updated": "2024-01-01"}),
            "ch2": ("Manual - Chapter 2: File Versions", {"updated": "2023-01-01"}),
            "p-old": ("Travel policy | Intranet", {"updated": "2022-01-01"}),
            "p-new": ("Travel policy | Intranet", {"updated": "2024-03-01"})}
    assert version_links(docs) == {"p-old": "p-new"}  # a site-name suffix still goes


def test_a_version_number_does_not_end_what_is_superseded() -> None:
    # the dot of "1.0" or "2.3.1" is inside a number, not the end of the sentence
    said = body_metadata("This version supersedes the Parking Policy of March 2025 (version 1.0) and applies "
                         "from 1 April 2026.", {})
    assert said == {"supersedes_text": "the Parking Policy of March 2025 (version 1.0) and applies from 1 April 2026"}
    assert body_metadata("Supersedes: Install guide 2.3.1. Read it first.", {}) == {
        "supersedes_text": "Install guide 2.3.1"}


def test_a_version_number_orders_a_family_when_only_one_of_two_is_dated() -> None:
    # "v2" beside "v1" is the newer whichever of the two carries a date; two dates still decide between them
    assert version_links({"a": ("Leave policy v1", {}), "b": ("Leave policy v2", {"updated": "2024-01-01"})}) == {
        "a": "b"}
    assert version_links({"a": ("Leave policy v1", {"updated": "2023-01-01"}), "b": ("Leave policy v2", {})}) == {
        "a": "b"}
    assert version_links({"a": ("Leave policy v1", {"updated": "2024-06-01"}),
                          "b": ("Leave policy v2", {"updated": "2024-01-01"})}) == {"b": "a"}
