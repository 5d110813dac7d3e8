"""The store under real concurrent processes, a real SIGINT, and a folder it may not write."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.config import Config
from openbook.errors import StoreError, StoreVersionError
from openbook.store.embedded import DB_NAME, EmbeddedStore

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}
ENV.pop("OPENBOOK_STORE", None)
BM25 = Config().with_overrides({"embedding.enabled": False})


def folder(root: Path, name: str, n: int, word: str, stem: str = "n") -> Path:
    """``n`` small Markdown notes ``{stem}{i}.md`` mentioning ``word``."""
    d = root / name
    d.mkdir()
    for i in range(n):
        (d / f"{stem}{i}.md").write_text(f"# Note {word} {i}\n\n{word} fact {i} about the Corvid lab.\n", encoding="utf-8")
    return d


def cli(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "openbook", *args], cwd=cwd, env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def counts(store: Path) -> tuple[int, int, int]:
    """(documents, chunks, index rows) as a fresh reader sees them."""
    with Engine.open(store, BM25) as e:
        docs, chunks = e.store.count_stored()
        return docs, chunks, e.store.require_index().bm25.rows


@pytest.mark.slow  # several ingest processes at once
def test_two_ingests_of_clashing_folders_at_once_lose_nothing_silently(tmp_path):
    a, b = folder(tmp_path, "teamA", 8, "Alpha"), folder(tmp_path, "teamB", 8, "Bravo")
    for _ in range(2):  # racy by nature: a couple of bounded trials
        store = tmp_path / "store"
        procs = [cli("ingest", str(p), "--store", str(store), "--no-embed", "--json", cwd=tmp_path) for p in (a, b)]
        results = [finish(p) for p in procs]
        assert all("Traceback" not in err and "OperationalError" not in err for _, _, err in results)
        reports = [json.loads(out) for _, out, _ in results]
        winners = [r for r in reports if len(r["added"]) == 8]
        losers = [r for r in reports if len(r["failed"]) == 8 and "already taken" in r["failed"][0][1]]
        assert len(winners) == 1 and len(losers) == 1  # serialised: the second one reports every clash
        assert counts(store) == (8, 8, 8)
        with Engine.open(store, BM25) as e:
            word = "alpha" if winners[0] is reports[0] else "bravo"
            assert len(e.search(word, k=20)) == 8
        assert len(list(store.glob("gen-*"))) == 1
        shutil.rmtree(store)


def test_the_same_folder_ingested_twice_at_once_is_stored_once(tmp_path):
    a = folder(tmp_path, "docs", 10, "Alpha")
    store = tmp_path / "store"
    procs = [cli("ingest", str(a), "--store", str(store), "--no-embed", "--json", cwd=tmp_path) for _ in range(2)]
    reports = [json.loads(out) for rc, out, _ in map(finish, procs) if rc == 0]
    assert len(reports) == 2
    assert sorted(len(r["added"]) for r in reports) == [0, 10]
    assert sorted(len(r["unchanged"]) for r in reports) == [0, 10]
    assert counts(store) == (10, 10, 10)
    assert len(list(store.glob("gen-*"))) == 1


def test_a_waiting_writer_says_so_and_readers_keep_working(tmp_path):
    docs = folder(tmp_path, "docs", 3, "Alpha")
    store = tmp_path / "store"
    with Engine.open(store, BM25, create=True) as e:
        e.ingest([docs])
    more = folder(tmp_path, "more", 2, "Bravo", stem="m")
    holder = EmbeddedStore.open(store)
    with holder.write_lock():  # another writer holds the store
        proc = cli("ingest", str(more), "--store", str(store), "--no-embed", cwd=tmp_path)
        deadline = time.monotonic() + 60
        line = ""
        while "waiting" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        assert "waiting for another openbook ingest" in line
        reader = subprocess.run([sys.executable, "-m", "openbook", "search", "alpha", "--store", str(store),
                                 "--json"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
        assert reader.returncode == 0 and len(json.loads(reader.stdout)["hits"]) == 3
        assert proc.poll() is None  # still waiting
    holder.close()
    rc, out, err = finish(proc)
    assert rc == 0 and "2 added" in out
    assert counts(store)[0] == 5


SLOW_INGEST = """
import signal, sys, time
# (a test run started in the background of a non-interactive shell inherits SIGINT ignored: the Ctrl-C tests
# would see the ingest finish; a terminal's Ctrl-C is what they mean)
signal.signal(signal.SIGINT, signal.default_int_handler)
import openbook.ingest.pipeline as api
import openbook.ingest.distributed as runner
from openbook.cli import main
real = runner.load_file
def slow(path, doc_id, **options):
    time.sleep(0.04)
    return real(path, doc_id, **options)
runner.load_file = slow  # the loader the ingest runs (LocalRunner)
api.BATCH_MIN_CHUNKS = 10  # commit every 10 chunks so a short test sees several batches
main(["ingest", sys.argv[1], "--store", sys.argv[2], "--no-embed"])
"""
SLOWER_INGEST = SLOW_INGEST.replace("time.sleep(0.04)", "time.sleep(0.2)")
"""0.2 s a file: a first ingest that still holds the lock when a second process has started, even on a loaded
machine (where starting Python takes seconds)."""
INTERRUPTED_INGEST = SLOW_INGEST.replace("time.sleep(0.04)", "time.sleep(0.1 if calls.append(path) or len(calls) <= 40 else 300)").replace(
    "real = runner.load_file", "real = runner.load_file\ncalls = []")
"""0.1 s a file for the first 40, then a hold of 300 s at the 41st: the ingest has committed batches of the first
files and is still running when the test, polling on a loaded machine, sees two of them and sends Ctrl-C (which
ends the hold)."""


@pytest.mark.slow  # several ingest processes at once
@pytest.mark.parametrize("group", [False, True], ids=["process", "process-group"])
def test_ctrl_c_keeps_the_committed_batches_and_the_next_run_resumes(tmp_path, group):
    # a terminal's Ctrl-C signals the whole process group: the PDF parser's worker process too, which must stay
    # quiet (a PDF first, so that the worker is running when the signal comes)
    docs = folder(tmp_path, "docs", 150, "Alpha")
    if group:
        from helpers.pdf_objects import pdf_bytes

        stream = b"BT /F1 11 Tf 72 720 Td (Alpha fact about the Corvid lab in a PDF.) Tj ET"
        (docs / "a.pdf").write_bytes(pdf_bytes([
            b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
            b"/Contents 4 0 R >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]))
    store = tmp_path / "store"
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_INGEST, str(docs), str(store)], cwd=tmp_path,
                            env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=group)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # wait for two committed batches, as a reader sees them
        time.sleep(0.1)
        try:
            with sqlite3.connect(store / DB_NAME) as conn:
                row = conn.execute("SELECT COUNT(*) FROM documents").fetchone()
            if row and int(row[0]) >= 20:
                break
        except sqlite3.Error:
            pass
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    rc, out, err = finish(proc)
    assert rc == 130, err
    assert "Traceback" not in err and "run the same command again to resume" in err
    assert "documents in the store" in err
    assert "openbook embed" not in err  # a BM25-only ingest has no vectors to resume
    docs_kept, chunks_kept, rows = counts(store)
    files = 150 + group
    assert 20 <= docs_kept < files and chunks_kept == rows == docs_kept  # every kept document is searchable
    with Engine.open(store, BM25) as e:
        report = e.ingest([docs])
        assert len(report.unchanged) == docs_kept and len(report.added) == files - docs_kept
        assert e.store.count_stored() == (files, files) and len(e.search("alpha", k=200)) == files


@pytest.mark.slow  # several ingest processes at once
def test_two_ingest_processes_of_different_folders_both_land_once(tmp_path):
    """Two real ingest processes into one store: the second waits (and says so), nothing is lost or doubled."""
    slow, quick = folder(tmp_path, "a", 30, "Alpha"), folder(tmp_path, "b", 10, "Bravo", stem="m")
    store = tmp_path / "store"
    first = subprocess.Popen([sys.executable, "-c", SLOWER_INGEST, str(slow), str(store)], cwd=tmp_path, env=ENV,
                             text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the first one holds the writer lock
        time.sleep(0.05)
        try:
            probe = EmbeddedStore.open(store)
        except StoreError:  # not created yet, or being created: the lock is taken either way soon
            continue
        busy = probe.writer_active()
        probe.close()
        if busy:
            break
    second = cli("ingest", str(quick), "--store", str(store), "--no-embed", "--json", cwd=tmp_path)
    (rc1, _, err1), (rc2, out2, err2) = finish(first), finish(second)
    assert rc1 == 0 and rc2 == 0, err1 + err2
    assert "waiting for another openbook ingest" in err2 and "Traceback" not in err1 + err2
    assert len(json.loads(out2)["added"]) == 10
    assert counts(store) == (40, 40, 40)
    with Engine.open(store, BM25) as e:
        assert len(e.search("alpha", k=100)) == 30 and len(e.search("bravo", k=100)) == 10
        assert len({h.chunk_id for h in e.search("corvid", k=100)}) == 40


@pytest.fixture()
def read_only_view(tmp_path):
    """Make a folder read-only: a read-only bind mount as root (who writes through permissions), else chmod."""
    undo = []

    def make(folder: Path) -> Path:
        if os.geteuid() == 0:
            view = tmp_path / "ro-view"
            view.mkdir()
            if subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True).returncode:
                pytest.skip("root without permission to mount: cannot make a read-only folder")
            undo.append(lambda: subprocess.run(["umount", "--lazy", str(view)], capture_output=True))
            if subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True).returncode:
                pytest.skip("cannot remount read-only")
            return view
        paths = [folder, *folder.rglob("*")]
        for p in paths:
            p.chmod(0o555 if p.is_dir() else 0o444)
        undo.append(lambda: [p.chmod(0o755 if p.is_dir() else 0o644) for p in paths])
        return folder

    yield make
    for step in reversed(undo):
        step()


def test_a_read_only_store_can_be_searched_not_written(tmp_path, read_only_view):
    docs = folder(tmp_path, "docs", 3, "Alpha")
    with Engine.open(tmp_path / "store", BM25, create=True) as e:
        e.ingest([docs])
    store = read_only_view(tmp_path / "store")
    with Engine.open(store, BM25) as e:
        assert len(e.search("alpha")) == 3
        with pytest.raises(StoreError, match="read-only") as info:
            e.ingest([docs])
        assert "delete" not in str(info.value)
    r = subprocess.run([sys.executable, "-m", "openbook", "search", "alpha", "--store", str(store)],
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Alpha" in r.stdout


def test_no_store_message_advises_deleting_data(tmp_path):
    docs = folder(tmp_path, "docs", 1, "Alpha")
    with Engine.open(tmp_path / "store", BM25, create=True) as e:
        e.ingest([docs])
        e.store.set_meta("format_version", "999")
    with pytest.raises(StoreVersionError) as info:
        Engine.open(tmp_path / "store")
    assert "new store" in str(info.value) and "delete" not in str(info.value)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / DB_NAME).write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError) as info:
        Engine.open(tmp_path / "bad")
    assert "delete" not in str(info.value)


def test_a_reader_opens_without_writing(tmp_path):
    docs = folder(tmp_path, "docs", 2, "Alpha")
    with Engine.open(tmp_path / "store", BM25, create=True) as e:
        e.ingest([docs])
    db = tmp_path / "store" / DB_NAME
    before = db.stat().st_mtime_ns
    with Engine.open(tmp_path / "store", BM25) as e:
        assert len(e.search("alpha")) == 2
    assert db.stat().st_mtime_ns == before


HOLD_LOCK = """
import sys, time
from openbook.store.embedded import EmbeddedStore
store = EmbeddedStore.open(sys.argv[1])
with store.write_lock():
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_search_during_a_first_ingest_says_an_ingest_is_running(tmp_path):
    Engine.open(tmp_path / "store", BM25, create=True).close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tmp_path / "store")], env=ENV, text=True,
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with Engine.open(tmp_path / "store", BM25) as e:
            with pytest.raises(StoreError, match="an ingest into it is running"):
                e.search("anything")
    finally:
        holder.kill()
        holder.communicate()


def test_a_reader_whose_generation_is_removed_while_it_loads_reads_the_next_one(tmp_path, monkeypatch):
    """A reader that has begun loading generation N's files when a writer commits N+1 (which removes N's folder)
    loads N+1 instead of failing."""
    from openbook.index.sparse import BM25Index

    store = tmp_path / "store"
    writer = Engine.open(store, BM25, create=True)
    assert writer.ingest([folder(tmp_path, "first", 3, "alpha")]).ok
    reader = Engine.open(store, BM25)
    later = folder(tmp_path, "second", 2, "bravo", stem="m")
    real_load = BM25Index.load.__func__
    committed = []

    def load_after_a_commit(cls, path, mmap=True):
        if not committed:  # the reader has read generation N's manifest; N+1 commits now
            committed.append(True)
            assert writer.ingest([later]).ok
            assert not Path(path).exists()  # N's folder is gone
        return real_load(cls, path, mmap)

    monkeypatch.setattr(BM25Index, "load", classmethod(load_after_a_commit))
    hits = reader.search("bravo", k=5)
    assert committed and {h.doc_id for h in hits} == {"m0.md", "m1.md"}
    reader.close()
    writer.close()


def test_chunk_blocks_are_kept_beside_the_chunks_and_a_store_without_them_reads_none(tmp_path):
    """Markdown chunks' blocks live in ``chunk_blocks``, created by the first ingest that has some; a store written
    before (no such table) reads its chunks without blocks, and the next ingest of a document adds them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Plans\n\n| Plan | Limit |\n| --- | --- |\n| basic | 10 |\n", encoding="utf-8")
    (docs / "page.html").write_text("<html><body><h1>Page</h1><p>Plain words.</p></body></html>", encoding="utf-8")
    cfg = Config().with_overrides({"embedding.enabled": False})
    with Engine.open(tmp_path / "store", cfg, create=True) as engine:
        assert engine.ingest([docs]).ok
    db = sqlite3.connect(tmp_path / "store" / DB_NAME)
    assert {r[0] for r in db.execute("SELECT doc_id FROM chunk_blocks")} == {"guide.md"}  # html: no blocks
    store = EmbeddedStore.open(tmp_path / "store")
    (chunk,) = store.get_document_chunks("guide.md")
    assert [b.kind for b in chunk.blocks] == ["table_row", "table_row"]  # (the heading line opens no chunk)
    assert chunk.blocks[-1].cells == ("basic", "10") and chunk.blocks[-1].header == ("Plan", "Limit")
    store.close()
    db.execute("DROP TABLE chunk_blocks")  # as a store written before blocks were kept
    db.commit()
    db.close()
    store = EmbeddedStore.open(tmp_path / "store")
    assert [c.blocks for c in store.get_document_chunks("guide.md")] == [()]
    store.close()
    (docs / "guide.md").write_text("# Plans\n\n| Plan | Limit |\n| --- | --- |\n| basic | 20 |\n", encoding="utf-8")
    with Engine.open(tmp_path / "store", cfg) as engine:
        assert engine.ingest([docs]).ok
    store = EmbeddedStore.open(tmp_path / "store")
    (chunk,) = store.get_document_chunks("guide.md")
    assert chunk.blocks[-1].cells == ("basic", "20")
    store.close()
