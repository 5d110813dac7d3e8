"""LLM answers: sentences the citation check marks unsupported are removed; nothing supported left is a refusal.

Real OpenAI SDK over HTTP against the scripted chat-completions server; real passages built from small text.
"""

from __future__ import annotations

from openbook.llm.factory import get_generator
from openbook.answer.llm import generate_answer
from openbook.config import LLMConfig
from openbook.types import Chunk, Hit, Passage

QUESTION = "What is the capital of Australia?"
TEXTS = [
    "The travel policy covers trips to Sydney, Melbourne and Brisbane. Capital expenses need approval.",
    "Office supplies are ordered every Monday by the facilities team.",
]


def _passages() -> list[Passage]:
    out = []
    for i, text in enumerate(TEXTS, 1):
        chunk = Chunk(chunk_id=f"c{i}", doc_id=f"doc{i}.md", text=text, title=f"Doc {i}")
        out.append(Passage(n=i, hit=Hit(chunk.chunk_id, chunk.doc_id, 1.0 / i, chunk=chunk)))
    return out


def _ask(server, reply: str, **cfg) -> object:
    config = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, **cfg)
    server.push(reply)
    return generate_answer(QUESTION, _passages(), get_generator(config, environ={"OPENAI_API_KEY": "x"}), config)


def test_answer_with_no_supported_sentence_becomes_the_refusal(scripted):
    answer = _ask(scripted, "The capital of Australia is New South Wales [1].")
    assert answer.refused is True
    assert answer.text == "I could not find this in the documents."
    assert answer.citations == ()
    assert answer.unsupported == ("The capital of Australia is New South Wales [1].",)
    assert any(n.startswith("refused: no sentence") for n in answer.notes)


def test_unsupported_sentences_are_removed_and_citations_follow(scripted):
    answer = _ask(scripted, "Trips to Sydney and Melbourne are covered by the travel policy [1]. "
                            "Canberra is the capital of Australia [2].")
    assert answer.refused is False
    assert answer.text == "Trips to Sydney and Melbourne are covered by the travel policy [1]."
    assert [c.n for c in answer.citations] == [1]
    assert answer.unsupported == ("Canberra is the capital of Australia [2].",)
    assert any(n.startswith("removed unsupported") for n in answer.notes)


def test_keeping_unsupported_sentences_is_configurable(scripted):
    answer = _ask(scripted, "The capital of Australia is New South Wales [1].", drop_unsupported=False)
    assert answer.refused is False
    assert answer.text == "The capital of Australia is New South Wales [1]."
    assert answer.unsupported and any(n.startswith("unsupported") for n in answer.notes)
