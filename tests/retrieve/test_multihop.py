"""Iterative (two-hop) retrieval on a small real store: a bridge document only the first document names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.config import Config
from openbook.errors import QueryError
from openbook.retrieve.multihop import MultiHopSettings, hop_queries, rank_pairs
from openbook.types import Chunk, Hit

QUESTION = "Which instrument does the founder of Quillmoor Records play?"


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


@pytest.fixture()
def engine(tmp_path: Path):
    d = tmp_path / "docs"
    d.mkdir()
    write(d, "quillmoor.md", """
        # Quillmoor Records
        Quillmoor Records is an independent record label in Tallinn. Its founder, Odessa Varga, started it in 1998.
        """)
    write(d, "varga.md", """
        # Odessa Varga
        Odessa Varga is an Estonian musician. Her instrument is the cello, which she plays with the Harbour Quartet.
        """)
    # topical neighbours: each shares question words with the question but not the bridge entity
    for i, text in enumerate([
        "The founder of a records shop must know which instrument every customer may play.",
        "Records of instrument sales: the founder asked which instrument a student should play first.",
        "A founder of the guild plays an instrument; guild records list every instrument played.",
        "Which instrument to play? The records founder society answers instrument questions weekly.",
    ]):
        write(d, f"noise{i}.md", f"# Noise {i}\n{text}\n")
    topics = ["canteen menu", "parking permit", "printer toner", "travel expenses", "office plants",
              "fire drill", "password reset", "holiday calendar", "bicycle storage", "meeting rooms"]
    for i in range(40):  # an ordinary corpus around them, so that rare names are rare
        t = topics[i % len(topics)]
        write(d, f"misc{i}.md", f"# {t.title()} {i}\nThe {t} rules changed in week {i} of the year.\n")
    write(d, "secret.md", """
        ---
        acl: [finance]
        ---
        # Odessa Varga payroll
        Odessa Varga, founder of Quillmoor Records, is paid to play the cello instrument.
        """)
    cfg = Config().with_overrides({"store": str(tmp_path / "store"), "embedding.enabled": False})
    engine = Engine.open(cfg.store, cfg, create=True)
    engine.ingest([d])
    yield engine
    engine.close()


def docs_of(hits: list[Hit]) -> list[str]:
    return list(dict.fromkeys(h.doc_id for h in hits))


def test_second_hop_finds_the_bridge_document(engine: Engine) -> None:
    one = docs_of(engine.search(QUESTION, k=10, hops=1))
    assert "varga.md" not in one[:2]  # one pass ranks topical neighbours above the bridge document
    two = engine.search(QUESTION, k=10, hops=2)
    assert set(docs_of(two)[:2]) == {"quillmoor.md", "varga.md"}
    assert "hop2" in dict(two[docs_of(two).index("varga.md")].legs)


def test_moved_documents_lead_and_the_first_hop_follows_with_decreasing_scores(engine: Engine) -> None:
    explain: list[dict] = []
    hits = engine.search_batch([QUESTION], k=5, hops=2, explain=explain)[0]
    assert explain[0]["reordered"] is True
    one = docs_of(engine.search(QUESTION, k=30, hops=1))
    two = docs_of(hits)
    assert two[2:] == [d for d in one if d not in two[:2]][: len(two) - 2]  # the rest keeps the first hop's order
    scores = [h.score for h in hits]
    assert all(a > b for a, b in zip(scores, scores[1:]))
    assert all(h.chunk is not None for h in hits)


def test_a_question_the_top_document_explains_keeps_the_first_hop(engine: Engine) -> None:
    """The adaptive trigger: quillmoor.md names Odessa Varga (a link), but adds nothing to what varga.md, the
    top document, explains, so two hops return exactly the one-hop hits."""
    question = "Which instrument does Odessa Varga play with the Harbour Quartet?"
    explain: list[dict] = []
    hits = engine.search_batch([question], k=5, hops=2, explain=explain)[0]
    assert explain[0]["reordered"] is False and explain[0]["follow_up_queries"]
    assert hits == engine.search(question, k=5, hops=1)


def test_every_hop_applies_roles(engine: Engine) -> None:
    assert "secret.md" not in docs_of(engine.search(QUESTION, k=10, hops=2))
    assert "secret.md" in docs_of(engine.search(QUESTION, k=10, hops=2, roles=["finance"]))


def test_every_hop_applies_where_and_exclusions(engine: Engine) -> None:
    # varga.md is the bridge document only the second hop finds: a filter that hides it must hide it on both hops
    hidden = ["doc_id!=varga.md"]
    assert "varga.md" not in docs_of(engine.search(QUESTION, k=10, hops=2, where=hidden))
    assert "varga.md" not in docs_of(engine.search(QUESTION, k=10, hops=2, exclude_docs={"varga.md"}))
    assert "varga.md" not in docs_of(engine.search(QUESTION, k=10, hops=2, where=hidden, roles=["finance"]))


def test_hops_are_validated(engine: Engine) -> None:
    with pytest.raises(QueryError, match="hops"):
        engine.search(QUESTION, hops=3)


def _hit(doc: str, score: float, title: str, text: str) -> Hit:
    return Hit(f"c-{doc}", doc, score, {"bm25": (1, score)}, Chunk(f"c-{doc}", doc, text, title=title))


def test_common_titles_never_link_documents() -> None:
    """A title made of common words ('Summary') links nothing, so the first hop's order is kept."""
    common = {"summary": 0.5, "cell": 0.6, "cells": 0.6}
    idf = lambda terms: [common.get(t, 9.0) if t != "\x00" else 10.0 for t in terms]  # noqa: E731
    terms = lambda text: {w.strip("?.").lower() for w in text.split()}  # noqa: E731
    first = [_hit("a", 10.0, "Cells", "cells divide. see the summary"), _hit("b", 9.0, "Summary", "cells grow"),
             _hit("c", 8.0, "Other", "cells")]
    second = [[first[1], first[2]], [first[0], first[2]], [first[0], first[1]]]
    ranked = rank_pairs("Do cells divide?", first, second, terms=terms, idf=idf, k=3)
    assert [h.doc_id for h in ranked] == ["a", "b", "c"]
    assert len(hop_queries("Do cells divide?", first, MultiHopSettings(follow=2))) == 2


def test_documents_with_one_title_never_link() -> None:
    """A paper and a comment on it share a title: one subject, not a bridge, so the first hop's order is kept."""
    idf = lambda terms: [9.0 for _ in terms]  # noqa: E731
    terms = lambda text: {w.strip("?.'").lower() for w in text.split()}  # noqa: E731
    title = "Creep buckling of columns"
    first = [_hit("a", 10.0, "Tapered beams", "tapered beams under load"),
             _hit("b", 9.0, title, "creep buckling of columns under load"),
             _hit("c", 8.0, title, "comment on 'creep buckling of columns' by the authors")]
    second = [[first[1], first[2]], [first[0], first[2]], [first[0], first[1]]]
    ranked = rank_pairs("creep buckling of tapered columns under load", first, second, terms=terms, idf=idf, k=3)
    assert ranked == first


def test_a_first_document_in_another_script_keeps_the_first_hop_order() -> None:
    """Words cannot judge a Chinese first document for an English question (its coverage is 0 whatever it says):
    a linked English pair must not jump over it."""
    idf = lambda terms: [9.0 for _ in terms]  # noqa: E731
    terms = lambda text: {w.strip("?.,").lower() for w in text.split()}  # noqa: E731
    first = [_hit("a", 10.0, "国际学生指南", "科学图书馆在考试期间凌晨两点关门。"),
             _hit("b", 9.0, "Opening hours", "the science library opens at 8 during exams; see late study rooms"),
             _hit("c", 8.0, "Late study rooms", "late study rooms close at 2 during exams")]
    second = [[first[1], first[2]], [first[0], first[2]], [first[0], first[1]]]
    question = "When does the science library close during exams?"
    assert rank_pairs(question, first, second, terms=terms, idf=idf, k=3) == first
    english = [_hit("a", 10.0, "Student guide", "a guide for new students"), first[1], first[2]]
    second = [[english[1], english[2]], [english[0], english[2]], [english[0], english[1]]]
    # (the same pair does move over an English first document that explains less of the question)
    assert [h.doc_id for h in rank_pairs(question, english, second, terms=terms, idf=idf, k=3)][0] != "a"
