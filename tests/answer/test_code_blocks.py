"""Code blocks in the offline answerer (answer/extractive.py ``_units``): a fenced block (and an indented one,
which the Markdown loader fences) is one unit, kept whole, never cut into sentences at its periods nor read as
headings at its ``#`` comments; it answers a how-to question, and never a question asking a fact, however many
words a config snippet or a log line shares with it. On a small real BM25 store of hand-written Markdown."""

from __future__ import annotations

import re

import pytest

from openbook.api import Engine
from openbook.answer.extractive import _units
from openbook.types import Chunk, Hit, Passage

from helpers.stores import bm25_engine

GUIDE = """---
title: Fernwick client guide
---
# Installing Fernwick

To install the Fernwick client, run the following command in a terminal:

```bash
# install from the package index
pip install fernwick-client==2.4.1
fernwick --version
```

Then sign in with the login command. The installer needs Python 3.10 or later.

## Configuration

The client reads its settings from the file config.toml in your home folder. A typical file looks like this:

~~~toml
[network]
listen_port = 8443
proxy_server = "proxy.fernwick.example"
~~~

The sync interval defaults to 10 minutes. You can change it in the settings.

## Troubleshooting

When a sync fails, the client writes a line to its log file, for example:

    2024-03-01 12:00:03 ERROR sync failed. storage quota exceeded for user ana. quota 15 GB.
    2024-03-01 12:00:04 INFO retrying in 60 seconds.

Check your plan on the account page.
"""

SETUP = """# Set up the Fernwick server

1. Download the server package.
2. Create the service account:

   ```
   sudo useradd --system fernwick
   ```

3. Start the service.
"""


BACKUP = """# Database backups

Backups run every night and are kept for 14 days.

To take a manual backup, run:

```bash
pg_dump --format=custom --file=/backups/manual.dump corpus
```

To restore a backup, run:

```bash
pg_restore --clean --dbname=corpus /backups/manual.dump
```
"""


REPORTS = """# Shift reports

Each shift lead files a report at the end of the shift. Reports are kept in the reports folder, and each
report file is named with the following format:

```
SHIFT-YEAR-MONTH-DAY-LEAD.txt
```

Reports older than a year are archived.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("code"), {"guide.md": GUIDE, "setup.md": SETUP, "backup.md": BACKUP,
                                                       "reports.md": REPORTS,
                                                       "plans.md": "# Plans\n\nThe Team plan includes 1 TB.\n"})
    yield e
    e.close()


def test_a_how_to_question_quotes_the_command_block_whole(engine: Engine) -> None:
    answer = engine.ask("How do I install the Fernwick client?")
    assert not answer.refused
    assert "# install from the package index\npip install fernwick-client==2.4.1\nfernwick --version" in answer.text
    assert "```" not in answer.text


def test_a_sentence_introducing_a_command_brings_its_block(engine: Engine) -> None:
    # the block shares few words with the question ("manual"), but "..., run:" says nothing without it
    answer = engine.ask("How do I take a manual backup?")
    assert "To take a manual backup, run: [n] pg_dump --format=custom --file=/backups/manual.dump corpus [n]" in \
        re.sub(r"\[\d+\]", "[n]", answer.text)
    assert "pg_restore" not in answer.text  # (the other block is not the one introduced)


def test_a_sentence_introducing_a_block_brings_it_whatever_the_question(engine: Engine) -> None:
    # not a how-to question, but "... with the following format:" quoted alone names no format
    answer = engine.ask("What format are shift report file names in?")
    assert not answer.refused
    assert "with the following format: [n] SHIFT-YEAR-MONTH-DAY-LEAD.txt" in re.sub(r"\[\d+\]", "[n]", answer.text), \
        answer.text


@pytest.mark.parametrize("question, code", [
    ("What port does the Fernwick client listen on?", "8443"),  # only the config snippet states it
    ("Which proxy server does the client use?", "proxy.fernwick.example"),
    ("What is the storage quota?", "15 GB"),  # only a log line (an indented block) states it
    ("How long does the client wait before retrying a failed sync?", "60 seconds"),
])
def test_a_question_asking_a_fact_is_never_answered_by_a_code_line(engine: Engine, question: str,
                                                                   code: str) -> None:
    answer = engine.ask(question)
    assert code not in answer.text and "listen_port" not in answer.text and "ERROR" not in answer.text


def test_prose_next_to_a_config_snippet_still_answers(engine: Engine) -> None:
    answer = engine.ask("What is the default sync interval?")
    assert answer.text.startswith("The sync interval defaults to 10 minutes.")


def test_a_code_block_in_a_step_belongs_to_the_step(engine: Engine) -> None:
    answer = engine.ask("How do I set up the Fernwick server?")
    assert "2. Create the service account: sudo useradd --system fernwick 3. Start the service." in \
        " ".join(answer.text.split())


def _passage(text: str) -> Passage:
    chunk = Chunk(chunk_id="c1", doc_id="d.md", text=text, title="Guide", headings=(), start=0, end=len(text))
    return Passage(n=1, hit=Hit(chunk_id="c1", doc_id="d.md", score=1.0, legs={}, chunk=chunk))


def test_units_keep_a_block_whole_with_its_comments_and_periods() -> None:
    units = _units(_passage("Run this:\n\n```sh\n# fetch v2.4.1. then check.\nfetch --all\n```\nDone. "
                            "See the log.\n~~~~\nstill code\n```\nstill code too\n"))
    assert [(u.text, u.code, u.heading) for u in units] == [
        ("Run this:", False, ""), ("# fetch v2.4.1. then check.\nfetch --all", True, ""),
        ("Done.", False, ""), ("See the log.", False, ""), ("still code\n```\nstill code too", True, "")]


HTML_GUIDE = """<!DOCTYPE html><html lang="en"><head><title>Quillmark client guide</title></head><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<main>
<h1>Installing Quillmark</h1>
<p>To install the Quillmark client, run the following command in a terminal:</p>
<pre><code class="language-bash"># install from the package index
pip install quillmark-client==3.1.0
quillmark --version</code></pre>
<p>Then sign in with the login command. The installer needs Python 3.10 or later.</p>
<h2>Configuration</h2>
<p>The client reads its settings from the file config.toml in your home folder. A typical file looks like this:</p>
<pre>[network]
proxy_server = "proxy.example.org"
listen_port = 8443</pre>
<p>The sync interval defaults to 10 minutes. You can change it in the settings.</p>
</main></body></html>
"""


@pytest.fixture(scope="module")
def html_engine(tmp_path_factory) -> Engine:
    # an HTML page's <pre> is fenced by the HTML loader (ingest/html.py ``fenced_code``): the same rules apply
    e = bm25_engine(tmp_path_factory.mktemp("html-code"), {"guide.html": HTML_GUIDE})
    yield e
    e.close()


def test_an_html_pre_block_answers_a_how_to_question_whole(html_engine: Engine) -> None:
    answer = html_engine.ask("How do I install the Quillmark client?")
    assert not answer.refused
    assert "# install from the package index\npip install quillmark-client==3.1.0\nquillmark --version" in \
        answer.text
    assert "```" not in answer.text


@pytest.mark.parametrize("question, code", [
    ("What port does the Quillmark client listen on?", "8443"),
    ("Which proxy server does the client use?", "proxy.example.org"),
])
def test_an_html_pre_block_never_answers_a_fact_question(html_engine: Engine, question: str, code: str) -> None:
    answer = html_engine.ask(question)
    assert code not in answer.text and "listen_port" not in answer.text


def test_units_read_fences_as_the_chunker_does() -> None:
    # openbook.fences: a longer fence holds a shorter one, a fence with an info string closes nothing, four
    # columns of indentation make no fence, and a block the passage does not close runs to its end
    units = _units(_passage("Example:\n\n````md\n```toml\nport = 1\n```\n````\n\nThen:\n\n```\na.b\n```sh\nc\n```\n"
                            "    ```\nProse line. Second sentence.\n\n~~~\nunclosed. code"))
    assert [(u.text, u.code) for u in units] == [
        ("Example:", False), ("```toml\nport = 1\n```", True), ("Then:", False), ("a.b\n```sh\nc", True),
        ("``` Prose line.", False), ("Second sentence.", False), ("unclosed. code", True)]


NESTED = """# Sync settings

The sync client waits before it retries a failed upload; the wait is set on the settings page.

An example of the settings page export, as the support team sends it:

````markdown
Settings export

```toml
retry_wait = "45 seconds"
```

The retry wait is 45 seconds in this export.
````
"""


# a block whose author wrote "```python" where the closing fence belonged: CommonMark reads on to the next
# bare fence, so the heading and the sentence after it are code (the chunker used to close the block there)
INFO_FENCE = """# Sync settings

The sync client waits before it retries a failed upload; the wait is set on the settings page. The client keeps
a queue of the uploads that failed and tries each again in the order they failed, one at a time, so that a slow
link is not flooded. A queue entry that fails ten times is dropped and reported in the activity log, where the
support team can read which file it was and why the upload failed.

Example session:

```sh
sync --retry
```python
## Retry wait

The retry wait is 45 seconds in this session.
```
"""


@pytest.mark.parametrize("doc", [NESTED, INFO_FENCE])
def test_a_fact_stated_only_inside_code_is_not_quoted(tmp_path, doc: str) -> None:
    # the loader, the chunker and the answerer read the same block (openbook.fences): the sentence inside it is
    # code, never an answer to a question asking a fact
    e = bm25_engine(tmp_path, {"sync.md": doc, "plans.md": "# Plans\n\nThe Team plan includes 1 TB.\n"})
    try:
        answer = e.ask("How long is the retry wait?")
        assert "45 seconds" not in answer.text and "retry_wait" not in answer.text
    finally:
        e.close()
