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


@pytest.mark.parametrize("bad", ['{"_id": "a", "text": ', '["not", "an", "object"]', '{"text": "no id"}',
                                 '{"_id": "n", "text": 42}', "\xff\xfe garbage"])
def test_a_malformed_line_skips_only_that_line_and_is_reported(tmp_path, bad):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "ok", "text": "fine"}\n' + bad + '\n{"_id": "after", "text": "also fine"}\n',
                    encoding="utf-8", errors="surrogateescape")
    docs = load_file(path, "corpus.jsonl")
    assert [d.doc_id for d in docs] == ["ok", "after"]
    assert docs[0].warnings == ()
    (note,) = docs[1].warnings  # the next document carries the note
    assert note.startswith("corpus.jsonl line 2 skipped: ") and "\n" not in note


def test_bad_lines_at_the_end_are_reported_on_the_last_document(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": "y"}\n{oops\n\n[1]\n', encoding="utf-8")
    docs = load_file(path, "corpus.jsonl")
    assert [d.doc_id for d in docs] == ["a", "b"]
    assert [w.split(" skipped")[0] for w in docs[1].warnings] == ["corpus.jsonl line 3", "corpus.jsonl line 5"]


def test_a_file_without_any_valid_record_fails_in_one_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": \n{"text": "no id"}\n', encoding="utf-8")
    with pytest.raises(IngestError, match=r"corpus\.jsonl: no valid BEIR record; line 1 skipped: ") as info:
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


def test_a_gzipped_corpus_is_read_as_a_stream(tmp_path):
    import gzip

    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"_id": "d1", "title": "Wings", "text": "Lift on a wing."}\n\n'
                                   b'{"_id": "d2", "text": "Drag grows with speed."}\n'))
    docs = load_file(path, "corpus.jsonl.gz")
    assert [(d.doc_id, d.text) for d in docs] == [("d1", "Lift on a wing."), ("d2", "Drag grows with speed.")]


def test_a_duplicate_id_in_one_corpus_is_named_as_such(tmp_path):
    # the message for two files with one path ("common parent folder") misled for two records with one _id
    from helpers.stores import bm25_engine

    corpus = '{"_id": "d1", "text": "Blue Heron Lake is 42 meters deep."}\n{"_id": "d1", "text": "Duplicate."}\n'
    with bm25_engine(tmp_path, {"corpus.jsonl": corpus}) as engine:
        report = engine.ingest([tmp_path / "docs"])  # unchanged, but the second record still collides
    assert [d for d in report.unchanged] == ["d1"]
    ((_, reason),) = report.failed
    assert "an earlier record of this ingest has the same _id" in reason and "folder" not in reason
