"""Answers keep what the passage says: identifiers with underscores and code spans are quoted as written (Markdown
emphasis is stripped only where CommonMark renders it, and never from text that is not Markdown), a
documentation generator's permalink marks (Sphinx's ``¶``) never reach an answer, and inline code does not cut
the sentence it sits in. On a small real BM25 store of a Sphinx-like HTML page and a Markdown page."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.retrieve.snippets import highlight

from helpers.stores import bm25_engine

SPHINX_PAGE = Path(__file__).resolve().parents[1] / "data" / "sphinx" / "json.html"

DATACLASSES = """# Data classes

## Post-init processing

The generated `__init__()` method calls `__post_init__()` last, so a data class can check its fields there.

The **dataclasses** module's code lives in `Lib/dataclasses/__init__.py` and its tests in *Lib/test*.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("fidelity"), {"json.html": SPHINX_PAGE.read_text(encoding="utf-8"),
                                                           "dataclasses.md": DATACLASSES})
    yield e
    e.close()


@pytest.mark.parametrize("question, quoted", [
    ("Where is the source code of the json module?", "Source code: Lib/json/__init__.py"),
    ("Which hook does the json encoder call?", "calls the __json__() hook of a snake_case_name object"),
    ("What does json.dump do?", "json.dump(obj, fp): Serialize obj as a JSON formatted stream to fp."),
    ("How is json.tool run?", "The json.tool module is run with the python -m json.tool command. ["),
])
def test_an_html_page_is_quoted_as_written(engine: Engine, question: str, quoted: str) -> None:
    answer = engine.ask(question)
    assert not answer.refused
    assert quoted in answer.text
    assert not {"¶", "🔗"} & set(answer.text)


def test_inline_code_does_not_cut_its_sentence(engine: Engine) -> None:
    answer = engine.ask("What are the encoders and decoders?")
    assert "A data class may define __post_init__() to check its fields after the JSON decoder" in answer.text


@pytest.mark.parametrize("question, quoted", [
    ("What does the generated init method call last?",
     "The generated `__init__()` method calls `__post_init__()` last"),
    ("Where does the dataclasses module's code live?",  # the author's emphasis goes, the code span stays
     "The dataclasses module's code lives in `Lib/dataclasses/__init__.py` and its tests in Lib/test."),
])
def test_a_markdown_page_keeps_its_code_spans(engine: Engine, question: str, quoted: str) -> None:
    answer = engine.ask(question)
    assert quoted in answer.text


def test_search_snippets_keep_identifiers(engine: Engine) -> None:
    hits = engine.search("json source code", 3)
    html = next(h for h in hits if h.doc_id == "json.html")
    assert html.chunk is not None and html.chunk.format == "html"
    snippet = highlight(html.chunk.text, set(engine.query_terms("json source code")), engine.analyzer,
                        format=html.chunk.format)
    assert "Lib/json/__init__.py" in snippet.replace("**", "")
