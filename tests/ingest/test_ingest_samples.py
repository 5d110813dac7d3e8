"""Every shared sample file goes through load_file: documents, or an IngestError with a one-line message."""

import pytest

from openbook.errors import IngestError, UnsupportedFormatError
from openbook.ingest import SUPPORTED_SUFFIXES, discover, load_file

from ingest_shared import SAMPLES, need

EXPECTED_FAILURES = {
    "pdf/empty.pdf": "empty",
    "pdf/password-example.pdf": "needs a password",
    "pdf/issue-203-decimalize.pdf": "no text layer (scanned?)",
    "pdf/issue-297-example.pdf": "no text layer (scanned?)",
}


@pytest.mark.slow  # about 50 s: every PDF (layout with pdfplumber included), HTML and Markdown sample
def test_every_sample_loads_or_fails_cleanly():
    found = discover([need(SAMPLES)])
    assert len(found) > 150
    failures = {}
    loaded = 0
    for path, doc_id in found:
        try:
            docs = load_file(path, doc_id)
        except UnsupportedFormatError as exc:
            assert path.suffix.lower() not in SUPPORTED_SUFFIXES
            assert "\n" not in str(exc)
            continue
        except IngestError as exc:
            message = str(exc)
            assert "\n" not in message and str(path) in message
            failures[doc_id] = message
            continue
        loaded += 1
        for doc in docs:
            assert doc.text.strip(), doc_id
            assert doc.source == str(path.resolve())
    assert set(failures) == set(EXPECTED_FAILURES), failures
    for doc_id, reason in EXPECTED_FAILURES.items():
        assert reason in failures[doc_id]
    assert loaded > 100
