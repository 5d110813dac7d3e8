"""Real files in legacy encodings and with awkward names: each is read as the text it holds, or reported and
skipped while the batch goes on (``read_text``, ``discover``)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from openbook.api import Engine
from openbook.ingest import discover, load_file

# Non-Latin text in the legacy encoding its writers used before UTF-8 (a few lines, as in a real note)
LEGACY = [
    ("gbk", "图书馆星期六开放，从上午十点到下午六点。读者可以借阅书籍，也可以在阅览室里安静地学习。\n"
            "借书需要带上借书证。每位读者最多可以借五本书，借期为一个月。\n"),
    ("big5", "圖書館星期六開放，從上午十點到下午六點。讀者可以借閱書籍，也可以在閱覽室裡安靜地學習。\n"
             "借書需要帶上借書證。每位讀者最多可以借五本書，借期為一個月。\n"),
    ("shift_jis", "図書館は土曜日に開館します。午前十時から午後六時までです。\n"
                  "本を借りるには利用者カードが必要です。一人五冊まで、一か月借りることができます。\n"),
    ("euc_kr", "도서관은 토요일에 문을 엽니다. 오전 열 시부터 오후 여섯 시까지입니다.\n"
               "책을 빌리려면 도서관 카드가 필요합니다. 한 사람당 다섯 권까지 한 달 동안 빌릴 수 있습니다.\n"),
    ("cp1251", "Библиотека открыта в субботу с десяти утра до шести вечера.\n"
               "Чтобы взять книгу, нужен читательский билет. Можно взять до пяти книг на месяц.\n"),
    ("koi8-r", "Библиотека открыта в субботу с десяти утра до шести вечера.\n"
               "Чтобы взять книгу, нужен читательский билет. Можно взять до пяти книг на месяц.\n"),
    ("cp1253", "Η βιβλιοθήκη είναι ανοιχτή το Σάββατο από τις δέκα το πρωί έως τις έξι το απόγευμα.\n"
               "Για να δανειστείτε ένα βιβλίο χρειάζεστε κάρτα μέλους.\n"),
]
# Western text stays cp1252 (the detector cannot tell the Latin code pages apart on short text)
WESTERN = [
    "The café “Morning” opens at 7 – it serves crème brûlée and naïve toast.\n",
    "La bibliothèque est ouverte le samedi. À côté de l'église, près du château.\n",
    "Die Straße führt zum Großen Münster. Öffnungszeiten: täglich außer montags.\n",
    "Kirjasto on auki lauantaisin. Käyttäjä voi lainata enintään viisi kirjaa kerrallaan.\n",
]


@pytest.mark.parametrize("encoding, text", LEGACY, ids=[e for e, _ in LEGACY])
def test_non_latin_text_in_a_legacy_encoding_is_decoded(tmp_path, encoding, text):
    path = tmp_path / "hours.txt"
    path.write_bytes(text.encode(encoding))
    assert load_file(path, "hours.txt")[0].text == text.strip()


@pytest.mark.parametrize("text", WESTERN)
def test_western_text_in_cp1252_stays_cp1252(tmp_path, text):
    path = tmp_path / "note.md"
    path.write_bytes(text.encode("cp1252"))
    assert load_file(path, "note.md")[0].text == text.strip()


def test_utf16_without_a_byte_order_mark_is_text(tmp_path):
    for encoding in ("utf-16-le", "utf-16-be"):
        path = tmp_path / f"notes-{encoding}.txt"
        path.write_bytes("Relay notes\n\nPort 9090 is the default, naïve café.\n".encode(encoding))
        assert load_file(path, path.name)[0].text.endswith("Port 9090 is the default, naïve café.")


def test_html_page_in_the_charset_its_meta_tag_declares(tmp_path):
    page = ('<html><head><meta charset="shift_jis"><title>利用案内</title></head>'
            "<body><p>図書館は土曜日に開館します。</p></body></html>")
    (tmp_path / "sjis.html").write_bytes(page.encode("shift_jis"))
    old = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
           "<title>Часы</title></head><body><p>Библиотека открыта в субботу.</p></body></html>")
    (tmp_path / "cp1251.html").write_bytes(old.encode("cp1251"))
    wrong = '<html><head><meta charset="iso-8859-1"><title>Café</title></head><body><p>Le café — ouvert.</p></body></html>'
    (tmp_path / "wrong.html").write_bytes(wrong.encode("utf-8"))  # the declaration is wrong: UTF-8 wins
    sjis = load_file(tmp_path / "sjis.html", "sjis.html")[0]
    assert (sjis.title, sjis.text) == ("利用案内", "図書館は土曜日に開館します。")
    assert load_file(tmp_path / "cp1251.html", "cp1251.html")[0].text == "Библиотека открыта в субботу."
    assert load_file(tmp_path / "wrong.html", "wrong.html")[0].text == "Le café — ouvert."


def test_a_gbk_note_is_found_by_a_chinese_question(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hours.txt").write_bytes(LEGACY[0][1].encode("gbk"))
    (docs / "parking.txt").write_text("停车场在图书馆后面，晚上十点关闭。\n", encoding="utf-8")
    with Engine.open(tmp_path / "kb", create=True) as engine:
        engine.ingest([docs], embed=False)
        hits = engine.search("图书馆星期六几点开放", k=2, mode="bm25")
    assert hits[0].doc_id == "hours.txt"


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the file system must allow non-UTF-8 names")
def test_a_file_name_that_is_not_utf8_is_ingested_under_an_escaped_id(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    with open(os.path.join(os.fsencode(docs), b"caf\xe9 menu.txt"), "wb") as fh:  # a Latin-1 name from an old zip
        fh.write(b"The zebrafish platter is served on Fridays.\n")
    assert [doc_id for _, doc_id in discover([docs])] == ["caf\\xe9 menu.txt"]
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([docs], embed=False)
        assert report.added == ["caf\\xe9 menu.txt"] and not report.failed
        assert engine.search("zebrafish", k=1, mode="bm25")[0].doc_id == "caf\\xe9 menu.txt"
        assert engine.ingest([docs], embed=False).unchanged == ["caf\\xe9 menu.txt"]


def test_a_link_to_itself_is_reported_and_the_batch_goes_on(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Comets have icy nuclei.\n", encoding="utf-8")
    (docs / "loop.md").symlink_to("loop.md")
    (docs / "dangling.md").symlink_to("missing.md")
    assert sorted(doc_id for _, doc_id in discover([docs])) == ["a.txt", "dangling.md", "loop.md"]
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([docs], embed=False)
    assert report.added == ["a.txt"]
    reported = " ".join(path for path, _ in [*report.failed, *report.skipped])
    assert "loop.md" in reported and "dangling.md" in reported


def test_one_very_long_line_is_chunked_in_linear_time(tmp_path):
    words = ("alpha beta gamma delta omega sigma kappa lambda " * 50_000).strip()  # 2.4 MB, one line
    path = tmp_path / "dump.txt"
    path.write_text(words, encoding="utf-8")
    with Engine.open(tmp_path / "kb", create=True) as engine:
        start = time.perf_counter()
        report = engine.ingest([path], embed=False)
        seconds = time.perf_counter() - start
    assert report.added == ["dump.txt"] and report.chunks_added > 1000
    assert seconds < 30  # about 5 s here; the binary search over the rest of the line took minutes


def test_utf8_files_are_never_sent_to_the_encoding_detector(tmp_path, monkeypatch):
    import chardet

    def refuse(*args, **kwargs):
        raise AssertionError("the detector ran on a UTF-8 file")

    monkeypatch.setattr(chardet, "detect", refuse)
    path = tmp_path / "note.md"
    path.write_text("# Café\r\n\r\nNaïve text, UTF-8.\r\n", encoding="utf-8")
    assert load_file(path, "note.md")[0].text == "# Café\n\nNaïve text, UTF-8."


def test_lone_cr_line_ends_are_line_ends(tmp_path):
    path = tmp_path / "old-mac.txt"
    path.write_bytes(b"Opening hours\r\rThe desk opens at nine.\rIt closes at five.\r")
    doc = load_file(path, "old-mac.txt")[0]
    assert doc.title == "Opening hours" and doc.text.endswith("The desk opens at nine.\nIt closes at five.")


def test_a_folder_that_cannot_be_listed_is_reported_not_left_out(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "locked").mkdir(parents=True)
    (docs / "a.txt").write_text("Comets have icy nuclei.\n", encoding="utf-8")
    (docs / "locked" / "b.txt").write_text("Salaries.\n", encoding="utf-8")
    locked = str(docs / "locked")
    real_scandir, real_listdir = os.scandir, os.listdir

    def denied(real):
        def call(path="."):
            if os.fspath(path) == locked:  # as for a folder without read permission (root reads everything)
                raise PermissionError(13, "Permission denied", locked)
            return real(path)
        return call

    monkeypatch.setattr(os, "scandir", denied(real_scandir))
    monkeypatch.setattr(os, "listdir", denied(real_listdir))
    assert [doc_id for _, doc_id in discover([docs])] == ["a.txt", "locked"]
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([docs], embed=False)
    assert report.added == ["a.txt"]
    assert any("locked" in path and "cannot read the folder (Permission denied)" in why for path, why in report.failed)


def test_a_utf8_file_with_a_few_stray_windows_bytes_stays_utf8(tmp_path):
    # a UTF-8 note into which a line was pasted from a Windows application (cp1252 ’ and –)
    data = "Le café est ouvert à côté de l’église.\n".encode("utf-8") + b"It\x92s open \x96 daily.\n"
    path = tmp_path / "hours.txt"
    path.write_bytes(data)
    assert load_file(path, "hours.txt")[0].text == "Le café est ouvert à côté de l’église.\nIt’s open – daily."


# One- and two-line notes: the shortest files, where a detector has least to go on (charset_normalizer read the
# first KOI8-R note as Shift-JIS half-width katakana, the GBK ones as Korean)
SHORT = [
    ("koi8-r", "Привет, мир.\n"),
    ("koi8-r", "Отчёт за март готов.\nПроверьте цифры.\n"),
    ("cp1251", "Счёт оплачен.\n"),
    ("cp866", "Пароль сменили вчера.\n"),
    ("shift_jis", "会議は水曜日です。\n"),
    ("euc_jp", "こんにちは\n"),
    ("euc_kr", "회의는 수요일입니다.\n"),
    ("gb18030", "你好，世界\n"),
    ("gbk", "请在周五前提交报告。\n"),
    ("cp1253", "Καλημέρα κόσμε.\n"),
    ("utf-16-le", "Отчёт за март готов.\nПроверьте цифры.\n"),
    ("utf-16-be", "Встреча перенесена на пятницу.\n"),
    ("utf-16", "图书馆星期六开放。\n"),  # with a byte-order mark
]


@pytest.mark.parametrize("encoding, text", SHORT, ids=[f"{e}-{i}" for i, (e, _) in enumerate(SHORT)])
def test_a_one_or_two_line_note_in_a_legacy_encoding_is_decoded(tmp_path, encoding, text):
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    assert load_file(path, "note.txt")[0].text.removeprefix("# ") == text.strip()  # a title line is a heading


def test_a_guess_the_bytes_cannot_settle_is_a_warning_in_the_ingest_report(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "short.txt").write_bytes("Привет, мир.\n".encode("koi8-r"))  # two words: read right, said uncertain
    (docs / "cafe.md").write_bytes("Café crème.\n".encode("cp1252"))  # the detector guesses Greek, too weakly
    (docs / "long.txt").write_bytes(LEGACY[5][1].encode("koi8-r"))  # two full lines: a confident guess
    (docs / "plain.txt").write_text("Port 9090 is the default.\n", encoding="utf-8")
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([docs], embed=False)
        assert sorted(report.added) == ["cafe.md", "long.txt", "plain.txt", "short.txt"] and not report.failed
        warned = {path.rsplit("/", 1)[-1]: why for path, why in report.warnings}
        assert set(warned) == {"cafe.md", "short.txt"}
        assert "read as koi8-r" in warned["short.txt"] and "confidence 0.1" in warned["short.txt"]
        assert "read as cp1252" in warned["cafe.md"] and "cp1253" in warned["cafe.md"]
        assert engine.search("Привет", k=1, mode="bm25")[0].doc_id == "short.txt"
        assert engine.search("crème", k=1, mode="bm25")[0].doc_id == "cafe.md"


def test_a_csv_file_in_cp1251_is_decoded(tmp_path):
    path = tmp_path / "stock.csv"
    path.write_bytes("Товар,Количество\nМолоко,12\nХлеб,30\n".encode("cp1251"))
    doc = load_file(path, "stock.csv")[0]
    assert "Молоко" in doc.text and doc.metadata["columns"] == ["Товар", "Количество"]


def test_a_binary_string_table_is_not_read_as_utf16(tmp_path):
    # NUL-separated ASCII names, as in a shared library's symbol table: decoded as UTF-16 they are CJK letters
    path = tmp_path / "symbols.txt"
    names = (b"read", b"write", b"error", b"mem", b"io") * 20
    path.write_bytes(b"\x00".join(b"png_set_%s_fn" % name for name in names))
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([path], embed=False)
    assert not report.added and "symbols.txt" in " ".join(p for p, _ in [*report.failed, *report.skipped])


def test_a_western_note_is_never_read_in_a_dos_or_mac_code_page(tmp_path):
    path = tmp_path / "prices.txt"
    for text in ("Total: 30 €\n", "Price list: 5 € per item, 10 € for two.\n", "Straße\n"):
        path.write_bytes(text.encode("cp1252"))  # chardet alone reads the first two as DOS Hebrew (cp862)
        assert load_file(path, "prices.txt")[0].text.removeprefix("# ") == text.strip()


def test_a_few_legacy_bytes_in_an_english_line_are_said_to_be_a_guess(tmp_path):
    path = tmp_path / "order.txt"
    path.write_bytes("Order #1234 shipped to 東京 on Monday.\n".encode("shift_jis"))  # four bytes: undecidable
    (warning,) = load_file(path, "order.txt")[0].warnings
    assert "read as cp1252" in warning and "confidence 0.0" in warning and "re-save the file as UTF-8" in warning


def test_an_html_page_without_a_charset_is_decoded_from_its_text_not_its_markup(tmp_path):
    page = ('<html><head><title>Порты</title><style>p { color: red }</style></head>'
            '<body><div class="main"><p>Реле слушает порт 9090.</p></div></body></html>')
    path = tmp_path / "ports.html"
    path.write_bytes(page.encode("cp1251"))  # the tags' ASCII alone left chardet at confidence 0.06
    doc = load_file(path, "ports.html")[0]
    assert (doc.title, doc.text, doc.warnings) == ("Порты", "Реле слушает порт 9090.", ())


def test_a_log_with_a_run_of_nul_bytes_is_text_without_them(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    # a power loss leaves a block of NULs in a log that was being written; a note can carry a stray NUL
    (docs / "relay.txt").write_bytes(b"Jan 1 10:00 relay started on port 9090\n" * 5 + b"\x00" * 4096
                                     + b"Jan 1 10:05 relay restarted after a power loss\n" * 5)
    (docs / "note.md").write_bytes(b"# Notes\n\nThe relay listens on port 9090.\x00\nIt restarts nightly.\n")
    (docs / "table.txt").write_bytes(bytes(range(256)) * 4)  # binary: many NUL runs, control bytes
    with Engine.open(tmp_path / "kb", create=True) as engine:
        report = engine.ingest([docs], embed=False)
        assert sorted(report.added) == ["note.md", "relay.txt"]
        assert [p.rsplit("/", 1)[-1] for p, _ in report.skipped] == ["table.txt"]
        warned = {p.rsplit("/", 1)[-1]: why for p, why in report.warnings}
        assert warned == {"relay.txt": "4096 NUL bytes left out (a log cut by a crash or a power loss?)",
                          "note.md": "1 NUL byte left out (a log cut by a crash or a power loss?)"}
        hit = engine.search("restarted after a power loss", k=1, mode="bm25")[0]
    assert hit.doc_id == "relay.txt" and hit.chunk is not None and "\x00" not in hit.chunk.text
