"""The Latin-script language identifier (openbook/_langid.py): mapped from a per-user cache of py3langid's
decompressed model, it tells the same language with the same probability as the identifier built from the shipped
model; the cache is written once, then read; a folder that cannot be written falls back to the shipped model; and
``lexicon.unseen_common_words`` does not load the identifier for a question whose words the corpus all has."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbook import _langid, question
from openbook.index.analyzer import Analyzer
from openbook.question import LATIN_LANGUAGES
from openbook.retrieve.lexicon import unseen_common_words

TEXTS = [
    "protein misfolding in neurodegenerative disease",
    "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft",
    "Wie setze ich mein Passwort zurück?",
    "Der Hauptsitz des Unternehmens befindet sich in Rotterdam, am Hafen.",
    "Comment réinitialiser mon mot de passe ?",
    "¿Cómo restablezco mi contraseña?",
    "Qual è la capitale della Toscana?",
    "Onde fica a estação de comboios mais próxima?",
    "Hoe laat vertrekt de laatste trein naar Utrecht?",
    "Giuseppe Verdi Ambroise Thomas opera",
    "SKY-5120 E-2043",
    "NAÏVE BAYES IN CAPITALS",
    "é",
    "",
]


@pytest.fixture(scope="module")
def shipped():
    return _langid._shipped(LATIN_LANGUAGES)


def test_the_cached_identifier_classifies_as_the_shipped_one(tmp_path: Path, shipped) -> None:
    mapped = _langid.identifier(LATIN_LANGUAGES, tmp_path)
    assert isinstance(mapped.tk_nextmove, memoryview)  # read from the cache, not decompressed
    for text in TEXTS:
        assert mapped.classify(text) == shipped.classify(text), text
        assert mapped.rank(text) == shipped.rank(text), text


def test_the_cache_is_written_once_then_read(tmp_path: Path, monkeypatch) -> None:
    _langid.identifier(LATIN_LANGUAGES, tmp_path)
    path = _langid.cache_path(tmp_path, LATIN_LANGUAGES)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary folder left behind
    assert sorted(p.name for p in path.iterdir()) == sorted(f"{name}.npy" for name in _langid._ARRAYS)

    def no_model(languages):
        raise AssertionError("the shipped model was loaded although the cache is there")

    monkeypatch.setattr(_langid, "_shipped", no_model)
    again = _langid.identifier(LATIN_LANGUAGES, tmp_path)
    assert again.classify("Wie setze ich mein Passwort zurück?")[0] == "de"
    # other languages get their own cache
    assert _langid.cache_path(tmp_path, ("en", "de")) != path


def test_a_broken_cache_is_rebuilt(tmp_path: Path, shipped) -> None:
    path = _langid.cache_path(tmp_path, LATIN_LANGUAGES)
    path.mkdir(parents=True)
    (path / "nextmove.npy").write_bytes(b"not an array")
    rebuilt = _langid.identifier(LATIN_LANGUAGES, tmp_path)
    assert rebuilt.classify(TEXTS[2]) == shipped.classify(TEXTS[2])


def test_a_folder_that_cannot_be_written_falls_back_to_the_shipped_model(tmp_path: Path, shipped) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    fallback = _langid.identifier(LATIN_LANGUAGES, blocker / "langid")  # (root may write anywhere, but not here)
    assert not isinstance(fallback.tk_nextmove, memoryview)
    assert [fallback.classify(t) for t in TEXTS] == [shipped.classify(t) for t in TEXTS]
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_the_language_is_not_told_for_a_question_with_every_word_in_the_corpus() -> None:
    analyzer = Analyzer()
    question._latin_identifier.cache_clear()
    try:
        words = "protein misfolding in neurodegenerative disease"
        vocabulary = dict.fromkeys(analyzer.analyze(words), 1)
        assert unseen_common_words(words, analyzer, vocabulary) == []
        assert question._latin_identifier.cache_info().currsize == 0  # the model was not loaded
        assert [w for w, _ in unseen_common_words("protein folding in prion disease", analyzer, vocabulary)] == \
            ["folding", "prion"]
        assert question._latin_identifier.cache_info().currsize == 1  # a word to return: the language is told
        assert unseen_common_words("Wie schnell muss ein verlorener Laptop gemeldet werden?", analyzer,
                                   vocabulary) == []
    finally:
        question._latin_identifier.cache_clear()
