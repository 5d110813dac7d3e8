"""A list's lead-in comes with its items (answer/extractive/compose.py ``_with_list_context``): a quoted list item or
procedure is preceded by the sentence that introduces its list with a colon, and a quoted lead-in is followed
by its items. On a small real BM25 store of hand-written Markdown."""

from __future__ import annotations

import re

import pytest

from openbook.api import Engine

from helpers.stores import bm25_engine

SERVER = """# Fernwick server

## Audit logging

Audit logging is off by default. To enable audit logging on a Fernwick server:

1. Open the admin console.
2. Set audit_mode to full.
3. Restart the service.

## Command-line options

The following options are available:

- --verbose prints every request it sends
- --retries sets how many times a failed upload is retried
- --timeout sets the upload timeout in seconds

The client exits with code 0 on success.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("lists"), {"server.md": SERVER,
                                                       "billing.md": "# Billing\n\nInvoices are sent monthly.\n"})
    yield e
    e.close()


def _plain(text: str) -> str:
    return re.sub(r"\[\d+\]", "[n]", text)


def test_a_procedure_comes_with_its_lead_in(engine: Engine) -> None:
    answer = engine.ask("How do I enable audit logging on a Fernwick server?")
    assert _plain(answer.text) == ("To enable audit logging on a Fernwick server: [n] 1. Open the admin console. "
                                   "2. Set audit_mode to full. 3. Restart the service. [n]")


def test_a_list_item_comes_with_its_lead_in(engine: Engine) -> None:
    answer = engine.ask("Which option sets how many times a failed upload is retried?")
    assert _plain(answer.text).startswith(
        "The following options are available: [n] --retries sets how many times a failed upload is retried [n]")


def test_a_lead_in_comes_with_its_items(engine: Engine) -> None:
    answer = engine.ask("What options are available?")
    assert _plain(answer.text) == (
        "The following options are available: [n] --verbose prints every request it sends; --retries sets how "
        "many times a failed upload is retried; --timeout sets the upload timeout in seconds [n]")
