"""Property tests: every loader, fed arbitrary Unicode text or bytes, returns documents or raises IngestError.

Nothing else may escape a loader (a batch reports an IngestError per file and goes on). Texts mix arbitrary
code points (surrogates, combining marks, format characters, punctuation runs) with the markup each loader
looks for (front-matter fences, tags, roff macros, table pipes); bytes test the binary formats.
"""

import os
import tempfile
from pathlib import Path

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openbook.errors import IngestError
from openbook.ingest import load_file

TEXT_SUFFIXES = [".md", ".txt", ".html", ".csv", ".tsv", ".rst", ".1", ".jsonl"]
BINARY_SUFFIXES = [".pdf", ".docx", ".pptx", ".epub", ".md.gz"]
MARKUP = [
    "---\n", "+++\n", "{\n", "}\n", "% ", "...\n", "acl: ", "ACL = ", "title: ", "\n\n", "|", " | --- |\n", "<br>",
    "<p>", "</p>", "<main>", "<pre>", "<table><tr><td>", "```\n", "# ", "====\n", ".. ", ":Author: ", ".TH ",
    ".SH ", ".TS\n", ".TE\n", "\\f", "\\(", ".nf\n", "<!--", "！！！", "\u0301", "\u200b", "\ufeff", "\x00",
    '{"_id": "1", "text": ', "}\n", "- ", "1. ",
]
SETTINGS = settings(max_examples=int(os.environ.get("OPENBOOK_PROPERTY_EXAMPLES", "25")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
texts = st.lists(st.one_of(st.text(max_size=40), st.sampled_from(MARKUP)), max_size=25).map("".join)


def _load(suffix: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"doc{suffix}"
        path.write_bytes(data)
        try:
            docs = load_file(path, path.name)
        except IngestError as exc:
            assert "\n" not in str(exc)
            return
        for doc in docs:
            assert isinstance(doc.text, str) and isinstance(doc.title, str)
            assert all(0 <= p <= len(doc.text) for p in doc.pages)


@pytest.mark.parametrize("suffix", TEXT_SUFFIXES)
@SETTINGS
@given(text=texts)
def test_text_loaders_only_raise_ingest_error(suffix, text):
    _load(suffix, text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("suffix", BINARY_SUFFIXES)
@SETTINGS
@given(data=st.binary(max_size=300), prefix=st.sampled_from(
    [b"", b"%PDF-1.4\n", b"PK\x03\x04", b"\x1f\x8b\x08\x00"]))
def test_binary_loaders_only_raise_ingest_error(suffix, data, prefix):
    _load(suffix, prefix + data)
