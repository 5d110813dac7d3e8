import time

import pytest

from openbook.errors import IngestError
from openbook.ingest import load_file

from ingest_shared import SHARED, need


def test_one_document_per_line_with_ids(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        '{"_id": "d1", "title": "First", "text": "alpha", "metadata": {"updated": "2024-05-01", "acl": "x"}}\n'
        "\n"
        '{"_id": 2, "text": "beta"}\n',
        encoding="utf-8",
    )
    docs = load_file(path, "corpus.jsonl")
    assert [d.doc_id for d in docs] == ["d1", "2"]
    assert docs[0].title == "First" and docs[0].text == "alpha"  # title not prepended
    assert docs[0].metadata == {"updated": "2024-05-01", "acl": ["x"]}
    assert docs[1].title == "" and docs[1].format == "beir"


@pytest.mark.parametrize("bad", ['{"_id": "a", "text": ', '["not", "an", "object"]', '{"text": "no id"}'])
def test_malformed_line_names_its_number(tmp_path, bad):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "ok", "text": "fine"}\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"corpus\.jsonl: line 2: ") as info:
        load_file(path, "corpus.jsonl")
    assert "\n" not in str(info.value)


def test_scifact_loads_fast():
    corpus = need(SHARED / "datasets" / "scifact" / "corpus.jsonl")
    start = time.perf_counter()
    docs = load_file(corpus, "corpus.jsonl")
    elapsed = time.perf_counter() - start
    assert len(docs) == 5183
    assert len({d.doc_id for d in docs}) == 5183
    assert docs[0].doc_id == "4983"
    assert elapsed < 2.0
