"""``openbook serve`` embeds the chunks a stopped ingest left without a vector, in the background: the server
answers from its first second (BM25 for the chunks still waiting), and each committed batch joins the dense leg.

Real parts: six Markdown pages on disk, the embedded store, the default embedder, uvicorn on a free port.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from helpers.served import ServerThread, server_config
from openbook.api import Engine, IngestInterrupted

SAMPLES = (Path(__file__).resolve().parents[2] / ".." / "shared" / "samples" / "markdown").resolve()
PAGES = ("docs__permalinks.md", "docs__pagination.md", "docs__front-matter.md")
FLAGS = {"embedding.enabled": True, "chunking.target_words": 30, "chunking.overlap_words": 5,
         "chunking.max_words": 50}


@pytest.mark.slow  # a served store embeds with the real model
def test_the_server_embeds_pending_chunks_in_the_background(tmp_path):
    from openbook.server import create_app

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in PAGES:
        shutil.copy(SAMPLES / name, docs / name)
    store = tmp_path / "store"

    def stop(phase: str, done: int) -> None:
        if phase == "index":
            raise KeyboardInterrupt  # the BM25 index is committed, no vector yet

    config = server_config(store, **FLAGS)
    with Engine.open(store, config, create=True) as engine:
        with pytest.raises(IngestInterrupted):
            engine.ingest([docs], on_commit=stop)
        total = engine.store.get_corpus_stats().chunks
        assert engine.store.get_embedding().pending == total > 64  # more than one batch of vectors

    coverages = []
    app = create_app(store, config, readers=1)
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=60) as c:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            out = c.post("/v1/search", json={"query": "permalink placeholders", "k": 3}).json()
            assert out["hits"]  # answers throughout: BM25 for what has no vector yet
            coverages.append(out["applied"]["dense_coverage"])
            if coverages[-1] == 1.0:
                break
            time.sleep(0.5)
        service = app.state.service
        assert coverages[-1] == 1.0, (coverages, service.background)
    assert coverages == sorted(coverages) and coverages[0] < 1.0  # it grew while the server answered
    assert service.background["embedded"] == total and service.background["error"] is None
    with Engine.open(store, config) as engine:
        ids = engine.store.get_indexed_chunk_ids()
        assert engine.store.get_embedding().pending == 0
        stored = engine.store.get_vectors(ids)
        chunks = engine.store.get_chunks(ids)
        fresh = engine.embedder().embed([chunks[c].indexed_text() for c in ids[:8]], kind="passage")
    # the vectors of these chunks' own texts: the 4-bit engine's output moves by about 1e-3 with the batch a
    # text is embedded in (its padding), so each stored vector is checked to be its own text's, by cosine
    sims = np.asarray(stored[:8]) @ np.asarray(fresh).T
    assert (np.diag(sims) > 0.999).all(), np.diag(sims)
    assert (sims.argmax(axis=1) == np.arange(8)).all()
