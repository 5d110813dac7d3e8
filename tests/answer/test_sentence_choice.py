"""Which sentence answers, on small hand-written documents of each kind: a value-bearing list item or
``label: value`` line for "what is the X limit", the numbered steps of the matching list for a how-to question,
a table row that states what the question names over sentences that inherit it from the title, and no sentence of
another document stitched on for a word the answer's own heading already holds."""

from __future__ import annotations

import pytest

from openbook.answer.extractive import _focus_terms, _units, question_names
from openbook.api import Engine
from openbook.config import Config
from openbook.index.analyzer import Analyzer
from openbook.types import Chunk, Hit, Passage

from helpers.stores import bm25_engine

DOCS = {
    "dev/keys.md": "# Orbit Storage API - Project keys and request limits\n\n"
    "Project keys let build servers call the API as a single project. Create one in the console under "
    "Settings > Project keys. A project key is shown only once and expires after one year.\n\n"
    "## Quotas\n\nQuotas are counted per project key, not per user.\n\n"
    "- **Request limit:** 250 requests per hour per project key.\n"
    "- **Burst:** up to 20 requests in any ten-second window.\n",
    "help/archive.md": "# Keep notebooks out of the sidebar (archiving)\n\n"
    "Archived notebooks stay on the server and on your other devices.\n\n"
    "## Archive a notebook from the sidebar\n\n"
    "1. Right-click the notebook in the sidebar.\n"
    "2. Choose Archive from the menu.\n"
    "3. Confirm with OK. Nothing is deleted from the server.\n",
    "help/close-account.md": "# Closing your account\n\nTo close your account, open Settings > Account. Closing "
    "your account does not delete notebooks from the server; they simply stop showing in the sidebar of every "
    "device.\n",
    "help/photo-backup.md": "# Photo backup\n\nPhoto backup copies new pictures from your phone.\n\n"
    "## Mobile data\n\nBy default, photo backup runs only over Wi-Fi. To back up over cellular data as well, "
    "switch on Use cellular data.\n",
    "notes/product-meeting.md": "# Product meeting, 3 March\n\nComplaints from mobile users that photo backup "
    "drains mobile data. Decision: add a monthly reminder.\n",
    "support/sla.md": "# Support targets\n\nEvery ticket gets an automatic confirmation.\n\n"
    "| plan | priority | first_response_target |\n|---|---|---|\n"
    "| Starter | P1 | 8 business hours for every customer |\n| Premier | P1 | 1 hour |\n"
    "| Premier | P2 | 4 hours |\n",
    "help/icons.md": "# Status icons\n\nEach file in the Orbit folder shows a status icon:\n\n"
    "| Icon | Meaning |\n|---|---|\n| Blue arrows | The file is syncing. |\n| Grey cloud | The file is "
    "online-only. |\n",
    "it/catalog.md": "# Equipment catalogue\n\n| item | model | notes |\n|---|---|---|\n"
    "| Notebook | Aster 14 Pro | Replaced after 36 months |\n| Monitor | Vista 27 | Replaced after 60 months |\n",
    "hr/part-time.md": "# Part-time work\n\nPart-time employees receive a pro-rated amount of leave.\n",
    "finance/fy2030.md": "# FY2030 Budget Allocation\n\nThe Design increase funds two new studios and a "
    "design system. About 0.4M of the Design budget is held back until the mid-year review.\n\n"
    "| Team | FY2029 actual | FY2030 budget |\n|---|---|---|\n| Design | 2.1M | 2.7M |\n"
    "| Sales | 4.8M | 5.1M |\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    """The documents in a BM25-only store, opened with ``min_confidence`` 0: these tests are about which
    sentence answers, not whether the calibrated answerability lets the answer through."""
    root = tmp_path_factory.mktemp("choice")
    bm25_engine(root, DOCS).close()
    e = Engine.open(root / "store", Config().with_overrides({"embedding.enabled": False,
                                                               "answer.min_confidence": 0.0}))
    yield e
    e.close()


def _passage(text: str) -> Passage:
    chunk = Chunk(chunk_id="c1", doc_id="d.md", text=text, title="T")
    return Passage(n=1, hit=Hit("c1", "d.md", 1.0, {}, chunk))


def test_a_list_item_and_a_bold_label_are_sentences_of_their_own() -> None:
    units = _units(_passage("Intro line\n\n## Quotas\n\n- **Upload limit:** 250 files per hour\n- Burst: 20\n"
                            "**Note:** quotas reset hourly\nand are per key.\n\n| A | B |\n|---|---|\n| x | 1 |\n"))
    assert [u.text for u in units] == ["Intro line", "Upload limit: 250 files per hour", "Burst: 20",
                                       "Note: quotas reset hourly and are per key.", "A: x; B: 1"]
    assert [u.heading for u in units] == ["", "Quotas", "Quotas", "Quotas", "Quotas"]
    assert [(u.run, u.step) for u in units[1:3]] == [(0, 0), (0, 1)]
    assert units[3].run == -1  # a bold label after the list ends it


def test_the_focus_of_a_what_is_question() -> None:
    analyzer = Analyzer()
    assert _focus_terms("What is the API upload limit for a single key?", analyzer) == set(analyzer.analyze("limit"))
    assert _focus_terms("How many files can I upload?", analyzer) == set()


def test_the_value_bearing_list_item_answers_a_limit_question(engine: Engine) -> None:
    answer = engine.ask("What is the request limit for a single project key?")
    assert not answer.refused
    assert answer.text.startswith("Request limit: 250 requests per hour per project key.")


def test_a_how_to_question_is_answered_by_the_steps_of_the_matching_list(engine: Engine) -> None:
    answer = engine.ask("How do I hide a particular notebook from my sidebar without deleting it from the server?")
    assert not answer.refused
    assert answer.text.startswith("1. Right-click the notebook in the sidebar. 2. Choose Archive from the menu. "
                                  "3. Confirm with OK.")
    assert {c.doc_id for c in answer.citations} == {"help/archive.md"}


def test_no_other_document_is_stitched_on_for_a_word_the_answers_heading_holds(engine: Engine) -> None:
    answer = engine.ask("Does photo backup use mobile data by default?")
    assert not answer.refused
    assert "only over Wi-Fi" in answer.text
    assert {c.doc_id for c in answer.citations} == {"help/photo-backup.md"}


def test_the_row_that_states_the_question_beats_sentences_that_inherit_it(engine: Engine) -> None:
    answer = engine.ask("What is the FY2030 Design budget?")
    assert not answer.refused
    assert answer.text.startswith("Team: Design; FY2029 actual: 2.1M; FY2030 budget: 2.7M")


def test_the_row_of_the_value_the_question_names(engine: Engine) -> None:
    # "Premier" names the plan column's value: the Starter row, which shares "business" and "customer" in
    # another cell, and the Premier P2 row are about something else
    answer = engine.ask("What is the first-response target for a P1 ticket from a Premier plan business customer?")
    assert not answer.refused
    assert answer.text.startswith("plan: Premier; priority: P1; first_response_target: 1 hour")
    assert "P2" not in answer.text


def test_a_sentence_ending_in_a_colon_is_not_added(engine: Engine) -> None:
    answer = engine.ask("What does a grey cloud status icon on a file mean?")
    assert "online-only" in answer.text
    assert "shows a status icon:" not in answer.text


def test_an_amount_in_the_question_is_no_name() -> None:
    assert question_names("I paid USD 450 for a licence of Debian 12 at the Orbit Store. What happens?") == [
        "debian 12", "orbit store"]



def test_a_name_the_row_affirms_does_not_bring_a_sentence_sharing_one_word(engine: Engine) -> None:
    # "Pro" of the row's model matches "pro-rated" in another document, which shares only "employees"
    answer = engine.ask("How often are employee notebooks replaced?")
    assert answer.text.startswith("item: Notebook; model: Aster 14 Pro; notes: Replaced after 36 months")
    assert {c.doc_id for c in answer.citations} == {"it/catalog.md"}
