"""benchmarks/make_synonym_beir.py on a tiny hand-made WordNet folder and a real BM25 store: a question's key word
that the relevant document uses becomes a synonym the corpus lacks; a word used mostly in another sense is kept."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from helpers.stores import bm25_engine

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "make_synonym_beir.py"
_spec = importlib.util.spec_from_file_location("make_synonym_beir", _SCRIPT)
syn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(syn)


def _wordnet(root: Path) -> Path:
    """WordNet 3.0's noun files for: film/movie (hypernym show), show, star (a celestial body first, but tagged
    mostly in its second sense, a performer)."""
    root.mkdir(parents=True, exist_ok=True)
    synsets = [(["film", "movie"], [1]), (["show"], []), (["star"], []), (["star", "headliner"], [])]
    lines, offsets, pos = [], [], 0
    for lemmas, _ in synsets:  # every offset is 8 digits, so a line's length does not depend on the values
        offsets.append(pos)
        pos += len(_line(0, lemmas, [0] * len(_))) + 1
    for (lemmas, hyps), off in zip(synsets, offsets):
        lines.append(_line(off, lemmas, [offsets[h] for h in hyps]))
    (root / "data.noun").write_text("\n".join(lines) + "\n", encoding="latin-1")
    (root / "index.noun").write_text(
        "  1 This software and database is being provided to you\n"
        f"film n 1 1 @ 1 1 {offsets[0]:08d}  \nmovie n 1 1 @ 1 1 {offsets[0]:08d}  \n"
        f"show n 1 0 1 1 {offsets[1]:08d}  \nstar n 2 0 2 2 {offsets[2]:08d} {offsets[3]:08d}  \n", encoding="latin-1")
    (root / "index.sense").write_text(
        f"film%1:10:00:: {offsets[0]:08d} 1 40\nstar%1:17:00:: {offsets[2]:08d} 1 3\n"
        f"star%1:18:00:: {offsets[3]:08d} 2 20\n", encoding="latin-1")
    return root


def _line(offset: int, lemmas: list[str], hypernyms: list[int]) -> str:
    words = " ".join(f"{w} 0" for w in lemmas)
    ptrs = "".join(f" @ {h:08d} n 0000" for h in hypernyms)
    return f"{offset:08d} 10 n {len(lemmas):02x} {words} {len(hypernyms):03d}{ptrs} | a gloss  "


def test_wordnet_reader(tmp_path):
    nouns = syn.WordNetNouns(_wordnet(tmp_path))
    assert nouns.alternatives("film") == ["movie", "show"]
    assert nouns.dominant("film") and not nouns.dominant("star")


def test_rewrite_replaces_the_key_word_with_a_synonym_the_corpus_lacks(tmp_path):
    nouns = syn.WordNetNouns(_wordnet(tmp_path / "wn"))
    doc = "The film Kiss and Tell was released in 1945; its star was Shirley Temple."
    engine = bm25_engine(tmp_path, {"a.md": doc, "b.md": "A show about the sea."})
    try:
        got = syn.rewrite("Which star of the film was born in 1928?", doc, engine, nouns)
        assert got == ("Which star of the movie was born in 1928?", "film", "movie")
        # "show" is in the corpus: only "movie" is a word the documents never use
        assert syn.rewrite("Which star was born in 1928?", doc, engine, nouns) is None  # star: another sense
    finally:
        engine.close()
