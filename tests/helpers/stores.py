"""A small real BM25-only store built from a dict of file texts (the answer tests' common setup)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from openbook.api import Engine
from openbook.config import Config


def docs_engine(root: Path, docs: Mapping[str, str], *, embedding: bool, store: str | Path | None = None) -> Engine:
    """Write ``docs`` (relative path -> text) under ``root/docs``, ingest them into a new store at ``store``
    (default ``root/store``; or a URL, e.g. the ``postgresql_location`` fixture's) (``embedding``: with the default
    embedder, a hybrid store; else BM25 only), and return the open engine (the caller closes it). Fails the test if
    ingest fails."""
    folder = root / "docs"
    for name, text in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    config = Config().with_overrides({"embedding.enabled": embedding})
    engine = Engine.open(root / "store" if store is None else store, config, create=True)
    assert engine.ingest([folder]).ok
    return engine


def bm25_engine(root: Path, docs: Mapping[str, str]) -> Engine:
    """``docs_engine`` with embedding off: a BM25-only store."""
    return docs_engine(root, docs, embedding=False)


def hybrid_engine(root: Path, docs: Mapping[str, str]) -> Engine:
    """``docs_engine`` with the default embedder: a hybrid store."""
    return docs_engine(root, docs, embedding=True)


def engine_chunked_before(root: Path, docs: Mapping[str, str], monkeypatch, revision: str) -> Engine:
    """``bm25_engine`` over ``docs`` as a store written before the chunker revision ``revision`` existed: its
    ingest hashes carry every chunker revision but that one, and no file parts (so the next ingest parses each
    file again). The patches are undone before it returns; the caller closes the engine."""
    import openbook.ingest.pipeline as pipeline
    from openbook.chunking import chunker_revision

    monkeypatch.setattr(pipeline, "chunker_revision",
                        lambda doc: "+".join(p for p in chunker_revision(doc).split("+") if p != revision))
    monkeypatch.setattr(pipeline, "file_digest", lambda path, settings: None)  # such a store has no file parts
    try:
        return bm25_engine(root, docs)
    finally:
        monkeypatch.undo()
