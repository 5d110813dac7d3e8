"""Contextual retrieval's plumbing against a real model: SmolLM2-135M-Instruct served by llama-cpp-python's
OpenAI-compatible server (the ``llama_server`` fixture). The model is too small for useful contexts; this checks
the path (request, usage counters, cache, one-line contexts kept apart from the chunk text), not the quality."""

from __future__ import annotations

import pytest

from openbook.api import Engine
from openbook.config import ChunkingConfig, Config, EmbeddingConfig, IngestConfig, LLMConfig

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # slow: starts the llama.cpp server and runs a real model

TEXT = """# Kestrel reactor report

The Kestrel fusion reactor at Vollmark produced 41 gigawatt-hours in its third year.

## Staffing

Eleven operators completed the new simulator course, and the night shift now has three licensed operators.
"""


def test_contexts_from_a_real_server(tmp_path, llama_server):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "kestrel.md").write_text(TEXT, encoding="utf-8")
    cfg = Config(chunking=ChunkingConfig(target_words=20, overlap_words=0, max_words=30),
                 embedding=EmbeddingConfig(enabled=False), ingest=IngestConfig(contextualize=True),
                 llm=LLMConfig(backend="openai", model="smollm2-135m", base_url=llama_server, max_retries=0,
                               timeout_s=120))
    with Engine.open(tmp_path / "s", cfg, create=True) as engine:
        report = engine.ingest([tmp_path / "docs"])
        stats = report.contextualize
        assert report.ok and stats["failed"] == 0 and stats["calls"] == report.chunks_added >= 2
        assert stats["input_tokens"] > 0 and stats["output_tokens"] > 0
        chunks = engine.store.get_document_chunks("kestrel.md")
        assert all(c.context and "\n" not in c.context for c in chunks)
        assert all(c.text in TEXT for c in chunks)  # the passage text is the document's own
        engine.delete(["kestrel.md"])
        again = engine.ingest([tmp_path / "docs"])
        assert again.contextualize["calls"] == 0 and again.contextualize["cached"] == report.chunks_added
