"""WordNet lookups from the cached index (``retrieve/_wordnet_index.py``) give what the live ``wn`` object gives.

The reference is ``lexicon._candidates`` as it read the ``wn`` objects before the index existed (copied below,
verbatim but for its argument), run on the real ``wn.WordNet()``; the index is built from that same object into a
temporary cache folder. Words: a fixed list (common nouns and their plurals, compounds, irregular forms, verbs,
adjectives, adverbs, capitalised lemmas, words WordNet lacks) and every 300th lemma WordNet lists.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from openbook._cachedir import cache_folder
from openbook.index.analyzer import Analyzer
from openbook.retrieve import _wordnet_index, lexicon
from openbook.retrieve._wordnet_index import (FORMAT, LiveWordNet, WordNetIndex, build_index, index_path,
                                              open_wordnet, wn_version)
from openbook.retrieve.lexicon import WORDNET_SENSES, WORDNET_SIBLINGS, _candidates, wordnet_expansions

NOUNS = """laptop laptops notebook computer employee employees holiday holidays vacation leave trash bin garbage
invoice receipt salary wage payment refund policy manager supervisor boss office desk chair printer badge card
password account server database network router cable battery charger phone telephone mobile car vehicle bicycle
bike train flight plane airport hotel room meeting conference deadline contract lawyer doctor nurse hospital clinic
medicine drug child children kid baby parent mother father wife husband dog cat house home apartment flat rent
lease tenant landlord key lock door window fire alarm emergency exit stairs elevator lift parking garage fee fine
tax insurance pension retirement intern internship student teacher school university library book loan fountain
city country capital river mountain sea ocean water food meal lunch dinner breakfast coffee tea kitchen fridge
geese mice feet teeth men women people data criteria phenomena analyses axes wolves knives leaves boxes churches
dishes buzzes bus buses glass glasses news series species means""".split()
COMPOUNDS = """fountain_pen public_holiday notebook_computer credit_card sick_leave annual_leave parking_lot
fire_alarm post_office tax_return ice_cream hot_dog living_room real_estate social_security health_insurance
laptop_computer personal_computer mobile_phone cell_phone swimming_pool""".split()
VERBS = """report reported reporting go went gone get got have has had be is was were run ran running take took
taken replace replaced replacing pay paid book booked cancel cancelled renew renewed submit submitted apply applied
sign signed lose lost steal stole stolen borrow borrowed return returned charge charged""".split()
ADJECTIVES = """quick quickly quicker quickest good better best bad worse worst lost stolen annual public free
early earlier earliest late later latest big bigger biggest happy happier happiest red fast slowly often never
wet wetter full-time part-time hand-held e-mail well""".split()
NAMES = "Australia Paris Monday English Berlin London Christmas Easter Mars God Europe Laptop Holiday".split()
LACKING = "smartphone blockchain selfie covid xyzzy qwertyuiop wifi emoji ebook podcast -- x ''".split()
FIXED = NOUNS + COMPOUNDS + VERBS + ADJECTIVES + NAMES + LACKING

QUESTIONS = [
    "How quickly do I have to report a lost laptop?",
    "How often are laptops replaced?",
    "What are the library opening hours on holidays?",
    "What are the library opening hours on public holidays?",
    "Where do I hand in a fountain pen I found?",
    "Can interns claim the internship stipend for trains?",
    "Who pays the hotel when a flight is cancelled?",
    "How many geese live by the river?",
]
VOCABULARY_TEXT = """a lost or stolen notebook computer must be reported to the security desk within 4 hours; the
library opening hours on public days and vacation weeks; a pen found in the office goes to reception; trainees
claim a grant for rail travel; the employer pays the lodging when an air travel is called off; birds by the stream"""


def reference_candidates(wordnet: Any, word: str) -> list[str]:
    """``lexicon._candidates`` as it read the live ``wn`` objects (before the index), for ``wordnet``."""
    synsets = wordnet.synsets(word)
    if not synsets:
        return []
    tagged: dict[str, int] = {}
    for s in synsets:
        tagged[s.pos()] = tagged.get(s.pos(), 0) + sum(x.count() for x in s.lemmas() if x.name().lower() == word)
    pos = max(tagged, key=lambda p: (tagged[p], p == synsets[0].pos()))
    if pos != "n":
        return []
    synsets = [s for s in synsets if s.pos() == pos][:WORDNET_SENSES]
    synonyms: list[str] = []
    broader: list[str] = []
    siblings: list[str] = []
    for s in synsets:
        synonyms += s.lemma_names()
        for h in s.hypernyms():
            broader += h.lemma_names()
            hyponyms = h.hyponyms()
            if len(hyponyms) <= WORDNET_SIBLINGS:
                siblings += [n for x in hyponyms if x != s for n in x.lemma_names()]
    out: list[str] = []
    for name in synonyms + broader + siblings:
        phrase = name.replace("_", " ")
        if phrase != phrase.lower() or name == word or phrase in out:
            continue
        out.append(phrase)
    return out


@pytest.fixture(scope="module")
def live() -> Any:
    """The real ``wn.WordNet()`` (loaded once for the module: about 5 s)."""
    return _wordnet_index.load_live()


@pytest.fixture(scope="module")
def index(live, tmp_path_factory) -> WordNetIndex:
    """The index built from ``live`` in a temporary cache folder."""
    version = wn_version()
    path = index_path(tmp_path_factory.mktemp("cache") / "wordnet", version)
    build_index(live, path, version)
    opened = WordNetIndex(path, version)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def words(live) -> list[str]:
    """The fixed list, each also with a capital first letter, then every 300th lemma of WordNet's index."""
    lemmas = sorted(k for k in live._lemma_pos_offset_map if isinstance(k, str))
    return list(dict.fromkeys(FIXED + [w.capitalize() for w in FIXED] + lemmas[::300]))


@pytest.mark.slow  # builds the WordNet index
def test_the_word_list_covers_every_kind(live, words) -> None:
    assert len(words) > 700
    kinds = {p for w in FIXED for s in live.synsets(w) for p in s.pos()}
    assert kinds == {"n", "v", "a", "s", "r"}
    assert sum(1 for w in LACKING if not live.synsets(w)) >= 8
    assert sum(1 for w in NOUNS + COMPOUNDS if reference_candidates(live, w)) > 150


@pytest.mark.slow  # builds the WordNet index
def test_synsets_are_those_of_wn_in_its_order(live, index, words) -> None:
    for word in words:
        for pos in (None, "n", "v", "a", "s", "r"):
            assert index.synsets(word, pos) == [s.name() for s in live.synsets(word, pos=pos)], (word, pos)


def test_synset_data_is_that_of_wn(live, index, words) -> None:
    for word in words:
        for s in live.synsets(word):
            name = s.name()
            assert index.pos(name) == s.pos()
            assert index.lemmas(name) == [(x.name(), x.count()) for x in s.lemmas()]
            assert index.hypernyms(name) == [h.name() for h in s.hypernyms()]
            assert index.hyponyms(name) == [h.name() for h in s.hyponyms()]


def test_candidates_from_the_index_are_those_from_wn(live, index, words) -> None:
    adapter = LiveWordNet(live)
    for word in words:
        expected = reference_candidates(live, word)
        assert _candidates(word, index) == expected, word
        assert _candidates(word, adapter) == expected, word
    assert _candidates("laptop", index)[:2] == ["laptop computer", "portable computer"]
    assert _candidates("report", index) == []  # a verb first: never expanded
    assert _candidates("smartphone", index) == []


def test_expansions_from_the_index_are_those_from_wn(live, index) -> None:
    analyzer = Analyzer()
    vocabulary = set(analyzer.analyze(VOCABULARY_TEXT))
    adapter = LiveWordNet(live)
    found = 0
    for question in QUESTIONS:
        expected = wordnet_expansions(question, analyzer, vocabulary, adapter)
        assert wordnet_expansions(question, analyzer, vocabulary, index) == expected, question
        found += len(expected)
    assert found >= 3


@pytest.mark.slow  # builds the WordNet index
def test_the_index_is_built_once_then_opened_without_loading_wn(tmp_path, monkeypatch, live) -> None:
    loads = []
    monkeypatch.setattr(_wordnet_index, "load_live", lambda: loads.append(1) or live)
    first = open_wordnet(tmp_path / "wordnet")
    assert isinstance(first, WordNetIndex) and loads == [1]
    assert [p.name for p in (tmp_path / "wordnet").iterdir()] == [index_path(tmp_path, wn_version()).name]
    second = open_wordnet(tmp_path / "wordnet")
    assert isinstance(second, WordNetIndex) and loads == [1]
    assert _candidates("laptop", second) == reference_candidates(live, "laptop")
    first.close()
    second.close()


def test_lexicon_opens_the_index_in_the_cache_folder_the_environment_names(tmp_path, monkeypatch, index,
                                                                            live) -> None:
    monkeypatch.setenv("OPENBOOK_CACHE_DIR", str(tmp_path / "cache"))
    assert cache_folder("wordnet") == tmp_path / "cache" / "wordnet"
    path = index_path(tmp_path / "cache" / "wordnet", wn_version())
    path.parent.mkdir(parents=True)
    shutil.copyfile(index.path, path)

    def no_wn() -> None:
        raise AssertionError("wn loaded although the index is there")

    monkeypatch.setattr(_wordnet_index, "load_live", no_wn)
    lexicon._wordnet.cache_clear()
    try:
        opened = lexicon._wordnet()
        assert isinstance(opened, WordNetIndex) and opened.path == path
        assert _candidates("laptop") == reference_candidates(live, "laptop")
        opened.close()
    finally:
        lexicon._wordnet.cache_clear()


def test_a_folder_that_cannot_be_written_falls_back_to_wn(tmp_path, monkeypatch, live) -> None:
    monkeypatch.setattr(_wordnet_index, "load_live", lambda: live)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    opened = open_wordnet(blocker / "wordnet")  # (root may write anywhere, but not under a file)
    assert isinstance(opened, LiveWordNet)
    assert _candidates("laptop", opened) == reference_candidates(live, "laptop")


@pytest.mark.slow  # builds the WordNet index
def test_a_broken_index_is_rebuilt_and_a_stale_one_refused(tmp_path, monkeypatch, live) -> None:
    monkeypatch.setattr(_wordnet_index, "load_live", lambda: live)
    path = index_path(tmp_path, wn_version())
    path.write_bytes(b"not a database")
    opened = open_wordnet(tmp_path)
    assert isinstance(opened, WordNetIndex) and _candidates("laptops", opened) == reference_candidates(live, "laptops")
    opened.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (str(FORMAT - 1),))
    db.close()
    with pytest.raises(ValueError, match="format"):
        WordNetIndex(path, wn_version())  # (open_wordnet then rebuilds it, as above)
    with pytest.raises(ValueError, match=re.escape(f"of wn {wn_version()}")):
        WordNetIndex(index_path(tmp_path, wn_version()), "9.9")


@pytest.mark.slow  # builds the WordNet index
def test_builders_running_at_once_leave_one_whole_index(tmp_path, live) -> None:
    version = wn_version()
    path = index_path(tmp_path, version)
    errors: list[BaseException] = []

    def build() -> None:
        try:
            build_index(live, path, version)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [p.name for p in Path(tmp_path).iterdir()] == [path.name]  # no temporary file left
    opened = WordNetIndex(path, version)
    assert _candidates("holidays", opened) == reference_candidates(live, "holidays")
    opened.close()
