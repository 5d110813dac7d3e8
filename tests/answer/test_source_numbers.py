"""Citation numbers are dense and in first-use order, one per source, on the answer, its sources, its passages
and its streamed tokens. Real OpenAI SDK over HTTP against the scripted chat server, real passages."""

from __future__ import annotations

from helpers.scripted_llm import Reply
from openbook.answer.context import format_sources
from openbook.answer.llm import generate_answer
from openbook.config import LLMConfig
from openbook.llm.factory import get_generator
from openbook.shapes import answer_dict
from openbook.types import Chunk, Hit, Passage

QUESTION = "How do I cool the kiln and dry the glaze?"
PASSAGES = [  # (doc id, section, text): passages 3 and 4 are two chunks of one section of one document
    ("glaze.md", "Drying", "Glazed pieces need a full day to dry before firing."),
    ("clay.md", "Storage", "Clay is stored in sealed bins in the cellar."),
    ("kiln.md", "Cooling", "Cooling the kiln takes twelve hours after a firing."),
    ("kiln.md", "Cooling", "Kilns cool overnight with the lid closed; open the lid at 80 degrees."),
]
# the prompt groups a document's passages (glaze [1], kiln #3 [2], kiln #4 [3], clay [4]); the model cites [3] first
REPLY = ("Kilns cool overnight with the lid closed [3]. Glazed pieces need a full day to dry [1]. Cooling the kiln "
         "takes twelve hours [2]. Open the lid at 80 degrees [3].")
NUMBERED = ("Kilns cool overnight with the lid closed [1]. Glazed pieces need a full day to dry [2]. Cooling the "
            "kiln takes twelve hours [1]. Open the lid at 80 degrees [1].")


def _passages() -> list[Passage]:
    out = []
    for n, (doc, section, text) in enumerate(PASSAGES, 1):
        chunk = Chunk(chunk_id=f"{doc}#{n}", doc_id=doc, text=text, title=doc, headings=(section,))
        out.append(Passage(n=n, hit=Hit(chunk.chunk_id, doc, 1.0 / n, chunk=chunk)))
    return out


def _ask(server, reply: Reply, on_token=None):
    config = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url)
    server.push(reply)
    return generate_answer(QUESTION, _passages(), get_generator(config, environ={"OPENAI_API_KEY": "x"}), config,
                           on_token=on_token)


def test_sources_are_numbered_by_first_use_once_each(scripted):
    answer = _ask(scripted, Reply(REPLY))
    assert answer.refused is False, answer.notes
    assert answer.text == NUMBERED
    assert [(c.n, c.doc_id, c.chunk_id) for c in answer.citations] == [(1, "kiln.md", "kiln.md#4"),
                                                                       (2, "glaze.md", "glaze.md#1")]
    # [k] opens passage k: the first-cited passage of each source takes its number, the others follow
    assert [(p.n, p.chunk.chunk_id) for p in answer.passages] == [
        (1, "kiln.md#4"), (2, "glaze.md#1"), (3, "kiln.md#3"), (4, "clay.md#2")]
    assert format_sources(answer.citations).splitlines() == ["[1] kiln.md — kiln.md, § Cooling",
                                                             "[2] glaze.md — glaze.md, § Drying"]
    data = answer_dict(answer)
    assert [c["n"] for c in data["citations"]] == [1, 2] and [p["n"] for p in data["passages"]] == [1, 2, 3, 4]


def test_streamed_tokens_carry_the_same_numbers(scripted):
    pieces: list[str] = []
    # a marker split over pieces ("[" then "4]") is held until it closes
    words = REPLY.replace("[3]", "[ 3]").split(" ")
    reply = Reply(REPLY, pieces=[w + " " for w in words[:-1]] + [words[-1]])
    answer = _ask(scripted, Reply(REPLY, pieces=[REPLY[:40], REPLY[40:41], REPLY[41:]]), on_token=pieces.append)
    assert "".join(pieces) == answer.text == NUMBERED
    pieces.clear()
    answer = _ask(scripted, reply, on_token=pieces.append)
    assert "".join(pieces).replace("[ 1]", "[1]") == answer.text == NUMBERED


def test_notes_and_unsupported_sentences_use_the_new_numbers(scripted):
    # [4] (clay) does not back the glaze sentence, which is removed; [9] names no passage and is dropped
    answer = _ask(scripted, Reply("Cooling the kiln takes twelve hours [2]. Glazed pieces need a full day to dry "
                                  "[4]. Kilns cool overnight with the lid closed [9][3]."))
    assert answer.text == "Cooling the kiln takes twelve hours [1]. Kilns cool overnight with the lid closed [1]."
    assert [(c.n, c.chunk_id) for c in answer.citations] == [(1, "kiln.md#3")]
    # the passages after the cited source's first one: kiln #4 (same source), glaze, clay, in the prompt's order
    assert [(p.n, p.chunk.chunk_id) for p in answer.passages] == [
        (1, "kiln.md#3"), (2, "glaze.md#1"), (3, "kiln.md#4"), (4, "clay.md#2")]
    assert answer.unsupported == ("Glazed pieces need a full day to dry [4].",)  # clay is passage 4 again
    assert any("[9]" in note and "dropped" in note for note in answer.notes)  # not a passage: left as written
