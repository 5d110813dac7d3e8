"""benchmarks/make_mixed_beir.py on a tiny hand-made BEIR folder: documents grouped into long mixed ones, qrels
remapped to the new ids, queries and their answers kept, the same bytes on every run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from openbook.eval.answers import load_qa_questions
from openbook.eval.beir import load_qrels

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "make_mixed_beir.py"
_spec = importlib.util.spec_from_file_location("make_mixed_beir", _SCRIPT)
mixed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mixed)


def _beir(root: Path, n_docs: int = 11) -> Path:
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n_docs):
            fh.write(json.dumps({"_id": f"d{i}", "title": f"Title {i}", "text": f"Topic {i} text.  Second  line."})
                     + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": "q1", "text": "Which topic is 3?", "metadata": {"answers": ["three"]}}) + "\n")
        fh.write(json.dumps({"_id": "q2", "text": "Which topic is 7?", "metadata": {"answers": ["seven", "7"]}})
                 + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\nq1\td5\t1\nq2\td7\t2\n",
                                             encoding="utf-8")
    return root


def test_groups_of_three_or_four_documents_as_plain_paragraphs(tmp_path: Path) -> None:
    src = _beir(tmp_path / "src")
    out = mixed.make_mixed(src, tmp_path / "out")
    docs = [json.loads(line) for line in (out / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    parts = [d["text"].split("\n\n") for d in docs]
    assert sorted(p for ps in parts for p in ps) == sorted(f"Topic {i} text. Second line." for i in range(11))
    assert all(3 <= len(ps) <= 4 + 2 for ps in parts) and len(docs) >= 2  # a short tail joins the group before
    assert all("Title" not in d["text"] for d in docs)  # no per-part heading
    # the title is the first part's
    assert all(d["title"] == "Title " + ps[0].split()[1] for d, ps in zip(docs, parts))


def test_qrels_are_remapped_and_answers_kept(tmp_path: Path) -> None:
    src = _beir(tmp_path / "src")
    out = mixed.make_mixed(src, tmp_path / "out")
    docs = {json.loads(line)["_id"]: json.loads(line)["text"]
            for line in (out / "corpus.jsonl").read_text(encoding="utf-8").splitlines()}
    qrels = load_qrels(out / "qrels" / "test.tsv")
    for qid, topics in (("q1", ("Topic 3 ", "Topic 5 ")), ("q2", ("Topic 7 ",))):
        assert set(qrels[qid]) == {d for d, text in docs.items() if any(t in text for t in topics)}
    assert set(qrels["q2"].values()) == {2}  # the grade is kept
    assert [(q.id, q.answers) for q in load_qa_questions(out)] == [("q1", ("three",)), ("q2", ("seven", "7"))]


def test_the_same_arguments_give_the_same_bytes(tmp_path: Path) -> None:
    src = _beir(tmp_path / "src")
    a, b = mixed.make_mixed(src, tmp_path / "a"), mixed.make_mixed(src, tmp_path / "b")
    for part in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (a / part).read_bytes() == (b / part).read_bytes()
    c = mixed.make_mixed(src, tmp_path / "c", seed=1)
    assert (c / "corpus.jsonl").read_bytes() != (a / "corpus.jsonl").read_bytes()


def test_bad_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="corpus.jsonl"):
        mixed.make_mixed(tmp_path, tmp_path / "out")
    src = _beir(tmp_path / "src")
    with pytest.raises(ValueError, match="inside the source"):
        mixed.make_mixed(src, src / "mixed")
