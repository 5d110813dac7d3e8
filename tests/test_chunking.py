"""Tests for openbook.chunking: structure, sizes, overlap, tables, CJK, offsets, pages and stable ids."""

from __future__ import annotations

import json
from dataclasses import replace
import re
from itertools import accumulate, islice
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from openbook.chunking import chunk_document, count_words, split_sentences
from openbook.config import ChunkingConfig
from openbook.errors import ChunkingError
from openbook.fences import fenced_blocks
from openbook.types import Chunk, Document, make_chunk_id

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.M)


def make_doc(text: str, doc_id: str = "doc.md", pages: tuple[int, ...] = (), title: str = "Doc") -> Document:
    return Document(doc_id=doc_id, text=text, title=title, source=f"/tmp/{doc_id}", format="markdown",
                    metadata={"updated": "2024-03-01", "tags": ["t"]}, pages=pages)


def sentences(n: int, prefix: str = "S", words: int = 8) -> str:
    """n distinct sentences of ``words`` words each."""
    return " ".join(f"{prefix}{i} " + " ".join(f"w{i}x{j}" for j in range(words - 2)) + " end." for i in range(n))


def is_continuation(c: Chunk, doc: Document) -> bool:
    return c.text != re.sub("[\ud800-\udfff]", "\ufffd", doc.text[c.start:c.end])


def wrapping(c: Chunk, body: str) -> tuple[str, str]:
    """(prefix, suffix) of a chunk's text around its ``body``: a table continuation's header, or a code part's
    reopening fence line (prefix) and closing fence (suffix); each on a line of its own."""
    m = re.fullmatch(r"(?s)(?:(.*?)\n)?" + re.escape(body) + r"(?:\n( {0,3}(?:`{3,}|~{3,})))?", c.text)
    assert m, (c.text, body)
    return m[1] or "", m[2] or ""


def has_content(text: str) -> bool:
    """Whether ``text`` holds more than the fence lines of its code blocks: a non-blank line that is no block's
    opening or closing fence, or an info string."""
    lines = text.split("\n")
    fences: set[int] = set()
    for b in fenced_blocks(lines):
        if lines[b.start].strip().lstrip("`~").strip():
            return True
        fences |= {b.start, b.end - 1} if b.closed else {b.start}
    return any(line.strip() for k, line in enumerate(lines) if k not in fences)


def check_invariants(doc: Document, chunks: list[Chunk], cfg: ChunkingConfig, count=count_words) -> None:
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    lines = doc.text.split("\n")
    at = list(accumulate((len(line) + 1 for line in lines), initial=0))
    marks: set[int] = set()  # the offsets of the fence markers of the document's code blocks
    for b in fenced_blocks(lines):
        for n in {b.start, b.end - 1} if b.closed else {b.start}:
            m = re.match(r"[ \t]*([`~]+)", lines[n])
            marks |= set(range(at[n] + m.start(1), at[n] + m.end(1))) if m else set()
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for c in chunks:
        assert c.text.strip(), "empty chunk"
        assert c.start == c.end or any(not doc.text[i].isspace() and i not in marks for i in range(c.start, c.end)), \
            ("a chunk of fence markers only", c.text)
        assert count(c.text) <= cfg.max_words, (count(c.text), c.text)
        body = doc.text[c.start:c.end]
        if c.start == c.end:  # a title-only document: its title is the text
            assert c.text in doc.title and not has_content(doc.text.replace("#", " "))  # no text, or fences only
            continue
        body = re.sub("[\ud800-\udfff]", "\ufffd", body)
        prefix, suffix = wrapping(c, body)
        fence = re.match(r" {0,3}(`{3,}|~{3,})", prefix)
        if suffix:  # a code part cut from the rest of its block: closed by the fence of a block it opens
            assert re.search(rf"(?m)^ {{0,3}}{re.escape(suffix.lstrip(' '))}(?![`~])", prefix + "\n" + body), c.text
        # (a code part that reopens its block starts at its first line's indentation: the code keeps it)
        assert body == body.strip() or fence and body == body.rstrip()
        assert c.doc_id == doc.doc_id and c.title == doc.title and c.metadata == doc.metadata
    # Every non-space character outside heading lines is in some chunk.
    covered = bytearray(len(doc.text))
    for c in chunks:
        covered[c.start:c.end] = b"\1" * (c.end - c.start)
        if is_continuation(c, doc) and c.start < c.end:  # a table part: its repeated header is the table's header
            head = wrapping(c, re.sub("[\ud800-\udfff]", "\ufffd", doc.text[c.start:c.end]))[0]
            at = doc.text.rfind(head, 0, c.start)
            assert at >= 0, head
            covered[at:at + len(head)] = b"\1" * len(head)
    lines = re.sub("[\ud800-\udfff]", "\ufffd", doc.text).split("\n")
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    for b in fenced_blocks(lines):  # a code block of fence lines only holds nothing to index
        if not has_content("\n".join(lines[b.start:b.end])):
            covered[starts[b.start]:starts[b.end]] = b"\1" * (starts[b.end] - starts[b.start])
    pos = 0
    for line in doc.text.splitlines(keepends=True):  # the chunker's lines (\x1c-\x1e, \x85, \u2028 end one too)
        m = HEADING.match(line.rstrip("\r\n"))
        if m:
            covered[pos:pos + m.end()] = b"\1" * m.end()
        pos += len(line)
    missing = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
    assert not missing, doc.text[missing[0]:missing[0] + 40]


# ------------------------------------------------------------------------------------------------ units


def test_count_words_counts_whitespace_words_and_cjk_characters() -> None:
    assert count_words("Hello, world") == 2
    assert count_words("东京は大きい。") == 6
    assert count_words("Skyladder 的 差旅政策 v2.0") == 7
    assert count_words("  \n ") == 0


def test_split_sentences_gives_trimmed_spans_covering_the_text() -> None:
    text = "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday!  Was it late? Yes."
    spans = split_sentences(text)
    parts = [text[s:e] for s, e in spans]
    assert parts[0] == "Dr. Smith went to Washington."
    assert parts[-1] == "Yes."
    assert "".join(parts).replace(" ", "") == text.replace(" ", "")


def test_split_sentences_ends_cjk_sentences_at_full_stops() -> None:
    text = "东京很大。大阪也很大！真的吗？是的。"
    assert [text[s:e] for s, e in split_sentences(text, lang="zh")] == ["东京很大。", "大阪也很大！", "真的吗？", "是的。"]


def test_split_sentences_of_blank_text_is_empty() -> None:
    assert split_sentences("   \n") == []


# ------------------------------------------------------------------------------------------------ structure


def test_heading_path_travels_with_each_chunk_and_heading_line_is_not_in_body() -> None:
    text = (
        "# Travel policy\n\n"
        + sentences(12, "Intro")
        + "\n\n## Hotels\n\n"
        + sentences(6, "Hotel")
        + "\n\n### Caps\n\n"
        + sentences(6, "Cap")
        + "\n\n## Flights\n\n"
        + sentences(6, "Flight")
    )
    doc = make_doc(text)
    chunks = chunk_document(doc, ChunkingConfig(target_words=60, overlap_words=0, max_words=100))
    by_prefix = {c.text.split()[0]: c.headings for c in chunks}
    assert by_prefix["Intro0"] == ("Travel policy",)
    assert by_prefix["Hotel0"] == ("Travel policy", "Hotels")
    assert by_prefix["Cap0"] == ("Travel policy", "Hotels", "Caps")
    assert by_prefix["Flight0"] == ("Travel policy", "Flights")
    assert all(not c.text.startswith("#") for c in chunks)
    assert chunks[0].section == "Travel policy"
    check_invariants(doc, chunks, ChunkingConfig(target_words=60, overlap_words=0, max_words=100))


def test_each_section_starts_a_new_chunk_even_when_small() -> None:
    text = "## A\n\n" + sentences(3, "A") + "\n\n## B\n\n" + sentences(3, "B")
    chunks = chunk_document(make_doc(text), ChunkingConfig(target_words=200, overlap_words=20, max_words=300))
    assert [c.headings for c in chunks] == [("A",), ("B",)]


def test_a_tiny_intro_merges_with_its_subsection_under_the_parent_heading() -> None:
    text = "# Policy\n\nShort intro here.\n\n## Scope\n\n" + sentences(4, "Scope")
    doc = make_doc(text)
    chunks = chunk_document(doc, ChunkingConfig(target_words=100, overlap_words=10, max_words=150))
    assert len(chunks) == 1
    assert chunks[0].headings == ("Policy",)
    assert chunks[0].text.startswith("Short intro here.\n\n## Scope\n\nScope0")


def test_headings_inside_code_fences_are_not_headings() -> None:
    text = "# Setup\n\nRun this:\n\n```sh\n# install it\npip install x\n```\n\nDone."
    chunks = chunk_document(make_doc(text))
    assert [c.headings for c in chunks] == [("Setup",)]
    assert "# install it" in chunks[0].text


@pytest.mark.parametrize("text", [
    "# Setup\n\n````markdown\n```sh\n# inner\n```\n# still code\n````\n\nDone.",  # a longer fence holds ```
    "# Setup\n\n~~~\n# a comment\n```\n# still code\n~~~\n\nDone.",  # tildes close only on tildes
    "# Setup\n\n```\n# a comment\n```python\n# still code\n```\n\nDone.",  # "```python" closes nothing
    "# Setup\n\nDone.\n\n```\n# a comment\n\n# still code",  # unclosed: code to the end
])
def test_fenced_blocks_follow_commonmark_when_chunking(text: str) -> None:
    # the same fenced_blocks as the Markdown loader and the answerer: # lines inside are code, not headings
    chunks = chunk_document(make_doc(text))
    assert {c.headings for c in chunks} == {("Setup",)}
    assert "# still code" in " ".join(c.text for c in chunks)


def test_a_fence_indented_four_spaces_is_no_fence_when_chunking() -> None:
    text = f"# Setup\n\n{sentences(30)}\n\n    ```\n## Usage\n\n{sentences(5, 'U')}"
    chunks = chunk_document(make_doc(text))
    assert chunks[-1].headings == ("Setup", "Usage") and chunks[-1].text.startswith("U0")


def test_no_heading_only_or_empty_chunks() -> None:
    text = "# Title\n\n## Empty section\n\n## Real\n\nSome body text here."
    chunks = chunk_document(make_doc(text))
    assert [c.text for c in chunks] == ["Some body text here."]
    assert chunks[0].headings == ("Title", "Real")
    # issue 9: a heading-only file and a title-only document are indexed, not dropped (tests further down)
    assert [c.text for c in chunk_document(make_doc("# Only a heading\n"))] == ["Only a heading"]
    assert chunk_document(make_doc("", title="")) == []


# ------------------------------------------------------------------------------------------------ sizes


def test_boundaries_fall_between_sentences() -> None:
    text = sentences(40, "P", words=9)
    doc = make_doc(text)
    bounds = {0, len(text)} | {s for s, _ in split_sentences(text)} | {e for _, e in split_sentences(text)}
    chunks = chunk_document(doc, ChunkingConfig(target_words=50, overlap_words=10, max_words=80))
    assert len(chunks) > 3
    for c in chunks:
        assert c.start in bounds and c.end in bounds
        assert c.text.endswith("end.")


def test_overlap_is_whole_trailing_sentences_of_the_previous_chunk() -> None:
    cfg = ChunkingConfig(target_words=50, overlap_words=20, max_words=80)
    doc = make_doc(sentences(40, "P", words=8))
    chunks = chunk_document(doc, cfg)
    assert len(chunks) > 3
    for prev, nxt in zip(chunks, chunks[1:]):
        assert nxt.start < prev.end, "consecutive chunks in one section overlap"
        shared = doc.text[nxt.start:prev.end]
        assert 0 < count_words(shared) <= cfg.overlap_words
        assert shared.endswith("end.") and shared.startswith("P")
        assert count_words(doc.text[prev.end:nxt.end]) > 0, "each chunk adds new text"


def test_no_overlap_across_sections_or_when_zero() -> None:
    text = "## A\n\n" + sentences(20, "A") + "\n\n## B\n\n" + sentences(20, "B")
    doc = make_doc(text)
    zero = chunk_document(doc, ChunkingConfig(target_words=40, overlap_words=0, max_words=60))
    assert all(n.start >= p.end for p, n in zip(zero, zero[1:]))
    some = chunk_document(doc, ChunkingConfig(target_words=40, overlap_words=16, max_words=60))
    first_b = next(c for c in some if c.headings == ("B",))
    assert first_b.text.startswith("B0 ")


def test_sections_are_balanced_instead_of_leaving_a_tiny_tail() -> None:
    doc = make_doc(sentences(25, "P", words=10))  # 250 words
    chunks = chunk_document(doc, ChunkingConfig(target_words=180, overlap_words=0, max_words=350))
    assert len(chunks) == 2
    assert min(count_words(c.text) for c in chunks) >= 100


def test_short_list_items_are_never_cut_and_overlap_is_whole_items() -> None:
    items = [f"- E-{2000 + i} means error number {i}. Fix it by doing step {i}. Then retry." for i in range(30)]
    doc = make_doc("## Error codes\n\n" + "\n".join(items))
    cfg = ChunkingConfig(target_words=60, overlap_words=15, max_words=100)
    chunks = chunk_document(doc, cfg)
    assert len(chunks) > 4
    for c in chunks:
        assert all(line in items for line in c.text.splitlines())
    assert any(n.start < p.end for p, n in zip(chunks, chunks[1:]))


def test_an_over_long_sentence_is_split_by_words_within_max() -> None:
    long_sentence = " ".join(f"word{i}" for i in range(1000)) + "."
    doc = make_doc("Intro sentence here. " + long_sentence + " Outro sentence here.")
    cfg = ChunkingConfig(target_words=100, overlap_words=20, max_words=150)
    chunks = chunk_document(doc, cfg)
    assert len(chunks) >= 7
    check_invariants(doc, chunks, cfg)


def test_a_long_cjk_run_without_punctuation_is_split_by_characters() -> None:
    doc = make_doc("中" * 500)
    cfg = ChunkingConfig(target_words=100, overlap_words=10, max_words=120)
    chunks = chunk_document(doc, cfg)
    assert len(chunks) == 5
    check_invariants(doc, chunks, cfg)


def test_custom_count_function_is_respected() -> None:
    def chars(text: str) -> int:  # characters instead of words, e.g. a budget in characters
        return len(text)

    doc = make_doc("# Head\n\n" + sentences(30, "P") + "\n\n" + "x" * 700)
    cfg = ChunkingConfig(target_words=300, overlap_words=60, max_words=500)
    chunks = chunk_document(doc, cfg, count=chars)
    assert len(chunks) > 5
    assert max(len(c.text) for c in chunks) <= 500
    check_invariants(doc, chunks, cfg, count=chars)


def test_non_additive_counter_never_exceeds_max() -> None:
    def with_specials(text: str) -> int:  # a word-piece counter that adds [CLS] and [SEP]
        return count_words(text) + 2

    doc = make_doc(sentences(60, "P", words=5))
    cfg = ChunkingConfig(target_words=30, overlap_words=8, max_words=32)
    chunks = chunk_document(doc, cfg, count=with_specials)
    check_invariants(doc, chunks, cfg, count=with_specials)


def test_inconsistent_sizes_raise_chunking_error() -> None:
    with pytest.raises(ChunkingError, match="target_words"):
        chunk_document(make_doc("Text."), ChunkingConfig(target_words=100, overlap_words=100, max_words=200))
    with pytest.raises(ChunkingError):
        chunk_document(make_doc("Text."), ChunkingConfig(target_words=300, overlap_words=10, max_words=200))


# ------------------------------------------------------------------------------------------------ tables


def table(rows: int, cells: int = 4) -> str:
    head = "| " + " | ".join(f"Col{j}" for j in range(cells)) + " |"
    sep = "|" + "---|" * cells
    body = ["| " + " | ".join(f"r{i}c{j}" for j in range(cells)) + " |" for i in range(rows)]
    return "\n".join([head, sep, *body])


def test_a_short_table_stays_whole_with_its_header() -> None:
    text = "## Prices\n\nThe list:\n\n" + table(3) + "\n\nAfter the table."
    doc = make_doc(text)
    chunks = chunk_document(doc)
    assert len(chunks) == 1 and table(3) in chunks[0].text


def test_a_long_table_is_cut_between_rows_and_every_part_repeats_the_header() -> None:
    tab = table(60)
    text = "## Prices\n\nIntro sentence.\n\n" + tab + "\n\nAfter the table."
    doc = make_doc(text)
    cfg = ChunkingConfig(target_words=80, overlap_words=10, max_words=120)
    chunks = chunk_document(doc, cfg)
    head = "\n".join(tab.splitlines()[:2])
    parts = [c for c in chunks if "| r" in c.text]
    assert len(parts) >= 3
    rows_seen = []
    for c in parts:
        assert c.text.startswith(head + "\n")
        assert c.headings == ("Prices",)
        rows = c.text.splitlines()[2:]
        assert all(r.startswith("| r") and r.endswith(" |") for r in rows)
        rows_seen += rows
    assert rows_seen == tab.splitlines()[2:], "every row exactly once, in order"
    assert parts[0].text == doc.text[parts[0].start:parts[0].end]
    for c in parts[1:]:
        assert c.text == head + "\n" + doc.text[c.start:c.end]
        assert doc.text[c.start:c.end].startswith("| r")
    check_invariants(doc, chunks, cfg)


def test_a_single_row_over_max_is_split_and_keeps_the_header() -> None:
    tab = "| A | B |\n|---|---|\n| " + " ".join(f"w{i}" for i in range(300)) + " | b |\n| short | row |"
    doc = make_doc(tab)
    cfg = ChunkingConfig(target_words=80, overlap_words=10, max_words=100)
    chunks = chunk_document(doc, cfg)
    assert all(c.text.startswith("| A | B |\n|---|---|\n") for c in chunks)
    check_invariants(doc, chunks, cfg)


# ------------------------------------------------------------------------------------------------ CJK


def test_chinese_text_is_chunked_at_sentence_ends() -> None:
    sent = "差旅费用须在行程结束后三十天内提交报销申请并附上发票。"
    text = "# 差旅政策\n\n## 报销\n\n" + sent * 20
    doc = make_doc(text)
    cfg = ChunkingConfig(target_words=100, overlap_words=30, max_words=150)
    chunks = chunk_document(doc, cfg)
    assert len(chunks) >= 4
    for c in chunks:
        assert c.headings == ("差旅政策", "报销")
        assert c.text.endswith("。") and c.text.startswith("差旅")
    check_invariants(doc, chunks, cfg)


# ------------------------------------------------------------------------------------------------ offsets, pages, ids


def test_offsets_and_pages_of_a_paged_document() -> None:
    page_texts = [sentences(10, f"Pg{n}p", words=10) + "\n\n" for n in range(1, 4)]
    text = "".join(page_texts)
    pages = (0, len(page_texts[0]), len(page_texts[0]) + len(page_texts[1]))
    doc = make_doc(text, pages=pages)
    chunks = chunk_document(doc, ChunkingConfig(target_words=50, overlap_words=0, max_words=80))
    for c in chunks:
        assert doc.text[c.start:c.end] == c.text
        first_page = int(re.match(r"Pg(\d+)p", c.text).group(1))
        assert c.page == first_page
    assert {c.page for c in chunks} == {1, 2, 3}
    assert chunk_document(make_doc("Unpaged text."))[0].page is None


def test_rechunking_an_unchanged_document_gives_identical_ids() -> None:
    text = "# A\n\n" + sentences(30) + "\n\n## B\n\n" + table(40)
    cfg = ChunkingConfig(target_words=60, overlap_words=10, max_words=90)
    first = chunk_document(make_doc(text), cfg)
    again = chunk_document(make_doc(text), cfg)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert all(c.chunk_id == make_chunk_id("doc.md", c.text, 0) for c in first)


def test_editing_one_paragraph_changes_only_the_affected_chunk_ids() -> None:
    sections = [f"## Part {i}\n\n" + sentences(6, f"Part{i}s") for i in range(6)]
    cfg = ChunkingConfig(target_words=80, overlap_words=10, max_words=120)
    before = chunk_document(make_doc("\n\n".join(sections)), cfg)
    sections[3] = sections[3].replace("Part3s2 ", "Part3s2 edited ")
    after = chunk_document(make_doc("\n\n".join(sections)), cfg)
    changed_before = {c.chunk_id for c in before} - {c.chunk_id for c in after}
    changed_after = {c.chunk_id for c in after} - {c.chunk_id for c in before}
    assert len(changed_before) == len(changed_after) == 1
    (new,) = [c for c in after if c.chunk_id in changed_after]
    assert "edited" in new.text and new.headings == ("Part 3",)


def test_identical_texts_in_one_document_get_distinct_ids_by_occurrence() -> None:
    text = "## A\n\nSame words here.\n\n## B\n\nSame words here.\n\n## C\n\nSame words here."
    chunks = chunk_document(make_doc(text))
    assert [c.chunk_id for c in chunks] == [make_chunk_id("doc.md", "Same words here.", k) for k in range(3)]


# ------------------------------------------------------------------------------------------------ properties


_words = st.lists(st.sampled_from(["alpha", "beta", "E-2043", "3.5", "Dr.", "x", "naïve", "SL-PRO-500"]),
                  min_size=1, max_size=40)
_sentence = _words.map(lambda ws: " ".join(ws) + ".")
_cjk_sentence = st.text(alphabet="差旅政策东京大阪はい", min_size=1, max_size=80).map(lambda s: s + "。")
_paragraph = st.lists(st.one_of(_sentence, _cjk_sentence), min_size=1, max_size=8).map(" ".join)
_heading = st.tuples(st.integers(1, 4), st.sampled_from(["Intro", "Hotels", "报销", "Rates"])).map(
    lambda t: "#" * t[0] + " " + t[1])
_list = st.lists(_sentence, min_size=1, max_size=5).map(lambda xs: "\n".join("- " + x for x in xs))
_table = st.tuples(st.integers(0, 30), st.integers(1, 6)).map(lambda t: table(*t))
_long = st.integers(50, 400).map(lambda n: " ".join(f"t{i}" for i in range(n)))
_code_line = st.one_of(_sentence, _long, st.just(""), st.just("```"), st.just("  ~~~ x"),
                       _words.map(lambda ws: "    " + "_".join(ws)))
_code = st.tuples(st.sampled_from(["```", "```python x=1", "~~~", "````md", "  ```"]),
                  st.lists(_code_line, max_size=30), st.booleans()).map(
    lambda t: "\n".join([t[0], *t[1], *([t[0].strip().split()[0]] if t[2] else [])]))
_block = st.one_of(_paragraph, _paragraph, _heading, _list, _table, _long, _code)


@st.composite
def _configs(draw) -> ChunkingConfig:
    target = draw(st.integers(5, 120))
    return ChunkingConfig(target_words=target, overlap_words=draw(st.integers(0, target - 1)),
                          max_words=draw(st.integers(target, target * 2)))


def _quarter_chars(text: str) -> int:  # roughly a word-piece counter: one unit per 4 characters
    return (len(text) + 3) // 4


def _with_specials(text: str) -> int:  # not additive: [CLS] and [SEP] on every call
    return count_words(text) + 2


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(_block, min_size=1, max_size=12), cfg=_configs(),
       count=st.sampled_from([count_words, _quarter_chars, _with_specials]))
def test_property_invariants_hold_for_generated_documents(blocks: list[str], cfg: ChunkingConfig, count) -> None:
    doc = make_doc("\n\n".join(blocks))
    chunks = chunk_document(doc, cfg, count=count)
    check_invariants(doc, chunks, cfg, count=count)
    assert [c.chunk_id for c in chunk_document(doc, cfg, count=count)] == [c.chunk_id for c in chunks]


def test_overlap_comes_from_the_last_part_of_a_chunk_cut_for_a_non_additive_counter() -> None:
    # (found by the property test above) a counter that is not additive made one flush cut the chunk in two; the
    # overlap then reached back into the first part and the next chunk started before the one it followed
    blocks = ["alpha.", "alpha alpha alpha alpha.", "alpha.",
              "alpha. alpha. alpha. alpha. alpha. alpha alpha alpha alpha alpha alpha alpha alpha.", "alpha."]
    doc = make_doc("\n\n".join(blocks))
    cfg = ChunkingConfig(target_words=24, overlap_words=23, max_words=29)
    chunks = chunk_document(doc, cfg, count=_quarter_chars)
    check_invariants(doc, chunks, cfg, count=_quarter_chars)


# ------------------------------------------------------------------------------------------------ real files


def split_front_matter(raw: str) -> tuple[str, str]:
    """(front matter, body) of a Markdown file: a faithful stand-in for the ingest loader's split."""
    m = re.match(r"\A---\n(.*?)\n---\n", raw, re.S)
    return (m.group(1), raw[m.end():].lstrip("\n")) if m else ("", raw)


def test_real_markdown_with_front_matter() -> None:
    path = SHARED / "samples" / "markdown" / "docs__front-matter.md"
    front, body = split_front_matter(path.read_text(encoding="utf-8"))
    title = re.search(r"^title:\s*(.+)$", front, re.M).group(1)
    doc = Document(doc_id=path.name, text=body, title=title, source=str(path), format="markdown")
    cfg = ChunkingConfig()
    chunks = chunk_document(doc, cfg)
    assert len(chunks) >= 3
    check_invariants(doc, chunks, cfg)
    assert any(c.headings == ("Predefined Global Variables",) for c in chunks)
    assert all(c.title == "Front Matter" for c in chunks)
    # Code samples keep their '# ...' comment lines inside the body, not as headings.
    assert not any(h.startswith("!") for c in chunks for h in c.headings)


def test_real_skyladder_price_table_keeps_header_in_every_part() -> None:
    path = SHARED / "labs" / "skyladder" / "docs" / "doc-005-pricing-table.md"
    doc = make_doc(path.read_text(encoding="utf-8"), doc_id="doc-005")
    cfg = ChunkingConfig(target_words=100, overlap_words=20, max_words=200)
    chunks = chunk_document(doc, cfg)
    parts = [c for c in chunks if "| SL-" in c.text]
    assert len(parts) >= 2
    assert all(c.text.startswith("| SKU | Plan |") for c in parts)
    assert any("SL-TEAM-700" in c.text for c in parts)
    check_invariants(doc, chunks, cfg)


def test_real_chinese_policy() -> None:
    path = SHARED / "labs" / "skyladder" / "docs" / "doc-029-travel-policy-zh.md"
    _, body = split_front_matter(path.read_text(encoding="utf-8"))
    doc = make_doc(body, doc_id="doc-029")
    chunks = chunk_document(doc)
    assert ("差旅政策（第2.0版・中文版）", "三、住宿标准") in {c.headings for c in chunks}
    assert any("900元" in c.text for c in chunks)
    check_invariants(doc, chunks, ChunkingConfig())


def test_scifact_abstracts_are_mostly_one_or_two_chunks() -> None:
    path = SHARED / "datasets" / "scifact" / "corpus.jsonl"
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in islice(f, 300)]
    counts = []
    for row in rows:
        doc = Document(doc_id=row["_id"], text=row["text"], title=row["title"], source="", format="beir")
        chunks = chunk_document(doc)
        check_invariants(doc, chunks, ChunkingConfig())
        counts.append(len(chunks))
    assert sum(1 for n in counts if n <= 2) / len(counts) >= 0.85


def test_fast_sentence_offsets_equal_blingfire_exact_offsets() -> None:
    import blingfire

    from openbook.chunking import _blingfire_cuts

    with open(SHARED / "datasets" / "scifact" / "corpus.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in islice(f, 200)]
    texts += ["这是第一句。这是第二句！还有吗？Mixed e.g. Dr. Smith went home.", "a  b.\n\n  C d. E", "x", "A. B. C."]
    for text in texts:
        exact = {s for s, _ in blingfire.text_to_sentences_and_offsets(text)[1][1:]}
        assert _blingfire_cuts(blingfire, text) == exact


# ------------------------------------------------------------------------------------------------ issue 9: no document
# may stop a batch or vanish (zero-size units, title-only records, heading-only files, arbitrary Unicode)


@pytest.mark.parametrize("text", ["本季度的迁移工作圆满成功！！！", "！！！", "？？？？？\n\n。。。", "东京？！。",
                                  "第一段。\n\n！！！\n\n第二段。", "- ！！！\n- ？？？", "| ！ | ？ |\n| --- | --- |\n| 。 | 、 |"])
def test_units_that_count_zero_words_are_chunked(text):
    doc = make_doc(text)
    chunks = chunk_document(doc, ChunkingConfig(target_words=20, overlap_words=5, max_words=40))
    assert chunks
    check_invariants(doc, chunks, ChunkingConfig(target_words=20, overlap_words=5, max_words=40))


def test_a_counter_that_returns_zero_does_not_break_chunking():
    doc = make_doc("# A\n\nOne. Two. Three.\n\n## B\n\nFour.")
    chunks = chunk_document(doc, ChunkingConfig(target_words=5, overlap_words=1, max_words=10), count=lambda s: 0)
    assert "".join(c.text for c in chunks).count(".") == 4


@pytest.mark.parametrize("title", ["Thermal conductivity of lunar regolith", "月球土壤的导热性"])
@pytest.mark.parametrize("text", ["", "  \n\t", "#\n##"])
def test_a_title_only_document_is_one_chunk_of_its_title(title, text):
    doc = make_doc(text, title=title)
    (chunk,) = chunk_document(doc)
    assert chunk.text == title and chunk.start == chunk.end == 0 and chunk.headings == ()
    assert title in chunk.indexed_text()


def test_a_long_title_only_document_is_cut_to_max():
    doc = make_doc("", title=" ".join(f"w{i}" for i in range(50)))
    cfg = ChunkingConfig(target_words=10, overlap_words=2, max_words=20)
    chunks = chunk_document(doc, cfg)
    assert len(chunks) == 3 and all(count_words(c.text) <= 20 for c in chunks)
    assert " ".join(c.text for c in chunks) == doc.title


def test_no_text_and_no_title_gives_no_chunk():
    assert chunk_document(make_doc("", title="")) == []


@pytest.mark.parametrize("source, title", [("/d/blank.md", "blank"), ("/d/doc-027-sla-matrix.txt", "sla matrix"),
                                           ("/d/notes.txt.gz", "notes"), ("/d/My_Notes.md", "My Notes")])
def test_a_blank_file_whose_title_is_only_its_name_has_nothing_to_index(source, title):
    doc = Document(doc_id="x", text=" \n", title=title, source=source, format="text")
    assert chunk_document(doc) == []  # the ingest report lists it as empty


def test_a_beir_title_is_text_even_in_a_file_with_a_name():
    doc = Document(doc_id="d1", text="", title="Regolith samples", source="/d/corpus.jsonl", format="beir")
    assert [c.text for c in chunk_document(doc)] == ["Regolith samples"]


@pytest.mark.parametrize("text, heading", [("# Brindle shed alarm code 9051", "Brindle shed alarm code 9051"),
                                           ("## Only a subheading ##\n", "Only a subheading"), ("# C#", "C#")])
def test_a_heading_only_file_is_a_chunk_of_its_heading_text(text, heading):
    doc = make_doc(text)
    (chunk,) = chunk_document(doc)
    assert chunk.text == heading
    assert chunk.headings == (chunk.text,)
    check_invariants(doc, [chunk], ChunkingConfig())


def test_every_heading_of_a_headings_only_document_is_indexed():
    doc = make_doc("# Guide\n\n## Setup\n\n## Appendix: codes 9051\n")
    chunks = chunk_document(doc)
    indexed = "\n".join(c.indexed_text() for c in chunks)
    for heading in ("Guide", "Setup", "Appendix: codes 9051"):
        assert heading in indexed
    # a heading followed by a nested one is carried in that one's path, not repeated as a chunk
    nested = chunk_document(make_doc("# Parent\n\n## Child"))
    assert [(c.text, c.headings) for c in nested] == [("Child", ("Parent", "Child"))]


def test_closing_hashes_need_a_space_so_csharp_keeps_its_hash():
    chunks = chunk_document(make_doc("# C#\n\nBindings for C# use async streams."))
    assert chunks[0].headings == ("C#",)
    assert chunk_document(make_doc("## Rates ##\n\nText."))[0].headings == ("Rates",)


_unicode_piece = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["！！！", "？？？？", "。", "\u0301", "\u094d", "\u064e", "\u00ad", "\u200b", "\u200d", "\ufeff",
                     "\ud800", "İ", "ภาษาไทย", "差旅", "# ", "## T", "- ", "| a |", "```", "\n", "\n\n", " ",
                     "x" * 3000, "Gate code 4417", "."]),
)


def test_lone_surrogates_become_replacement_characters_at_the_same_offsets():
    doc = make_doc("Bad byte \udcff here. Next sentence \ud800 too.")
    (chunk,) = chunk_document(doc)
    assert chunk.text == "Bad byte \ufffd here. Next sentence \ufffd too."
    assert len(chunk.text) == chunk.end - chunk.start
    chunk.text.encode("utf-8")  # storable


def _zero(text: str) -> int:  # a counter that sees nothing (every unit measures 0)
    return 0


_TINY = ChunkingConfig(target_words=5, overlap_words=0, max_words=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(_unicode_piece, max_size=15).map("".join), title=st.sampled_from(["", "T", "标题 ！！！"]),
       cfg=_configs(), count=st.sampled_from([count_words, _quarter_chars, _with_specials, _zero]))
@example(text="```\n" + "x" * 3000, title="", cfg=_TINY, count=_quarter_chars)  # gave a chunk "```\n```"
@example(text="# 0\x1f", title="", cfg=ChunkingConfig(), count=count_words)  # gave text "0\x1f" under path "0"
def test_property_arbitrary_unicode_never_fails_and_never_vanishes(text, title, cfg, count):
    doc = make_doc(text, title=title)
    chunks = chunk_document(doc, cfg, count=count)
    if count is not _with_specials:  # the invariants' size check assumes max_words is reachable
        check_invariants(doc, chunks, cfg, count=count)
    if text.strip() or title.strip():
        has_words = any(not ch.isspace() and ch not in "#`~" for ch in text + title)
        assert chunks or not has_words, (text, title)


@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_a_code_line_cut_inside_keeps_its_fences_with_its_first_and_last_pieces(fmt):
    # an unclosed fence at the start, its one line too long for a chunk: the opening fence was cut off as a
    # part of its own, the chunk "```\n```"
    for text in ("```\n" + "x" * 3000, "```\n" + "x" * 3000 + "\n```"):
        doc = replace(make_doc(text), format=fmt)
        chunks = chunk_document(doc, _TINY, count=_quarter_chars)
        assert chunks[0].text.startswith("```\nxxx") and chunks[0].start == 0
        assert all(has_content(c.text) for c in chunks)
        assert chunks[-1].end == len(text) and chunks[-1].text.endswith("xxx" + text[3003:])
        check_invariants(doc, chunks, _TINY, count=_quarter_chars)
    # a block of fence markers only makes no chunk; the document's title stands in, as for any text-less one
    assert [c.text for c in chunk_document(make_doc("```\n\n```", title="Setup"))] == ["Setup"]
    assert "```py\n```" in chunk_document(make_doc("```py\n```"))[0].text  # an info string is text


@pytest.mark.parametrize("fmt", ["markdown", "text"])
@pytest.mark.parametrize("heading, title", [("# 0\x1f", "0"), ("## \u3000Rates\u00a0 ##", "Rates"),
                                            ("# \x1f", "")])
def test_a_heading_s_path_and_its_text_are_trimmed_alike(fmt, heading, title):
    # "# 0\x1f" gave the path ("0",) but the text "0\x1f": the path was str.strip()ped, the text only of spaces
    chunks = chunk_document(replace(make_doc(heading), format=fmt))
    assert [(c.text, c.headings) for c in chunks] == ([(title, (title,))] if title else [])
    (chunk,) = chunk_document(replace(make_doc(f"{heading}\n\nBody text."), format=fmt))
    assert chunk.headings == ((title,) if title else ())
