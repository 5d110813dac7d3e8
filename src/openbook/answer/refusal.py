"""The refusal sentence, in the question's language.

Every answerer (offline and LLM) says exactly ``REFUSALS[lang]`` when the passages do not hold the answer.
"""

from __future__ import annotations

import re

REFUSALS: dict[str, str] = {
    "en": "I could not find this in the documents.",
    "zh": "我在文档中没有找到这个问题的答案。",
    "ja": "ドキュメントの中にこの質問の答えは見つかりませんでした。",
}

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def question_language(text: str) -> str:
    """``"ja"`` if the text has kana, ``"zh"`` if it has Han characters, else ``"en"``."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return "en"


def refusal_sentence(question: str) -> str:
    """The exact refusal sentence for the question's language."""
    return REFUSALS[question_language(question)]


# ---------------------------------------------------------------------- answerability
#
# The offline answerer refuses when a calibrated answerability score is below ``AnswerConfig.min_confidence``.
# The score is a logistic model over a few features of the question and of the sentence chosen to answer it
# (``FEATURES``), fitted per question language on one split of public QA sets (HotpotQA, CMRC 2018: questions
# over the whole corpus as positives, the same questions with their relevant documents hidden as negatives)
# by ``benchmarks/calibrate_answers.py``, and reported on another (see BENCHMARKS.md).

import math  # noqa: E402
from typing import Mapping  # noqa: E402

ANSWER_TYPES = ("person", "date", "place", "number", "duration")

_TYPE_PATTERNS_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duration", re.compile(r"\bhow (long|old)\b|\bfor how many (years|days|months|weeks|hours)\b")),
    ("number", re.compile(r"\bhow (many|much|large|big|tall|high|deep|far|wide)\b|\bwhat (number|percentage|"
                          r"population|amount)\b")),
    ("date", re.compile(r"\bwhen\b|\b(what|which|in what) (year|date|month|day|decade|century)\b")),
    ("person", re.compile(r"\b(who|whom|whose)\b")),
    ("place", re.compile(r"\bwhere\b|\b(what|which|in what) (city|country|town|state|place|county|region|"
                         r"province|island|village|location|continent|nation)\b")),
)
_TYPE_PATTERNS_CJK: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duration", re.compile(r"多久|多长时间|多少年|多少天|几年|几天|何年間|どのくらい")),
    ("date", re.compile(r"什么时候|何时|哪一年|哪年|何年|哪天|几月|哪个时候|いつ")),
    ("number", re.compile(r"多少|几|多大|多高|多重|多远|いくつ|いくら|何人|何個|何本")),
    ("person", re.compile(r"谁|哪位|誰|だれ")),
    ("place", re.compile(r"哪里|哪儿|什么地方|何处|哪个国家|哪个城市|哪座|どこ")),
)

_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec")
_DATE_RE = re.compile(rf"\b(1\d{{3}}|20\d{{2}})s?\b|\b({'|'.join(_MONTHS.split())})\b|\d{{4}}-\d{{2}}-\d{{2}}|"
                      r"[0-9一二三四五六七八九十〇零]+\s*[年月日]", re.I)
_NUM_RE = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                     r"hundred|thousand|million|billion|dozen)\b|[一二三四五六七八九十百千万亿两〇零]", re.I)
_DURATION_RE = re.compile(r"(\d+|\b(one|two|three|four|five|six|seven|eight|nine|ten|several|many)\b)[\s-]*"
                          r"(years?|months?|weeks?|days?|hours?|minutes?|seconds?|decades?|centuries|century)\b|"
                          r"[0-9一二三四五六七八九十百千万两]+\s*(年|个月|周|天|日|小时|分钟|秒|年間|日間|時間)", re.I)
_CAPITAL_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+")
_WORD_RE = re.compile(r"\w+")


def expected_answer_type(question: str) -> str | None:
    """The answer type a question asks for: ``person``, ``date``, ``place``, ``number``, ``duration``, or None.

    From its wh-phrase (who/when/where/how many/how long, and the Chinese and Japanese equivalents).
    """
    patterns = _TYPE_PATTERNS_EN if question_language(question) == "en" else _TYPE_PATTERNS_CJK
    low = question.casefold()
    for kind, pattern in patterns:
        if pattern.search(low):
            return kind
    return None


def has_answer_type(sentence: str, kind: str | None, question: str) -> bool:
    """Whether ``sentence`` holds a value of answer type ``kind`` that the question itself does not state.

    person/place: a capitalised word absent from the question (English), any new word (other languages);
    date: a year, month name or CJK date; number: a digit or number word; duration: a number with a time unit.
    """
    if kind is None:
        return True
    q_words = {w.casefold() for w in _WORD_RE.findall(question)}

    def new(matches: list[str]) -> bool:
        return any(m.casefold() not in q_words and m.casefold() not in question.casefold() for m in matches)

    if kind == "date":
        return new([m.group(0) for m in _DATE_RE.finditer(sentence)])
    if kind == "number":
        return new([m.group(0) for m in _NUM_RE.finditer(sentence)])
    if kind == "duration":
        return new([m.group(0) for m in _DURATION_RE.finditer(sentence)])
    if question_language(question) != "en":
        return True  # no capitalisation to tell a name by
    return new(_CAPITAL_RE.findall(sentence))


FEATURES = ("passage_coverage", "sentence_coverage", "rare_in_sentence", "rare_in_passage", "unseen",
            "type_missing", "bm25_norm", "few_terms", "bm25_second", "title_overlap", "union_coverage", "bridge",
            "bridge_coverage", "titles_named", "names_found", "two_sentences", "rare_two", "names_two")


def answerability(features: Mapping[str, float], language: str) -> float:
    """Calibrated answerability (0-1): ``sigmoid(b + sum(w_f * x_f))`` with the language's fitted weights.

    Languages without their own fit use the English one ("en" for Latin script, "zh" for Han and kana).
    """
    model = ANSWERABILITY_MODEL.get(language) or ANSWERABILITY_MODEL["zh" if language == "ja" else "en"]
    z = model["bias"] + sum(model.get(name, 0.0) * float(features.get(name, 0.0)) for name in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


# Fitted by benchmarks/calibrate_answers.py (logistic regression with monotone weights, L2 0.0003) on the
# calibration split (HotpotQA and CMRC questions outside the reported sample, Cranfield questions with a
# "complete answer" judgement, off-topic negatives); the bias is shifted so that 0.5 is the operating point
# chosen there: 95% of calibration positives answered, the stated aim (--answered 0.95). Command in
# BENCHMARKS.md.
ANSWERABILITY_MODEL: dict[str, dict[str, float]] = {
    "en": {
        "bias": -4.0051, "sentence_coverage": 0.4469, "bm25_norm": 1.0391, "few_terms": -1.1125,
        "union_coverage": 1.0337, "bridge_coverage": 2.2097, "names_found": 1.4161, "two_sentences": 1.7612,
        "rare_two": 0.7638, "names_two": 0.758,
    },
    "zh": {
        "bias": -5.9191, "passage_coverage": 0.4914, "sentence_coverage": 4.6862, "rare_in_passage": 1.4036,
        "bm25_norm": 2.5765, "few_terms": -0.8168, "union_coverage": 0.2165, "bridge_coverage": 0.7052,
        "two_sentences": 3.0561, "rare_two": 2.0978,
    },
}
