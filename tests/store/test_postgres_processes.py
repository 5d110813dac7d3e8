"""``openbook`` processes against one PostgreSQL store (a real server): concurrent ingests, a waiting writer, Ctrl-C,
and ``openbook store copy`` from the embedded store into PostgreSQL and back."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

from openbook.api import Engine  # noqa: E402
from openbook.store.postgres import PostgresStore  # noqa: E402

from test_embedded import BM25, ENV, INTERRUPTED_INGEST, SLOWER_INGEST, cli, finish, folder  # noqa: E402


def counts(url: str) -> tuple[int, int, int]:
    """(documents, chunks, index rows) as a fresh reader sees them."""
    with Engine.open(url, BM25) as e:
        docs, chunks = e.store.count_stored()
        stats = e.store.get_corpus_stats()
        return docs, chunks, stats.chunks if stats else 0


@pytest.mark.slow  # several ingest processes at once on PostgreSQL
def test_a_waiting_writer_says_so_and_readers_keep_working(tmp_path, postgres_url):
    docs = folder(tmp_path, "docs", 3, "Alpha")
    with Engine.open(postgres_url, BM25, create=True) as e:
        e.ingest([docs])
    more = folder(tmp_path, "more", 2, "Bravo", stem="m")
    holder = PostgresStore.open(postgres_url)
    with holder.write_lock():  # another writer holds the store
        proc = cli("ingest", str(more), "--store", postgres_url, "--no-embed", cwd=tmp_path)
        deadline = time.monotonic() + 60
        line = ""
        while "waiting" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        assert "waiting for another openbook ingest" in line
        reader = subprocess.run([sys.executable, "-m", "openbook", "search", "alpha", "--store", postgres_url,
                                 "--json"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
        assert reader.returncode == 0 and len(json.loads(reader.stdout)["hits"]) == 3
        assert proc.poll() is None  # still waiting
    holder.close()
    rc, out, err = finish(proc)
    assert rc == 0 and "2 added" in out, err
    assert counts(postgres_url)[0] == 5


@pytest.mark.slow  # several ingest processes at once on PostgreSQL
def test_two_ingest_processes_of_different_folders_both_land_once(tmp_path, postgres_url):
    slow, quick = folder(tmp_path, "a", 30, "Alpha"), folder(tmp_path, "b", 10, "Bravo", stem="m")
    first = subprocess.Popen([sys.executable, "-c", SLOWER_INGEST, str(slow), postgres_url], cwd=tmp_path, env=ENV,
                             text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the first one holds the writer lock
        time.sleep(0.05)
        try:
            probe = PostgresStore.open(postgres_url)
        except Exception:  # schema not created yet
            continue
        busy = probe.writer_active()
        probe.close()
        if busy:
            break
    second = cli("ingest", str(quick), "--store", postgres_url, "--no-embed", "--json", cwd=tmp_path)
    (rc1, _, err1), (rc2, out2, err2) = finish(first), finish(second)
    assert rc1 == 0 and rc2 == 0, err1 + err2
    assert "waiting for another openbook ingest" in err2 and "Traceback" not in err1 + err2
    assert len(json.loads(out2)["added"]) == 10
    assert counts(postgres_url) == (40, 40, 40)
    with Engine.open(postgres_url, BM25) as e:
        assert len(e.search("alpha", k=100)) == 30 and len(e.search("bravo", k=100)) == 10
        assert len({h.chunk_id for h in e.search("corvid", k=100)}) == 40


def test_the_same_folder_ingested_twice_at_once_is_stored_once(tmp_path, postgres_url):
    a = folder(tmp_path, "docs", 10, "Alpha")
    procs = [cli("ingest", str(a), "--store", postgres_url, "--no-embed", "--json", cwd=tmp_path) for _ in range(2)]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results), [err for _, _, err in results]
    reports = [json.loads(out) for _, out, _ in results]
    assert sorted(len(r["added"]) for r in reports) == [0, 10]
    assert sorted(len(r["unchanged"]) for r in reports) == [0, 10]
    assert counts(postgres_url) == (10, 10, 10)


@pytest.mark.slow  # several ingest processes at once on PostgreSQL
def test_ctrl_c_keeps_the_committed_batches_and_the_next_run_resumes(tmp_path, postgres_url):
    docs = folder(tmp_path, "docs", 150, "Alpha")
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_INGEST, str(docs), postgres_url], cwd=tmp_path,
                            env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # wait for two committed batches, as a reader sees them
        time.sleep(0.1)
        try:
            if counts(postgres_url)[0] >= 20:
                break
        except Exception:
            pass
    proc.send_signal(signal.SIGINT)
    rc, out, err = finish(proc)
    assert rc == 130, err
    assert "Traceback" not in err and "run the same command again to resume" in err
    docs_kept, chunks_kept, rows = counts(postgres_url)
    assert 20 <= docs_kept < 150 and chunks_kept == rows == docs_kept  # every kept document is searchable
    with Engine.open(postgres_url, BM25) as e:
        report = e.ingest([docs])
        assert len(report.unchanged) == docs_kept and len(report.added) == 150 - docs_kept
        assert e.store.count_stored() == (150, 150) and len(e.search("alpha", k=200)) == 150


def run(*args: str, cwd: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "openbook", *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow  # several ingest processes at once on PostgreSQL
def test_store_copy_embedded_to_postgresql_and_back(tmp_path, postgres_url, shared):
    embedded, back = tmp_path / "embedded", tmp_path / "back"
    run("ingest", str(shared / "samples" / "markdown"), "--store", str(embedded), "--no-embed", cwd=tmp_path)
    out = run("store", "copy", str(embedded), postgres_url, cwd=tmp_path)
    assert "copied 49 documents" in out and "BM25-only" in out
    assert "postgresql store, schema version 3" in run("stats", "--store", postgres_url, cwd=tmp_path)
    run("store", "copy", postgres_url, str(back), cwd=tmp_path)
    results = []
    for store in (str(embedded), postgres_url, str(back)):
        hits = json.loads(run("search", "deleted files kept", "--store", store, "--json", "-k", "8",
                              "--where", "format=markdown", cwd=tmp_path))["hits"]
        results.append([(h["chunk_id"], round(h["score"], 4)) for h in hits])
    assert results[0] and results[0] == results[1] == results[2]
    rc = subprocess.run([sys.executable, "-m", "openbook", "store", "copy", str(embedded), postgres_url],
                        cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert rc.returncode == 1 and "already holds documents" in rc.stderr and "Traceback" not in rc.stderr
