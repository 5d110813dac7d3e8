"""Tests for openbook.fences: CommonMark's fenced code block rules (0.31.2, 4.5), on small hand-written texts."""

from __future__ import annotations

import random

import pytest

from openbook.fences import FencedBlock, fence_for, fenced_blocks


def blocks(text: str) -> list[tuple[int, int, str, bool]]:
    return [(b.start, b.end, b.info, b.closed) for b in fenced_blocks(text.split("\n"))]


def test_a_block_runs_from_its_opening_to_its_closing_fence() -> None:
    assert blocks("Run:\n\n```sh\npip install x\n```\nDone.") == [(2, 5, "sh", True)]
    assert fenced_blocks("a\n```\nb\n```".split("\n"))[0].body == range(2, 3)


def test_a_shorter_fence_inside_a_longer_one_is_code() -> None:
    text = "````markdown\nExample:\n```toml\nport = 1\n```\n````\nafter"
    assert blocks(text) == [(0, 6, "markdown", True)]


def test_a_longer_closing_fence_closes() -> None:
    assert blocks("```\ncode\n`````\nafter") == [(0, 3, "", True)]


def test_tilde_and_backtick_fences_close_only_their_own_kind() -> None:
    assert blocks("~~~ toml\n```\nport = 1\n~~~~\nafter") == [(0, 4, "toml", True)]
    assert blocks("```\n~~~\ncode\n```") == [(0, 4, "", True)]


def test_a_fence_line_with_an_info_string_does_not_close() -> None:
    assert blocks("```\ncode\n```python\nmore\n```\nafter") == [(0, 5, "", True)]


@pytest.mark.parametrize("indent", ["", " ", "  ", "   "])
def test_up_to_three_spaces_of_indentation_open_and_close(indent: str) -> None:
    assert blocks(f"{indent}```\ncode\n{indent}```") == [(0, 3, "", True)]


@pytest.mark.parametrize("indent", ["    ", "\t", "  \t"])
def test_four_columns_of_indentation_are_no_fence(indent: str) -> None:
    assert blocks(f"Text.\n\n{indent}```\n# Heading\n{indent}```") == []
    # (nor do they close one: the block stays open to the end)
    assert blocks(f"```\ncode\n{indent}```\n# still code") == [(0, 4, "", False)]


def test_an_unclosed_block_runs_to_the_end() -> None:
    assert blocks("Intro.\n\n~~~\n# not a heading\n\nstill code") == [(2, 6, "", False)]


def test_a_backtick_info_string_holding_a_backtick_is_no_fence() -> None:
    assert blocks("```a`b\ncode\n```\nx") == [(2, 4, "", False)]  # the line is inline code; the last fence opens
    assert blocks("~~~ a`b\ncode\n~~~") == [(0, 3, "a`b", True)]  # tildes may


def test_fewer_than_three_marks_or_mixed_marks_are_no_fence() -> None:
    assert blocks("``\ncode\n``") == []
    assert blocks("`~`\n~`~") == []


def test_a_fence_under_a_list_item_counts_from_the_item_content() -> None:
    text = "- Install:\n\n    ```sh\n    # fetch\n    pip install x\n    ```\n- Start."
    assert blocks(text) == [(2, 6, "sh", True)]
    assert blocks("1. Step one\n   1. Sub-step\n\n      ~~~\n      code\n      ~~~") == [(3, 6, "", True)]


def test_a_block_in_a_list_item_ends_with_the_item() -> None:
    text = "1. Step:\n\n   ```\n   code\n\nParagraph after the list.\n```"
    assert blocks(text) == [(2, 5, "", False), (6, 7, "", False)]


def test_the_same_blocks_from_windows_line_ends() -> None:
    assert blocks("```sh\r\ncode\r\n```  \r\nafter\r") == [(0, 3, "sh", True)]


def test_no_fence_no_block() -> None:
    assert fenced_blocks([]) == []
    assert fenced_blocks(["plain text", "", "# Heading"]) == []


def test_fence_for_picks_a_fence_no_code_line_closes() -> None:
    assert fence_for(["pip install x"]) == "```"
    assert fence_for(["```", "x"]) == "~~~~"
    assert fence_for(["~~~~~~", "x"]) == "~~~~~~~"
    for code in (["```"], ["~~~~"], ["~~~~~~~~ "], ["a", "````", "~~~~~"]):
        fence = fence_for(code)
        assert fenced_blocks([fence, *code, fence]) == [FencedBlock(0, len(code) + 2, "", True)]


# Lines that the rules above combine in: fences of both kinds and lengths, info strings, indentation, list items
# (bullet, ordered, empty, with 5+ spaces), thematic breaks and setext underlines, headings, paragraph text.
_LINES = ["```", "````", "~~~", "~~~~", "```py", "``` x", "```a`b", "~~~ a`b", "``", "text", "# head", "", "code x",
          "   ```", "    ```", "  ~~~", "\t```", "```  ", "```python", "* * *", "- - -", "---", "-", "1.", "2) two",
          "+ plus", "10. ten", "-\tx", "  \t```", "1.      five", "- item", "1. step", "  - sub", "  ```",
          "     ```", "      ```", "  text", "   text"]


def test_the_same_blocks_as_a_commonmark_parser() -> None:
    # markdown-it-py (CommonMark 0.31.2) run on the joined text, on 3,000 random texts of up to 14 lines: the lines
    # fenced_blocks gives from the one parse (blocks.parse_blocks) are the ones the parser's own tokens name
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark")
    rng = random.Random(7)
    for _ in range(3000):
        lines = [rng.choice(_LINES) for _ in range(rng.randint(1, 14))]
        while lines and not lines[-1]:
            lines.pop()  # (markdown-it drops a last blank line; an open block here runs to the end either way)
        expected = [tuple(t.map) for t in md.parse("\n".join(lines)) if t.type == "fence"]
        assert [(b.start, b.end) for b in fenced_blocks(lines)] == expected, lines


def test_a_fence_in_a_block_quote_is_no_fence() -> None:
    assert blocks("> ```\n> # quoted\n> ```\n\n```\ncode\n```") == [(4, 7, "", True)]


def test_a_carriage_return_inside_a_line_ends_no_line() -> None:
    assert blocks("a\rb\n\n```\nx\ry\n```") == [(2, 5, "", True)]


def test_a_fence_line_inside_an_html_block_is_html() -> None:
    # CommonMark 4.6: a <div> line opens an HTML block that runs to the next blank line
    assert blocks("<div>\n```\n# code?\n```\n</div>\n\n```\ncode\n```") == [(6, 9, "", True)]
