"""Plumbing against a real model: SmolLM2-135M-Instruct served by llama-cpp-python's OpenAI-compatible server.

The model is too small to answer well, so these tests check the path (request, streaming, max_tokens, finish
reasons, timeouts, citation parsing of whatever it writes), not the answer. Kept few and short for CI.
"""

from __future__ import annotations

import json
import urllib.request

import pytest
from helpers.lab import find_chunk, passages_of

from openbook.llm.factory import get_generator
from openbook.answer.llm import generate_answer
from openbook.answer.prompt import default_token_counter
from openbook.config import LLMConfig
from openbook.errors import GenerationError

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # slow: starts the llama.cpp server and runs a real model

MESSAGES = [
    {"role": "system", "content": "Answer in one short sentence."},
    {"role": "user", "content": "Deleted files stay in the Trash for 14 days. How long do deleted files stay?"},
]


def _config(url: str, **kw) -> LLMConfig:
    return LLMConfig(backend="openai", model="smollm2-135m", base_url=url, max_retries=0, **kw)


def test_generate_and_stream_agree_and_respect_max_tokens(llama_server):
    gen = get_generator(_config(llama_server, max_tokens=8), environ={})
    text = gen.generate(MESSAGES)
    assert text.strip() and gen.last_finish_reason in ("length", "stop")
    pieces = list(gen.stream(MESSAGES))
    assert len(pieces) >= 2 and "".join(pieces) == text  # greedy decoding: same tokens, in order
    assert gen.last_finish_reason in ("length", "stop")
    assert default_token_counter().count(text) <= 8 + 1  # +1: a piece may re-tokenize differently at its edges


def test_offline_counter_matches_the_servers_tokenizer(llama_server, lab_chunks):
    counter = default_token_counter()
    if "SmolLM2" not in counter.name:
        pytest.skip("the SmolLM2 tokenizer is not installed")
    url = llama_server.removesuffix("/v1") + "/extras/tokenize/count"
    for key in ("doc-024", "doc-029", "doc-005"):
        text = "\n".join(c.text for c in lab_chunks[key])
        req = urllib.request.Request(url, data=json.dumps({"input": text}).encode(),
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert json.load(r)["count"] == counter.count(text), key


def test_streamed_answer_is_checked_whatever_the_model_writes(llama_server, lab_chunks):
    passages = passages_of([find_chunk(lab_chunks["doc-024"], "**14 days**"),
                            find_chunk(lab_chunks["doc-002"], "**30 days**")])
    config = _config(llama_server, max_tokens=24, context_tokens=1200)
    seen: list[str] = []
    answer = generate_answer("How long do deleted files stay in the Trash?", passages,
                             get_generator(config, environ={}), config, on_token=seen.append)
    assert seen and len(answer.passages) == 2
    if answer.refused:
        assert answer.citations == ()
    else:
        assert answer.text.strip()
        assert {c.n for c in answer.citations} <= {1, 2}  # ids outside the context were dropped
        assert all(s in answer.text for s in answer.unsupported)


def test_timeout_against_the_real_server(llama_server, lab_chunks):
    passages = passages_of(lab_chunks["doc-004"][:4])
    config = _config(llama_server, max_tokens=16, timeout_s=0.2, context_tokens=1500)
    with pytest.raises(GenerationError, match=r"openai backend .* did not answer within 0.2 s"):
        generate_answer("What does E-2043 mean?", passages, get_generator(config, environ={}), config)


def test_query_transforms_against_the_real_server(llama_server, tmp_path):
    """Plumbing only: SmolLM2 tends to answer instead of paraphrasing, so the queries it writes are not checked."""
    from openbook.api import Engine
    from openbook.config import Config, EmbeddingConfig

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "trash.md").write_text("Deleted files stay in the Trash for 14 days.\n", encoding="utf-8")
    (tmp_path / "docs" / "canteen.md").write_text("The canteen opens at eight.\n", encoding="utf-8")
    cfg = Config(embedding=EmbeddingConfig(enabled=False), llm=_config(llama_server, max_tokens=32))
    with Engine.open(tmp_path / "s", cfg, create=True) as e:
        assert e.ingest([tmp_path / "docs"]).ok
        (hits,), (reports,) = e.search_transformed(["How long do deleted files stay in the Trash?"], 2,
                                                   transforms="multi-query,decompose")
    assert hits and [r["name"] for r in reports] == ["multi-query", "decompose"]
    assert all(r["generated"] or r["note"] for r in reports)
