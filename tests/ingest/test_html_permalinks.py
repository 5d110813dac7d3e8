"""The HTML loader drops documentation generators' permalink marks (Sphinx's ``¶`` headerlinks, MkDocs',
VitePress', Docusaurus' anchors) and keeps every same-page link that has words, and inline code inside its
sentence."""

from __future__ import annotations

from pathlib import Path

from openbook.ingest import load_file

SPHINX_PAGE = Path(__file__).resolve().parents[1] / "data" / "sphinx" / "json.html"


def test_a_sphinx_page_loses_its_permalink_marks() -> None:
    doc = load_file(SPHINX_PAGE, "json.html")[0]
    lines = doc.text.split("\n")
    assert "# json — JSON encoder and decoder" in lines
    assert "## Basic Usage" in lines and "## Encoders and Decoders" in lines and "### Command line" in lines
    assert "- json.dump(obj, fp): Serialize obj as a JSON formatted stream to fp." in doc.text
    assert "Conversion table" in lines
    assert "The json.tool module is run with the python -m json.tool command." in lines
    assert "See Encoders and Decoders for the classes." in lines  # a same-page link with words stays
    assert not {"¶", "🔗", "\u200b"} & set(doc.text)
    assert "A data class may define __post_init__() to check its fields after the JSON decoder has filled them in." \
        in lines


def test_a_mark_that_is_content_stays(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<html><body><main><h1>C# basics</h1><p>Footnote<a href=\"#fn1\">1</a> and section sign "
        "<a href=\"/law\">§</a> 12.</p><h2>Part two<a class=\"headerlink\" href=\"#two\">¶</a></h2>"
        "<p>Long enough text to be the main content of this small page, with <code>len</code>() inline.</p>"
        "</main></body></html>", encoding="utf-8")
    doc = load_file(page, "page.html")[0]
    assert doc.text.split("\n")[0] == "# C# basics"
    assert "Footnote1 and section sign § 12." in doc.text  # a link elsewhere, or with a digit, is content
    assert "## Part two" in doc.text.split("\n")
    assert "with len() inline." in doc.text
