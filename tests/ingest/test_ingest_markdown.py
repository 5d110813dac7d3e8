import pytest

from openbook.errors import IngestError
from openbook.ingest import load_file
from openbook.ingest.markdown import clean_markdown

from ingest_shared import SAMPLES, need


def test_front_matter_and_cleaning(tmp_path):
    path = tmp_path / "policy.md"
    path.write_text(
        "---\ntitle: Travel Policy\nupdated: 2024-03-01\nauthor: Finance\ntags: travel\nacl: [staff]\n"
        "version: '2.0'\nsupersedes: v1.3\nlang: en\nowner_team: ops\n---\n\n"
        "# Travel Policy v2\n\n<!-- internal note -->\nSee [the portal](https://x.example/a_(b) \"t\") and "
        "![diagram of flow](img.png) or [ref link][r].\n\n[r]: https://x.example\n\n"
        "* one\n+ two\n\nSub heading\n-----------\n\na | b\n--- | ---\n1 | 2\n\n"
        "```python\nx = [keep](this)\n```\n",
        encoding="utf-8",
    )
    doc = load_file(path, "policy.md")[0]
    assert doc.title == "Travel Policy"
    assert doc.metadata == {
        "title": "Travel Policy", "updated": "2024-03-01", "author": "Finance", "tags": ["travel"],
        "acl": ["staff"], "version": "2.0", "supersedes": "v1.3", "lang": "en", "owner_team": "ops",
    }
    assert doc.text.split("\n") == [
        "# Travel Policy v2",
        "",
        "See the portal and diagram of flow or ref link.",
        "",
        "- one",
        "- two",
        "",
        "## Sub heading",
        "",
        "| a | b |",
        "| --- | --- |",
        "| 1 | 2 |",
        "",
        "```python",
        "x = [keep](this)",
        "```",
    ]
    assert doc.format == "markdown"


def test_title_from_heading_then_file_name(tmp_path):
    (tmp_path / "a.md").write_text("Intro text.\n\n# Real Title\n", encoding="utf-8")
    assert load_file(tmp_path / "a.md", "a.md")[0].title == "Real Title"
    (tmp_path / "03-no-heading.md").write_text("Just text.\n", encoding="utf-8")
    assert load_file(tmp_path / "03-no-heading.md", "x")[0].title == "no heading"


def test_bad_front_matter_is_one_line_error(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"bad\.md: bad YAML front matter") as info:
        load_file(path, "bad.md")
    assert "\n" not in str(info.value)


def test_raw_html_table_becomes_pipe_table():
    text = clean_markdown("Intro\n\n<table><tr><th>Key</th><th>Value</th></tr><tr><td>a</td><td>&lt;b&gt;</td></tr></table>\n")
    assert "| Key | Value |\n| --- | --- |\n| a | <b> |" in text


def test_jekyll_samples_load():
    paths = sorted(need(SAMPLES / "markdown").glob("*.m*"))
    assert len(paths) >= 40
    for path in paths:
        doc = load_file(path, path.name)[0]
        assert doc.title
        assert "<!--" not in doc.text


def test_inline_html_keeps_word_boundaries():
    text = clean_markdown(
        "Port<br/>7070 and <b>bold</b>er words.\n\n<div>alpha</div><div>beta</div>\n\n"
        "| k | v |\n| --- | --- |\n| mode | <p>eco</p><p>turbo</p> |\n\n<ul><li>one</li><li>two</li></ul>\n\n"
        "<h2 id=x>Limits</h2><span>gamma</span><x-note>delta</x-note>epsilon\n"
    )
    assert "Port\n7070" in text and "bolder words" in text
    assert "alpha\n\nbeta" in text
    assert "| mode | eco turbo |" in text
    assert "- one\n- two" in text
    assert "## Limits" in text and "gamma delta epsilon" in text


def test_indented_code_becomes_a_fenced_block():
    from openbook.ingest.markdown import clean_markdown

    body = ("A log line:\n\n    2024-03-01 ERROR sync failed.\n\n        retrying.\n\nAfter it.\n\n"
            "1. Step one\n\n    More of step one.\n2. Step two\n")
    assert clean_markdown(body) == ("A log line:\n\n```\n2024-03-01 ERROR sync failed.\n\n    retrying.\n```\n\n"
                                    "After it.\n\n1. Step one\n\n    More of step one.\n2. Step two")
    assert clean_markdown("Para\n    continued, not code") == "Para\n    continued, not code"


import re as _re  # noqa: E402
import time as _time  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = ["<h1>", "<H2 class='x'>", "</h1>", "</h2 >", "</H1>", "<!--", "-->", "<table>", "</table>", "a", " ", "\n",
           "<h3>", "</h3>"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_linear_open_close_rewrites_equal_the_regexes_they_replace(text):
    from openbook.ingest.markdown import _COMMENT, _COMMENT_CLOSE, _HTML_TABLE, _HTML_TABLE_CLOSE, _html_headings, \
        _sub_closed

    heading = _re.compile(r"<h([1-6])(?:\s[^<>]*)?>(.*?)</h\1\s*>", _re.DOTALL | _re.IGNORECASE)
    assert _html_headings(text) == heading.sub(lambda m: f"\n\n{'#' * int(m[1])} {' '.join(m[2].split())}\n\n", text)
    assert _sub_closed(_COMMENT, _COMMENT_CLOSE, "", text) == _COMMENT.sub("", text)
    assert _sub_closed(_HTML_TABLE, _HTML_TABLE_CLOSE, "T", text) == _HTML_TABLE.sub("T", text)


@pytest.mark.parametrize("piece", ["[", "![", "<!-- ", "<table ", "<h1>x ", "[a](", "[" + "a" * 50 + "\n",
                                   "x<div>y</div>"])
def test_unclosed_markup_loads_in_linear_time(tmp_path, piece):
    # 100 kB of any of these took 30-60 s (quadratic: a larger file, or a server upload, held the ingest for hours)
    path = tmp_path / "a.md"
    path.write_text(piece * (100_000 // len(piece)) + "\n", encoding="utf-8")
    start = _time.perf_counter()
    load_file(path, "a.md")
    assert _time.perf_counter() - start < 10


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["#", "# ", "|", " ", "\t", ":", "-", "---", "a", "\n"]), max_size=30).map("".join))
def test_linear_heading_and_table_patterns_equal_the_patterns_they_replace(text):
    from openbook.ingest.markdown import _HEADING, _TABLE_SEPARATOR, _heading_title

    heading = _re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", _re.MULTILINE)
    separator = _re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")
    old, new = heading.search(text), _HEADING.search(text)
    assert (old[1].strip() if old else None) == (_heading_title(new) if new else None)
    for line in text.split("\n"):
        assert bool(separator.match(line)) == bool(_TABLE_SEPARATOR.match(line)), line


@pytest.mark.parametrize("body", [
    "\n".join("  " * i + "- item" for i in range(1200)) + "\n",  # a list nested 1,200 levels (1.4 MB)
    "# a" + " " * 200_000 + "b\n",  # a heading with a long run of spaces
    "| a | b |\n" + " " * 200_000 + "|---|---|x\n",
], ids=["nested-list", "heading-spaces", "table-spaces"])
def test_deeply_indented_lines_and_long_space_runs_load_in_linear_time(tmp_path, body):
    # each took minutes: two patterns split a run of spaces between two of their parts in every way
    path = tmp_path / "a.md"
    path.write_text(body, encoding="utf-8")
    start = _time.perf_counter()
    (doc,) = load_file(path, "a.md")
    assert _time.perf_counter() - start < 10
    assert doc.text.strip()


@pytest.mark.parametrize("body, code", [
    # a ```` block holds ``` lines: the link after them is still code (the loader used to close it there)
    ("````md\n```\n[a](http://a.example)\n```\n[b](http://b.example)\n````", "all"),
    ("~~~\n```\n<b>kept</b> [c](http://c.example)\n~~~", "all"),  # tildes close only on tildes
    ("```\nx = 1\n```python\n[d](http://d.example)\n```", "all"),  # a fence with an info string closes nothing
    ("```sh\n# no closing fence: code to the end\n[e](http://e.example)", "raw"),
    ("Text.\n\n   ```\n   [f](http://f.example)\n   ```", "Text.\n\n"),  # 3 spaces: a fence
    # 4 spaces outside a list: indented code holding a ``` line, fenced with tildes (not a ``` fence of its own)
    ("Text.\n\n    ```\n    [g](http://g.example)", "Text.\n\n~~~~\n```\n[g](http://g.example)\n~~~~"),
])
def test_fenced_code_follows_commonmark_and_stays_uncleaned(body, code):
    # the same fenced_blocks as the chunker and the answerer read (openbook.fences); prose after is cleaned
    text = clean_markdown(body + "\n\nSee [the guide](http://guide.example).")
    if code == "raw":  # an unclosed block runs to the end
        assert text == body + "\n\nSee [the guide](http://guide.example)."
    elif code == "all":
        assert text == body + "\n\nSee the guide."
    elif code.endswith("\n\n"):
        assert text == code + body[len(code):] + "\n\nSee the guide."
    else:
        assert text == code + "\n\nSee the guide."


def test_a_fence_under_a_list_item_is_code():
    body = "- Install:\n\n    ```sh\n    pip install [x](http://x.example)\n    ```\n- Then [log in](http://l.example)."
    assert clean_markdown(body) == body.replace("[log in](http://l.example)", "log in")


def test_site_generator_markup_is_not_text(tmp_path):
    """Jekyll's Liquid tags and Kramdown's attribute lists are markup a reader never sees: dropped outside code,
    a highlight block becomes fenced code, and code keeps them as written; a Liquid output stands for a value
    the page shows and stays, except inside a link's target."""
    path = tmp_path / "install.md"
    path.write_text(
        "# Install\n{: .no_toc }\n\nRun the installer first.\n{: .note}\n\n{% include toc.html %}\n"
        "Visit {{ site.baseurl }}/docs. See [the guide]({{ site.baseurl }}/guide). The *flag*{: .cls} matters.\n\n{% comment %}\nDraft text.\n"
        "{% endcomment %}\n{::comment}\nhidden\n{:/comment}\n\n{% highlight python %}\nprint('{{ x }}')\n"
        "{% endhighlight %}\n\nUse `{{ var }}` in templates.\n",
        encoding="utf-8",
    )
    text = load_file(path, "install.md")[0].text
    assert "{:" not in text.replace("`{{ var }}`", "") and "{%" not in text and "Draft" not in text
    assert "hidden" not in text and "Visit {{ site.baseurl }}/docs. See the guide. The" in text, text
    assert "Run the installer first." in text and "The *flag* matters." in text
    assert "```python\nprint('{{ x }}')\n```" in text
    assert "`{{ var }}`" in text


def test_liquid_inside_emphasis_leaves_no_empty_delimiters(tmp_path):
    path = tmp_path / "site.md"
    path.write_text(
        "# Welcome\n\nThis is **{{ site.title }}**, the handbook. Run __{% include cmd.html %}__ first.\n\n"
        "**Note {{ page.version }}**: the limit is *{{ site.limit }} per day*.\n\n**{% include name.html %}**\n\n"
        "Ruby version {{ site.ruby_version }} or higher. *Note {% include tip.html %}* here.\n\n"
        "Plain **bold** stays.\n", encoding="utf-8")
    text = load_file(path, "site.md")[0].text
    assert "____" not in text and "**Note {{ page.version }}**:" in text, text
    flat = " ".join(text.split())
    assert "This is **{{ site.title }}**, the handbook. Run first." in flat, text  # (a dropped tag's spaces)
    assert "*{{ site.limit }} per day*" in text and "Plain **bold** stays." in text, text
    assert not any(line.strip("*_ ") == "" and line.strip() for line in text.splitlines()), text
    assert "Ruby version {{ site.ruby_version }} or higher. *Note* here." in flat, text


def test_control_characters_leave_the_title_and_the_heading_path_alike(tmp_path):
    # the title's white space was joined before the control characters were dropped: "Zeta\x1f\x07 heading" became
    # the title "Zeta  heading" beside the section "Zeta heading"
    from openbook.chunking import chunk_document

    path = tmp_path / "zeta.md"
    path.write_text("# Zeta\x1f\x07 heading\n\nThe body text talks about zebras at length.\n\n## Sub\x1f\n\nMore words "
                    "about the giraffes in the zoo.\n", encoding="utf-8")
    doc = load_file(path, "zeta.md")[0]
    assert doc.title == "Zeta heading" and "\x1f" not in doc.text and "\x07" not in doc.text
    chunks = chunk_document(doc)
    assert {c.headings for c in chunks} <= {("Zeta heading",), ("Zeta heading", "Sub")}
    assert all(c.headings[0] == doc.title for c in chunks)
    assert not any(ch in c.text for c in chunks for ch in "\x1f\x07")
