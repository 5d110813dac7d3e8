"""Score HTML main-content extraction against Mozilla Readability's expected output.

Run: ``PYTHONPATH=src python3 tests/ingest/ingest_html_quality.py [strategy ...]`` (strategies: auto, main, trafilatura).
Prints per-page and macro-averaged token precision / recall / F1 of the extracted text against the text of
``<name>.expected.html``. Tokens are lower-cased word characters; each CJK character is one token; the
overlap is a bag-of-words (multiset) intersection.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from lxml import html as lxml_html

from openbook.ingest._common import read_text
from openbook.ingest.html import extract_main_text, parse_html

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
SAMPLES = SHARED / "samples" / "html"
EXPECTED = SHARED / "samples" / "html_expected"
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)


def tokens(text: str) -> Counter[str]:
    """Bag of lower-cased tokens; CJK characters one token each."""
    return Counter(t.lower() for t in _TOKEN.findall(text))


def expected_text(name: str) -> str:
    """Readability's expected main content of sample ``name`` as plain text."""
    root = lxml_html.fromstring(read_text(EXPECTED / f"{name}.expected.html"))
    return root.text_content()


def score(name: str, strategy: str = "auto") -> tuple[float, float, float]:
    """(precision, recall, F1) of the extracted text of sample ``name`` vs Readability's."""
    got = tokens(extract_main_text(parse_html(read_text(SAMPLES / f"{name}.html")), strategy))
    want = tokens(expected_text(name))
    overlap = sum((got & want).values())
    p = overlap / max(1, sum(got.values()))
    r = overlap / max(1, sum(want.values()))
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def sample_names() -> list[str]:
    return sorted(p.stem for p in SAMPLES.glob("*.html") if (EXPECTED / f"{p.stem}.expected.html").exists())


def macro(strategy: str, names: list[str] | None = None, verbose: bool = False) -> tuple[float, float, float]:
    """Macro-averaged (precision, recall, F1) over the samples."""
    rows = []
    for name in names or sample_names():
        p, r, f = score(name, strategy)
        rows.append((p, r, f))
        if verbose:
            print(f"  {name:28s} P={p:.3f} R={r:.3f} F1={f:.3f}")
    n = len(rows)
    return tuple(sum(x[i] for x in rows) / n for i in range(3))  # type: ignore[return-value]


if __name__ == "__main__":
    for strategy in sys.argv[1:] or ["auto", "main", "trafilatura"]:
        print(strategy)
        p, r, f = macro(strategy, verbose=True)
        print(f"{strategy}: macro P={p:.3f} R={r:.3f} F1={f:.3f} over {len(sample_names())} pages")
