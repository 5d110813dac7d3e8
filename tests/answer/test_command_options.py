"""A question naming a command-line option as written ("grep -V") is answered by the manual's entry for that
option, not by a sentence naming another option that reads alike once the analyzer drops dash and case ("-v"),
nor one mentioning it in passing. Real analyzer, real BM25 store on disk."""

from __future__ import annotations

import pytest

from openbook.question import command_options

from helpers.stores import bm25_engine

DOCS = {
    "finder.md": "# finder(1)\n\n## Options\n\n"
                 "- -v, --invert-match: Invert the sense of matching, to select non-matching lines.\n"
                 "- -V, --version: Output the version number of finder and exit.\n"
                 "- -c, --count: Print a count of matching lines. With the -v option, count non-matching lines.\n"
                 "- -a, --all: Search hidden files too.\n",
    "other.md": "# Release notes\n\nVersion 2.1 of finder counts lines faster.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    eng = bm25_engine(tmp_path_factory.mktemp("options"), DOCS)
    yield eng
    eng.close()


def test_options_are_read_as_written():
    assert command_options("What does finder -V do, and --invert-match?") == ["-V", "--invert-match"]
    assert command_options("What does E-2043 mean in the 2012-13 season?") == []  # codes and ranges are no options


@pytest.mark.parametrize("question,entry", [
    ("What does finder -V do?", "Output the version number"),
    ("What does finder -v do?", "Invert the sense of matching"),
])
def test_the_options_own_entry_answers(engine, question, entry):
    answer = engine.ask(question)
    assert not answer.refused
    assert answer.text.split("[")[0].find(entry) >= 0, answer.text


def test_a_manual_entry_is_quoted_with_its_option_dash(tmp_path):
    # the unit reader strips a list bullet's "- " but must keep the dash an option entry opens with
    eng = bm25_engine(tmp_path / "man", {
        "seek.txt": "SEEK(1)\n\nOPTIONS\n\n-n, --line-number\n    Prefix each line of output with its line number.\n\n"
                    "-N, --no-number\n    Do not print line numbers, even when a configuration file asks for them.\n\n"
                    "- Bullet notes: seek reads its configuration from the home folder.\n",
        "other.md": "# Release notes\n\nVersion 3 of seek prints faster.\n"})
    try:
        answer = eng.ask("What does seek -n do?")
        assert not answer.refused, answer.notes
        assert answer.text.startswith("-n, --line-number"), answer.text
    finally:
        eng.close()
