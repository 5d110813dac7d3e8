import pytest

from openbook.dates import iso_date
from openbook.errors import QueryError
from openbook.store.filters import document_passes, parse_where, visible

META = {"updated": "2024-05-01", "author": "Ana", "tags": ["hr", "policy"], "version": "10", "acl": ["finance"]}


@pytest.mark.parametrize("expr,ok", [
    ("updated>=2024-01-01", True), ("updated>2024-05-01", False), ("updated<=2024-05-01", True),
    ("updated<2024-12-31", True), ("author=Ana", True), ("author=ana", True), ("author!=Ana", False),
    ("tags in [a,hr]", True), ("tags in [x,y]", False), ("tags=policy", True), ("tags not in [x]", True),
    ("version>9", True),  # numbers compare as numbers, not as text ("10" < "9" as text)
    ("missing=1", False), ("missing in [1]", False), ("missing>1", False),  # positive: field required
    ("missing!=1", True), ("missing not in [1, 2]", True),  # negative: a missing field matches (SQL IS NULL OR)
    ("AUTHOR=ana", True),  # field names match case-insensitively when no key has the exact spelling
])
def test_clauses(expr, ok):
    assert parse_where(expr).matches(META) is ok


@pytest.mark.parametrize("value", [None, [], ""])
def test_null_and_empty_values_count_as_missing_for_negative_operators(value):
    meta = {"status": value}
    assert parse_where("status!=archived").matches(meta)
    assert parse_where("status not in [archived]").matches(meta)
    assert not parse_where("status=archived").matches(meta)


def test_negative_operators_on_lists_and_present_fields():
    assert not parse_where("status!=archived").matches({"status": "Archived"})
    assert parse_where("status!=archived").matches({"status": "current"})
    assert not parse_where("tags!=hr").matches(META)  # some element equals: not "!="
    assert not parse_where("tags not in [policy]").matches(META)


def test_values_compare_in_nfc():
    decomposed, composed = "Jose\u0301", "Jos\u00e9"
    assert parse_where(f"author={decomposed}").matches({"author": composed})
    assert parse_where(f"author={composed}").matches({"author": decomposed})
    assert parse_where(f"doc_id in [notes/{decomposed}.md]").matches({"doc_id": f"notes/{composed}.md"})


def test_dates_compare_as_dates_not_text():
    with pytest.raises(QueryError, match="YYYY-MM-DD"):  # not an ISO date: said, not silently compared as text
        parse_where("updated>=2024-1-1")
    assert parse_where("updated>=2024-04-30").matches({"updated": "2024-05-01T10:00:00"})


def test_a_filter_reads_a_date_as_the_loaders_do():
    # one ISO reading (dates.iso_value) for the loaders and the filter: a value iso_date reads as 1 May is
    # 1 May to the filter too, whatever whitespace parts it from its time (before, a tab made it text: "later")
    stored = "2024-05-01\t10:00"
    assert iso_date(stored) == "2024-05-01"
    assert parse_where("updated<=2024-05-01").matches({"updated": stored})
    assert not parse_where("updated>2024-05-01").matches({"updated": stored})


@pytest.mark.parametrize("bad", ["", "author", "=x", "tags in a,b", "tags in []", "updated>>2024",
                                 "updated>=notadate"])
def test_bad_expressions(bad):
    with pytest.raises(QueryError):
        parse_where(bad)


def test_access_roles():
    assert visible({}, []) and visible({"acl": []}, [])
    assert not visible({"acl": ["finance"]}, [])
    assert not visible({"acl": ["finance"]}, ["staff"])
    assert visible({"acl": ["finance"]}, ["staff", "Finance"])
    assert not document_passes(META, [parse_where("author=Ana")], ["staff"])
    assert document_passes(META, [parse_where("author=Ana")], ["finance"])


def test_snippet_window_holds_the_matches():
    from openbook.index.analyzer import Analyzer
    from openbook.retrieve.snippets import highlight

    text = "word " * 50 + "The client says error E-2043. I already tried. " + "tail " * 60
    snip = highlight(text, {"error", "e-2043"}, Analyzer(), width=20)
    assert "**error**" in snip and "**E-2043**." in snip and snip.startswith("…") and snip.endswith("…")


def test_a_highlight_leaves_the_punctuation_around_a_word_outside_its_marks():
    from openbook.index.analyzer import Analyzer
    from openbook.retrieve.snippets import highlight

    analyzer = Analyzer()
    snip = highlight('Install Jekyll. Then run ("jekyll serve") or "bundle exec jekyll".',
                     set(analyzer.analyze("jekyll")), analyzer)
    assert snip == 'Install **Jekyll**. Then run ("**jekyll** serve") or "bundle exec **jekyll**".', snip
