"""BM25 through a real store: a chunk's idf counts documents, so how a long document is cut into chunks does not
change how rare its words are (``openbook.index.sparse``, ``with_documents``)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from openbook.api import Engine
from openbook.config import Config

SECTIONS = ["Intake", "Housing", "Seals", "Bearings", "Motor", "Wiring", "Cooling", "Storage"]


def corpus(folder: Path) -> Path:
    """A pump manual of eight sections, each naming the flange (eight chunks, one document), one short note on
    the flange, and three short notes on the impeller (three documents)."""
    folder.mkdir(parents=True)
    manual = ["# Pump manual", ""]
    for name in SECTIONS:
        manual += [f"## {name}", "", textwrap.fill(f"The {name.lower()} of the pump sits next to the flange. "
                                                   f"Inspect the {name.lower()} once a month and log what you "
                                                   f"see in the {name.lower()} record, with the date.", 200), ""]
    (folder / "manual.md").write_text("\n".join(manual), encoding="utf-8")
    (folder / "note-a.txt").write_text("Check the flange before starting.\n", encoding="utf-8")
    (folder / "note-b.txt").write_text("Check the impeller before starting.\n", encoding="utf-8")
    (folder / "note-c.txt").write_text("The impeller was replaced in May.\n", encoding="utf-8")
    (folder / "note-d.txt").write_text("Order a spare impeller for the second line.\n", encoding="utf-8")
    return folder


@pytest.fixture()
def engine(tmp_path: Path):
    eng = Engine.open(tmp_path / "store", Config().with_overrides({"embedding.enabled": False}), create=True)
    eng.ingest([corpus(tmp_path / "docs")])
    yield eng
    eng.close()


def test_a_term_one_document_repeats_in_each_chunk_is_as_rare_as_its_documents_say(engine):
    chunks = engine.store.get_document_chunks(next(d for d in engine.store.get_documents() if "manual" in d))
    assert len(chunks) == len(SECTIONS)  # the manual is eight chunks, each holding "flange"
    hits = engine.search("flange impeller", k=10, mode="bm25", hops=1)
    notes = [h.doc_id for h in hits if "note" in h.doc_id]
    # in documents "flange" (2 of 5) is rarer than "impeller" (3 of 5); counted in chunks it would be the
    # commoner (9 of 12 chunks against 3), and the impeller note of the same length would rank first
    assert notes[0].endswith("note-a.txt")
    assert notes[1].endswith("note-b.txt")
    stats = engine.store.get_corpus_stats()
    assert (stats.documents, stats.chunks) == (5, 12)
    flange = next(h for h in hits if h.doc_id.endswith("note-a.txt"))
    terms = engine.retriever.analyzer.analyze_document(flange.chunk.indexed_text())
    avgdl = stats.avgdl
    idf = math.log1p((5 - 2 + 0.5) / (2 + 0.5))  # Lucene idf over documents
    expected = idf * 1 / (1 + 1.2 * (1 - 0.75 + 0.75 * len(terms) / avgdl))
    assert flange.score == pytest.approx(expected, rel=1e-5)


def test_a_generation_opens_from_its_stored_document_frequencies_or_without_them(engine, tmp_path):
    """A generation keeps ``doc_df.npy`` (the idf's df, so that opening it reads no posting); one without it (a
    store written before the file) opens with the same statistics, computed from the postings."""
    import shutil

    import numpy as np

    from openbook.store.generations import DOC_DF, LoadedIndex

    folder = engine.store.generation_dir()
    assert (folder / DOC_DF).is_file()
    with_file = LoadedIndex(folder)
    bare = tmp_path / "bare"
    shutil.copytree(folder, bare)
    (bare / DOC_DF).unlink()
    without = LoadedIndex(bare)
    np.testing.assert_array_equal(with_file.bm25.idf_by_term, without.bm25.idf_by_term)
    np.testing.assert_array_equal(with_file.bm25.norm, without.bm25.norm)
    np.save(bare / DOC_DF, np.zeros(3, dtype=np.int64))  # not this index's: ignored
    np.testing.assert_array_equal(LoadedIndex(bare).bm25.idf_by_term, with_file.bm25.idf_by_term)
