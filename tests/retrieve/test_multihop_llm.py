"""The LLM-written follow-up hop (``openbook.retrieve.multihop.llm_follow_up``) against the scripted
OpenAI-compatible server, on a real BM25 store; and what ``search --json`` / ``ask --json`` report as applied."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.scripted_llm import Reply, ScriptedLLMServer  # noqa: E402
from helpers.stores import bm25_engine  # noqa: E402

from openbook.api import Engine  # noqa: E402
from openbook.cli import cli  # noqa: E402
from openbook.config import Config, EmbeddingConfig, LLMConfig, RetrievalConfig  # noqa: E402
from openbook.retrieve.multihop import FOLLOW_UP_SYSTEM  # noqa: E402

DOCS = {
    "kestrel.md": "# Kestrel reactor\nThe Kestrel reactor at Vollmark was designed by the engineer Ilse Brandt.\n",
    "brandt.md": "# Ilse Brandt\nIlse Brandt was born in Rostock in 1961 and studied physics in Dresden.\n",
    "canteen.md": "# Canteen\nThe canteen serves soup on Fridays.\n",
    "reactors.md": "# Reactor safety\nEvery reactor at Vollmark is inspected twice a year by the regulator.\n",
}
QUESTION = "In which city was the designer of the Kestrel reactor born?"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hopllm")
    bm25_engine(root, DOCS).close()
    return root / "store"


@pytest.fixture()
def scripted() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def _config(server: ScriptedLLMServer) -> Config:
    return Config(embedding=EmbeddingConfig(enabled=False), retrieval=RetrievalConfig(hops=2, llm_follow_up=True),
                  llm=LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, api_key="t",
                                max_retries=0))


def test_the_model_writes_the_follow_up_query_from_the_first_hop(store, scripted):
    scripted.push(Reply('"Ilse Brandt birthplace"\nmore text'))
    with Engine.open(store, _config(scripted)) as engine:
        hits, applied = engine.search_explained(QUESTION, 3)
    assert applied["hops"] == 2 and applied["llm_query"] == "Ilse Brandt birthplace" and applied["llm_note"] == ""
    assert applied["follow_up_queries"] and all(q.startswith(QUESTION) for q in applied["follow_up_queries"])
    assert "brandt.md" in [h.doc_id for h in hits]
    assert len({h.doc_id for h in hits}) == len(hits)  # one hit per document
    (request,) = scripted.requests
    system, user = request.body["messages"]
    assert system == {"role": "system", "content": FOLLOW_UP_SYSTEM}
    assert user["content"].startswith(f"Question: {QUESTION}\n\nPassages found so far:\n[1] ")
    assert ("Kestrel reactor: The Kestrel reactor at Vollmark was designed by the engineer Ilse Brandt."
            in user["content"])
    assert user["content"].endswith("Follow-up search query:")


def test_a_failed_or_useless_reply_leaves_the_offline_hop(store, scripted):
    scripted.push(Reply(status=500), Reply(QUESTION))
    with Engine.open(store, _config(scripted)) as engine:
        offline = Engine.open(store, Config(embedding=EmbeddingConfig(enabled=False),
                                            retrieval=RetrievalConfig(hops=2)))
        expected = [h.doc_id for h in offline.search(QUESTION, 3)]
        offline.close()
        hits, applied = engine.search_explained(QUESTION, 3)
        assert applied["llm_query"] is None and "LLM call failed" in applied["llm_note"]
        assert [h.doc_id for h in hits] == expected
        _, applied = engine.search_explained(QUESTION, 3)
        assert applied["llm_query"] is None and applied["llm_note"] == "the LLM repeated the question"


def test_search_and_ask_json_report_what_was_applied(store):
    runner = CliRunner()
    out = runner.invoke(cli, ["search", QUESTION, "--store", str(store), "--json", "--hops", "2", "-k", "3"])
    assert out.exit_code == 0, out.output
    applied = json.loads(out.output)["applied"]
    assert applied["hops"] == 2 and applied["follow_up_queries"] and applied["llm_query"] is None
    assert applied["transforms"] == [] and applied["contextualized"] is False and applied["raptor"] is None
    out = runner.invoke(cli, ["ask", QUESTION, "--store", str(store), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["applied"]["hops"] == 2  # the default
    out = runner.invoke(cli, ["ask", QUESTION, "--store", str(store), "--json", "--hops", "1"])
    assert out.exit_code == 0, out.output
    applied = json.loads(out.output)["applied"]
    assert applied == {"transforms": [], "hops": 1, "expansions": [], "contextualized": False, "raptor": None,
                       "dense_coverage": None}  # a BM25-only store
