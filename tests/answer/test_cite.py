"""Citation checking and refusal detection, unit-level and end to end on the Skyladder lab with scripted replies.

The scripted replies travel through the real OpenAI SDK and a local chat-completions double, the same path as
a user's ``openbook ask --llm openai:MODEL --base-url URL``.
"""

from __future__ import annotations

import pytest
from helpers.lab import find_chunk, passages_of
from helpers.scripted_llm import Reply

from openbook.answer.cite import (
    check_citations,
    citation_ids,
    is_refusal,
    numbers_in,
    split_sentences,
)
from openbook.llm.factory import get_generator
from openbook.answer.llm import generate_answer
from openbook.answer.prompt import assemble_context
from openbook.answer.refusal import REFUSALS
from openbook.config import LLMConfig
from openbook.errors import GenerationError
from openbook.types import Chunk, Hit, Passage

TRASH_Q = "How long do deleted files stay in the Trash?"
BOOKING_Q = "How many days before departure must flights be booked?"


# ---- parsing -------------------------------------------------------------------------------------------------


def test_citation_forms():
    text = "a [1] b [2, 3] c [4-6] d [Passage 7] e ［8］ f 【9】 g [1][2] h [10; 11]"
    assert citation_ids(text) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 10, 11]
    assert citation_ids("no markers, [x] or [] or [1.5]") == []


def test_sentences_keep_citations_after_the_full_stop():
    text = "Files stay 14 days. [1] The manual says 30 days [2].\n- Restore from the web app [1]\n回收站保留14天[3]。其他。"
    assert split_sentences(text) == [
        "Files stay 14 days. [1]",
        "The manual says 30 days [2].",
        "Restore from the web app [1]",
        "回收站保留14天[3]。",
        "其他。",
    ]


def test_numbers():
    assert numbers_in("E-2043 costs 8.50 on 2023-02-14 for 1,000 users, 14.") == {
        "2043", "8.50", "2023-02-14", "1000", "14"}


@pytest.mark.parametrize(
    "text",
    [
        REFUSALS["en"],
        "I could not find this in the documents",
        "I couldn't find this in the documents.",
        "I could not find this information in the provided documents.",
        "I was unable to find the answer in the passages.",
        "The passages do not mention a Shenzhen office.",
        "The provided documents don't contain this information.",
        REFUSALS["zh"],
        "文档中没有提到深圳办公室。",
        REFUSALS["ja"],
        "I could not find this in the documents. The passages only cover travel hotels.",
    ],
)
def test_refusal_variants(text):
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "Deleted files stay in the Trash for 14 days [1].",
        "I could not find the office address, but the Trash keeps files for 14 days [1].",
        "I could not find this in the documents. However, files stay 14 days [1].",
        "The documents say files stay 14 days [1].",
    ],
)
def test_not_refusals(text):
    assert not is_refusal(text)


# ---- checking on hand-built passages ---------------------------------------------------------------------------


def _p(n: int, text: str, doc: str, updated: str = "") -> Passage:
    meta = {"updated": updated} if updated else {}
    chunk = Chunk(f"c{n}", doc, text, title=doc, metadata=meta)
    return Passage(n, Hit(chunk.chunk_id, doc, 1.0, chunk=chunk))


def test_dates_in_metadata_do_not_vouch_for_bare_numbers():
    passages = [_p(1, "Deleted files stay in the Trash for 30 days.", "manual.md", "2023-02-14")]
    check = check_citations("Deleted files stay in the Trash for 14 days [1].", passages)
    assert check.unsupported == ("Deleted files stay in the Trash for 14 days [1].",)
    ok = check_citations("The manual was updated on 2023-02-14 and says files stay in the Trash 30 days [1].", passages)
    assert ok.unsupported == ()


def test_decimal_forms_match():
    passages = [_p(1, "| SL-BIZ-900 | Business | 17.50 | USD per user |", "prices.md")]
    assert check_citations("SL-BIZ-900 Business costs 17.5 USD per user [1].", passages).unsupported == ()


def test_uncited_claims_are_unsupported_but_filler_is_not():
    passages = [_p(1, "Deleted files stay in the Trash for 14 days.", "support.md")]
    check = check_citations("Yes. Deleted files stay in the Trash for 14 days.", passages)
    assert [s.supported for s in check.sentences] == [True, False]
    assert check.sentences[1].reason == "no citation of a passage in the context"


def test_low_word_overlap_is_unsupported():
    passages = [_p(1, "Deleted files stay in the Trash for 14 days.", "support.md")]
    check = check_citations("Invoices are emailed monthly to billing administrators [1].", passages)
    assert not check.sentences[0].supported and "words" in check.sentences[0].reason


def test_chinese_sentence_overlap_uses_bigrams():
    passages = [_p(1, "删除的文件在回收站中保留 14 天。", "faq-zh.txt")]
    assert check_citations("删除的文件在回收站保留14天[1]。", passages).unsupported == ()
    assert check_citations("删除的文件在回收站保留30天[1]。", passages).unsupported != ()


# ---- end to end on the Skyladder lab, scripted replies through the OpenAI backend ------------------------------


@pytest.fixture()
def trash_passages(lab_chunks) -> list[Passage]:
    """Retrieval-like context for the conflict trap: newer support answer, older manual, an unrelated table."""
    return passages_of([
        find_chunk(lab_chunks["doc-024"], "**14 days**"),
        find_chunk(lab_chunks["doc-005"], "SL-PRO-500"),
        find_chunk(lab_chunks["doc-002"], "**30 days**"),
    ])


def _numbers(passages: list[Passage], config: LLMConfig) -> dict[str, int]:
    """Prompt number of each document (by id prefix) in the assembled context."""
    ctx = assemble_context(TRASH_Q, passages, config)
    return {p.chunk.doc_id[:7]: p.n for p in ctx.passages}


def _ask(server, question, passages, reply, on_token=None):
    config = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, max_retries=0)
    server.push(reply)
    return generate_answer(question, passages, get_generator(config, environ={}), config, on_token=on_token)


def test_good_conflict_answer_passes_and_cites_both_dates(scripted, trash_passages):
    n = _numbers(trash_passages, LLMConfig())
    reply = (f"Deleted files stay in the Trash for 14 days [{n['doc-024']}]. An older manual (updated 2023-02-14) "
             f"says deleted files stay 30 days [{n['doc-002']}].")
    answer = _ask(scripted, TRASH_Q, trash_passages, reply)
    assert not answer.refused and answer.unsupported == ()
    assert [c.doc_id[:7] for c in answer.citations] == ["doc-024", "doc-002"]
    assert [c.updated for c in answer.citations] == ["2024-10-21", "2023-02-14"]
    assert any("newest first: doc-024" in note for note in answer.notes)
    assert not any(note.startswith("possible conflict") for note in answer.notes)
    assert [p.n for p in answer.passages] == [1, 2, 3]
    # the prompt the model got carried the rules and the numbered passages
    prompt = scripted.requests[0].body["messages"]
    assert REFUSALS["en"] in prompt[0]["content"] and prompt[1]["content"].endswith(f"Question: {TRASH_Q}")


def test_answer_from_the_outdated_document_is_flagged(scripted, trash_passages):
    n = _numbers(trash_passages, LLMConfig())
    reply = f"Deleted files stay in the Trash for 30 days [{n['doc-002']}]."
    answer = _ask(scripted, TRASH_Q, trash_passages, reply)
    assert answer.unsupported == ()  # the manual does say 30 days...
    (note,) = [x for x in answer.notes if x.startswith("possible conflict")]
    # ...but a newer document exists: the note names it by its number among the answer's passages
    newer = next(p.n for p in answer.passages if p.chunk.doc_id.startswith("doc-024"))
    assert f"passage [{newer}]" in note and "updated 2024-10-21" in note


def test_nonexistent_id_is_dropped_and_reported(scripted, trash_passages):
    answer = _ask(scripted, TRASH_Q, trash_passages, "Deleted files stay in the Trash for 14 days [7].")
    # nothing supported is left once the unknown id is dropped: the answer becomes the refusal
    assert answer.refused and answer.text == "I could not find this in the documents."
    assert answer.citations == ()
    assert answer.unsupported == ("Deleted files stay in the Trash for 14 days.",)
    assert any("dropped citation(s) [7]" in note for note in answer.notes)


def test_citing_the_wrong_document_is_caught(scripted, trash_passages):
    n = _numbers(trash_passages, LLMConfig())
    # 14 days is in the support answer, not in the manual it cites
    reply = f"Deleted files stay in the Trash for 14 days [{n['doc-002']}]."
    answer = _ask(scripted, TRASH_Q, trash_passages, reply)
    assert answer.unsupported == (reply,)
    assert any("number(s) 14 not in cited passage(s)" in note for note in answer.notes)
    # the price table is the wrong document too: no number, but no overlap either
    reply = f"Deleted files stay in the Trash for two weeks [{n['doc-005']}]."
    assert _ask(scripted, TRASH_Q, trash_passages, reply).unsupported == (reply,)


def test_unsupported_number_is_caught(scripted, trash_passages):
    n = _numbers(trash_passages, LLMConfig())
    reply = f"Deleted files stay in the Trash for 21 days [{n['doc-024']}]."
    answer = _ask(scripted, TRASH_Q, trash_passages, reply)
    assert answer.unsupported == (reply,)
    assert any("number(s) 21" in note for note in answer.notes)


def test_dup_trap_old_figure_attributed_to_the_new_policy_is_caught(scripted, lab_chunks):
    new = find_chunk(lab_chunks["doc-008"], "14 days before departure")
    old = find_chunk(lab_chunks["doc-007"], "21 days")
    passages = passages_of([new, old])
    ctx = assemble_context(BOOKING_Q, passages, LLMConfig())
    n = {p.chunk.doc_id[:7]: p.n for p in ctx.passages}
    good = f"Flights must be booked at least 14 days before departure [{n['doc-008']}]."
    assert _ask(scripted, BOOKING_Q, passages, good).unsupported == ()
    bad = f"Flights must be booked at least 21 days before departure [{n['doc-008']}]."
    assert _ask(scripted, BOOKING_Q, passages, bad).unsupported == (bad,)


def test_spans_point_at_the_evidence(trash_passages):
    check = check_citations("Deleted files stay in the Trash for 14 days [1].", trash_passages[:1])
    (span,) = check.sentences[0].spans
    assert span.doc_id.startswith("doc-024") and "14 days" in span.text
    assert trash_passages[0].chunk.text[span.start:span.end] == span.text


def test_refusal_variant_becomes_the_exact_sentence(scripted, trash_passages):
    answer = _ask(scripted, "Where is the Shenzhen office?", trash_passages,
                  "I couldn't find this in the provided documents.")
    assert answer.refused and answer.text == REFUSALS["en"] and answer.citations == ()
    answer = _ask(scripted, "深圳办公室在哪里？", trash_passages, "我在文档中没有找到这个问题的答案。")
    assert answer.refused and answer.text == REFUSALS["zh"]


def test_streaming_prints_pieces_then_checks(scripted, trash_passages):
    n = _numbers(trash_passages, LLMConfig())
    pieces = ["Deleted files", " stay in the Trash", " for 14 days", f" [{n['doc-024']}]", ". Also 99 [42]."]
    seen: list[str] = []
    answer = _ask(scripted, TRASH_Q, trash_passages, Reply("x", pieces=pieces), on_token=seen.append)
    assert seen == pieces
    assert scripted.requests[0].body["stream"] is True
    assert answer.unsupported == ("Also 99.",)
    assert any("[42]" in note for note in answer.notes)
    assert [c.doc_id[:7] for c in answer.citations] == ["doc-024"]


def test_truncated_answer_is_noted(scripted, trash_passages):
    answer = _ask(scripted, TRASH_Q, trash_passages,
                  Reply("Deleted files stay in the Trash for 14 days [1", finish_reason="length"))
    assert any("max_tokens" in note for note in answer.notes)


def test_empty_reply_is_an_error_and_no_passages_is_a_refusal(scripted, trash_passages):
    with pytest.raises(GenerationError, match="empty answer"):
        _ask(scripted, TRASH_Q, trash_passages, "  ")
    config = LLMConfig(backend="openai", model="scripted", base_url=scripted.openai_url)
    answer = generate_answer(TRASH_Q, [], get_generator(config, environ={}), config)
    assert answer.refused and answer.text == REFUSALS["en"]
    assert len(scripted.requests) == 1  # the model was not called for the empty context
