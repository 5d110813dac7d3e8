"""The identifier hop of iterative retrieval (``openbook.retrieve.multihop``) and the answer composed across it
(``openbook.answer.bridge.code_sentence``), on a small real BM25 store: a post-mortem names a ticket, only the
release notes that fix the ticket say in which version; codes of other shapes or shared by many documents, and
claims that ask for no value, must not trigger it."""

from __future__ import annotations

import pytest

from openbook.api import Engine
from openbook.retrieve.multihop import MultiHopSettings, identifier_query, link_identifier
from openbook.types import Chunk, Hit

from helpers.stores import bm25_engine

QUESTION = "Has the gateway fix for the root cause of the 2 March 2025 upload outage shipped, and in which version?"

DOCS = {
    "postmortem.md": "# Incident report: upload outage on 2 March 2025\n\n## Summary\nFor 95 minutes most uploads "
    "failed for customers in every region.\n\n## Root cause\nThe root cause of the outage was the session cache of "
    "the upload gateway, which evicted live sessions under load. This defect is tracked as ORB-7731.\n\n"
    "## Action items\n- ORB-7731: Change the gateway cache to keep live sessions. Owner: Gateway team. Target: next "
    "gateway release.\n",
    # the version is in the title only; the fix line shares one word with the question ("gateway")
    "gateway-4.7.md": "# Orbit gateway 4.7 release notes\n\nRelease date: 2025-04-10\n\n## Highlights\n"
    + "The gateway now shows upload progress per file and ships a new dashboard for administrators. " * 12
    + "\n\n## Fixes\n- ORB-7731: The gateway no longer evicts live sessions from its cache when traffic peaks.\n"
    "- ORB-7690: The dashboard clock shows the local time zone.\n",
    **{f"gateway-4.{v}.md": f"# Orbit gateway 4.{v} release notes\n\nRelease date: 2025-0{v - 3}-01\n\n## Fixes\n"
       f"- ORB-74{v}0: An upload fix for the gateway: resumed uploads no longer restart from zero after an outage "
       f"of the network.\n" for v in (4, 5, 6)},
    # a fix line only the staff role may read: never linked, cited or shown to a question without that role
    "gateway-4.8-staff.md": "---\nacl: [staff]\n---\n# Orbit gateway 4.8 release notes\n\n## Fixes\n- ORB-7731: "
    "The gateway keeps live sessions in its cache when an upload outage peaks.\n",
    # lab-unrelated names with letters and digits: a cytokine (IL-18) and a drug code (ARRY-142886) that many
    # abstracts share
    **{f"abstract-{i}.md": f"# Lewis lung carcinoma study {i}\n\nIL-18 levels rose in treated mice. The MEK "
       f"inhibitor ARRY-142886 slowed tumour growth in cohort {i}, measured over {20 + i} days.\n" for i in range(5)},
    "abstract-review.md": "# Cytokines in tumour models\n\nThe cohort received ARRY-142886 and IL-18 was measured; "
    "the review discusses why tumour growth slowed in treated mice.\n",
    **{f"misc-{i}.md": f"# {t.title()} {i}\n\nThe {t} rules changed in week {i} of the year.\n"
       for i, t in enumerate(["canteen menu", "parking permit", "printer toner", "travel expenses", "office plants",
                              "fire drill", "password reset", "holiday calendar", "bicycle storage", "meeting room"]
                             * 3)},
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("idhop"), DOCS)
    yield e
    e.close()


def docs_of(hits: list[Hit]) -> list[str]:
    return list(dict.fromkeys(h.doc_id for h in hits))


def test_the_identifier_leads_to_the_passage_that_fixes_it(engine: Engine) -> None:
    one = engine.search(QUESTION, k=6, hops=1)
    assert one[0].doc_id == "postmortem.md" and "ORB-7731" in one[0].chunk.text
    assert not any(h.doc_id == "gateway-4.7.md" and "ORB-7731" in h.chunk.text for h in one)  # one pass misses it
    explain: list[dict] = []
    two = engine.search_batch([QUESTION], k=6, hops=2, explain=explain)[0]
    assert explain[0]["identifier_query"] == "ORB-7731"
    assert explain[0]["identifier_link"] == "gateway-4.7.md" and explain[0]["reordered"] is True
    assert two[0].chunk_id == one[0].chunk_id
    assert two[1].doc_id == "gateway-4.7.md" and "ORB-7731: The gateway" in two[1].chunk.text  # the fix line
    assert "id-hop" in two[1].legs and two[0].score >= two[1].score >= two[2].score


@pytest.mark.parametrize("hidden", [dict(exclude_docs={"gateway-4.7.md"}), dict(where=["doc_id!=gateway-4.7.md"])])
def test_the_identifier_hop_applies_filters(engine: Engine, hidden: dict) -> None:
    explain: list[dict] = []
    hits = engine.search_batch([QUESTION], k=10, hops=2, explain=explain, **hidden)[0]
    assert explain[0]["identifier_query"] == "ORB-7731" and explain[0]["identifier_link"] is None
    assert "gateway-4.7.md" not in docs_of(hits)


def test_the_identifier_hop_never_reaches_a_document_the_roles_cannot_see(engine: Engine) -> None:
    hidden = "gateway-4.8-staff.md"
    explain: list[dict] = []
    hits = engine.search_batch([QUESTION], k=10, hops=2, explain=explain)[0]
    assert explain[0]["identifier_query"] == "ORB-7731" and explain[0]["identifier_link"] != hidden
    assert hidden not in docs_of(hits)
    answer = engine.ask(QUESTION)
    assert hidden not in {c.doc_id for c in answer.citations} | {p.chunk.doc_id for p in answer.passages}
    assert hidden in docs_of(engine.search_batch([QUESTION], k=10, hops=2, roles=["staff"])[0])  # not vacuous


@pytest.mark.xfail(reason="the fitted answerability model (public fit splits) does not weigh this kind enough yet; BENCHMARKS.md, fitted answerability model", strict=False)
def test_the_answer_quotes_the_fix_line_after_its_title(engine: Engine) -> None:
    answer = engine.ask(QUESTION)
    assert not answer.refused
    assert answer.text.startswith("The root cause of the outage was the session cache")
    assert "Orbit gateway 4.7 release notes: ORB-7731: The gateway no longer evicts" in answer.text
    assert {"postmortem.md", "gateway-4.7.md"} <= {c.doc_id for c in answer.citations}


@pytest.mark.parametrize("question", [
    # a claim asks for no value
    "The MEK inhibitor slowed tumour growth in cohort 3 of the Lewis lung carcinoma study.",
    # a number is asked and the top passage holds only names of another shape (IL-18), or states a number
    "How many days was IL-18 measured in treated mice of cohort 2?",
])
def test_names_and_claims_do_not_trigger_the_hop(engine: Engine, question: str) -> None:
    explain: list[dict] = []
    engine.search_batch([question], k=6, hops=2, explain=explain)
    assert explain[0]["identifier_query"] is None and explain[0]["identifier_link"] is None


def _hit(doc: str, score: float, text: str, title: str = "") -> Hit:
    return Hit(f"c-{doc}", doc, score, {"bm25": (1, score)}, Chunk(f"c-{doc}", doc, text, title=title))


def test_a_linked_passage_already_near_the_top_stays_where_it_is() -> None:
    top = _hit("pm", 9.0, "The root cause was the cache. Tracked as ORB-7731.")
    fix = _hit("rn", 8.0, "ORB-7731: sessions are kept.", title="Gateway 4.7 release notes")
    ranked = [top, _hit("x", 7.0, "noise"), fix, _hit("y", 6.0, "more noise")]
    hits, linked = link_identifier(QUESTION, ranked, ranked, [fix], k=4, settings=MultiHopSettings(lead=4))
    assert (hits, linked) == (ranked, None)
    hits, linked = link_identifier(QUESTION, ranked, ranked, [fix], k=4, settings=MultiHopSettings(lead=2))
    assert linked == "rn" and [h.doc_id for h in hits] == ["pm", "rn", "x", "y"]
    assert hits[1].score == 8.0 and hits[1].legs == {"id-hop": (1, 8.0)}  # halfway between 9.0 and 7.0


def test_a_code_the_question_names_is_not_followed(engine: Engine) -> None:
    question = "How many days did the cohort receive ARRY-142886 in the review of cytokines in tumour models?"
    first = engine.search(question, k=6, hops=1)
    assert "ARRY-142886" in first[0].chunk.text and identifier_query(question, first) is None


def test_a_code_many_documents_share_links_none_of_them() -> None:
    question = "How many days did the review follow the treated mice?"
    top = _hit("review", 9.0, "The cohort received ARRY-142886; the review discusses why tumours slowed.")
    ranked = [top, *(_hit(f"n{i}", 8.0 - i, "noise") for i in range(5))]
    found = [_hit(f"a{i}", 5.0 - i, f"ARRY-142886 slowed growth over {20 + i} days.") for i in range(4)]
    assert identifier_query(question, ranked) == "ARRY-142886"
    assert link_identifier(question, ranked, ranked, found, k=6) == (ranked, None)  # 4 other documents > 3
    hits, linked = link_identifier(question, ranked, ranked, found, k=6, settings=MultiHopSettings(max_code_docs=4))
    assert linked == "a0" and [h.doc_id for h in hits][:2] == ["review", "a0"]
