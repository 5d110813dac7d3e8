"""Fusion across scripts: a chunk BM25 cannot see (another script than the query's) counts at its dense rank."""

from __future__ import annotations

import pytest

from openbook.retrieve.blind import blind_chunks, main_script, scripts
from openbook.retrieve.fusion import rrf
from openbook.types import Chunk, Hit

from tests.helpers.stores import hybrid_engine


def _hit(cid: str, text: str | None = None) -> Hit:
    chunk = None if text is None else Chunk(chunk_id=cid, doc_id=cid, text=text)
    return Hit(chunk_id=cid, doc_id=cid, score=1.0, legs={}, chunk=chunk)


def test_scripts_and_main_script() -> None:
    assert scripts("What is 学生卡?") == {"latin", "cjk"}
    assert main_script("国际学生每周三下午在语言角见面 (Room B2)") == "cjk"
    assert main_script("Ночная смена") == "ru"
    assert main_script("1234 --") is None


def test_blind_chunks_are_those_in_a_script_the_query_lacks() -> None:
    hits = [_hit("zh", "语言交流角每周三下午开放。"), _hit("en", "The corner opens on Wednesdays."),
            _hit("mixed", "The 语言角 opens on Wednesdays."), _hit("no-chunk")]
    assert blind_chunks("When does the language corner meet?", hits) == {"zh"}
    assert blind_chunks("语言角什么时候开放？", hits) == {"en", "mixed"}
    assert blind_chunks("?", hits) == set()  # no letters: nothing is known to be blind


def test_rrf_counts_a_blind_chunk_at_its_other_leg_rank() -> None:
    bm25 = [_hit("a"), _hit("b")]
    dense = [_hit("c"), _hit("zh"), _hit("a")]
    plain = rrf({"bm25": bm25, "dense": dense}, k=60)
    assert [h.chunk_id for h in plain][0] == "a"  # both legs: 1/61 + 1/63
    fused = rrf({"bm25": bm25, "dense": dense}, k=60, blind={"bm25": {"zh"}})
    by_id = {h.chunk_id: h for h in fused}
    assert by_id["zh"].score == pytest.approx(2 / 62)
    assert set(by_id["zh"].legs) == {"dense"}  # the imputed rank is not reported as a BM25 hit
    assert by_id["a"].score == pytest.approx(1 / 61 + 1 / 63)  # a chunk BM25 did retrieve keeps its own rank
    assert [h.chunk_id for h in fused] == ["a", "zh", "c", "b"]  # plain: a, c, b, zh
    # naming a chunk no leg retrieved, or one the blind leg did retrieve, changes nothing
    assert rrf({"bm25": bm25, "dense": dense}, k=60, blind={"bm25": {"a", "zz"}}) == plain


def test_english_question_reaches_the_chinese_document_that_answers_it(tmp_path) -> None:
    # English notes share common words with the question ("students", "day", "week"); only the Chinese guide
    # is about the language exchange corner, and BM25 cannot read it
    notes = ["Printing costs 10 pence a page for students; the print room opens every day of the week.",
             "Students may borrow books for one week; a renewal adds another week.",
             "Late returns cost students 20 pence a day, at most 5 pounds a week.",
             "Group rooms can be booked by students up to one week ahead, for two hours a day.",
             "Lockers are free for students for a day; a week costs 2 pounds.",
             "Scanners are in the basement; students scan up to 50 pages a day.",
             "The cafe serves students from 8 am every day of the week.",
             "Parking permits for international students are sold per week.",
             "Laptop loans for students last one day; a week needs a form.",
             "Exam week hours: the library opens 24 hours a day for students."]
    docs = {f"notes-{i}.md": f"# Library note {i}\n\n{text}\n" for i, text in enumerate(notes)}
    docs["guide-zh.txt"] = "国际学生指南\n\n语言交流角每周三下午四点在二楼开放，国际学生可以和本地学生练习语言。\n" \
                           "图书馆在考试周延长开放时间。\n"
    engine = hybrid_engine(tmp_path, docs)
    try:
        hits = engine.search("On which day of the week does the language exchange corner for international "
                             "students meet?", k=5)
        # (by plain RRF it is last of all: its dense rank alone, 1/63)
        assert "guide-zh.txt" in [h.doc_id for h in hits]
    finally:
        engine.close()


def test_only_the_dense_leg_s_best_chunk_in_another_script_is_imputed(tmp_path) -> None:
    # two Chinese documents in an English corpus: imputing both filled a Chinese question's passages with the
    # other script's text (``Retriever._blind_to_bm25``); only the dense leg's best of them gets a BM25 rank
    docs = {f"note-{i}.md": f"# Note {i}\n\n{text}\n" for i, text in enumerate([
        "Printing costs 10 pence a page for students.", "Students may borrow books for one week.",
        "Late returns cost students 20 pence a day.", "Group rooms can be booked one week ahead."])}
    docs["guide-zh.txt"] = "国际学生指南\n\n语言交流角每周三下午四点在二楼开放。\n"
    docs["menu-zh.txt"] = "食堂菜单\n\n星期一供应红烧肉和米饭，星期二供应饺子。\n"
    engine = hybrid_engine(tmp_path, docs)
    try:
        hits = engine.search("When does the language exchange corner for international students meet?", k=6)
        dense_rank = {h.doc_id: h.legs["dense"][0] for h in hits if "dense" in h.legs}
        foreign = [h for h in hits if h.doc_id.endswith("-zh.txt")]
        assert len(foreign) == 2 and all("bm25" not in h.legs for h in foreign)
        imputed = [h.doc_id for h in foreign if h.score == pytest.approx(2 / (60 + dense_rank[h.doc_id]))]
        plain = [h.doc_id for h in foreign if h.score == pytest.approx(1 / (60 + dense_rank[h.doc_id]))]
        assert len(imputed) == 1 and len(plain) == 1
        assert dense_rank[imputed[0]] < dense_rank[plain[0]]  # the better one on the dense leg
    finally:
        engine.close()
