import textwrap

import pytest

from openbook.errors import IngestError
from openbook.ingest import load_file
from openbook.ingest.pdf import reflow, strip_headers_footers

from ingest_minipdf import write_layout_pdf, write_pdf
from ingest_shared import SAMPLES, need

PDFS = SAMPLES / "pdf"


def _three_pages(tmp_path):
    return write_pdf(
        tmp_path / "report.pdf",
        [
            [
                "ACME QUARTERLY REPORT",
                "The quick brown fox jumps over the lazy dog and keeps the infor-",
                "mation flowing between the teams of the company in every region.",
                "Page 1 of 3",
            ],
            ["ACME QUARTERLY REPORT", "Second page text that ends with a broken senten-", "Page 2 of 3"],
            ["ACME QUARTERLY REPORT", "ce that continues on page three.", "Final words.", "Page 3 of 3"],
        ],
    )


def test_headers_footers_removed_and_words_rejoined(tmp_path):
    doc = load_file(_three_pages(tmp_path), "report.pdf")[0]
    assert "ACME QUARTERLY REPORT" not in doc.text
    assert "Page" not in doc.text
    assert "information flowing" in doc.text  # hyphenated across a line break
    assert "broken sentence that continues" in doc.text  # hyphenated across a page break
    assert "infor-" not in doc.text
    assert doc.format == "pdf" and doc.metadata["page_count"] == 3


def test_page_offsets(tmp_path):
    doc = load_file(_three_pages(tmp_path), "report.pdf")[0]
    assert len(doc.pages) == 3 and doc.pages[0] == 0
    assert doc.text[doc.pages[1]:].startswith("Second page text")
    assert doc.text[doc.pages[2]:].startswith("that continues on page three.")  # "ce" moved to page 2
    assert doc.page_at(doc.text.index("information")) == 1
    assert doc.page_at(doc.text.index("sentence")) == 2
    assert doc.page_at(doc.text.index("Final words")) == 3


def test_reflow_joins_paragraph_lines():
    lines = [
        "This is a long line of a paragraph that goes on and on until the",
        "margin, and then it continues on the next line until it ends.",
        "Short heading",
        "- a bullet item",
        "",
        "New para.",
    ]
    assert reflow(lines).split("\n\n") == [
        "This is a long line of a paragraph that goes on and on until the margin, and then it continues on "
        "the next line until it ends.",
        "## Short heading",  # a heading of the page's text (a section for the chunker)
        "- a bullet item",
        "New para.",
    ]


def test_reflow_joins_cjk_without_spaces():
    assert reflow(["本文件为差旅政策的中文版本，自二零二四年", "三月一日起施行。"]) == "本文件为差旅政策的中文版本，自二零二四年三月一日起施行。"


def test_running_heads_alternating_odd_even_pages_are_removed():
    pages = [[f"Journal {n}" if n % 2 else "Shift work", f"body text {n}", str(n)] for n in range(1, 7)]
    cleaned = strip_headers_footers(pages)
    assert cleaned == [[f"body text {n}"] for n in range(1, 7)]


def test_copies_of_one_page_keep_their_text():
    # a notice printed on three identical pages: each line recurs at the top and bottom of every page, but it is
    # the pages' own text, not a running head
    page = ["Visitor notice", "All visitors sign in at the front desk.", "Badges are returned on leaving."]
    assert strip_headers_footers([list(page) for _ in range(3)]) == [page] * 3


def test_identical_pdf_pages_keep_their_text(tmp_path):
    page = ["Visitor notice", "All visitors sign in at the front desk.", "Badges are returned on leaving."]
    doc = load_file(write_pdf(tmp_path / "notice.pdf", [page, page, page]), "notice.pdf")[0]
    assert "All visitors sign in at the front desk" in doc.text and "Visitor notice" in doc.text


@pytest.mark.parametrize(
    "name, reason",
    [
        ("empty.pdf", "empty"),
        ("password-example.pdf", "needs a password"),
        ("issue-203-decimalize.pdf", "no text layer (scanned?)"),
        ("issue-297-example.pdf", "no text layer (scanned?)"),
    ],
)
def test_unreadable_pdfs_fail_with_one_line(name, reason):
    path = need(PDFS / name)
    with pytest.raises(IngestError) as info:
        load_file(path, name)
    message = str(info.value)
    assert reason in message and name in message and "\n" not in message


def test_empty_user_password_pdf_opens():
    doc = load_file(need(PDFS / "pr-138-example.pdf"), "pr-138-example.pdf")[0]
    assert "Home Loan" in doc.text


def test_junk_before_header_still_loads():
    doc = load_file(need(PDFS / "issue-848.pdf"), "issue-848.pdf")[0]
    assert len(doc.pages) == 8 and len(doc.text) > 1000


def test_broken_file_is_malformed(tmp_path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << >>\n%%EOF")
    with pytest.raises(IngestError, match=r"broken\.pdf: malformed PDF: ") as info:
        load_file(path, "broken.pdf")
    assert "\n" not in str(info.value)


def test_compound_hyphens_kept_syllable_breaks_joined(tmp_path):
    path = write_pdf(
        tmp_path / "notes.pdf",
        [[
            "Release notes for the Tallowmere depot and its well-",
            "known loading bay. The docu-",
            "ment explains the follow-",
            "up checks for COVID-",
            "19 and the new Anti-",
            "Corruption rules, and the infor-",
            "mation desk hours.",
        ]],
    )
    text = load_file(path, "notes.pdf")[0].text
    assert "well-known" in text and "follow-up" in text and "Anti-Corruption" in text and "COVID-19" in text
    assert "document" in text and "information" in text


def test_document_spelling_decides_hyphens(tmp_path):
    path = write_pdf(
        tmp_path / "a.pdf",
        [["The e-mail gateway and the co-", "operation team: every e-", "mail is logged by the cooperation desk."]],
    )
    text = load_file(path, "a.pdf")[0].text
    assert "e-mail is logged" in text and "cooperation team" in text


def test_partly_scanned_pdf_warns_per_page(tmp_path):
    path = write_layout_pdf(
        tmp_path / "manual.pdf",
        [[("text", 72, 720, "Kestrel manual, part one: register within thirty days.")], [("image",)], [], [("image",)]],
    )
    doc = load_file(path, "manual.pdf")[0]
    assert "register within thirty days" in doc.text
    assert len(doc.warnings) == 2  # the blank page 3 is not a scan
    assert doc.warnings[0].startswith("page 2 of 4 has no text layer") and "OCR" in doc.warnings[0]
    assert doc.warnings[1].startswith("page 4 of 4")


def test_two_columns_read_in_order(tmp_path):
    left = [f"Left column sentence number {i} about the relay." for i in range(8)]
    right = [f"Right column sentence number {i} about the gateway." for i in range(8)]
    items = [("text", 72, 740, "A Title That Spans The Page Across Both Of The Columns Here")]
    for i, (a, b) in enumerate(zip(left, right)):
        items += [("text", 50, 700 - 14 * i, a), ("text", 330, 700 - 14 * i, b)]
    doc = load_file(write_layout_pdf(tmp_path / "cols.pdf", [items]), "cols.pdf")[0]
    order = [doc.text.index(s) for s in (left[0], left[7], right[0], right[7])]
    assert order == sorted(order), doc.text
    assert doc.text.index("A Title That Spans") < order[0]


_PUMP = ("The primary pump must be checked at the start of every shift and the intake valve must be primed "
         "before each shift begins so that the line never runs dry during the morning load. Operators record "
         "the pressure in the log book and report any reading below the marked range to the duty engineer.")
_BADGE = ("Badge renewals happen every twelve months and the security office sends a reminder four weeks "
          "before the old badge expires. A lost badge is reported the same day, and a temporary pass is issued "
          "at the front desk while the new one is printed, which usually takes two working days.")


def _two_column_rows(width: int, right_x: int, kind: str = "row") -> list[tuple]:
    import textwrap

    left, right = textwrap.wrap(_PUMP, width), textwrap.wrap(_BADGE, width)
    items = [("text", 150, 750, "Plant Notes for the Week and the Month Ahead")]
    for i in range(max(len(left), len(right))):
        parts = [(x, side[i]) for x, side in ((60, left), (right_x, right)) if i < len(side)]
        items.append((kind, 700 - 13 * i, parts))
    return items


@pytest.mark.parametrize("width, right_x, kind", [(50, 330, "row"), (28, 230, "row"), (40, 320, "tjrow"),
                                                  (34, 290, "tjrow"),
                                                  # narrow columns (three or four words a line), the gutter
                                                  # left of or right of the page's middle: pdfminer's boxes
                                                  (20, 200, "row"), (24, 290, "row"), (20, 380, "tjrow"),
                                                  (24, 230, "tjrow")])
def test_two_columns_written_row_by_row_are_read_column_by_column(tmp_path, width, right_x, kind):
    # each row holds a line of both columns in one text object (so pypdf reads across the gutter), or in one
    # string whose kerning jumps the gutter (pdfium gives it as one text segment); at 28 characters the
    # columns are narrow and an empty margin lies right of the right column
    items = _two_column_rows(width, right_x, kind)
    doc = load_file(write_layout_pdf(tmp_path / "notes.pdf", [items]), "notes.pdf")[0]
    flat = " ".join(doc.text.split())
    assert " ".join(_PUMP.split()) in flat and " ".join(_BADGE.split()) in flat, doc.text
    assert flat.index("duty engineer") < flat.index("Badge renewals")


_INTRO = ("This page collects the standing instructions for the plant floor and the front office, and each team "
          "lead reads it at the start of the week so that nobody on the early shift misses a change to the rules. "
          "Questions about any of the notes below go to the duty office, which answers them the same day and "
          "keeps a copy of each answer in the binder beside the door for the next shift to read.")


def _column_block(width: int, right_x: int, *, above: int = 0, below: int = 0, offset: int = 0,
                  pump: str = _PUMP, badge: str = _BADGE) -> list[tuple]:
    """A title, ``above`` lines of a full-width paragraph, two columns written row by row (the right one
    starting ``offset`` rows lower), then ``below`` full-width lines."""
    import textwrap

    items: list[tuple] = [("text", 150, 750, "Plant Notes for the Week and the Month Ahead")]
    y = 720
    for line in textwrap.wrap(_INTRO, 95)[:above]:
        items.append(("text", 60, y, line))
        y -= 13
    y -= 10
    left, right = textwrap.wrap(pump, width), [""] * offset + textwrap.wrap(badge, width)
    for i in range(max(len(left), len(right))):
        parts = [(x, side[i]) for x, side in ((60, left), (right_x, right)) if i < len(side) and side[i]]
        items.append(("row", y - 13 * i, parts))
    y -= 13 * max(len(left), len(right)) + 10
    for line in textwrap.wrap(_INTRO, 95)[:below]:
        items.append(("text", 60, y, line))
        y -= 13
    return items


_BLOCKS = [dict(above=5), dict(below=5), dict(above=3, below=3), dict(offset=3)]  # full-width text around them
_SHORT = dict(pump=_PUMP[:97], badge=_BADGE[:96])  # four lines a column at 28 characters, as a short notice has
_TWO_LINES = dict(pump=_PUMP[:60], badge=_BADGE[:58])  # two lines a column at 30-40 characters, a run-on each


@pytest.mark.parametrize("width, right_x, case", [(w, x, c) for w, x in ((50, 330), (28, 230), (24, 290))
                                                  for c in _BLOCKS] + [(28, 230, _SHORT), (24, 290, _SHORT), (33, 300, _TWO_LINES),
                                                                        (40, 330, _TWO_LINES), (30, 260, _TWO_LINES),
                                                                        (32, 260, {**_TWO_LINES, "offset": 2})])
def test_a_block_of_columns_among_full_width_text_is_read_column_by_column(tmp_path, case, width, right_x):
    pump, badge = case.get("pump", _PUMP), case.get("badge", _BADGE)
    doc = load_file(write_layout_pdf(tmp_path / "notes.pdf", [_column_block(width, right_x, **case)]), "notes.pdf")[0]
    flat = " ".join(doc.text.split())
    assert " ".join(pump.split()) in flat and " ".join(badge.split()) in flat, doc.text
    intro = textwrap.wrap(_INTRO, 95)
    for n, line in ((case.get("above", 0), intro[0]), (case.get("below", 0), intro[0])):
        if n:
            assert line in doc.text


def test_columns_under_a_full_width_paragraph_in_a_real_pdf():
    need(SAMPLES / "pdf" / "issue-463-example.pdf")
    text = " ".join(load_file(SAMPLES / "pdf" / "issue-463-example.pdf", "463.pdf")[0].text.split())
    assert "Header 2.1 In another moment. Down went Alice after it. Header 2.2 Never once considering how" in text
    assert "Header 2.3 The rabbit-hole went straight on like a tunnel for some way" in text
    assert text.index("out again.") < text.index("Header 2.3")


def test_rows_of_an_unruled_table_and_word_spaces_are_not_columns(tmp_path):
    # a page of one column whose lines have a word space near the middle, over a two-column table drawn
    # without ruling lines: neither is a pair of columns, so every line and row is read across
    import textwrap

    items, y = [], 740
    for line in textwrap.wrap(_PUMP + " " + _BADGE, 90):
        items.append(("text", 57, y, line))
        y -= 14
    rows = [("Pump", "Valve"), ("Pump 1", "Valve 1"), ("Pump 2", "Valve 2"), ("Pump 3", "Valve 3")]
    for a, b in rows:
        y -= 16
        items.append(("row", y, [(57, a), (306, b)]))
    doc = load_file(write_layout_pdf(tmp_path / "page.pdf", [items]), "page.pdf")[0]
    flat = " ".join(doc.text.split())
    assert " ".join((_PUMP + " " + _BADGE).split()) in flat, doc.text
    assert "Pump 1 Valve 1 Pump 2 Valve 2" in flat, doc.text


def test_two_rows_of_sentences_side_by_side_are_read_across(tmp_path):
    # two short columns whose lines each end a sentence are not known to be columns (a form, a two-row table):
    # read row by row, as written
    rows = [("The pump is checked daily.", "The valve is set by hand."),
            ("Filters are replaced weekly.", "Badges are renewed yearly.")]
    items = [("text", 150, 750, "Plant Notes for the Week and the Month Ahead")]
    items += [("row", 700 - 13 * i, [(60, a), (330, b)]) for i, (a, b) in enumerate(rows)]
    doc = load_file(write_layout_pdf(tmp_path / "form.pdf", [items]), "form.pdf")[0]
    flat = " ".join(doc.text.split())
    assert "The pump is checked daily. The valve is set by hand. Filters are replaced weekly." in flat, doc.text


def test_hanging_indent_labels_are_not_a_gutter(tmp_path):
    # a right column of references whose labels hang left of the text, beside a gutter too narrow to count:
    # the strip between labels and text must not split the page, so each label stays with its reference
    import textwrap

    items = []
    left = textwrap.wrap(_PUMP + " " + _PUMP, 50)
    for i, line in enumerate(left):
        items.append(("text", 50, 700 - 12 * i, line))
    y = 700
    refs = []
    for k in range(6):
        label = f"[Ref{k}]"
        lines = textwrap.wrap(f"A. Author{k} and B. Writer, a study of pumps and valves in plant number {k}, "
                              f"Journal of Plant Engineering, vol. {k + 3}, 2015.", 32)
        refs.append((label, lines[0]))
        items.append(("text", 302, y, label))
        for line in lines:
            items.append(("text", 345, y, line))
            y -= 12
    doc = load_file(write_layout_pdf(tmp_path / "refs.pdf", [items]), "refs.pdf")[0]
    flat = " ".join(doc.text.split())
    for label, first in refs:
        assert f"{label} {first}" in flat, doc.text


def _ruled_table(rows, top=700):
    items, xs = [], [60, 200, 340, 480]
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            items.append(("text", xs[j] + 5, top - 20 * i - 14, cell))
    for i in range(len(rows) + 1):
        items.append(("line", xs[0], top - 20 * i, xs[-1], top - 20 * i))
    for x in xs:
        items.append(("line", x, top, x, top - 20 * len(rows)))
    return items


def test_ruled_table_becomes_pipe_table(tmp_path):
    rows = [("State", "Permits", "Checks"), ("Alabama", "18,870", "23,022"), ("Alaska", "209", "3,062")]
    items = [("text", 72, 740, "Background checks by state, November."), *_ruled_table(rows)]
    items.append(("text", 72, 600, "Totals are provisional."))
    doc = load_file(write_layout_pdf(tmp_path / "checks.pdf", [items]), "checks.pdf")[0]
    assert "| State | Permits | Checks |\n| --- | --- | --- |\n| Alabama | 18,870 | 23,022 |\n| Alaska | 209 | 3,062 |" in doc.text
    assert doc.text.index("Background checks") < doc.text.index("| State") < doc.text.index("Totals are")


def test_info_acl_and_keywords(tmp_path):
    from pypdf import PdfReader, PdfWriter

    source = write_pdf(tmp_path / "plain.pdf", [["Band Q9 salary ceiling is 95000 crowns."]])
    for name, acl in (("ok.pdf", "hr, finance"), ("bad.pdf", " ")):
        writer = PdfWriter(clone_from=PdfReader(source))
        writer.add_metadata({"/ACL": acl, "/Keywords": "pay; bands"})
        with open(tmp_path / name, "wb") as fh:
            writer.write(fh)
    doc = load_file(tmp_path / "ok.pdf", "ok.pdf")[0]
    assert doc.metadata["acl"] == ["hr", "finance"] and doc.metadata["tags"] == ["pay", "bands"]
    with pytest.raises(IngestError, match="bad.pdf: malformed acl"):
        load_file(tmp_path / "bad.pdf", "bad.pdf")


@pytest.mark.parametrize("info_title, first_line, expected", [
    ("example", "Creativity in Machine Learning", "Creativity in Machine Learning"),  # a template's leftover
    ("Pump Report", "Quarterly Pump Report for the North Plant", "Pump Report"),  # borne out by the page
    ("Gemeinsames Ministerialblatt Nr. 52", "The ministry of the interior publishes this gazette every week.",
     "Gemeinsames Ministerialblatt Nr. 52"),  # some of it on the page, which opens with no heading
])
def test_the_info_title_is_kept_only_when_the_first_page_bears_it_out(tmp_path, info_title, first_line, expected):
    from pypdf import PdfReader, PdfWriter

    lines = [first_line, "The pumps are checked every morning. Gemeinsames is a word of the first page."]
    source = write_pdf(tmp_path / "plain.pdf", [lines, ["A second page that names example and Creativity."]])
    writer = PdfWriter(clone_from=PdfReader(source))
    writer.add_metadata({"/Title": info_title})
    with open(tmp_path / "titled.pdf", "wb") as fh:
        writer.write(fh)
    assert load_file(tmp_path / "titled.pdf", "titled.pdf")[0].title == expected


def test_table_continued_on_next_page_gets_its_header(tmp_path):
    first = _ruled_table([("State", "Permits", "Checks"), ("Alabama", "18,870", "23,022"), ("Alaska", "209", "3,062")])
    second = _ruled_table([("Arizona", "2,303", "12,382"), ("Arkansas", "3,298", "6,359")])
    doc = load_file(write_layout_pdf(tmp_path / "checks.pdf", [first, second]), "checks.pdf")[0]
    page2 = doc.text[doc.pages[1]:]
    assert page2.startswith("| State | Permits | Checks |\n| --- | --- | --- |\n| Arizona | 2,303 | 12,382 |"), page2
