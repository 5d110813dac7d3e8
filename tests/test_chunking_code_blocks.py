"""A fenced code block cut by the chunker (openbook.chunking ``code_units``): a block that fits in ``max`` is never
cut; a longer one is cut between its lines, and each part is a well-formed block of its own (a part after the
first reopens the block with its opening fence line, a part before the last closes it with the same fence), so
that no chunk starts with code read as prose, nor ends with a fence left open. On hand-made Markdown and HTML
files read by the real loaders, chunked by the real chunker, and asked through a real BM25 store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.chunking import chunk_document, count_words
from openbook.config import ChunkingConfig
from openbook.fences import fenced_blocks
from openbook.ingest import load_file
from openbook.types import Chunk, Document

from helpers.stores import bm25_engine, engine_chunked_before

CFG = ChunkingConfig(target_words=40, overlap_words=8, max_words=60)


def load(tmp_path: Path, name: str, text: str) -> Document:
    (tmp_path / name).write_text(text, encoding="utf-8")
    (doc,) = load_file(tmp_path / name, name)
    return doc


def prose(n: int, tag: str) -> str:
    """n distinct sentences of 8 words."""
    return " ".join(f"The {tag} rule number {i} applies to every account." for i in range(n))


def code_lines(n: int, tag: str = "step") -> list[str]:
    """n distinct code lines of 5 words, indented as the body of a function."""
    return [f"    run_{tag}({i}, mode='fast')  # {tag} {i}" for i in range(n)]


def read(chunk: Chunk) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """A chunk as the answerer reads it (``fences.fenced_blocks``): its blocks (opening fence line, code lines)
    and its other (prose) lines. Fails when a block of the chunk is left open."""
    lines = chunk.text.split("\n")
    blocks = fenced_blocks(lines)
    assert all(b.closed for b in blocks), chunk.text
    code = {n for b in blocks for n in range(b.start, b.end)}
    return ([(lines[b.start], [lines[k] for k in b.body]) for b in blocks],
            [line for n, line in enumerate(lines) if n not in code])


def assert_well_formed(doc: Document, chunks: list[Chunk], cfg: ChunkingConfig = CFG) -> list[tuple[str, list[str]]]:
    """Every chunk within ``max``, its blocks closed, no code line of ``doc`` read as prose in any chunk, and every
    block's code lines found exactly once and in order, in blocks opened by the block's own fence line. Returns
    the blocks of all chunks, in order."""
    lines = doc.text.split("\n")
    doc_blocks = fenced_blocks(lines)
    doc_code = {lines[k].strip() for b in doc_blocks for k in b.body if lines[k].strip()}
    seen: list[tuple[str, list[str]]] = []
    for c in chunks:
        assert count_words(c.text) <= cfg.max_words, c.text
        blocks, other = read(c)
        assert not doc_code & {line.strip() for line in other}, c.text
        seen.extend(blocks)
    for b in doc_blocks:
        opening = lines[b.start].strip()
        got = [line for o, body in seen if o.strip() == opening for line in body if line.strip()]
        assert got == [lines[k] for k in b.body if lines[k].strip()]
    return seen


@pytest.mark.parametrize("opening, closing, inner", [
    ("```python title=demo.py", "```", []),
    ("~~~yaml", "~~~", ["```", "~~~yaml"]),  # a tilde block: backtick lines, and a tilde fence with an info
    # string, close nothing
    ("````markdown", "````", ["```sh", "```"]),  # a longer fence holds a shorter one
])
def test_a_block_longer_than_max_is_cut_between_lines_into_well_formed_blocks(tmp_path, opening, closing, inner):
    body = ["def main():", *code_lines(12, "a"), *inner, *code_lines(12, "b")]
    block = "\n".join([opening, *body, closing])
    text = f"# Deploy\n\n{prose(2, 'deploy')}\n\n{block}\n\n{prose(2, 'after')}\n"
    doc = load(tmp_path, "deploy.md", text)
    chunks = chunk_document(doc, CFG)
    blocks = assert_well_formed(doc, chunks)
    assert len(blocks) >= 3, "the block is longer than max: cut"
    assert {o for o, _ in blocks} == {opening}, "each part reopens the block with its fence and info string"
    for c in chunks:  # every part is closed by the block's own fence, and nothing is added to a part that is not cut
        assert re.findall(rf"(?m)^{re.escape(closing)}$", c.text) or opening not in c.text
    assert chunks[-1].text.endswith(prose(2, "after")), "the text after the block joins its last part"
    # a part's body is the document's text, line for line: indentation kept, never a line cut in two
    for o, part in blocks:
        for line in part:
            assert line in body


def test_a_block_that_fits_in_max_is_never_cut(tmp_path):
    block = "```sh\n" + "\n".join(f"deploy --host node{i} --zone east" for i in range(9)) + "\n```"
    text = f"# Deploy\n\n{prose(4, 'before')}\n\n{block}\n\n{prose(4, 'after')}\n"  # the block straddles target
    doc = load(tmp_path, "deploy.md", text)
    chunks = chunk_document(doc, CFG)
    assert_well_formed(doc, chunks)
    assert sum(block in c.text for c in chunks) == 1, [c.text for c in chunks]
    assert not any("deploy --host" in c.text and block not in c.text for c in chunks)


def test_the_sentence_introducing_a_long_block_stays_with_its_first_part(tmp_path):
    text = "# Install\n\nTo install the agent, run:\n\n```bash\n" + "\n".join(
        f"install-agent --step {i} --verbose" for i in range(30)) + "\n```\n"
    doc = load(tmp_path, "install.md", text)
    chunks = chunk_document(doc, CFG)
    assert_well_formed(doc, chunks)
    assert chunks[0].text.startswith("To install the agent, run:\n\n```bash\ninstall-agent --step 0")


def test_indented_code_longer_than_max_is_fenced_by_the_loader_and_cut_into_blocks(tmp_path):
    code = "\n".join(f"    {line}" for line in ["def main():", *code_lines(25)])
    doc = load(tmp_path, "guide.md", f"# Guide\n\n{prose(2, 'guide')}\n\n{code}\n\n{prose(2, 'end')}\n")
    chunks = chunk_document(doc, CFG)
    blocks = assert_well_formed(doc, chunks)
    assert len(blocks) >= 3 and {o for o, _ in blocks} == {"```"}
    assert [line for _, body in blocks for line in body] == ["def main():", *code_lines(25)]  # indentation kept


def test_a_long_block_under_a_list_item_is_closed_inside_the_item(tmp_path):
    # the part closed at a cut ended with an unindented fence: CommonMark ends the list item (and its block) there
    # and reads the fence as a new block left open, so the first part had an open block and a stray one
    steps = "\n".join(f"   {line.strip()}" for line in code_lines(30, "apply"))
    text = (f"# Deploy\n\n1. Install the tools.\n2. Apply every manifest:\n\n   ```sh\n{steps}\n   ```\n\n"
            f"3. Check the rollout.\n\n{prose(2, 'after')}\n")
    doc = load(tmp_path, "deploy.md", text)
    chunks = chunk_document(doc, CFG)
    blocks = assert_well_formed(doc, chunks)
    assert len(blocks) >= 3 and chunks[0].text.startswith("1. Install the tools.\n2. Apply every manifest:")
    assert [line.strip() for _, body in blocks for line in body] == [line.strip() for line in code_lines(30, "apply")]


def test_an_html_pre_longer_than_max_is_cut_into_blocks_that_keep_its_language(tmp_path):
    lines = [f"kubectl apply -f service-{i}.yaml --namespace prod" for i in range(30)]
    html = ("<html><head><title>Rollout</title></head><body><main><h1>Rollout</h1>"
            f"<p>{prose(2, 'rollout')}</p><pre><code class=\"language-bash\">" + "\n".join(lines) +
            f"</code></pre><p>{prose(2, 'after')}</p></main></body></html>")
    doc = load(tmp_path, "rollout.html", html)
    chunks = chunk_document(doc, CFG)
    blocks = assert_well_formed(doc, chunks)
    assert len(blocks) >= 3 and {o for o, _ in blocks} == {"```bash"}
    assert [line for _, body in blocks for line in body] == lines


def test_only_a_code_line_longer_than_max_is_cut_inside(tmp_path):
    long_line = "echo " + " ".join(f"arg{i}" for i in range(100))
    body = [*code_lines(6, "a"), long_line, *code_lines(6, "b")]
    doc = load(tmp_path, "long.md", "# Long\n\n```sh\n" + "\n".join(body) + "\n```\n")
    chunks = chunk_document(doc, CFG)
    blocks = [b for c in chunks for b in read(c)[0]]
    assert all(count_words(c.text) <= CFG.max_words for c in chunks)
    got = [line for _, part in blocks for line in part]
    assert " ".join(" ".join(got).split()) == " ".join(" ".join(body).split()), "every word once, in order"
    cut = [line for line in got if line not in body]
    assert cut and all(line.strip() in long_line for line in cut), "only the over-long line is cut"


def test_a_document_without_code_is_chunked_as_before():
    # (chunk ids come from chunk text: a document with no code block keeps the text and ids it had)
    text = f"# Rules\n\n{prose(20, 'plain')}\n\n## More\n\n{prose(12, 'more')}"
    doc = Document(doc_id="r.md", text=text, title="Rules", source="/tmp/r.md", format="markdown")
    chunks = chunk_document(doc, CFG)
    assert len(chunks) > 3 and all(c.text == doc.text[c.start:c.end] for c in chunks)


# ------------------------------------------------------------------------------------------------ the answerer

# A session log longer than a chunk (max 350 words by default): its lines state the retry wait in sentence form,
# but they are code; the prose around it does not state the wait. Cut without fences, the parts after the first
# started with bare log lines, which the answerer read as prose sentences and quoted.
LOG = "\n".join(
    [f"12:{i // 60:02d}:{i % 60:02d} INFO upload {i} of the nightly batch finished without errors." for i in range(40)]
    + ["12:00:41 WARN upload 41 failed. The retry wait is 45 seconds for this upload."]
    + [f"12:01:{i:02d} INFO upload {i + 42} of the nightly batch finished without errors." for i in range(8)])
SYNC = f"""# Sync client

The sync client uploads the nightly batch and waits before it retries a failed upload. The retry wait is set on
the settings page of the administration console.

An example session log, as the support team receives it:

```text
{LOG}
```

A failed upload is retried until it succeeds or the batch is cancelled.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = bm25_engine(tmp_path_factory.mktemp("long-code"),
                    {"sync.md": SYNC, "plans.md": "# Plans\n\nThe Team plan includes 1 TB.\n"})
    yield e
    e.close()


def test_the_parts_of_a_long_block_in_a_store_are_well_formed(engine: Engine) -> None:
    chunks = [h.chunk for h in engine.search("nightly batch upload finished errors retry wait", k=20)
              if h.doc_id == "sync.md"]
    assert len(chunks) >= 2
    for c in chunks:
        read(c)
        assert c.text.startswith(("```text", "The sync client")), c.text[:80]


@pytest.mark.parametrize("question", ["How long is the retry wait?", "Where is the retry wait set?"])
def test_a_question_about_the_prose_is_not_answered_by_a_line_of_a_long_block(engine: Engine, question: str) -> None:
    # (before: "The retry wait is 45 seconds for this upload. 12:01:00 INFO upload 42 ..." quoted from the bare log
    # lines that started the block's second chunk)
    answer = engine.ask(question)
    assert "45 seconds" not in answer.text and "INFO" not in answer.text and "WARN" not in answer.text


def test_a_store_chunked_before_re_chunks_only_its_documents_with_code(tmp_path, monkeypatch):
    # a store written by the chunker that cut code blocks anywhere (no code revision in the ingest hash, its other
    # revisions as now): its documents with a code block are re-chunked on the next ingest, every other one stays
    # unchanged
    from openbook.chunking import chunker_revision

    def doc(text: str) -> Document:  # (HTML: a Markdown document has a revision of its own)
        return Document(doc_id="a.html", text=text, title="A", source="/tmp/a.html", format="html")

    assert chunker_revision(doc("x\n```\ny\n```")) == "code-parts-3"
    assert chunker_revision(doc("x ``` y")) == ""  # inline code: no block
    e = engine_chunked_before(tmp_path, {"sync.md": SYNC, "plans.md": "# Plans\n\nThe Team plan includes 1 TB.\n"},
                              monkeypatch, "code-parts-3")
    try:
        report = e.ingest([tmp_path / "docs"])
        assert report.updated == ["sync.md"] and report.unchanged == ["plans.md"]
        assert e.ingest([tmp_path / "docs"]).unchanged == ["plans.md", "sync.md"]
    finally:
        e.close()
