"""An ingest that asks for embedding into a store kept BM25-only says so, with the command that embeds it."""

from __future__ import annotations

from openbook.api import Engine


def test_asking_to_embed_into_a_bm25_only_store_notes_that_it_stays_bm25_only(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Comets\n\nComets have icy nuclei.\n", encoding="utf-8")
    with Engine.open(tmp_path / "kb", create=True) as engine:
        first = engine.ingest([docs], embed=False)
        assert first.chunks_added and not any("not embedded" in n for n in first.notes)  # it asked for none
        (docs / "b.md").write_text("# Kilns\n\nThe kiln is fired on Fridays.\n", encoding="utf-8")
        second = engine.ingest([docs], embed=True)
        assert second.chunks_added == 1 and second.chunks_embedded == 0 and not engine.has_embeddings
        notes = [n for n in second.notes if "not embedded" in n]
        assert len(notes) == 1 and "BM25-only" in notes[0] and "--reembed" in notes[0], second.notes
        again = engine.ingest([docs], embed=True)  # nothing new: nothing to say
        assert not again.chunks_added and not any("not embedded" in n for n in again.notes)


def test_the_cli_prints_the_note_and_counts_one_chunk_in_the_singular(tmp_path, capsys):
    from openbook.cli import main

    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    (docs / "a.md").write_text("# Comets\n\nComets have icy nuclei.\n", encoding="utf-8")
    main(["ingest", str(docs), "--store", kb, "--no-embed"])
    first = capsys.readouterr()
    assert "; 1 chunk added, 0 removed" in first.out and "store " + kb + ": 1 document, 1 chunk" in first.out
    assert "not embedded" not in first.err
    (docs / "b.md").write_text("# Kilns\n\nThe kiln is fired on Fridays.\n", encoding="utf-8")
    main(["ingest", str(docs), "--store", kb])
    second = capsys.readouterr()
    assert "note: the new chunks were not embedded" in second.err and "--reembed" in second.err, second.err
