"""LLM query transforms (multi-query, HyDE, decomposition) and the small-corpus path, against the scripted
OpenAI-compatible server (real SDK, real HTTP) and real stores on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.scripted_llm import Reply, ScriptedLLMServer  # noqa: E402

from openbook.answer.prompt import assemble_context  # noqa: E402
from openbook.api import Engine  # noqa: E402
from openbook.config import Config, EmbeddingConfig, LLMConfig  # noqa: E402
from openbook.errors import ConfigError  # noqa: E402
from openbook.retrieve.fusion import rrf  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How long are deleted files kept?"
DOCS = {
    "trash.md": "# Trash retention\nDeleted files stay in the Trash for 14 days, then they are purged.\n",
    "bin.md": "# Recycle bin\nThe recycle bin empties itself every two weeks; removed items cannot return.\n",
    "laptop.md": "# Laptop replacement\nNotebook computers are replaced every 36 months by the IT desk.\n",
    "canteen.md": "# Canteen\nThe canteen opens at eight and serves soup on Fridays.\n",
    "budget.md": "---\nacl: [finance]\n---\nThe FY2025 marketing budget is 4.2 million euros.\n",
}


def _docs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def bm25_store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("transforms")
    with Engine.open(root / "s", Config(embedding=EmbeddingConfig(enabled=False)), create=True) as e:
        assert e.ingest([_docs(root / "docs")]).ok
    return root / "s"


@pytest.fixture()
def scripted() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def _config(server: ScriptedLLMServer | None, **answer) -> Config:
    llm = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, api_key="test",
                    max_retries=0) if server else LLMConfig()
    cfg = Config(embedding=EmbeddingConfig(enabled=False), llm=llm)
    return replace(cfg, answer=replace(cfg.answer, **answer)) if answer else cfg


def _ids(hits) -> list[str]:
    return [h.chunk_id for h in hits]


@pytest.mark.parametrize("name,reply", [("multi-query", "a paraphrase\nanother"), ("decompose", "part one?"),
                                        ("hyde", "A passage that answers.")])
def test_every_transform_keeps_the_question_first_and_reports_itself(scripted, name, reply):
    from openbook.llm.factory import get_generator
    from openbook.retrieve.transforms import QueryTransform, TransformedQuery, build_transforms

    scripted.push(reply)
    (t,) = build_transforms([name], get_generator(_config(scripted).llm), dense=True)
    assert isinstance(t, QueryTransform) and t.name == name
    queries, report = t.transform([TransformedQuery(QUESTION)])
    assert queries[0].text == QUESTION and report.name == name and report.generated and not report.note
    assert all(len(q.text) <= 300 for q in queries)


def test_multi_query_paraphrases_are_searched_and_fused_by_rrf(bm25_store, scripted):
    scripted.push("1. How long does the recycle bin keep removed items?\n- How long are deleted files kept?\n\n"
                  "trash retention period")
    with Engine.open(bm25_store, _config(scripted)) as e:
        (hits,), (reports,) = e.search_transformed([QUESTION], 3, transforms="multi-query")
        sent = scripted.requests[0].body["messages"]
        assert "3 different search queries" in sent[0]["content"] and sent[1]["content"] == QUESTION
        generated = ["How long does the recycle bin keep removed items?", "trash retention period"]
        assert reports == [{"name": "multi-query", "generated": generated, "note": ""}]  # repeat dropped
        depth = e.config.retrieval.candidates
        each = e.search_batch([QUESTION, *generated], depth, transforms=(), load_chunks=False)
        expected = rrf(dict(zip(["question", "multi-query:1", "multi-query:2"], each)), k=60, top_k=3)
        assert _ids(hits) == _ids(expected)
        assert {h.doc_id for h in hits[:2]} == {"trash.md", "bin.md"}  # the paraphrase found the synonym doc
        assert "multi-query:1" in hits[0].legs or "multi-query:1" in hits[1].legs


def test_decomposition_searches_each_sub_question(bm25_store, scripted):
    scripted.push("How long are deleted files kept?\nWhen does the canteen open?")
    question = "How long are deleted files kept, and when can I get soup?"
    with Engine.open(bm25_store, _config(scripted)) as e:
        hits = e.search(question, 2, transforms=["decompose"])
        assert "sub-questions" in scripted.requests[0].body["messages"][0]["content"]
    assert {h.doc_id for h in hits} == {"trash.md", "canteen.md"}


def test_a_failed_llm_call_falls_back_to_the_question_with_a_note(bm25_store, scripted):
    scripted.push(Reply(status=500))
    with Engine.open(bm25_store, _config(scripted)) as e:
        (hits,), (reports,) = e.search_transformed([QUESTION], 3, transforms="multi-query")
        plain = e.search(QUESTION, 3, transforms=())
    assert _ids(hits) == _ids(plain)
    assert reports[0]["generated"] == [] and reports[0]["note"].startswith("LLM call failed")


def test_hyde_has_no_effect_on_a_bm25_store_and_calls_no_llm(bm25_store, scripted):
    with Engine.open(bm25_store, _config(scripted)) as e:
        (hits,), (reports,) = e.search_transformed([QUESTION], 3, transforms="hyde")
        assert _ids(hits) == _ids(e.search(QUESTION, 3, transforms=()))
    assert "no effect" in reports[0]["note"] and scripted.requests == []


def test_hyde_passage_goes_to_the_dense_leg_only(tmp_path, scripted):
    passage = "Notebook computers are replaced every 36 months by the IT desk."
    scripted.push(passage)
    question = "When do staff get new machines?"
    cfg = replace(_config(scripted), embedding=EmbeddingConfig())
    with Engine.open(tmp_path / "s", cfg, create=True) as e:
        assert e.ingest([_docs(tmp_path / "docs")]).ok
        (hits,), (reports,) = e.search_transformed([question], 5, transforms="hyde", mode="hybrid")
        plain = e.search(question, 5, mode="hybrid", transforms=())
    assert reports[0]["generated"] == [passage]
    assert "reference document" in scripted.requests[0].body["messages"][0]["content"]
    bm25 = lambda hs: sorted((h.doc_id, h.legs["bm25"]) for h in hs if "bm25" in h.legs)  # noqa: E731
    assert bm25(hits) == bm25(plain)  # the lexical leg still searched the question
    top_dense = min((h for h in hits if "dense" in h.legs), key=lambda h: h.legs["dense"][0])
    before = next(h.legs["dense"][1] for h in plain if h.doc_id == "laptop.md")
    assert top_dense.doc_id == "laptop.md" and top_dense.legs["dense"][1] > max(0.9, before)  # the passage


def test_transforms_without_an_llm_or_with_a_bad_name_are_one_clear_error(bm25_store):
    with Engine.open(bm25_store, _config(None)) as e:
        with pytest.raises(ConfigError, match="need an LLM: pass --llm"):
            e.search(QUESTION, transforms=["hyde"])
        with pytest.raises(ConfigError, match="unknown query transform.*valid: multi-query, hyde, decompose"):
            e.search(QUESTION, transforms="hyde,rewrite")


def test_small_corpus_skips_retrieval_with_the_same_citation_checking(bm25_store, scripted):
    assert Config().answer.skip_retrieval_small_corpus is False  # off by default
    with Engine.open(bm25_store, _config(scripted, skip_retrieval_small_corpus=True)) as e:
        whole = e.whole_corpus_passages(QUESTION, roles=["staff"])
        assert whole is not None and "budget.md" not in {p.chunk.doc_id for p in whole}  # acl applied
        context = assemble_context(QUESTION, whole, e.config.llm)
        shown, needed = context.passages, context.prompt_tokens
        n = next(p.n for p in shown if p.chunk.doc_id == "trash.md")
        scripted.push(f"Deleted files stay in the Trash for 14 days [{n}]. Support keeps them a year [42].")
        answer = e.ask(QUESTION, roles=["staff"])
        prompt = scripted.requests[0].body["messages"][-1]["content"]
        assert all(text.split("\n", 1)[1].strip() in prompt for name, text in DOCS.items() if name != "budget.md")
        assert "4.2 million" not in prompt
        assert answer.retrieval == "whole-corpus" and [c.doc_id for c in answer.citations] == ["trash.md"]
        assert answer.notes[0].startswith("retrieval skipped: all 4 visible document(s) fit")
        assert any("[42]" in note for note in answer.notes)  # invented citation dropped, as with retrieval
    with Engine.open(bm25_store, _config(scripted)) as e:
        scripted.push("Deleted files stay in the Trash for 14 days [1].")
        assert e.ask(QUESTION, roles=["staff"]).retrieval == "search"
    tight = replace(_config(scripted), llm=replace(_config(scripted).llm, context_tokens=needed - 5))
    with Engine.open(bm25_store, tight) as e:
        assert e.whole_corpus_passages(QUESTION, roles=["staff"]) is None  # does not fit: retrieval as usual
        assert e.whole_corpus_passages(QUESTION * 200) is None  # not even the question fits


def _cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENBOOK_EMBEDDING_ENABLED": "false", **env}
    return subprocess.run([sys.executable, "-m", "openbook", *args], cwd=cwd, capture_output=True, text=True,
                          env=full, timeout=120)


@pytest.mark.slow  # CLI processes against a scripted LLM server
def test_cli_reports_transforms_in_json_and_needs_llm(bm25_store, scripted):
    cwd = bm25_store.parent
    r = _cli("search", QUESTION, "--store", "s", "--transform", "multi-query", cwd=cwd)
    assert r.returncode == 1 and "need an LLM: pass --llm" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    scripted.push("How long does the recycle bin keep removed items?")
    r = _cli("search", QUESTION, "--store", "s", "--transform", "multi-query", "--llm", "openai:scripted",
             "--base-url", scripted.openai_url, "--json", cwd=cwd, OPENAI_API_KEY="test")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["transforms"][0]["generated"] == ["How long does the recycle bin keep removed items?"]
    scripted.push("How long does the recycle bin keep removed items?", "Deleted files stay 14 days [1].")
    r = _cli("ask", QUESTION, "--store", "s", "--transform", "multi-query", "--llm", "openai:scripted",
             "--base-url", scripted.openai_url, "--json", cwd=cwd, OPENAI_API_KEY="test")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["retrieval"] == "search" and out["transforms"][0]["name"] == "multi-query"
    assert out["citations"] and out["citations"][0]["doc_id"] in ("trash.md", "bin.md")
