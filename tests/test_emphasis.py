"""openbook.emphasis: Markdown emphasis stripped only where CommonMark renders emphasis, checked against
markdown-it-py (a CommonMark parser): the text it keeps is the text ``strip_emphasis`` keeps."""

from __future__ import annotations

import random

import pytest

from openbook.emphasis import strip_emphasis

CASES = [
    ("**Standard limit:** 600 requests per minute", "Standard limit: 600 requests per minute"),
    ("Call `__post_init__()` after `__init__`.", "Call `__post_init__()` after `__init__`."),
    ("The file ``a__b__c`` and `x**y**`", "The file ``a__b__c`` and `x**y**`"),
    ("Use snake_case_name and a__b__c here.", "Use snake_case_name and a__b__c here."),
    ("2 * 3 * 4 and 5*6", "2 * 3 * 4 and 5*6"),
    ("This is *very* _important_ and __bold__.", "This is very important and bold."),
    ("***both*** and *a **b** c*", "both and a b c"),
    ("**unclosed and \\*\\*escaped\\*\\*", "**unclosed and \\*\\*escaped\\*\\*"),
    ("**foo*", "*foo"),
    ("See <https://example.org/a__b__/c> now", "See <https://example.org/a__b__/c> now"),
    # CommonMark reads bare dunder words as strong emphasis: a Markdown author writes them in backticks
    ("__post_init__()", "post_init()"),
]


@pytest.mark.parametrize("text, want", CASES)
def test_strip_emphasis(text: str, want: str) -> None:
    assert strip_emphasis(text) == want


def test_blocks_are_read_apart_and_code_is_kept() -> None:
    text = ("# **Title**\n\n- **one** item *a\n- b* item\n\n| **h** | c_d |\n| --- | --- |\n| *x | y* |\n\n"
            "```python\nx = a**b**c  # __doc__\n```\nA **b\nc** d")
    assert strip_emphasis(text) == ("# Title\n\n- one item *a\n- b* item\n\n| h | c_d |\n| --- | --- |\n"
                                    "| *x | y* |\n\n```python\nx = a**b**c  # __doc__\n```\nA b\nc d")


def _kept_by_markdown_it(md, text: str) -> str:
    """The characters of ``text`` that markdown-it keeps as text: every token but the emphasis ones, escapes as
    written."""
    out = []
    for tok in md.parseInline(text)[0].children:
        if tok.type == "text":
            out.append(tok.content)
        elif tok.type == "text_special":  # a backslash escape, kept as written
            out.append(tok.markup)
        elif tok.type == "softbreak":
            out.append("\n")
        elif tok.type == "code_inline":
            out.append(f"{tok.markup}{tok.content}{tok.markup}")
        elif tok.type not in ("em_open", "em_close", "strong_open", "strong_close"):
            raise AssertionError(tok.type)
    return "".join(out)


def test_agrees_with_markdown_it_on_random_texts() -> None:
    markdown_it = pytest.importorskip("markdown_it", reason="the test extras install it: pip install -e '.[test]'")
    md = markdown_it.MarkdownIt("commonmark").disable("text_join")
    rng = random.Random(7)
    pieces = ["*", "**", "***", "_", "__", "a", "b", "é", "1", " ", ".", "(", ")", "-", "!", "\\*", "\\_", "`x`"]
    checked = 0
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))).strip()
        if not text or text[0] in "-*+" and (len(text) == 1 or text[1] == " ") or text.endswith("\\"):
            continue  # a list item's marker, or a line ending in a hard break: not inline text
        assert strip_emphasis(text) == _kept_by_markdown_it(md, text), text
        checked += 1
    assert checked > 15000
