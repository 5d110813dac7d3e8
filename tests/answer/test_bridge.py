"""The entity bridge of a multi-hop answer (``openbook.answer.bridge``): the second sentence holds the name
the first one affirms, on a small real BM25 store (real analyzer, index and answerer)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from openbook.answer.bridge import affirmed_names, entity_sentence, holds_name, row_by_bridge
from openbook.api import Engine

from helpers.stores import bm25_engine

DOCS = {
    "sso.md": "# Single sign-on\n\nOIDC single sign-on is available on the Enterprise plan only; Starter "
    "workspaces cannot enable it. Setup takes about ten minutes in the console.\n",
    # the rows share "monthly" and "per seat" with the question; only one names the tier the bridge names
    "prices.md": "# Price list export\n\n| Code | Edition | Billing | Price (EUR) |\n|---|---|---|---|\n"
    "| T-100 | Starter | monthly, per seat | 6.25 |\n| T-200 | Starter | annual, per seat | 62.00 |\n"
    "| T-300 | Enterprise | monthly, per seat | 21.40 |\n| T-400 | Enterprise | annual, per seat | 214.00 |\n",
    "canteen.md": "# Canteen\n\nThe canteen serves soup on Fridays and opens at eight.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("bridge"), DOCS)
    yield e
    e.close()


@pytest.mark.parametrize("sentence, question, names", [
    ("SAML is available on the Business plan only; Team workspaces cannot enable it.", "Which plan has SAML?",
     ["Business"]),
    ("Only Business workspaces get SCIM, but Team workspaces do not.", "Who gets SCIM?", ["Business"]),
    ("It was not designed by Ilse Brandt.", "Who designed it?", []),
    ("The fix ships in SKY-5120 for Windows.", "Which fix?", ["SKY-5120", "Windows"]),
    ("It is home to the Niagara Purple Eagles, who play in Atlantic Hockey.", "Which hockey team?",
     ["Niagara Purple Eagles", "Atlantic"]),
    # a table cell that reads as a phrase starts with a capital as a sentence does; a cell naming a thing does not
    ("item_code: HW-NB-14; category: Notebook computer; request_via: Issued automatically at hiring; tier: Business",
     "How often are laptops replaced?", ["HW-NB-14", "Business"]),
    ("model: Aster Pro; standard_for: All staff", "Which model?", ["Aster Pro"]),
])
def test_affirmed_names(sentence: str, question: str, names: list[str]) -> None:
    assert affirmed_names(sentence, question) == names


def test_the_row_of_the_entity_the_first_sentence_affirms(engine: Engine) -> None:
    answer = engine.ask("What is the monthly per-seat price of the cheapest plan whose workspaces can enable OIDC "
                        "single sign-on?")
    assert not answer.refused
    assert "Enterprise plan only" in answer.text and "21.40" in answer.text
    assert "6.25" not in answer.text  # the Starter row shares as many words with the question
    assert {c.doc_id for c in answer.citations} == {"sso.md", "prices.md"}


def test_a_tie_of_rows_is_decided_by_the_name_another_passage_affirms(engine: Engine) -> None:
    # both monthly rows share the question's words equally; only the bridge sentence tells them apart, and the
    # row set aside must not come back as a near-tie of the answering row
    answer = engine.ask("What is the monthly per-seat price of the plan whose workspaces can enable OIDC?")
    assert not answer.refused
    assert answer.text.startswith("Code: T-300") and "6.25" not in answer.text


def test_a_bridge_sentence_without_the_value_leads_to_the_row_that_holds_it(tmp_path) -> None:
    # the price question's best-typed sentence states a number ("version 2") but not the plan; the sentence that
    # explains more of the question names the plan and no price, and its name leads to the row with the price
    e = bm25_engine(tmp_path, {
        "sso.md": "# Admin guide\n\nOIDC single sign-on support is available on the Enterprise plan only; Starter "
        "workspaces cannot enable it. Supported single sign-on providers include Okta and any OIDC provider that "
        "supports PKCE version 2.\n",
        "prices.md": DOCS["prices.md"]})
    try:
        answer = e.ask("What is the monthly per-seat price of the cheapest plan that supports OIDC single sign-on?")
        assert not answer.refused
        assert "Enterprise plan only" in answer.text and "21.40" in answer.text and "6.25" not in answer.text
    finally:
        e.close()


# A bridge through a list-valued table cell: the depot's sentence names "Ashby", one item of one row's areas cell
ZONE_DOCS = {
    "collections.md": "# Bin collections\n\nHousehold bins are collected once a week in every zone.\n\n"
    "| Zone | Areas | Recycling day | Food waste day |\n|---|---|---|---|\n"
    "| Zone 1 | Old Quay, Marsh End | Monday | Tuesday |\n| Zone 2 | Hilltop, Brookfield | Tuesday | Wednesday |\n"
    "| Zone 3 | Ashby, Cole Green | Thursday | Friday |\n| Zone 4 | Westgate / Pine Hill | Friday | Monday |\n",
    # its second sentence shares more words with the question than any row: the best candidate is a sentence
    "depot.md": "# Ashby Reuse Depot\n\nThe Ashby Reuse Depot on Mill Road is where residents drop off furniture "
    "for reuse. Recycling, food waste and furniture are collected at the reuse depot every day of the week.\n",
    "canteen.md": "# Canteen\n\nThe canteen serves soup on Fridays and opens at eight.\n",
}


@pytest.fixture(scope="module")
def zones(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("zones"), ZONE_DOCS)
    yield e
    e.close()


def test_the_bridge_name_is_one_item_of_a_list_valued_cell(zones: Engine) -> None:
    answer = zones.ask("On which day is recycling collected in the area where the reuse depot is located?")
    assert not answer.refused, answer.notes
    assert "Zone 3" in answer.text and "Thursday" in answer.text, answer.text
    assert "Zone 1" not in answer.text and "Old Quay" not in answer.text  # never the table's first row


@pytest.mark.parametrize("row,name,held", [
    ("Zone: Zone 3; Areas: Ashby, Cole Green; Recycling day: Thursday", "Ashby", True),
    ("Zone: Zone 3; Areas: Ashby, Cole Green; Recycling day: Thursday", "Cole Green", True),
    ("Zone: Zone 4; Areas: Westgate / Pine Hill; Recycling day: Friday", "Pine Hill", True),
    # one word from each of two cells is not the name
    ("Zone: Zone 3; Areas: Ashby, Cole Green; Recycling day: Thursday", "Green Thursday", False),
    ("Zone: Zone 3; Areas: Ashby, Cole Green; Recycling day: Thursday", "Ashby Green", False),
])
def test_holds_name_reads_a_cell_as_a_list(zones: Engine, row: str, name: str, held: bool) -> None:
    analyzer = zones.retriever.analyzer
    candidate = SimpleNamespace(text=row, terms=frozenset(analyzer.analyze_document(row)))
    assert holds_name(candidate, frozenset(analyzer.analyze(name)), analyzer) is held


def _candidate(analyzer, doc: str, text: str, score: float) -> SimpleNamespace:
    chunk = SimpleNamespace(doc_id=doc, title="")
    return SimpleNamespace(text=text, terms=frozenset(analyzer.analyze_document(text)), score=score,
                           passage=SimpleNamespace(chunk=chunk))


@pytest.mark.parametrize("bridge,kept", [
    ("The Ashby Reuse Depot on Mill Road takes furniture.", "Zone 3"),  # the row of the bridge name's area
    ("The reuse depot takes furniture.", None),  # no name decides: no row at all, never the first one
])
def test_tied_rows_under_a_sentence_are_decided_by_the_bridge_or_all_set_aside(zones: Engine, bridge: str,
                                                                              kept: str | None) -> None:
    analyzer = zones.retriever.analyzer
    top = _candidate(analyzer, "depot.md", "Recycling and food waste are collected at the reuse depot.", 2.0)
    rows = [_candidate(analyzer, "collections.md", f"Zone: Zone {z}; Areas: {areas}; Recycling day: {day}", 1.5)
            for z, areas, day in [(1, "Old Quay, Marsh End", "Monday"), (3, "Ashby, Cole Green", "Thursday")]]
    other = _candidate(analyzer, "depot.md", bridge, 1.0)
    answer, set_aside = row_by_bridge([top, *rows, other], analyzer, "On which day is recycling collected in the "
                                      "area where the reuse depot is located?", 0.9)
    assert answer is top
    assert [r.text.split(";")[0] for r in rows if all(r is not x for x in set_aside)] == \
        ([f"Zone: {kept}"] if kept else [])


# An equipment catalog (a CSV table) and a policy of another document that uses the catalog's words
CATALOG_DOCS = {
    "catalog.csv": "item_code,category,model,refresh_cycle,request_via\n"
    "HW-NB-14,Notebook computer,Aster 14,Replaced every 36 months,Issued automatically at hiring\n"
    "HW-PH-02,Desk phone,Tono 2,Replaced every 60 months,Request through the service desk\n",
    "policy.md": "# Equipment policy\n\nEvery employee is issued a managed notebook computer on the first working "
    "day.\n\nLost equipment is reported to the security desk.\n",
    "canteen.md": "# Canteen\n\nThe canteen serves soup on Fridays and opens at eight.\n",
}


def test_a_how_often_question_is_answered_by_the_row_alone(tmp_path) -> None:
    # "how often" asks for a frequency: the row stating "every 36 months" answers, not the policy sentence that
    # shares more words; and the row's cell "Issued automatically at hiring" names nothing, so the policy sentence
    # (which says "issued") is not stitched on as the row's bridge
    e = bm25_engine(tmp_path, CATALOG_DOCS)
    try:
        answer = e.ask("How often are employee notebook computers replaced?")
        assert not answer.refused, answer.notes
        assert answer.text.startswith("item_code: HW-NB-14") and "36 months" in answer.text, answer.text
        assert "first working day" not in answer.text
        assert {c.doc_id for c in answer.citations} == {"catalog.csv"}
    finally:
        e.close()


def test_a_name_said_in_the_question_s_other_words_is_no_bridge(engine: Engine) -> None:
    # "Notebook Computer" stands for the question's "laptop" (an expansion): the policy sentence holding it is about
    # what the question asks, not a second entity the row leads to
    analyzer = engine.retriever.analyzer
    question = "How often are employee laptops replaced?"
    top = _candidate(analyzer, "catalog.csv", "category: Notebook Computer; refresh_cycle: Replaced every 36 months",
                     2.0)
    other = _candidate(analyzer, "policy.md", "Every employee is issued a managed Notebook Computer.", 1.8)
    terms = [t for t in analyzer.analyze(question) if t in ("employe", "laptop", "replac")] or \
        list(analyzer.analyze(question))
    weights = np.ones(len(terms))

    def share(ts, ws, present):
        return float(sum(w for t, w in zip(ts, ws) if t in present) / sum(ws))

    assert entity_sentence(top, [top, other], analyzer, terms, weights, question, share) is other
    said = set(analyzer.analyze("notebook computer"))
    assert entity_sentence(top, [top, other], analyzer, terms, weights, question, share, said=said) is None
