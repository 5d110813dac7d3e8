"""How-to questions answered by the steps of the matching procedure (answer/extractive.py ``_procedures``), on a
small real BM25 store of hand-written HTML, DOCX and Markdown how-to pages: the steps keep the document's own
numbers (an ``<ol start="3">`` continues at 3), a nested note stays with its step, and a list whose heading
survives only as the chunk's section (a long section cut into chunks) is still found as that section's
procedure."""

from __future__ import annotations

import pytest

from openbook.api import Engine

from helpers.stores import bm25_engine

ROTATE = """<!DOCTYPE html><html lang="en"><head><title>Rotate an API key</title></head><body><main>
<h1>Rotate an API key</h1><p>Steps 1 and 2, signing in and opening the console, are on the previous page.</p>
<ol start="3"><li>Open <b>Settings</b> &gt; API keys.</li><li>Click Rotate next to the key.
<ul><li>The old key keeps working for 24 hours.</li></ul></li><li>Copy the new key into your build server.</li>
</ol></main></body></html>"""

# a long section: its list lands in a later chunk whose text no longer holds the heading
FILLER = " ".join(f"Session tokens of kind {i} are issued by the identity service and are stored encrypted at "
                  f"rest in the regional vault, which the platform team audits every quarter." for i in range(12))
HANDBOOK = (f"# Security handbook\n\n## Revoke a session token\n\n{FILLER}\n\n1. Open the admin console.\n"
            "2. Choose Sessions in the left menu.\n3. Press Revoke beside the token.\n")


def _docx(path) -> None:
    import docx

    doc = docx.Document()
    doc.add_paragraph("Export a workspace", style="Title")
    doc.add_paragraph("Only an owner can export a workspace. To export one:")
    for step in ("Open Workspace settings.", "Choose Export data.", "Download the archive from the e-mail link."):
        doc.add_paragraph(step, style="List Number")
    doc.save(str(path))


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    root = tmp_path_factory.mktemp("procedures")
    (root / "docs").mkdir()
    _docx(root / "docs" / "export.docx")
    e = bm25_engine(root, {"help/rotate.html": ROTATE, "help/handbook.md": HANDBOOK,
                           "help/travel.md": "# Travel\n\nBook flights through the travel portal.\n"})
    yield e
    e.close()


def test_steps_keep_the_numbers_of_an_ordered_list_that_starts_at_3(engine: Engine) -> None:
    answer = engine.ask("How do I rotate an API key?")
    assert not answer.refused
    assert answer.text.startswith("3. Open Settings > API keys. 4. Click Rotate next to the key. The old key keeps "
                                  "working for 24 hours. 5. Copy the new key into your build server. [1]")
    assert answer.citations[0].doc_id == "help/rotate.html"


def test_a_list_whose_heading_is_only_the_chunks_section_is_a_procedure(engine: Engine) -> None:
    answer = engine.ask("How do I revoke a session token?")
    listed = [p for p in answer.passages if "1. Open the admin console." in p.chunk.text]
    assert listed and "Revoke a session token" not in listed[0].chunk.text.split("1. Open")[0]  # heading not in text
    assert answer.text.startswith("1. Open the admin console. 2. Choose Sessions in the left menu. 3. Press Revoke "
                                  "beside the token. [")


def test_word_numbered_steps_of_a_docx(engine: Engine) -> None:
    answer = engine.ask("How do I export a workspace?")
    # (with the sentence that introduces the list: a list's lead-in comes with its items)
    assert answer.text.startswith("To export one: [1] 1. Open Workspace settings. 2. Choose Export data. 3. Download "
                                  "the archive from the e-mail link. [1]")
