"""The stages are handed their LLM: ``Engine`` builds the one ``[llm]`` names (on its first call) and the
retriever, answerer and ingester call what they were handed, never building one from the config themselves.

Real stores on disk; the LLM is a recording ``Generator`` (it stands in for a paid API) or the scripted
OpenAI-compatible server (real SDK, real HTTP)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator, Sequence

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ -> import helpers.*

from helpers.scripted_llm import ScriptedLLMServer  # noqa: E402
from helpers.stores import bm25_engine  # noqa: E402

from openbook.api import Engine  # noqa: E402
from openbook.config import (  # noqa: E402
    ChunkingConfig, Config, EmbeddingConfig, IngestConfig, LLMConfig, RetrievalConfig)
from openbook.errors import ConfigError  # noqa: E402
from openbook.ingest.pipeline import Ingester  # noqa: E402
from openbook.llm import DeferredGenerator, Generator  # noqa: E402
from openbook.retrieve.pipeline import Retriever  # noqa: E402
from openbook.store import open_store  # noqa: E402
from openbook.types import Message  # noqa: E402

QUESTION = "How long are deleted files kept?"
DOCS = {
    "trash.md": "# Trash retention\nDeleted files stay in the Trash for 14 days, then they are purged.\n",
    "bin.md": "# Recycle bin\nThe recycle bin empties itself every two weeks; removed items cannot return.\n",
    "canteen.md": "# Canteen\nThe canteen opens at eight and serves soup on Fridays.\n",
}
OFFLINE = Config(embedding=EmbeddingConfig(enabled=False))
HOSTED = LLMConfig(backend="openai", model="gpt-4o-mini")  # no key, no base_url: get_generator refuses it


class Recording:
    """A ``Generator`` that answers ``reply`` and records the messages of every call."""

    name = "recording"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls: list[list[Message]] = []
        self.last_finish_reason: str | None = None

    def generate(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        self.calls.append(list(messages))
        self.last_finish_reason = "stop"
        return self.reply

    def stream(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        yield self.generate(messages, max_tokens=max_tokens)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("handed")
    bm25_engine(root, DOCS).close()
    return root / "store"


@pytest.fixture()
def no_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_the_recording_double_is_a_generator():
    assert isinstance(Recording(""), Generator)


def test_the_retriever_calls_the_generator_it_is_handed(store):
    llm = Recording("How long does the recycle bin keep removed items?")
    backing = open_store(store)
    try:
        retriever = Retriever(backing, OFFLINE, generator=llm)  # no [llm] in the config: only the handed one
        (hits,), (reports,) = retriever.search_transformed([QUESTION], 3, transforms="multi-query")
    finally:
        backing.close()
    assert len(llm.calls) == 1 and llm.calls[0][-1]["content"] == QUESTION
    assert reports[0]["generated"] == ["How long does the recycle bin keep removed items?"]
    assert {h.doc_id for h in hits[:2]} == {"trash.md", "bin.md"}  # the paraphrase found the synonym doc


def test_a_retriever_handed_no_generator_never_builds_one_from_the_config(store):
    backing = open_store(store)
    try:
        # [llm] names a backend, but the stage is handed none: it says an LLM is needed, it does not build one
        retriever = Retriever(backing, Config(embedding=EmbeddingConfig(enabled=False), llm=HOSTED))
        with pytest.raises(ConfigError, match="need an LLM: pass --llm"):
            retriever.search_transformed([QUESTION], 3, transforms="multi-query")
    finally:
        backing.close()


def test_the_answerer_and_the_follow_up_hop_call_the_engines_generator(store):
    with Engine.open(store, OFFLINE) as e:
        assert e.generator is None and e.retriever.generator is None and e.answerer.generator is None
    llm = Recording("Deleted files stay in the Trash for 14 days [1].")
    with Engine.open(store, OFFLINE) as e:
        answer = e.ask(QUESTION, generator=llm)  # a generator given to one call wins
        assert len(llm.calls) == 1 and not answer.refused and [c.n for c in answer.citations] == [1]
    config = Config(embedding=EmbeddingConfig(enabled=False), retrieval=RetrievalConfig(hops=2, llm_follow_up=True))
    backing = open_store(store)
    try:
        follow = Recording("recycle bin")
        _, applied = Retriever(backing, config, generator=follow).search_explained(QUESTION, 3)
    finally:
        backing.close()
    assert len(follow.calls) == 1 and applied["llm_query"] == "recycle bin"


def test_the_engine_builds_one_generator_from_the_config_on_its_first_call(store):
    with ScriptedLLMServer() as server:
        llm = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, max_retries=0)
        with Engine.open(store, Config(embedding=EmbeddingConfig(enabled=False), llm=llm)) as e:
            assert isinstance(e.generator, DeferredGenerator) and e.generator.name == "openai"
            assert e.retriever.generator is e.generator and e.answerer.generator is e.generator
            assert e.ingester.generator is e.generator
            assert "built=False" in repr(e.generator)  # opening and searching call no model
            assert e.search(QUESTION, 2)
            server.push("Deleted files stay in the Trash for 14 days [1].")
            answer = e.ask(QUESTION)
            built = e.generator.built()
            assert type(built).__name__ == "OpenAIGenerator" and built.model == "scripted"
            server.push("Deleted files stay in the Trash for 14 days [1].")
            e.ask(QUESTION)
            assert e.generator.built() is built  # built once
        assert len(server.requests) == 2 and server.requests[0].body["model"] == "scripted"
    assert [c.n for c in answer.citations] == [1] and e.generator.last_finish_reason == "stop"


def test_an_unusable_llm_config_fails_where_the_model_is_needed(store, no_key):
    with Engine.open(store, Config(embedding=EmbeddingConfig(enabled=False), llm=HOSTED)) as e:
        assert e.search(QUESTION, 2)  # a search needs no model: the missing key does not matter
        with pytest.raises(ConfigError, match="no API key for the openai backend: set OPENAI_API_KEY"):
            e.ask(QUESTION)
        with pytest.raises(ConfigError, match="no API key for the openai backend"):
            e.search_transformed([QUESTION], 3, transforms="multi-query")


def test_contextual_ingest_with_an_unusable_llm_fails_before_anything_is_written(tmp_path, no_key):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "trash.md").write_text(DOCS["trash.md"], encoding="utf-8")
    config = Config(embedding=EmbeddingConfig(enabled=False), ingest=IngestConfig(contextualize=True), llm=HOSTED)
    with Engine.open(tmp_path / "s", config, create=True) as e:
        with pytest.raises(ConfigError, match="no API key for the openai backend"):
            e.ingest([tmp_path / "docs"])
        assert e.documents() == []


def test_the_ingester_calls_the_generator_it_is_handed_for_chunk_contexts(tmp_path):
    (tmp_path / "docs").mkdir()
    text = "# Trash\n" + " ".join(["Deleted files stay in the Trash for 14 days."] * 6) + "\n\n" + \
        " ".join(["Support can restore a purged file within 90 days."] * 6) + "\n"
    (tmp_path / "docs" / "trash.md").write_text(text, encoding="utf-8")
    config = Config(chunking=ChunkingConfig(target_words=30, overlap_words=0, max_words=45),
                    embedding=EmbeddingConfig(enabled=False), ingest=IngestConfig(contextualize=True))
    llm = Recording("About the Trash retention policy.")
    backing = open_store(tmp_path / "s", create=True)
    try:
        report = Ingester(backing, config, generator=llm).ingest([tmp_path / "docs"])
    finally:
        backing.close()
    assert report.ok and report.chunks_added >= 2
    assert report.contextualize["calls"] == len(llm.calls) == report.chunks_added
    assert all("Trash" in m[-1]["content"] for m in llm.calls)
