import datetime as dt
import json
from pathlib import Path

import pytest

from openbook.ingest._common import iso_date, normalise_metadata, title_from_path


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2024-05-01", "2024-05-01"),
        ("2024-05-01T10:00:00Z", "2024-05-01"),
        (dt.date(2024, 5, 1), "2024-05-01"),
        (dt.datetime(2024, 5, 1, 23, 59), "2024-05-01"),
        ("May 1, 2024", "2024-05-01"),
        ("1 May 2024", "2024-05-01"),
        ("2024/05/01", "2024-05-01"),
        ("2024年5月1日", "2024-05-01"),
        ("2024 年 05 月 01 日", "2024-05-01"),
        ("Fri Oct 31 10:41:31 EDT 2014", "2014-10-31"),  # sqlite3(1)'s .TH date: a zone dateutil does not know
        ("2024-02-30", None),
        ("not a date", None),
        ("", None),
        (None, None),
    ],
)
def test_iso_date(value, expected):
    assert iso_date(value) == expected


def test_normalise_metadata_shapes_and_json():
    meta = normalise_metadata(
        {
            "updated": dt.date(2024, 3, 1),
            "created": "March 2, 2023",
            "tags": "policy",
            "acl": "finance",
            "author": ["Ana", "Bo"],
            "reviewed": {"on": dt.date(2024, 1, 1)},
            "version": "2.0",
            "empty": None,
        }
    )
    assert meta["updated"] == "2024-03-01"
    assert meta["created"] == "2023-03-02"
    assert meta["tags"] == ["policy"]
    assert meta["acl"] == ["finance"]
    assert meta["author"] == "Ana, Bo"
    assert meta["reviewed"] == {"on": "2024-01-01"}
    assert "empty" not in meta
    json.dumps(meta)


def test_updated_falls_back_to_date_and_keeps_unparseable_raw():
    assert normalise_metadata({"date": "2024-06-23 21:56:58 -0700"})["updated"] == "2024-06-23"
    meta = normalise_metadata({"updated": "last spring"})
    assert "updated" not in meta and meta["updated_raw"] == "last spring"


@pytest.mark.parametrize(
    "name, title",
    [
        ("doc-027-support-sla-matrix.csv", "support sla matrix"),
        ("01_intro.md", "intro"),
        ("2024-06-23-jekyll-released.md", "jekyll released"),
        ("5-minute-guide.md", "5 minute guide"),
        ("README.md", "README"),
    ],
)
def test_title_from_path(name, title):
    assert title_from_path(Path(name)) == title


def test_terminal_control_never_reaches_the_stored_text(tmp_path):
    # the CLI prints document text: an OSC sequence set the reader's window title (OSC 52: the clipboard), and on
    # a terminal a CSI one cleared the screen or recoloured an answer
    from openbook.ingest import load_file

    (tmp_path / "a.txt").write_bytes(
        b"The boiler code is 4471.\x1b[2J\x1b]0;PWNED\x07 Ask\x1b]52;c;cHduZWQ=\x1b\\ the janitor.\x1bc\n"
        b"B\x08Bo\x08ol\x08ld, DEL\x7f, bell\x07, SO\x0e gone; tab\tand form feed\x0ckept.\n")
    (tmp_path / "b.md").write_text('---\nauthor: "Ana\\e]0;x\\a"\ntags: ["a\\e[2Jb"]\n---\n'
                                   "# Pump\x1b[31m guide\n\nThe pump runs at 3 bar.\x1b[0m \x93Quoted\x94.\n",
                                   encoding="utf-8")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "T\\u001b]0;x\\u0007", "text": "Hi\\u001b[2J."}\n')
    a = load_file(tmp_path / "a.txt", "a.txt")[0]
    assert "The boiler code is 4471. Ask the janitor." in a.text
    # (a form feed is no terminal control: it is read as a page break, here inside a sentence that runs on)
    assert "Bold, DEL, bell, SO gone; tab\tand form feed\nkept." in a.text and "\x1b" not in a.text
    b = load_file(tmp_path / "b.md", "b.md")[0]
    assert b.title == "Pump guide" and b.text == "# Pump guide\n\nThe pump runs at 3 bar. \u201cQuoted\u201d."
    assert b.metadata["author"] == "Ana" and b.metadata["tags"] == ["ab"]  # YAML's \e is ESC
    (d1,) = load_file(tmp_path / "corpus.jsonl", "corpus.jsonl")
    assert (d1.title, d1.text) == ("T", "Hi.")
