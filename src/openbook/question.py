"""What a question asks for, and whether a text states it: the question analysis shared by retrieval and answering.

Both ``openbook.retrieve`` and ``openbook.answer`` import from here (neither imports the other for it):

- **Language** (``question_language``): "ja" with kana, "zh" with Han characters, "ko", "ru", "ar", "th" ...
  for a question mostly in another script (``script_language``; the scripts are ``openbook.scripts``), and
  for Latin script "de", "fr", "es", "it", "pt" or "nl" when py3langid is sure enough (``latin_language``),
  else "en". A passage's language (``text_language``) goes by the share of each script's letters instead: one
  Han name in an English document does not make it Chinese. Every language decision in openbook is one of these
  (py3langid is called here only, through ``openbook._langid``).
- **Identifiers** (``identifiers``): ticket-shaped codes such as BUG-7310 or CVE-2024-3094 (capitals, hyphen-joined
  parts, the last one of three or more digits; not IL-18 or HIV-1). The identifier hop
  (``openbook.retrieve.multihop``) follows them, and the answerer quotes the line they lead to
  (``openbook.answer.bridge.code_sentence``).
- **Command-line options** (``command_options``): "-v", "--invert-match" as written, case kept. Retrieval puts
  the chunk holding the option's own manual entry first (``openbook.retrieve.options``).
- **The value a question asks for, two views of it:**

  - ``asked_value`` / ``states_value`` (``version``, ``date``, ``number``) decide whether the identifier hop
    fires and which passage it links; ``bridge.code_sentence`` uses the same pair for the answer.
  - ``expected_answer_type`` / ``has_answer_type`` (``person``, ``date``, ``place``, ``number``, ``duration``,
    ``frequency``)
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
    often" is a ``number`` for the hop and a ``frequency`` answer type (a duration or a rate: "every 36
    months", "annually"); "what share" asks for a number for the hop only; "how large/tall/far ...", "what
    population", "what is the limit/price/fee ..." only for the answer type.
  - The hop reads the question's words with any whitespace between them, in English only; the answer types
    read its case-folded text, with patterns per question language (Chinese, Japanese, Korean, Russian and
    the Latin-script languages ``latin_language`` tells).
  - What states the value differs in the same way: the hop's number is a digit run that is no part of a name
    or an identifier (not IL-18's 18), its date a year 1500-2099 or a month and a day; the answer type's
    number is any digit, a number word or a CJK numeral, its date a year 1000-2099, a month name alone, an ISO
    or a CJK date.

  Merging the two changes when the hop fires and the inputs the answerability model was fitted on, so it
  would need the retrieval benchmarks and the calibration re-run.
- **Units** (``expected_unit`` / ``states_unit``): a question asking for a size or a price is answered only by
  a text stating a value in bytes or a currency.
- **Situation and ask** (``question_parts``): a scenario question ("A tenant moved out two months ago and the
  deposit has not come back. Can they still claim it themselves?") states a situation and then
  asks. Its sentences are cut by BlingFire (``chunking.split_sentences``, the chunker's splitter), pieces cut
  inside quotes or brackets, after an abbreviation ("Rostker v. Goldberg") or not at a sentence end joined back;
  the ask runs from the first to the last sentence with a question mark (a text without one is all ask),
  its clause after ";", ":" or a dash
  when that clause opens with a question word ("My tree fell on the fence last night; who pays for it?"); the
  rest is the situation. A one-sentence question is all ask (situation ""). The answerer counts the
  situation's words as context, not as words the answer must hold (``openbook.answer.extractive``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import regex

from .scripts import HAN, HANGUL, KANA, LATIN, OTHER_SCRIPTS

__all__ = ["question_language", "text_language", "script_language", "latin_language", "LATIN_LANGUAGES",
           "identifiers", "asked_value", "states_value", "ANSWER_TYPES", "expected_answer_type", "has_answer_type",
           "expected_unit", "states_unit", "QuestionParts", "question_parts"]

_UKRAINIAN = re.compile(r"[іїєґІЇЄҐ]")
_LETTER = regex.compile(r"[^\W\d_]")

LATIN_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")
"""The Latin-script languages told apart (py3langid's bundled langid.py model, restricted to these)."""
LATIN_CONFIDENCE = 0.8
"""The least probability (py3langid, normalised over ``LATIN_LANGUAGES``) at which a Latin-script text is taken
to be in another language than English. On the 1,834 English questions of HotpotQA dev 500, SciFact and
Cranfield and their 11,441 passages no other language reaches 0.7; one-line German, French, Spanish, Italian,
Portuguese and Dutch questions mostly score 0.95-1.0, a few short ones less (and count as English)."""


@functools.lru_cache(maxsize=1)
def _latin_identifier() -> Any:
    """py3langid's identifier over ``LATIN_LANGUAGES``, once per process: mapped from the per-user cache
    ``<user cache folder>/langid`` in a few milliseconds, built there from py3langid's compressed model (about a
    second) by the first process (``openbook._langid``)."""
    from ._cachedir import cache_folder
    from ._langid import identifier

    return identifier(LATIN_LANGUAGES, cache_folder("langid"))


_ENGLISH_WORDS = frozenset(
    "the what which who whom whose how when where why does did are were and with this that from your should would "
    "could have has been there their they".split())
"""English function words that are no word of the other ``LATIN_LANGUAGES``."""
_ASCII_WORD = re.compile(r"[a-z]+")


def latin_language(text: str) -> str:
    """The language of a Latin-script text: one of ``LATIN_LANGUAGES`` when py3langid gives it at least
    ``LATIN_CONFIDENCE``, else ``"en"``. A text whose words are at least 1 in 12 English function words
    (``_ENGLISH_WORDS``: "the", "what", "how", "and" ...) is English without asking the model (mapped
    from a per-user cache, ``_latin_identifier``): most English questions and passages never load it."""
    words = _ASCII_WORD.findall(text.casefold())
    english = sum(w in _ENGLISH_WORDS for w in words)
    if english and english * 12 >= len(words):
        return "en"
    lang, probability = _latin_identifier().classify(text)
    return str(lang) if probability >= LATIN_CONFIDENCE else "en"


def script_language(text: str) -> tuple[str, int]:
    """The language of the non-Latin, non-CJK script with the most letters in ``text``
    (``openbook.scripts.OTHER_SCRIPTS``, the first on a tie; Cyrillic with і, ї, є or ґ is Ukrainian) and its
    letter count; ``("en", 0)`` when there is none."""
    best, count = "en", 0
    for script in OTHER_SCRIPTS:
        n = script.count(text)
        if n > count:
            best, count = str(script.language), n
    if best == "ru" and _UKRAINIAN.search(text):
        best = "uk"
    return best, count


def question_language(text: str) -> str:
    """The language of a question (or text) by its script: ``"ja"`` if it has kana, ``"ko"`` if Hangul
    makes at least a third of its letters, ``"zh"`` if it has Han characters, else the language of another
    script that makes at least a third of its letters (``script_language``: ``"ru"``, ``"ar"``, ``"th"`` ...;
    each a key of ``REFUSALS``), else for Latin script the language py3langid tells with confidence
    (``latin_language``: ``"de"``, ``"fr"``, ``"es"``, ``"it"``, ``"pt"``, ``"nl"``), else ``"en"``."""
    if KANA.pattern.search(text):
        return "ja"
    lang, count = script_language(text)
    third = count > 0 and count * 3 >= len(_LETTER.findall(text))
    if lang == HANGUL.language and third:
        return "ko"
    if HAN.pattern.search(text):
        return "zh"
    if third:
        return lang
    return latin_language(text) if LATIN.pattern.search(text) else "en"


_RE_LETTER = re.compile(r"[^\W\d_]")
"""A letter as ``re`` reads one (``str.isalnum``: no combining marks), which ``text_language`` counts by; ``_LETTER``
(``regex``: marks are letters) counts more in Thai or Devanagari."""


def text_language(text: str, latin: bool = True) -> str:
    """The language of a text by script (``openbook.scripts``): ``"ja"`` (kana), ``"zh"`` (Han), ``"ko"``
    (Hangul) when those characters are at least a third of its letters; else the language of another script
    (``script_language``: ``"ru"`` for Cyrillic, ``"ar"``, ``"th"``, ``"el"`` ...) when that script
    has at least 3 letters, more than kana, Han and Hangul together, and at least a third of all letters; else
    the Latin-script language py3langid tells with confidence (``latin_language``), else ``"en"``.

    Unlike ``question_language``, one Han name in an English document does not make it Chinese.
    ``latin=False``: Latin script is ``"en"`` whatever the language (for a sentence, too short to tell by).
    """
    letters = len(_RE_LETTER.findall(text))
    if not letters:
        return "en"
    kana, han, hangul = KANA.count(text), HAN.count(text), HANGUL.count(text)
    other, count = script_language(text)
    if other != "ko" and count >= 3 and count > kana + han + hangul:  # (not "β = 118" in a formula)
        return other if count * 3 >= letters else latin_language(text) if latin else "en"
    if (kana + han + hangul) * 3 < letters:
        return latin_language(text) if latin else "en"
    if kana and kana * 10 >= kana + han:
        return "ja"
    return "ko" if hangul > han else "zh"


# ---------------------------------------------------------------------- identifiers

_CODE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{3,}(?![\w-])")
"""An identifier: a capital, capitals or digits, hyphen-joined parts, the last one three or more digits."""


def identifiers(text: str) -> list[str]:
    """Identifiers in ``text`` (``BUG-7310``, ``E-3071``, ``AX-PRO-500``, ``CVE-2024-3094``; not ``IL-18``
    or ``HIV-1``), distinct, in order of first occurrence."""
    return list(dict.fromkeys(_CODE.findall(text)))


# ---------------------------------------------------------------------- command-line options

_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?![\w-])")
"""A command-line option as written: one or two dashes after a space or the start, a letter, then letters, digits,
``_`` or ``-`` ("-v", "-V", "--invert-match", "-name"); never the hyphen inside a word ("X-ray", "e-mail")."""


def command_options(question: str) -> list[str]:
    """The command-line options ``question`` names, as written, distinct, in order of first occurrence
    ("What does grep -v do?" -> ``["-v"]``; "tar --exclude or -X?" -> ``["--exclude", "-X"]``). Case is kept:
    ``-v`` and ``-V`` are different options, which the analyzer (case-folded, dashes dropped) reads alike."""
    return list(dict.fromkeys(_OPTION.findall(question)))


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
    number (5.3, v2.10.1), a year or a month and day, or a number; the digits of an identifier (BUG-7310) are
    no value."""
    pattern = next(v for k, _, v in _ASKED if k == kind)
    asked = set(pattern.findall(_CODE.sub(" ", question)))
    return any(m not in asked for m in pattern.findall(_CODE.sub(" ", text)))


# ---------------------------------------------------------------------- the answerer's view

ANSWER_TYPES = ("person", "date", "place", "number", "duration", "frequency")

_TYPE_PATTERNS_EN: tuple[tuple[str, str], ...] = (
    ("duration", r"\bhow (long|old|quickly|soon)\b|\bfor how many (years|days|months|weeks|hours)\b|"
                 r"\bwithin (what|which) (time|period)\b"),
    ("frequency", r"\bhow (often|frequently)\b"),
    ("number", r"\bhow (many|much|large|big|tall|high|deep|far|wide)\b|\bwhat (number|percentage|"
               r"population|amount)\b|\bwhat(?:'s| is| are) (?:the|a|an) (?:[\w-]+ ){0,3}?(limit|"
               r"maximum|minimum|price|cost|fee|quota)s?\b"),
    ("date", r"\bwhen\b|\b(what|which|in what) (year|date|month|day|decade|century)\b"),
    ("person", r"\b(who|whom|whose)\b"),
    ("place", r"\bwhere\b|\b(what|which|in what) (city|country|town|state|place|county|region|"
              r"province|island|village|location|continent|nation)\b"),
)
_TYPE_PATTERNS_CJK: tuple[tuple[str, str], ...] = (
    ("duration", r"多久|多长时间|多少年|多少天|几年|几天|何年間|どのくらい"),
    ("date", r"什么时候|何时|哪一年|哪年|何年|哪天|几月|哪个时候|いつ"),
    ("number", r"多少|几|多大|多高|多重|多远|いくつ|いくら|何人|何個|何本"),
    ("person", r"谁|哪位|誰|だれ"),
    ("place", r"哪里|哪儿|什么地方|何处|哪个国家|哪个城市|哪座|どこ"),
)

# Japanese, Korean and Russian wh-phrases; a Japanese question not matched here falls back to the Chinese and
# Japanese patterns above (Han words both languages share: 何時, 誰)
_TYPE_PATTERNS_JA: tuple[tuple[str, str], ...] = (
    ("duration", r"(どのくらい|どれくらい|どれぐらい|どのぐらい)の?(期間|時間|日数|年数|かか|続)|"
                 r"何(年|日|時|週|分|秒)間|何(ヶ|か|カ|ケ)月|何歳|いつまで(に|で)?(続|かか)"),
    ("date", r"いつ|何年(?!間)|何月|何日(?!間)|何曜日|何時(?!間)|日付|日にち"),
    ("number", r"いくつ|いくら|何(人|個|本|回|件|台|枚|冊|名|社|軒|階|倍|割|パーセント|%|％)|"
               r"(どのくらい|どれくらい)の?(数|量|人数|金額|大きさ|高さ|速さ)"),
    ("person", r"誰|だれ|どなた|どの人"),
    ("place", r"どこ|どの(国|都市|町|市|地域|県|州|場所|島)|所在地|場所は"),
)
_TYPE_PATTERNS_KO: tuple[tuple[str, str], ...] = (
    ("duration", r"얼마나\s*(오래|걸리|걸려|걸립|긴|길|동안|지속)|얼마\s*동안|"
                 r"몇\s*(년|개월|달|주|일|시간|분|초)\s*(동안|간|이나|걸)|몇\s*(시간|분|초)|며칠\s*(동안|간|이나|걸)|"
                 r"몇\s*살"),
    ("date", r"언제|몇\s*년(도)?(에|의|부터|까지|이었|였)|몇\s*월|며칠|몇\s*일(에|부터|까지)|무슨\s*요일|"
             r"몇\s*시(에|부터|까지)|날짜|연도"),
    ("number", r"몇|얼마|개수|인원"),
    ("person", r"누구|누가|누군"),
    ("place", r"어디|어느\s*(나라|도시|지역|곳|장소|국가|섬|동네)|위치"),
)
_TYPE_PATTERNS_RU: tuple[tuple[str, str], ...] = (
    ("duration", r"как\s+долго|сколько\s+(времени|лет|дней|месяцев|недель|часов|минут|секунд)|"
                 r"за\s+какое\s+время|в\s+течение\s+какого"),
    ("date", r"когда|в\s+каком\s+(году|месяце)|какого\s+числа|(какой|какая)\s+(год|дата)"),
    ("number", r"сколько|какое\s+количество|какой\s+(процент|размер|лимит)"),
    ("person", r"(?<!\w)(кто|кого|кому|кем|чей|чья|чьё|чьи)(?!\w)"),
    ("place", r"(?<!\w)(где|куда|откуда)(?!\w)|в\s+какой\s+(стране|город|области)|в\s+каком\s+городе"),
)
# German, French, Spanish, Italian, Portuguese, Dutch (``latin_language``); casefolded, so "ß" reads "ss"
_TYPE_PATTERNS_LATIN: dict[str, tuple[tuple[str, str], ...]] = {
    "de": (
        ("duration", r"\bwie\s+lange?\b|\bwie\s+viele\s+(jahre|tage|monate|wochen|stunden|minuten)\b|"
                     r"\bwie\s+alt\b|\bwelche\s+(dauer|frist)\b"),
        ("date", r"\b(seit\s+)?wann\b|\bin\s+welchem\s+(jahr|monat)\b|\b(an\s+)?welchem\s+(tag|datum)\b|"
                 r"\bwelches\s+datum\b"),
        ("number", r"\bwie\s+(viele?|hoch|gross|groß|weit|schwer|teuer)\b|\bwelche\s+anzahl\b"),
        ("person", r"\b(wer|wen|wem|wessen)\b"),
        ("place", r"\b(wo|wohin|woher)\b|\bin\s+welche[mr]\s+(land|stadt|ort|region)\b"),
    ),
    "fr": (
        ("duration", r"\bcombien\s+de\s+(temps|jours|mois|ans|années|semaines|heures|minutes)\b|"
                     r"\bpendant\s+combien\b|\bquel\s+âge\b|\bquelle\s+(est\s+la\s+)?durée\b"),
        ("date", r"\bquand\b|\ben\s+quelle\s+année\b|\bquelle\s+(est\s+la\s+)?(date|année)\b"),
        ("number", r"\bcombien\b|\bquel\s+(est\s+le\s+)?(nombre|pourcentage|montant|prix)\b"),
        ("person", r"^\W*(à\s+|de\s+|avec\s+)?qui\b|\bqui\s+(est|sont|était|a|ont|avait)\b"),
        ("place", r"(?<!\w)(où|d'où)(?!\w)|\bdans\s+quel(le)?\s+(pays|ville|région)\b"),
    ),
    "es": (
        ("duration", r"\bcuánto\s+tiempo\b|\bcuánt[oa]s\s+(años|días|meses|semanas|horas|minutos)\b|"
                     r"\bqué\s+edad\b"),
        ("date", r"\bcuándo\b|\ben\s+qué\s+(año|fecha|mes)\b|\bqué\s+(fecha|día)\b"),
        ("number", r"\bcuánt[oa]s?\b|\bqué\s+(porcentaje|cantidad|número)\b"),
        ("person", r"\bquién(es)?\b"),
        ("place", r"\b(a)?dónde\b|\ben\s+qué\s+(país|ciudad|región)\b"),
    ),
    "it": (
        ("duration", r"\b(per\s+)?quanto\s+tempo\b|\bquant[ie]\s+(anni|giorni|mesi|settimane|ore|minuti)\b"),
        ("date", r"\bquando\b|\bin\s+(che|quale)\s+anno\b|\b(che|quale)\s+data\b"),
        ("number", r"\bquant[oaie]\b|\bche\s+percentuale\b"),
        ("person", r"\bchi\b"),
        ("place", r"\bdove\b|\bin\s+(che|quale)\s+(paese|città|regione)\b"),
    ),
    "pt": (
        ("duration", r"\bquanto\s+tempo\b|\bquant[oa]s\s+(anos|dias|meses|semanas|horas|minutos)\b|"
                     r"\bque\s+idade\b"),
        ("date", r"\bquando\b|\bem\s+que\s+(ano|data|mês)\b|\b(que|qual\s+[ée]\s+a)\s+data\b"),
        ("number", r"\bquant[oa]s?\b|\bque\s+percentagem\b"),
        ("person", r"\bquem\b"),
        ("place", r"\bonde\b|\bem\s+que\s+(país|cidade|região)\b"),
    ),
    "nl": (
        ("duration", r"\bhoe\s+lang\b|\bhoeveel\s+(jaar|jaren|dagen|maanden|weken|uur|uren|minuten)\b|"
                     r"\bhoe\s+oud\b"),
        ("date", r"\bwanneer\b|\bin\s+welk\s+jaar\b|\bwelke\s+datum\b|\bop\s+welke\s+dag\b"),
        ("number", r"\bhoeveel\b|\bhoe\s+(groot|hoog|veel|ver|duur)\b|\bwelk\s+percentage\b"),
        ("person", r"\bwie\b"),
        ("place", r"\bwaar\b|\bin\s+welk(e)?\s+(land|stad|regio)\b"),
    ),
}
_TYPE_PATTERNS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": _TYPE_PATTERNS_EN, "zh": _TYPE_PATTERNS_CJK, "ja": _TYPE_PATTERNS_JA + _TYPE_PATTERNS_CJK,
    "ko": _TYPE_PATTERNS_KO, "ru": _TYPE_PATTERNS_RU, "uk": _TYPE_PATTERNS_RU, **_TYPE_PATTERNS_LATIN,
}
"""``(answer type, regex source)`` per question language, tried in order; compiled by ``_type_patterns``."""


@functools.cache
def _type_patterns(language: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """``_TYPE_PATTERNS[language]`` compiled, once per process for the languages asked in (empty for another
    language): a process compiles the tables of its questions' languages only."""
    return tuple((kind, re.compile(pattern)) for kind, pattern in _TYPE_PATTERNS.get(language, ()))


# durations written in those languages, read only for a question in one of them (never for an English or a
# Chinese question)
_DURATION_OTHER = (
    r"\d+[\s-]*(tage?n?|wochen?|monate?n?|jahre?n?|stunden?|jours?|mois|ans|années?|semaines?|heures?|días?|"
    r"meses?|años?|semanas?|horas?|giorni|mesi|anni|settimane|ore|dias|anos|dagen|maanden|jaren|weken|uren|"
    r"дн(ей|я|и)|день|недел[ьиюя]|месяц(а|ев)?|год(а|у)?|лет|час(а|ов)?|минут)(?!\w)")

_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec")
_WEEKDAYS = ("monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch donnerstag freitag "
             "samstag sonnabend sonntag lundi mardi mercredi jeudi vendredi samedi dimanche lunes martes miércoles "
             "jueves viernes sábado domingo lunedì martedì mercoledì giovedì venerdì sabato domenica "
             "segunda-feira terça-feira quarta-feira quinta-feira sexta-feira maandag dinsdag woensdag donderdag "
             "vrijdag zaterdag zondag")
"""Weekday names (English, German, French, Spanish, Italian, Portuguese, Dutch): "On which day of the week ...?"
asks for a date, and "on Wednesdays" states one."""
_DATE = (rf"\b(1\d{{3}}|20\d{{2}})s?\b|\b({'|'.join(_MONTHS.split())})\b|\d{{4}}-\d{{2}}-\d{{2}}|"
         rf"\b({'|'.join(_WEEKDAYS.split())})s?\b|"
         r"[0-9一二三四五六七八九十〇零]+\s*[年月日]|\d+\s*[년월일]|"
         r"(?:星期|礼拜|禮拜|周|週)[一二三四五六日天](?![次遍回])|[月火水木金土日]曜日?|[월화수목금토일]요일")
_NUM = (r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
        r"hundred|thousand|million|billion|dozen|twice|thrice)\b|[一二三四五六七八九十百千万亿两〇零]")
_DURATION = (r"(\d+|\b(one|two|three|four|five|six|seven|eight|nine|ten|several|many)\b)[\s-]*"
             r"(years?|months?|weeks?|days?|hours?|minutes?|seconds?|decades?|centuries|century)\b|"
             r"[0-9一二三四五六七八九十百千万两]+\s*(年|个月|周|天|日|小时|分钟|秒|年間|日間|時間)|"
             r"\d+\s*(ヶ月|か月|カ月|週間|分間|년|개월|달|주일?|일|시간|분|초)")
_DAYS = "|".join(_WEEKDAYS.split()[:7])  # English: a frequency is read in English questions only
_FREQUENCY = (r"\b(hourly|daily|nightly|weekly|fortnightly|biweekly|monthly|quarterly|annually|yearly|"
              r"biennially)\b|\b(once|twice|thrice|\w+ times) (a|an|per|each|every) "
              r"(day|week|month|quarter|year|hour)\b|"
              rf"\b(every|each) (day|week|month|quarter|year|hour|other|morning|evening|night|weekday|"
              rf"weekend|{_DAYS})\b|\bon ({_DAYS})s\b")
"""A rate stated without a number and a unit of time ("annually", "twice a year", "every month", "every Monday",
"on Fridays"): with ``_DURATION`` ("every 36 months", "after 3 years"), what answers "How often ...?"."""
_VALUES = {"date": _DATE, "number": _NUM, "duration": _DURATION, "duration_other": _DURATION_OTHER,
           "frequency": _FREQUENCY}
"""What states a value of each answer type (regex sources, read case-insensitively; ``_values``)."""


@functools.cache
def _values(kind: str) -> re.Pattern[str]:
    """``_VALUES[kind]`` compiled case-insensitively, once per process, when a sentence is first checked for that
    kind of value."""
    return re.compile(_VALUES[kind], re.I)


_CAPITAL_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+")
_WORD_RE = re.compile(r"\w+")


def expected_answer_type(question: str) -> str | None:
    """The answer type a question asks for: ``person``, ``date``, ``place``, ``number``, ``duration``, or None.

    From its wh-phrase (who/when/where/how many/how long, and the Chinese, Japanese, Korean, Russian, German,
    French, Spanish, Italian, Portuguese and Dutch equivalents: "いつ", "언제", "когда", "wann", "quand" are
    ``date``); None for a question in another language.
    """
    patterns = _type_patterns(question_language(question))
    low = question.casefold()
    for kind, pattern in patterns:
        if pattern.search(low):
            return kind
    return None


def has_answer_type(sentence: str, kind: str | None, question: str) -> bool:
    """Whether ``sentence`` holds a value of answer type ``kind`` that the question itself does not state.

    person/place: a capitalised word absent from the question (English), any new word (other languages);
    date: a year, month name, weekday (not 每周一次, "once a week") or CJK date; number: a digit or number word;
    duration: a number with a time unit; frequency: a duration ("every 36 months") or a rate ("annually",
    "twice a year").
    """
    if kind is None:
        return True
    q_words = {w.casefold() for w in _WORD_RE.findall(question)}

    def new(matches: list[str]) -> bool:
        return any(m.casefold() not in q_words and m.casefold() not in question.casefold() for m in matches)

    if kind == "date":
        return new([m.group(0) for m in _values("date").finditer(sentence)])
    if kind == "number":
        return new([m.group(0) for m in _values("number").finditer(sentence)])
    if kind == "frequency":
        return new([m.group(0) for m in _values("duration").finditer(sentence)] +
                   [m.group(0) for m in _values("frequency").finditer(sentence)])
    if kind == "duration":
        found = [m.group(0) for m in _values("duration").finditer(sentence)]
        if question_language(question) not in ("en", "zh"):
            found += [m.group(0) for m in _values("duration_other").finditer(sentence)]
        return new(found)
    if question_language(question) != "en":
        return True  # no capitalisation to tell a name by
    return new(_CAPITAL_RE.findall(sentence))


# A question asking for a quantity in a unit (a file size, a price) is answered only by a sentence that states
# a value in that unit: "the attachment size limit" is not answered by a sentence that states a number of days.
_UNIT_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("size", re.compile(r"\b(file|upload|attachment|storage|disk|mailbox|message|database|download)s? (size|"
                        r"limit|quota|space|capacity)\b|\bhow (much|big|large) (of )?(a |an |the )?(file|upload|"
                        r"attachment|storage|disk space|space|memory|ram)\b|文件大小|存储空间|容量")),
    ("money", re.compile(r"\bhow much (does|do|did|is|are|will|would)\b.*\b(cost|pay|charge|price|fee|grant|"
                         r"allowance|salary|wage|refund|fine)s?\b|\bhow much (?:[\w-]+ ){0,2}?(grant|allowance|salary|"
                         r"wage|refund|fine|rent|tax|money|funding)s?\b|"
                         r"\bwhat(?:'s| is| are) (?:the|a|an) (?:[\w-]+ ){0,3}?(price|cost|fee)s?\b|多少钱|价格|费用|"
                         r"いくら|料金|値段|価格|費用")),
)
_UNIT_WORDS: dict[str, re.Pattern[str]] = {
    "size": re.compile(r"(?<![^\W\d_])(?:[KMGTP]i?B|bytes?|kilobytes?|megabytes?|gigabytes?|terabytes?)"
                       r"(?![a-z])|字节", re.I),
    "money": re.compile(r"[$€£¥₹₩]|\b(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|KRW|dollars?|euros?|pounds?|yen|won)\b|"
                       r"\b(?:pfund|franken|francs?|livres?|libras?|d[oó]lar(?:es)?|rupees?|kronor|kroner|kronen?|z[lł]oty|"
                       r"руб\w*|доллар\w*|евро|фунт\w*)\b|元|美元|欧元|円|ドル|ユーロ|ポンド|원", re.I),
}
_FREE_RE = re.compile(r"\bfree\b|免费|無料", re.I)


def expected_unit(question: str) -> str | None:
    """The unit a question's answer must be stated in: ``size`` (bytes: "attachment size", "how much
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


# ---------------------------------------------------------------------- situation and ask

@dataclass(frozen=True)
class QuestionParts:
    """A question cut into what it states (``situation``, "" for a plain question) and what it asks (``ask``)."""

    situation: str
    ask: str


_QUESTION_MARK = re.compile(r"[?？]")
# "Rostker v. Goldberg", "Craig v. Boren", "Dr. Smith": a piece ending in a word of at most two letters (or a
# known abbreviation) and a full stop is no sentence of its own
_ABBREVIATION_END = re.compile(r"(?:(?<![\w'’])[^\W\d_]{1,2}|\b(?:inc|ltd|corp|co|jr|sr|st|mr|mrs|ms|dr|prof|vs|etc|no|"
                               r"fig|approx|dept|est)|\b(?:[a-z]\.){2,}[a-z]?)\.$", re.I)
_SENTENCE_END = re.compile(r"[.!?。！？]$")  # a piece ending otherwise ("、", "」") is cut inside a sentence
_OPENERS = "([{（【《「『“‘"
_CLOSERS = ")]}）】》」』”’"
# the asked clause of "<statement>; who pays for the repair?": a question word after ";", ":" or a dash
_ASK_CLAUSE = re.compile(r"(?:;|:|\s[-–—]+)\s*(?=(?:who|whom|whose|what|when|where|which|why|how|can|could|do|does|"
                         r"did|is|are|was|were|will|would|should|shall|may|might|must|am|have|has)\b)", re.I)

_ASKS = re.compile(r"\W*(?:who|whom|whose|what|when|where|which|why|how)\b", re.I)  # a clause that asks itself


def _balanced(text: str) -> bool:
    """No quote or bracket left open in ``text`` (straight double quotes counted in pairs)."""
    if text.count('"') % 2:
        return False
    depth = 0
    for ch in text:
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(depth - 1, 0)
    return depth == 0


def _question_sentences(question: str) -> list[str]:
    """The question's sentences (BlingFire), a piece cut inside quotes or brackets or after an abbreviation
    joined to the next."""
    from .chunking import split_sentences  # question analysis is imported by chunking's users, not by it

    pieces = [question[a:b] for a, b in split_sentences(question)]
    out: list[str] = []
    carry = ""
    for piece in pieces:
        text = f"{carry} {piece}".strip() if carry else piece
        if not _balanced(text) or _ABBREVIATION_END.search(text) or not _SENTENCE_END.search(text):
            carry = text
            continue
        out.append(text)
        carry = ""
    if carry and out:
        out[-1] = f"{out[-1]} {carry}"
    elif carry:
        out.append(carry)
    return out


@functools.lru_cache(maxsize=256)  # read by the answerer's weights and again by its features: split once
def question_parts(question: str) -> QuestionParts:
    """The situation a question states and what it asks (see the module docstring).

    The ask is the sentences from the first to the last with a question mark (all of a text without one), or the
    clause of the last one after ";", ":" or a dash that opens with a question word when what precedes it is a
    statement of three words or more (not itself a wh-question); every other sentence is the situation. A
    one-sentence question without such a clause is all ask: ``QuestionParts("", question)``.
    """
    text = question.strip()
    sentences = _question_sentences(text) if text else []
    if len(sentences) <= 1:
        sentences = [text]
    asks = [i for i, s in enumerate(sentences) if _QUESTION_MARK.search(s)]
    if not asks:  # a claim or a request without a question mark ("Tell me ..."): nothing marks the ask
        return QuestionParts("", text)
    # "Who has more stores? Bearno's or Patxi's?": every sentence from the first question to the last asks
    k, last = asks[0], asks[-1]
    ask = " ".join(sentences[k:last + 1])
    before = sentences[:k]
    cut = None
    for m in _ASK_CLAUSE.finditer(ask):
        head = ask[:m.start()]
        if _balanced(head) and len(_WORD_RE.findall(head)) >= 3 and not _ASKS.match(head):
            cut = m
    if cut is not None:
        before = before + [ask[:cut.start()].strip()]
        ask = ask[cut.end():].strip()
    situation = " ".join(before + sentences[last + 1:]).strip()
    return QuestionParts(situation, ask if situation else text)


def chinese_words(text: str) -> list[str]:
    """The words of ``text`` as jieba cuts it, by both of its cutters: the dictionary cut (``jieba.lcut``:
    前燕) and the part-of-speech tagger's, whose HMM groups a name the dictionary lacks (匡撒, 鹦嘴鱼); the
    first cut's words in order, then the tagger's words the first lacks.

    Used to tell a CJK bigram inside a word from one across two words (``answer.extractive.term_weights``); the
    index itself cuts CJK text into bigrams. jieba's dictionaries load on the first call.

    Raises:
        MissingExtraError: jieba (the ``intl`` extra) is not installed.
    """
    import logging
    import warnings

    from ._extras import require

    with warnings.catch_warnings():  # jieba 0.42 imports pkg_resources, which newer setuptools deprecates
        warnings.simplefilter("ignore")
        jieba = require("jieba", "intl", "Finding Chinese word boundaries")
        import jieba.posseg

        jieba.setLogLevel(logging.WARNING)
        words = [w for w in jieba.lcut(text) if w.strip()]
        return words + [w.word for w in jieba.posseg.lcut(text) if w.word.strip() and w.word not in words]
