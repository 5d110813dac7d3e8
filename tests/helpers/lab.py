"""Skyladder lab access for tests: chunks of its documents and passages built from them."""

from __future__ import annotations

from pathlib import Path

from openbook.chunking import chunk_document
from openbook.ingest import load_file
from openbook.types import Chunk, Hit, Passage

LAB = Path(__file__).resolve().parents[2] / ".." / "shared" / "labs" / "skyladder"


def lab_chunks(prefixes: tuple[str, ...]) -> dict[str, list[Chunk]]:
    """Chunks of the lab documents whose file names start with the given ids (``doc-024``), by id."""
    out: dict[str, list[Chunk]] = {}
    for path in sorted((LAB / "docs").iterdir()):
        if path.name[:7] in prefixes:
            (doc,) = load_file(path, path.name)
            out[path.name[:7]] = chunk_document(doc)
    missing = set(prefixes) - set(out)
    assert not missing, f"lab documents {sorted(missing)} missing under {LAB}"
    return out


def passages_of(chunks: list[Chunk]) -> list[Passage]:
    """Chunks as best-first passages numbered 1..n."""
    return [Passage(i, Hit(c.chunk_id, c.doc_id, float(len(chunks) - i), chunk=c)) for i, c in enumerate(chunks, 1)]


def find_chunk(chunks: list[Chunk], needle: str) -> Chunk:
    """The first chunk whose text holds ``needle``."""
    for c in chunks:
        if needle in c.text:
            return c
    raise AssertionError(f"no chunk holds {needle!r}")
