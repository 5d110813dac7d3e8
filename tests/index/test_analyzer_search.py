"""The issue-9 analyzer kinds end to end: real files ingested into a temporary BM25 store, searched by Engine."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.config import Config


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("issue9")
    docs = root / "docs"
    files = {
        "bn-library.md": "# পাঠাগার\n\nপাঠাগারের চাবি অফিসে পাওয়া যায়।\n",  # Bengali: vowel signs are marks
        "bn-canteen.md": "# ক্যান্টিন\n\nদুপুরের খাবার বারোটায় দেওয়া হয়।\n",
        "th-hours.md": "# เวลาทำการ\n\nห้องสมุดเปิดวันเสาร์\n",  # Thai, no spaces
        "th-parking.md": "# ที่จอดรถ\n\nที่จอดรถอยู่ชั้นใต้ดิน\n",
        "fr-menu.md": "# Menu\n\nLe crème brûlée est servi à Orléans.\n",
        "fr-bus.md": "# Bus\n\nThe bus leaves Lyon at noon.\n",
        "tr-depot.md": "# Depots\n\nThe DİYARBAKIR depot ships spare parts.\n",
        "tr-other.md": "# Depots\n\nThe KONYA depot ships spare parts.\n",
        "quote.md": "# Sayings\n\nAll that we see or seem is but a dream within a dream.\n",
        "plain.md": "# Notes\n\nThe Orrin garden needs water weekly.\n",
        "fsharp.md": "# F# notes\n\nOrrin scripts in F# run nightly.\n",
        "f.md": "# F notes\n\nOrrin scripts in F run nightly.\n",
        "disk.md": "# Disk\n\nEach Orrin seat gets 50GB of storage.\n",
        "release.md": "# Release\n\nOrrin 4.1.7 shipped in May.\n",
        "zwsp.md": "# Note\n\nThe pass\u200bphrase rotates monthly.\n",
        "heading.md": "## Locker combination 7731\n",
        "oneline.txt": "Locker key is behind the Quill desk",
        "ar-library.md": "# المكـــتبة\n\nالمكـــتبة مفتوحة يوم السبت.\n",  # tatweel; teh marbuta
        "ar-canteen.md": "# المقصف\n\nالمقصف مغلق يوم الجمعة.\n",
        "fa-books.md": "# کتابخانه\n\nاین کتاب در طبقه دوم است.\n",  # Persian keheh and yeh
        "fa-hours.md": "# ساعت\n\nساعت کار از نه صبح است.\n",
        "ja-server.md": "# サーバー\n\nサーバーの再起動は毎週月曜日です。\n",  # katakana long vowel mark
        "ja-printer.md": "# プリンタ\n\nプリンタの用紙は二階にあります。\n",
    }
    for name, text in files.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    corpus = root / "beir" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text(textwrap.dedent("""\
        {"_id": "t1", "title": "Sediment transport in braided rivers", "text": ""}
        {"_id": "t2", "title": "Glacier", "text": "Glaciers carry sediment"
        {"_id": "t3", "title": "", "text": "Rivers change course after floods."}
        """), encoding="utf-8")
    e = Engine.open(root / "store", Config().with_overrides({"embedding.enabled": False}), create=True)
    report = e.ingest([docs, corpus])
    assert not report.failed, report.failed
    yield e
    e.close()


def top(engine: Engine, query: str) -> list[str]:
    return [h.doc_id for h in engine.search(query, k=5, mode="bm25")]


@pytest.mark.parametrize("query, want", [
    ("পাঠাগারের", "bn-library.md"),
    ("ห้องสมุด", "th-hours.md"),
    ("วันเสาร์", "th-hours.md"),
    ("creme brulee", "fr-menu.md"),
    ("orleans", "fr-menu.md"),
    ("Diyarbakır", "tr-depot.md"),
    ("diyarbakir", "tr-depot.md"),
    ("passphrase", "zwsp.md"),
    ("50 GB storage", "disk.md"),
    ("v4.1.7", "release.md"),
    ("Locker combination", "heading.md"),
    ("Quill desk", "oneline.txt"),
    ("braided rivers sediment", "t1"),
    ("المكتبه", "ar-library.md"),  # typed without tatweel, teh marbuta as heh
    ("كتاب", "fa-books.md"),  # Persian word typed on an Arabic keyboard
    ("サーバ 再起動", "ja-server.md"),
])
def test_each_kind_finds_its_document_first(engine, query, want):
    assert top(engine, query)[:1] == [want]


def test_a_stop_word_only_query_still_searches(engine):
    assert top(engine, "that is but a")[:1] == ["quote.md"]


def test_symbol_suffixed_name_outranks_the_bare_letter(engine):
    hits = engine.search("F#", k=3, mode="bm25")
    assert hits[0].doc_id == "fsharp.md" and (len(hits) < 2 or hits[0].score > hits[1].score)


def test_a_malformed_corpus_line_skips_only_that_record(engine):
    ids = set(engine.store.get_documents())
    assert {"t1", "t3"} <= ids and "t2" not in ids


def test_a_repeated_query_word_weighs_more(engine):
    once = {h.doc_id: h.score for h in engine.search("orrin garden", k=10, mode="bm25")}
    twice = {h.doc_id: h.score for h in engine.search("orrin garden garden", k=10, mode="bm25")}
    assert twice["plain.md"] > once["plain.md"]
    assert twice["disk.md"] == pytest.approx(once["disk.md"])  # no "garden" there
