"""The web page in a real headless Chromium (Debian's ``chromium`` package, driven by Playwright): ask with a
streamed answer, click a citation, search, upload, delete; untrusted HTML in a document renders as text."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from helpers.scripted_llm import Reply, ScriptedLLMServer
from helpers.served import ServerThread, build_store, server_config

pytestmark = pytest.mark.slow  # drives Chromium against a served store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("no system Chromium here (apt-get install -y chromium); CI installs it", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")

QUESTION = "How many days of annual leave do full-time employees get?"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[str, ScriptedLLMServer]]:
    """A keyless server (loopback, public documents) answering with a scripted streaming LLM."""
    from openbook.server import create_app

    store = build_store(tmp_path_factory.mktemp("page"))
    with ScriptedLLMServer(piece_delay_s=0.05) as llm:
        config = server_config(store, **{"llm.backend": "openai", "llm.model": "scripted",
                                         "llm.base_url": llm.openai_url})
        with ServerThread(create_app(store, config, readers=1)) as server:
            yield server.url, llm


@pytest.fixture(scope="module")
def page(site) -> Iterator[object]:
    assert CHROMIUM, "Chromium is not installed: apt-get install -y chromium"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.on("dialog", lambda dialog: dialog.accept())
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(site[0] + "/")
        yield page
        browser.close()
        assert not errors, errors


def screenshot(page, name: str, tmp_path: Path) -> None:
    page.screenshot(path=str(tmp_path / name))
    if os.environ.get("OPENBOOK_SCREENSHOTS"):  # to refresh the README's pictures
        page.screenshot(path=str(Path(os.environ["OPENBOOK_SCREENSHOTS"]) / name))
    assert (tmp_path / name).stat().st_size > 10_000


def test_ask_streams_the_answer_and_a_citation_opens_its_passage(site, page, tmp_path):
    _, llm = site
    llm.push(Reply("Full-time employees get 25 days of paid annual leave per calendar year [1]."))
    page.evaluate("""() => { window.__seen = [];
        new MutationObserver(() => { const a = document.querySelector('.answer');
            if (a) window.__seen.push(a.textContent); }).observe(document.querySelector('#conversation'),
            {childList: true, subtree: true, characterData: true}); }""")
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    page.locator(".answer .cite").first.wait_for()
    assert "25 days" in page.locator(".answer").first.inner_text()
    seen = [t for t in page.evaluate("window.__seen") if t]
    partial = [t for t in dict.fromkeys(seen) if "25 days" not in t]
    assert len(partial) >= 3, seen  # the text arrived piece by piece, before the answer was complete
    assert llm.requests[-1].body.get("stream") is True
    page.locator(".answer .cite").first.click()
    assert page.locator("#viewer").is_visible()
    assert "Leave Policy" in page.inner_text("#viewer-title")
    meta = page.inner_text("#viewer-meta")
    assert "leave-policy.md" in meta and "updated 2025-02-01" in meta and "§" in meta
    assert "25 days" in page.inner_text("#viewer-body")
    screenshot(page, "openbook-page-ask.png", tmp_path)


def test_a_refusal_is_shown_as_a_refusal(site, page):
    site[1].push(Reply("I could not find this in the documents."))
    page.fill("#question", "What is the capital of Australia?")
    page.click("#ask-button")
    refusal = page.locator(".answer.refusal")
    refusal.wait_for()
    assert "Not in the documents" in refusal.inner_text()
    assert page.locator("#error").is_hidden()


def test_untrusted_html_renders_as_text(page):
    page.click("button[data-tab=search]")
    page.fill("#query", "glaze test notes")
    page.fill("#where", "")
    page.click("#search-form button[type=submit]")
    page.locator("#results li a", has_text="untrusted").first.click()
    body = page.locator("#viewer-body", has_text="onerror")  # the viewer may still show an earlier passage
    body.wait_for()
    text = body.inner_text()
    assert '<img src=x onerror="window.__pwned=1">' in text and "<script>window.__pwned=2</script>" in text
    assert page.locator("#viewer-body img, #viewer-body script, #results img, #results script").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_search_filters_upload_and_delete(page, tmp_path):
    page.click("button[data-tab=search]")
    page.fill("#query", "leave")
    page.fill("#where", "updated>=2026-01-01")
    page.click("#search-form button[type=submit]")
    page.locator("#results li", has_text="No results").wait_for()
    page.click("button[data-tab=documents]")
    page.locator("#documents tbody tr").first.wait_for()
    upload = tmp_path / "glossary.md"
    upload.write_text("# Glossary\n\nA saggar is a box that shields ware in the kiln.\n")
    page.set_input_files("#upload-files", str(upload))
    page.click("#upload-form button[type=submit]")
    row = page.locator("tr[data-doc='glossary.md']")
    row.wait_for()
    assert "1 added" in page.inner_text("#upload-status")
    screenshot(page, "openbook-page-documents.png", tmp_path)
    row.locator("button.delete").click()
    row.wait_for(state="detached")
    assert page.locator("tr[data-doc='glossary.md']").count() == 0
