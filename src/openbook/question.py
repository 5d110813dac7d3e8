"""What a question asks for, and whether a text states it: the question analysis shared by retrieval and answering.

Both ``openbook.retrieve`` and ``openbook.answer`` import from here (neither imports the other for it):

- **Language** (``question_language``): "ja" with kana, "zh" with Han characters, else "en".
- **Identifiers** (``identifiers``): ticket-shaped codes such as SKY-5120 or CVE-2024-3094 (capitals, hyphen-joined
  parts, the last one of three or more digits; not IL-18 or HIV-1). The identifier hop
  (``openbook.retrieve.multihop``) follows them, and the answerer quotes the line they lead to
  (``openbook.answer.bridge.code_sentence``).
- **The value a question asks for, two views of it:**

  - ``asked_value`` / ``states_value`` (``version``, ``date``, ``number``) decide whether the identifier hop
    fires and which passage it links; ``bridge.code_sentence`` uses the same pair for the answer.
  - ``expected_answer_type`` / ``has_answer_type`` (``person``, ``date``, ``place``, ``number``, ``duration``)
    feed the sentence choice (``extractive.TYPE_BONUS``) and the answerability features (``type_missing``)
    of ``openbook.answer.extractive``, and the cross-language check.

  They are two tables, not one, because they answer two questions and each was calibrated with its own:
  the hop must fire only where a missing value can be found by one more search, and the answerability model
  was fitted on the answer types as they are. Where they differ:

  - "when" counts for the hop only at the start of a clause ("When did ...", "..., and when ..."); the
    answer type takes it anywhere, so "What happens when the disk is full?" asks for a date there but makes
    no identifier hop.
  - "which version/release/build" is a kind of its own for the hop; the answer types have no version.
  - "how long" is a ``number`` for the hop (any number states it) and a ``duration`` answer type; "how
    often" and "what share" ask for a number for the hop only; "how large/tall/far ...", "what population",
    "what is the limit/price/fee ..." only for the answer type.
  - The hop reads the question's words with any whitespace between them, in English only; the answer types
    read its case-folded text, with Chinese and Japanese patterns for a question in those scripts.
  - What states the value differs in the same way: the hop's number is a digit run that is no part of a name
    or an identifier (not IL-18's 18), its date a year 1500-2099 or a month and a day; the answer type's
    number is any digit, a number word or a CJK numeral, its date a year 1000-2099, a month name alone, an ISO
    or a CJK date.

  Merging the two changes when the hop fires and the inputs the answerability model was fitted on, so it
  would need the retrieval benchmarks and the calibration re-run.
- **Units** (``expected_unit`` / ``states_unit``): a question asking for a size or a price is answered only by
  a text stating a value in bytes or a currency.
"""

from __future__ import annotations

import re

__all__ = ["question_language", "identifiers", "asked_value", "states_value", "ANSWER_TYPES",
           "expected_answer_type", "has_answer_type", "expected_unit", "states_unit"]

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def question_language(text: str) -> str:
    """``"ja"`` if the text has kana, ``"zh"`` if it has Han characters, else ``"en"``."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return "en"


# ---------------------------------------------------------------------- identifiers

_CODE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{3,}(?![\w-])")
"""An identifier: a capital, capitals or digits, hyphen-joined parts, the last one three or more digits."""


def identifiers(text: str) -> list[str]:
    """Identifiers in ``text`` (``SKY-5120``, ``E-2043``, ``SL-PRO-500``, ``CVE-2024-3094``; not ``IL-18``
    or ``HIV-1``), distinct, in order of first occurrence."""
    return list(dict.fromkeys(_CODE.findall(text)))


# ---------------------------------------------------------------------- the identifier hop's view

# what a question asks for, and what states it: (kind, question pattern, value pattern)
_ASKED: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    ("version", re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:version|release|build)s?\b", re.I),
     re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.])", re.I)),
    ("date", re.compile(r"(?:^|[,;]\s*|\band\s+)when\b|\b(?:which|what)\s+(?:date|day|year|month)\b", re.I),
     re.compile(r"\b(?:1[5-9]|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d", re.I)),
    ("number", re.compile(r"\bhow\s+(?:many|much|long|often)\b|\bwhat\s+(?:percentage|share|number|amount)\b",
                          re.I),
     re.compile(r"(?<![\w-])\d+(?:[.,]\d+)*")),  # not the digits of a name (IL-18)
)


def asked_value(question: str) -> str | None:
    """The kind of value a question asks for: ``version`` ("in which version"), ``date`` ("when", "what
    year"), ``number`` ("how many", "what share"), or None (a claim, a "what is" question)."""
    for kind, asks, _ in _ASKED:
        if asks.search(question):
            return kind
    return None


def states_value(text: str, kind: str, question: str) -> bool:
    """Whether ``text`` states a value of ``kind`` (``asked_value``) that ``question`` does not: a version
    number (5.3, v2.10.1), a year or a month and day, or a number; the digits of an identifier (SKY-5120) are
    no value."""
    pattern = next(v for k, _, v in _ASKED if k == kind)
    asked = set(pattern.findall(_CODE.sub(" ", question)))
    return any(m not in asked for m in pattern.findall(_CODE.sub(" ", text)))


# ---------------------------------------------------------------------- the answerer's view

ANSWER_TYPES = ("person", "date", "place", "number", "duration")

_TYPE_PATTERNS_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duration", re.compile(r"\bhow (long|old|quickly|soon)\b|\bfor how many (years|days|months|weeks|hours)\b|"
                            r"\bwithin (what|which) (time|period)\b")),
    ("number", re.compile(r"\bhow (many|much|large|big|tall|high|deep|far|wide)\b|\bwhat (number|percentage|"
                          r"population|amount)\b|\bwhat(?:'s| is| are) (?:the|a|an) (?:[\w-]+ ){0,3}?(limit|"
                          r"maximum|minimum|price|cost|fee|quota)s?\b")),
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


# A question asking for a quantity in a unit (a file size, a price) is answered only by a sentence that states
# a value in that unit: "the maximum file size I can upload" is not answered by a link's expiry in days.
_UNIT_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("size", re.compile(r"\b(file|upload|attachment|storage|disk|mailbox|message|database|download)s? (size|"
                        r"limit|quota|space|capacity)\b|\bhow (much|big|large) (of )?(a |an |the )?(file|upload|"
                        r"attachment|storage|disk space|space|memory|ram)\b|文件大小|存储空间|容量")),
    ("money", re.compile(r"\bhow much (does|do|did|is|are|will|would)\b.*\b(cost|pay|charge|price|fee)s?\b|"
                         r"\bwhat(?:'s| is| are) (?:the|a|an) (?:[\w-]+ ){0,3}?(price|cost|fee)s?\b|多少钱|价格|费用|"
                         r"いくら|料金|値段|価格|費用")),
)
_UNIT_WORDS: dict[str, re.Pattern[str]] = {
    "size": re.compile(r"(?<![^\W\d_])(?:[KMGTP]i?B|bytes?|kilobytes?|megabytes?|gigabytes?|terabytes?)"
                       r"(?![a-z])|字节", re.I),
    "money": re.compile(r"[$€£¥₹₩]|\b(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|KRW|dollars?|euros?|pounds?|yen|won)\b|"
                       r"元|美元|欧元|円|ドル|ユーロ|ポンド|원", re.I),
}
_FREE_RE = re.compile(r"\bfree\b|免费|無料", re.I)


def expected_unit(question: str) -> str | None:
    """The unit a question's answer must be stated in: ``size`` (bytes: "maximum file size", "how much
    storage") or ``money`` (a currency: "how much does it cost", "what is the price"), else None."""
    low = question.casefold()
    for unit, pattern in _UNIT_QUESTIONS:
        if pattern.search(low):
            return unit
    return None


def states_unit(sentence: str, unit: str) -> bool:
    """Whether ``sentence`` states a value in ``unit`` (``expected_unit``): a number and a byte unit (KB, MB, GB,
    TB, bytes) for ``size``; a number and a currency (sign, code or word), or "free", for ``money``. The unit
    may sit apart from the number, as in a table row read as ``Price (USD): 8.50``."""
    if unit == "money" and _FREE_RE.search(sentence):
        return True
    return bool(_UNIT_WORDS[unit].search(sentence)) and any(ch.isdigit() for ch in sentence)
