"""``openbook documents`` and ``openbook show``: what is in the store, with the same roles as search."""

from __future__ import annotations

import json

import pytest

from helpers.served import FINANCE_SECRET, build_store
from openbook.cli import main


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return str(build_store(tmp_path_factory.mktemp("cli-docs")))


def run(capsys, *args: str) -> str:
    main(list(args))
    return capsys.readouterr().out


def test_documents_lists_ids_titles_sources_dates_and_chunks(store, capsys):
    out = json.loads(run(capsys, "documents", "--store", store, "--json"))["documents"]
    leave = next(d for d in out if d["doc_id"] == "leave-policy.md")
    assert leave["title"] == "Leave Policy" and leave["updated"] == "2025-02-01" and leave["chunks"] >= 1
    assert leave["source"].endswith("leave-policy.md")
    assert "finance/budget.md" not in [d["doc_id"] for d in out]  # no role: public documents only
    text = run(capsys, "documents", "--store", store, "--role", "finance", "--prefix", "finance/")
    assert text.startswith("finance/budget.md\tMarketing budget 2026\t2026-01-10\t1 chunk\t")
    dated = json.loads(run(capsys, "documents", "--store", store, "--role", "staff", "--where",
                           "updated>=2025-06-01", "--json"))["documents"]
    assert "staff/parking.md" in [d["doc_id"] for d in dated] and "leave-policy.md" not in [d["doc_id"] for d in dated]


def test_show_prints_metadata_and_chunks_and_hides_what_roles_cannot_see(store, capsys):
    text = run(capsys, "show", "leave-policy.md", "--store", store)
    assert text.startswith("leave-policy.md — Leave Policy\n") and "--- chunk 1" in text and "25 days" in text
    doc = json.loads(run(capsys, "show", "finance/budget.md", "--role", "finance", "--store", store, "--json"))
    assert FINANCE_SECRET in doc["chunks"][0]["text"] and doc["metadata"]["acl"] == ["finance"]
    with pytest.raises(SystemExit) as exc:
        main(["show", "finance/budget.md", "--role", "staff", "--store", store])
    assert exc.value.code == 1
    assert "no document 'finance/budget.md' visible to roles ['staff']" in capsys.readouterr().err


def fails(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    assert exc.value.code == 1
    return capsys.readouterr().err


def test_show_tells_a_missing_document_from_a_hidden_one(store, capsys):
    # the local CLI with no role is the store's administrator: it may learn that a document exists but is hidden
    err = fails(capsys, "show", "no/such-file.md", "--store", store)
    assert "no document 'no/such-file.md' in the store" in err and "roles (none)" not in err
    err = fails(capsys, "show", "finance/budget.md", "--store", store)
    assert "'finance/budget.md' is under an access list" in err and "--role ROLE" in err
    # with roles, a hidden document and a missing one read the same
    hidden = fails(capsys, "show", "finance/budget.md", "--role", "staff", "--store", store)
    missing = fails(capsys, "show", "finance/nothing.md", "--role", "staff", "--store", store)
    assert hidden.replace("budget", "nothing") == missing


def test_no_public_documents_hints_at_role(store, capsys):
    text = run(capsys, "documents", "--prefix", "finance/", "--store", store)
    assert text.startswith("no public documents matching; the store holds ") and "--role ROLE" in text
    assert run(capsys, "documents", "--prefix", "finance/", "--role", "staff", "--store", store).startswith(
        "no documents visible to roles ['staff']")
    assert json.loads(run(capsys, "documents", "--prefix", "zzz/", "--store", store, "--json")) == {"documents": []}


@pytest.fixture(scope="module")
def public_store(tmp_path_factory):
    """A store of two public one-chunk documents (no access list anywhere)."""
    from helpers.served import server_config
    from openbook.api import Engine

    root = tmp_path_factory.mktemp("cli-docs-public")
    (root / "corpus").mkdir()
    (root / "corpus" / "a.md").write_text("# Alpha\n\nThe alpha note.\n", encoding="utf-8")
    (root / "corpus" / "b.md").write_text("# Beta\n\nThe beta note.\n", encoding="utf-8")
    with Engine.open(root / "store", server_config(root / "store"), create=True) as engine:
        engine.ingest([root / "corpus"])
    return str(root / "store")


def test_counts_of_one_are_singular(public_store, capsys):
    text = run(capsys, "documents", "--prefix", "a.md", "--store", public_store)
    assert text.startswith("a.md\tAlpha\t-\t1 chunk\t"), text
    assert "2 documents, 2 chunks (public)" in run(capsys, "stats", "--store", public_store)


def test_a_filter_matching_nothing_in_an_all_public_store_blames_the_filter(public_store, capsys):
    # no document is under an access list, so pointing at --role ROLE would send the user the wrong way
    text = run(capsys, "documents", "--prefix", "zzz/", "--store", public_store)
    assert text.startswith("no documents matching --prefix 'zzz/'; the store holds 2 documents, none under an "
                           "access list"), text
    assert "--role" not in text
