"""Score HTML main-content extraction against Mozilla Readability's expected output.

Run: ``PYTHONPATH=src python3 tests/ingest/ingest_html_quality.py [--split] [--choose] [strategy ...]``
(strategies: ``openbook.ingest.html.STRATEGIES``; default all of them). Prints per-page and macro-averaged token
precision / recall / F1 of the extracted text against the text of ``<name>.expected.html``. Tokens are
lower-cased word characters; each CJK character is one token; the overlap is a bag-of-words (multiset)
intersection.

``--split`` adds the macro figures on the two halves of the pages (``split``): the tuning half, on which
settings are chosen, and the held-out half, on which they are reported. ``--choose`` sweeps ``min_share``
(``choose_extraction``) of ``auto`` and ``auto-core`` (``PAIRS``) over 0, 0.05, ..., 1 and prints each value's
macro F1 on both halves and the value chosen on the tuning half: the middle of those that give it its best F1;
then the leave-one-out figures (each page scored with the value chosen on the other pages).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from lxml import html as lxml_html

from openbook.ingest import html as html_loader
from openbook.ingest._common import read_text
from openbook.ingest.html import extract_main_text, parse_html

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
SAMPLES = SHARED / "samples" / "html"
EXPECTED = SHARED / "samples" / "html_expected"
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)
GRID = [i / 20 for i in range(21)]


def tokens(text: str) -> Counter[str]:
    """Bag of lower-cased tokens; CJK characters one token each."""
    return Counter(t.lower() for t in _TOKEN.findall(text))


def expected_text(name: str) -> str:
    """Readability's expected main content of sample ``name`` as plain text."""
    root = lxml_html.fromstring(read_text(EXPECTED / f"{name}.expected.html"))
    return root.text_content()


def extracted(name: str, strategy: str = "auto") -> str:
    """The main text of sample ``name`` by ``strategy``."""
    return extract_main_text(parse_html(read_text(SAMPLES / f"{name}.html")), strategy)


def prf(got: str, name: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of the text ``got`` vs Readability's expected text of sample ``name``."""
    have, want = tokens(got), tokens(expected_text(name))
    overlap = sum((have & want).values())
    p = overlap / max(1, sum(have.values()))
    r = overlap / max(1, sum(want.values()))
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score(name: str, strategy: str = "auto") -> tuple[float, float, float]:
    """(precision, recall, F1) of the extracted text of sample ``name`` vs Readability's."""
    return prf(extracted(name, strategy), name)


def sample_names() -> list[str]:
    return sorted(p.stem for p in SAMPLES.glob("*.html") if (EXPECTED / f"{p.stem}.expected.html").exists())


def split(names: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(tuning half, held-out half) of the sample names: sorted by name, even positions (0, 2, ...) tune, odd
    positions are held out. The rule reads only the names, never a page or a score."""
    names = sorted(names or sample_names())
    return names[0::2], names[1::2]


def _mean(rows: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return tuple(sum(x[i] for x in rows) / len(rows) for i in range(3))  # type: ignore[return-value]


def macro(strategy: str, names: list[str] | None = None, verbose: bool = False) -> tuple[float, float, float]:
    """Macro-averaged (precision, recall, F1) over the samples."""
    rows = []
    for name in names or sample_names():
        p, r, f = score(name, strategy)
        rows.append((p, r, f))
        if verbose:
            print(f"  {name:28s} P={p:.3f} R={r:.3f} F1={f:.3f}")
    return _mean(rows)


PAIRS = {"auto": ("readability", "trafilatura"), "auto-core": ("trafilatura-recall", "trafilatura")}
"""The (first, check) extractions that ``choose_extraction`` picks between, per strategy."""


def _pair_texts(strategy: str, names: list[str]) -> dict[str, tuple[str, str]]:
    first, check = PAIRS[strategy]
    return {n: (extracted(n, first), extracted(n, check)) for n in names}


def _pair_f1(texts: dict[str, tuple[str, str]], share: float, names: list[str]) -> float:
    return _mean([prf(html_loader.choose_extraction([texts[n][0]], [texts[n][1]], share)[0], n)
                  for n in names])[2]


def _middle_of_best(texts: dict[str, tuple[str, str]], names: list[str]) -> float:
    f1 = {share: round(_pair_f1(texts, share, names), 6) for share in GRID}
    top = [share for share in GRID if f1[share] == max(f1.values())]
    return top[len(top) // 2]


def choose_min_share(strategy: str = "auto", names: list[str] | None = None,
                     ) -> tuple[float, dict[float, tuple[float, float]]]:
    """``min_share`` for ``strategy``'s pair (``PAIRS``) chosen on the tuning half: the middle of the grid values
    with the best macro F1 there; also {value: (tuning-half F1, held-out F1)}."""
    tune, held = split(names)
    texts = _pair_texts(strategy, tune + held)
    sweep = {share: (_pair_f1(texts, share, tune), _pair_f1(texts, share, held)) for share in GRID}
    return _middle_of_best(texts, tune), sweep


def leave_one_out(strategy: str = "auto", names: list[str] | None = None) -> tuple[float, float, float]:
    """Macro (P, R, F1) of ``strategy``'s pair where each page's ``min_share`` is chosen (as
    ``choose_min_share`` does) on all the other pages."""
    names = sorted(names or sample_names())
    texts = _pair_texts(strategy, names)
    rows = []
    for i, name in enumerate(names):
        share = _middle_of_best(texts, names[:i] + names[i + 1:])
        rows.append(prf(html_loader.choose_extraction([texts[name][0]], [texts[name][1]], share)[0], name))
    return _mean(rows)


if __name__ == "__main__":
    args = sys.argv[1:]
    with_split, choose = "--split" in args, "--choose" in args
    strategies = [a for a in args if not a.startswith("--")] or list(getattr(html_loader, "STRATEGIES", ()))
    tune, held = split()
    for strategy in strategies:
        print(strategy)
        p, r, f = macro(strategy, verbose=True)
        line = f"{strategy}: macro P={p:.3f} R={r:.3f} F1={f:.3f} over {len(sample_names())} pages"
        if with_split:
            for label, half in (("tuning", tune), ("held-out", held)):
                p, r, f = macro(strategy, half)
                line += f"; {label} half ({len(half)}) P={p:.3f} R={r:.3f} F1={f:.3f}"
        print(line)
    if choose:
        for strategy, (first, check) in PAIRS.items():
            chosen, sweep = choose_min_share(strategy)
            print(f"{strategy}: {first} checked by {check}")
            for share, (f_tune, f_held) in sweep.items():
                print(f"  min_share={share:.2f} tuning F1={f_tune:.3f} held-out F1={f_held:.3f}")
            print(f"{strategy}: min_share chosen on the tuning half: {chosen:.2f} "
                  f"(the loader's MIN_SHARE: {html_loader.MIN_SHARE})")
            p, r, f = leave_one_out(strategy)
            print(f"{strategy}: leave-one-out (min_share chosen on the other pages) P={p:.3f} R={r:.3f} F1={f:.3f}")
