"""A question naming a command-line option (or a manual's keyword) finds the chunk holding its own entry.

Real stores of hand-made manuals in the layout of ``man CMD | col -b`` (options indented, descriptions indented
deeper), long enough to be cut into several chunks, with the option letter mentioned in passing all over.
"""

from __future__ import annotations

import pytest

from openbook.question import command_options
from openbook.retrieve.options import entry_kind, keyword_entries
from openbook.types import Hit
from openbook.retrieve.options import promote_entries, promote_keyword_entries
from tests.helpers.stores import bm25_engine

FILLER = ("This paragraph explains how the program reads its input files and how each line of output is formed, "
          "so that scripts which call it behave the same way on every system where it is installed.")


def _entry(option: str, text: str) -> str:
    return f"       {option}\n              {text}\n"


def _grep_manual() -> str:
    mentions = "\n".join(
        f"       {FILLER} When the -v or --invert-match option is also used, rule {i} applies to non-matching "
        f"lines instead, and -v combines with -c, -l and -o as described above.\n" for i in range(6))
    entries = [
        ("-V, --version", "Output the version number of grep and exit."),
        ("-E, --extended-regexp", "Interpret PATTERNS as extended regular expressions."),
        ("-F, --fixed-strings", "Interpret PATTERNS as fixed strings, not regular expressions."),
        ("-i, --ignore-case", "Ignore case distinctions in patterns and input data."),
        ("-v, --invert-match", "Invert the sense of matching, to select non-matching lines."),
        ("-w, --word-regexp", "Select only those lines containing matches that form whole words."),
        ("-c, --count", "Suppress normal output; instead print a count of matching lines for each input file."),
        ("-l, --files-with-matches", "Suppress normal output; instead print the name of each input file."),
        ("-m NUM, --max-count=NUM", "Stop reading a file after NUM matching lines."),
    ]
    body = "".join(_entry(o, f"{t} {FILLER}") for o, t in entries)
    return (f"GREP(1)                    User Commands                    GREP(1)\n\nNAME\n       grep - print lines "
            f"that match patterns\n\nDESCRIPTION\n{mentions}\nOPTIONS\n{body}\nEXIT STATUS\n{mentions}")


def _ls_manual() -> str:
    entries = [
        ("-a, --all", "do not ignore entries starting with ."),
        ("-A, --almost-all", "do not list implied . and .."),
        ("-l", "use a long listing format"),
        ("-r, --reverse", "reverse order while sorting"),
        ("-S", "sort by file size, largest first"),
        ("-t", "sort by time, newest first"),
    ]
    body = "".join(_entry(o, f"{t} {FILLER}") for o, t in entries)
    notes = "\n".join(f"       {FILLER} With -l and -a the listing shows a long format of all entries, note {i}.\n"
                      for i in range(6))
    return (f"LS(1)                    User Commands                    LS(1)\n\nNAME\n       ls - list directory "
            f"contents\n\nDESCRIPTION\n{notes}\nOPTIONS\n{body}\nNOTES\n{notes}")


def _config_manual() -> str:
    words = [
        ("ForwardAgent", "Specifies whether the connection to the authentication agent will be forwarded."),
        ("GatewayPorts", "Specifies whether remote hosts are allowed to connect to local forwarded ports. By "
                         "default, ssh binds local port forwardings to the loopback address, and every port "
                         "forwarding uses the port given on the command line."),
        ("HostName", "Specifies the real host name to log into."),
        ("LocalForward", "Specifies that a TCP port on the local machine be forwarded over the secure channel to "
                         "the specified host and port from the remote machine. IPv6 addresses can be specified "
                         "by enclosing addresses in square brackets; the port is required."),
        ("LogLevel", "Gives the verbosity level that is used when logging messages from ssh."),
        ("PasswordAuthentication", "Specifies whether to use password authentication."),
        ("Port", "Specifies the port number to connect on the remote host. The default is 22."),
        ("ProxyCommand", "Specifies the command to use to connect to the server."),
        ("User", "Specifies the user to log in as."),
    ]
    body = "".join(f"     {w}\n             {t} {FILLER}\n\n" for w, t in words)
    return (f"SSH_CONFIG(5)            File Formats Manual            SSH_CONFIG(5)\n\nNAME\n     ssh_config - "
            f"OpenSSH client configuration file\n\nDESCRIPTION\n     {FILLER} The ssh client reads port forwarding "
            f"settings from the command line first; a port given there wins over any port in this file.\n\n"
            f"     The keywords and their meanings are as follows:\n\n{body}")


@pytest.fixture(scope="module")
def manuals(tmp_path_factory):
    engine = bm25_engine(tmp_path_factory.mktemp("manuals"), {
        "grep.txt": _grep_manual(), "ls.txt": _ls_manual(), "ssh_config.txt": _config_manual()})
    yield engine
    engine.close()


def _first(engine, question: str) -> Hit:
    return engine.search(question, 5, mode="bm25")[0]


@pytest.mark.parametrize("question, doc, line", [
    ("What does grep -v do?", "grep.txt", "-v, --invert-match"),
    ("What does grep -V print?", "grep.txt", "-V, --version"),
    ("What does grep --invert-match do?", "grep.txt", "-v, --invert-match"),
    ("What does grep -c do?", "grep.txt", "-c, --count"),
    ("What does ls -a do?", "ls.txt", "-a, --all"),
    ("What does ls -A do?", "ls.txt", "-A, --almost-all"),
    ("What does ls -l do?", "ls.txt", "-l\n"),
    ("In grep, what is -m for?", "grep.txt", "-m NUM, --max-count=NUM"),
])
def test_option_question_finds_its_entry(manuals, question, doc, line):
    hit = _first(manuals, question)
    assert hit.doc_id == doc
    assert f"       {line}" in hit.chunk.text or hit.chunk.text.startswith(line.strip()), hit.chunk.text[:200]
    assert "entry" in hit.legs or "option" in hit.legs


def test_option_entry_first_in_every_mode_and_hops(manuals):
    for hops in (1, 2):
        hits = manuals.search("What does grep -v do?", 3, mode="bm25", hops=hops)
        assert "-v, --invert-match" in hits[0].chunk.text
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_keyword_entry_is_its_documents_first_chunk(manuals):
    hits = manuals.search("Which port does ssh use by default?", 5, mode="bm25")
    assert hits[0].doc_id == "ssh_config.txt"
    assert "Port\n" in hits[0].chunk.text and "The default is 22." in hits[0].chunk.text
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_question_without_options_is_unchanged(manuals):
    hits = manuals.search("How are input files read by the program?", 5, mode="bm25")
    assert all("option" not in h.legs for h in hits)


def test_command_options_as_written():
    assert command_options("What does grep -v do?") == ["-v"]
    assert command_options("tar --exclude or -X, and -X again?") == ["--exclude", "-X"]
    assert command_options("Is an X-ray or e-mail an option? Is state-of-the-art - new?") == []


@pytest.mark.parametrize("text, options, kind", [
    ("       -v, --invert-match\n              Invert the sense", ["-v"], 2),
    ("       -V, --version\n              Output the version", ["-v"], 0),
    ("       -R, -r, --recursive\n              copy directories", ["-r"], 2),
    ("       -e PATTERNS, --regexp=PATTERNS\n              Use PATTERNS", ["--regexp"], 2),
    ("       --exclude=PATTERN\n              Exclude files", ["--exclude"], 2),
    ("     -p port\n             Port to connect to", ["-p"], 2),
    ("     -X      Enables X11 forwarding.", ["-X"], 2),
    ("- `-v`, `--invert-match`: invert the sense of matching", ["-v"], 2),
    ("       -z)  was used and the external compressor failed", ["-z"], 1),
    ("              -mtime 0, a file will have to have a modification", ["-mtime"], 1),
    ("       When the -v option is also used, grep stops", ["-v"], 0),
])
def test_entry_kind(text, options, kind):
    assert entry_kind(text, options) == kind


def test_keyword_entries():
    text = ("     Port    Specifies the port number.\n\n     ProxyCommand\n             Specifies the command.\n"
            "     Do  not  read the  working directory\n\n     Note that the port\n")
    assert keyword_entries(text) == ["Port", "ProxyCommand"]


def test_promote_without_entries_keeps_hits():
    hits = [Hit("a", "d", 2.0), Hit("b", "d", 1.0)]
    assert promote_entries("What does grep -v do?", hits, str.split) == hits
    assert promote_keyword_entries("Which port?", hits, 2, str.split) == hits
