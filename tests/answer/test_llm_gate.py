"""With an LLM, the offline answerability model judges the passages before the call: where it refuses, the LLM is
not asked (``[answer] llm_gate``); after the call, an answer none of whose sentences is supported is refused.

Real store (files on disk, the real analyzer and BM25), the real OpenAI SDK over HTTP against the scripted
chat-completions server (which records every request), and SmolLM2 served by llama.cpp for the real path.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from openbook.api import Engine
from openbook.config import Config, LLMConfig

DOCS = {
    "backups.md": "# Backups\n\nNightly backups of the file server run at 02:00 and are kept for 35 days. "
                  "A restore is requested through the service desk.\n",
    "printers.md": "# Printers\n\nThe printers on floor two are serviced by the facilities team every Friday.\n",
}
ANSWERABLE = "How long are nightly backups of the file server kept?"
OFF_TOPIC = "Which grape varieties does the Santorini vineyard restore after a volcanic eruption?"


def _engine(tmp_path, llm: LLMConfig, gate: bool = True) -> Engine:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    config = Config()
    config = replace(config, llm=llm, answer=replace(config.answer, llm_gate=gate))
    engine = Engine.open(tmp_path / "store", config, create=True)
    assert engine.ingest([docs], embed=False).ok
    return engine


def _scripted(server) -> LLMConfig:
    return LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, max_retries=0)


def test_a_question_the_passages_cannot_answer_never_reaches_the_llm(tmp_path, scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    scripted.push("Assyrtiko grows best there [1].")
    with _engine(tmp_path, _scripted(scripted)) as engine:
        answer = engine.ask(OFF_TOPIC)
    assert answer.passages  # passages were retrieved ("restore"): the model judged them, not an empty search
    assert answer.refused and answer.text == "I could not find this in the documents."
    assert any("before the LLM call" in n for n in answer.notes)
    assert scripted.requests == []  # the model was never asked


def test_an_answerable_question_is_asked_and_checked(tmp_path, scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    scripted.push("Nightly backups are kept for 35 days [1].")
    with _engine(tmp_path, _scripted(scripted)) as engine:
        answer = engine.ask(ANSWERABLE)
    assert len(scripted.requests) == 1
    assert not answer.refused and "35 days" in answer.text and answer.citations


def test_the_gate_off_asks_the_llm_and_an_unsupported_answer_is_refused_after(tmp_path, scripted, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    scripted.push("Assyrtiko grows best on volcanic soil [1].")
    with _engine(tmp_path, _scripted(scripted), gate=False) as engine:
        answer = engine.ask(OFF_TOPIC)
    assert len(scripted.requests) == 1
    assert answer.refused and any(n.startswith("refused: no sentence") for n in answer.notes)


@pytest.mark.slow  # starts the llama.cpp server
@pytest.mark.integration
def test_the_gate_against_the_real_llama_cpp_server(tmp_path, llama_server):
    llm = LLMConfig(backend="openai", model="smollm2-135m", base_url=llama_server, max_retries=0, max_tokens=24)
    with _engine(tmp_path, llm) as engine:
        refused = engine.ask(OFF_TOPIC)
        asked = engine.ask(ANSWERABLE)
    assert refused.refused and any("before the LLM call" in n for n in refused.notes)
    # the model is too small to answer well: what it wrote was asked for and checked, whatever it says
    assert not any("before the LLM call" in n for n in asked.notes)
    assert asked.refused or {c.n for c in asked.citations} <= {p.n for p in asked.passages}
