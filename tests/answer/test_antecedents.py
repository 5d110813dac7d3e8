"""A sentence that opens by referring back ("As a result, ...", "However, ...") is quoted with the sentence it refers
to (answer/extractive/compose.py ``_with_antecedents``): alone it can say the opposite of its passage. On a small
real BM25 store of hand-written Markdown."""

from __future__ import annotations

import re

import pytest

from openbook.api import Engine

from helpers.stores import bm25_engine

GUIDE = """# Relay guide

## Shortcuts

Shortcut styles are not recognised in a page's own settings. As a result, the compact shortcut will not work
there. Set the compact shortcut in the site settings instead.

## Ports

The relay listens on port 7421. Clients connect over TLS only.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("antecedents"), {"guide.md": GUIDE,
                                                             "billing.md": "# Billing\n\nInvoices are sent monthly.\n"})
    yield e
    e.close()


def _plain(text: str) -> str:
    return re.sub(r"\s*\[\d+\]", "", text)


def test_a_consequence_comes_with_its_cause(engine: Engine) -> None:
    answer = _plain(engine.ask("Will the compact shortcut work?").text)
    assert "As a result, the compact shortcut will not work there." in answer
    assert answer.index("Shortcut styles are not recognised in a page's own settings.") < \
        answer.index("As a result")


def test_a_sentence_that_stands_alone_is_quoted_alone(engine: Engine) -> None:
    answer = _plain(engine.ask("Which port does the relay listen on?").text)
    assert answer.startswith("The relay listens on port 7421.") and "Shortcut" not in answer
