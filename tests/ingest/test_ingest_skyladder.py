"""The Skyladder lab corpus: metadata matches the manifest, every must_contain string survives ingest."""

import json
import re

import pytest

from openbook.ingest import discover, load_file

from ingest_shared import SKYLADDER, need

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@pytest.fixture(scope="module")
def docs():
    found = discover([need(SKYLADDER / "docs")])
    loaded = {}
    for path, doc_id in found:
        (doc,) = load_file(path, doc_id)
        loaded[doc_id[:7]] = doc
    return loaded


def test_all_30_docs_load(docs):
    assert len(docs) == 30
    assert {d.format for d in docs.values()} == {"markdown", "html", "text", "csv"}


def test_metadata_matches_manifest(docs):
    manifest = json.loads((SKYLADDER / "manifest.json").read_text(encoding="utf-8"))
    checked = 0
    for entry in manifest:
        doc = docs[entry["id"]]
        if entry["title"]:
            assert doc.title == entry["title"], entry["id"]
            checked += 1
        if entry["updated"]:
            assert doc.metadata.get("updated") == entry["updated"], entry["id"]
            checked += 1
        if entry["acl"]:
            assert doc.metadata.get("acl") == entry["acl"], entry["id"]
        else:
            assert "acl" not in doc.metadata, entry["id"]
    assert checked > 40


def _norm(text, cjk):
    return re.sub(r"\s+", "", text.lower()) if cjk else text.lower()


def test_every_must_contain_string_is_in_a_relevant_doc(docs):
    questions = [json.loads(line) for line in (SKYLADDER / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    checked = 0
    for q in questions:
        for needle in q["must_contain"]:
            cjk = bool(_CJK.search(q["question"] + needle))
            assert any(_norm(needle, cjk) in _norm(docs[r].text, cjk) for r in q["relevant"]), (q["id"], needle)
            checked += 1
    assert checked >= 31
