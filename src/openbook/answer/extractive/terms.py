"""The question's words as the offline answerer reads them: its content terms (``content_terms``) and their idf
weights (``term_weights``, ``expansion_weights``, ``scenario_weights``), the idf-weighted ``coverage`` of them by a
set of terms, what expansions make a text hold (``expanded``, ``_held``), the names, numbers, years and
identifiers it states, what it asks (``Asked``, ``read_question``) and what the corpus says of its words
(``Words``, ``read_words``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

from ...index.analyzer import Analyzer
from ...question import chinese_words, command_options, expected_answer_type, question_language, question_parts
from ...retrieve.glossary import Expansion
from ...retrieve.lexicon import compound_bound
from ...types import Passage
from ..refusal import MODEL_LANGUAGE

QUESTION_WORDS_EN = (
    "what which who whom whose when where why how do does did can could should would may might must shall "
    "i me my mine we us our you your please tell explain describe many much long often big large get "
    "quickly soon frequently"  # "how quickly / how soon" asks for a duration as "how long" does, "how often /
    # how frequently" for a frequency (question.expected_answer_type)
)
QUESTION_WORDS_CJK = (
    "什么 多少 怎么 怎样 如何 哪些 哪个 哪里 是否 为什么 几天 几个 请问 吗 呢 么 是什么 可以 需要 "
    "なに 何 どの どこ いつ どう どれ ですか ますか"
)


Embedder = Callable[[list[str], str], np.ndarray]  # (texts, "query" | "passage") -> float [n, dim]


class TermStats(Protocol):
    """What the answerer needs from the index: the analyzer and idf."""

    analyzer: Analyzer

    def idf(self, terms: Sequence[str]) -> np.ndarray: ...

    def known_characters(self) -> frozenset[str]: ...

    def vocabulary(self) -> Mapping[str, int]: ...


def content_terms(question: str, analyzer: Analyzer) -> list[str]:
    """The question's distinct analyzer terms without question words; all terms if nothing else remains."""
    terms = list(dict.fromkeys(analyzer.analyze(question)))
    stop = set(analyzer.analyze(QUESTION_WORDS_EN)) | set(analyzer.analyze(QUESTION_WORDS_CJK))
    content = [t for t in terms if t not in stop]
    return content or terms


def term_weights(terms: Sequence[str], stats: TermStats, question: str | None = None) -> np.ndarray:
    """idf weight of each content term for the coverage signal.

    A CJK bigram the corpus never contains but whose characters it does contain is most often a cut across two
    words (``室的`` from ``办公室的``): it gets weight 0, unless it may be part of one word of the Chinese
    ``question`` as jieba cuts it (``钩鼻`` of ``钩鼻海蛇``: a name the corpus lacks, not a cut; ``_word_bigrams``,
    ``question.chinese_words``). Any other unseen term (``australia``, ``深圳``) keeps the
    largest idf, since a question about something the corpus never names is a sign it cannot be answered.
    An unseen measurement written as one word (``9-hour``) whose number and unit are terms too gets weight 0.
    """
    weights = np.asarray(stats.idf(terms), dtype=np.float64).copy()
    top = float(weights.max()) if len(weights) else 0.0
    present = set(terms)
    for i, t in enumerate(terms):
        # a measurement written as one word ("9-hour", "25-foot") is also its number and its unit, which count
        # on their own; the joined form missing from the corpus says nothing (unlike an identifier, E-3071)
        m = _MEASURE_RE.match(t)
        if m and {m.group(1), m.group(2)} <= present and not _seen(t, stats):
            weights[i] = 0.0
    known = None
    inside: set[str] | None = None
    for i, t in enumerate(terms):
        if weights[i] >= top - 1e-9 and _is_cjk(t):
            known = stats.known_characters() if known is None else known
            if all(ch in known for ch in t) and stats.idf([t])[0] >= top - 1e-9 and not _seen(t, stats):
                if inside is None:
                    inside = _word_bigrams(question) if question else set()
                if t not in inside:
                    weights[i] = 0.0
    return weights


def _word_bigrams(question: str) -> set[str]:
    """The character bigrams inside one word of a Chinese question, as either of jieba's cutters cuts it
    (``question.chinese_words``); none for a question in another language."""
    if question_language(question) != "zh":
        return set()
    return {w[i:i + 2] for w in chinese_words(question) if len(w) >= 2 for i in range(len(w) - 1)}


_MEASURE_RE = re.compile(r"^(\d+(?:\.\d+)?)-([^\W\d_]{3,})$")

SITUATION_WEIGHT: dict[str, float] = {"en": 0.0, "zh": 0.3}
"""Per question language (others as ``refusal.MODEL_LANGUAGE`` maps them: Japanese and Korean as Chinese, the
rest as English), the share of its idf weight a common word only the situation of a scenario question states
keeps in the answerability features (``scenario_weights``; sentence choice reads every term at full weight).
Calibrated by ``benchmarks/scenario_answers.py`` on HotpotQA and CMRC questions outside the reported sample
rewritten as scenarios (a name of the question moved into a preceding statement with a personal frame): the
weight with the best mean of positives answered and negatives refused at the shipped threshold, averaged over
a hybrid and a BM25 store. English: 62.5% with every word required, 75.9% at 0.5, 77.7% at 0.3, 78.5% at 0;
Chinese: 79.0%, 82.3% at 0.5, 83.4% at 0.3, 82.0% at 0 (the moved name is no capitalised name there, so it
counts only through this share). BENCHMARKS.md."""


REFERRING_WORDS_EN = ("it its itself they them their theirs themselves he him his himself she her hers herself "
                      "this that these those one ones there such")
"""Words of a scenario question's ask that point back at its situation ("Can *they* still restore *it*
*themselves*?"): they name nothing the answer must hold and weigh nothing there (a plain question keeps them)."""


def scenario_weights(question: str, terms: Sequence[str], weights: np.ndarray, analyzer: Analyzer,
                     vocabulary: Mapping[str, int],
                     situation_weight: Mapping[str, float] | None = None) -> np.ndarray:
    """The weights answerability reads: ``weights`` itself (the same object) for a question that states no
    situation (``question_parts``), else a copy where the situation counts as context, not as words the answer
    must hold ("A tenant moved out of a Harbour Homes flat two months ago and the deposit has not come back.
    Can they still claim it themselves?"):

    - a term of the ask keeps its weight ("claim"), and so does a term of a name the situation states
      ("Harbour Homes", "Kansas City Wizards": ``question_names``), which the passages must hold;
    - a word of the ask that points back at the situation weighs nothing (``REFERRING_WORDS_EN``: "they",
      "themselves"), nor does any other word of the situation that no document contains ("yesterday",
      "neighbour"): the asker's story, which no answer can hold;
    - the situation's other words keep the language's ``SITUATION_WEIGHT`` share of theirs, or all of it when
      the ask holds no word the documents contain ("... without a purchase order number. What happens?": the
      situation is what is asked about).

    ``situation_weight``: the shares by language (default ``SITUATION_WEIGHT``).
    """
    parts = question_parts(question)
    if not parts.situation:
        return weights
    ask = set(analyzer.analyze(parts.ask)) - set(analyzer.analyze(REFERRING_WORDS_EN))
    named = {t for n in question_names(parts.situation) for t in analyzer.analyze(n)}
    language = question_language(question)
    shares = SITUATION_WEIGHT if situation_weight is None else situation_weight
    share = shares.get(language, shares[MODEL_LANGUAGE.get(language, "en")])
    share = share if any(t in vocabulary for t in ask & set(terms)) else 1.0
    out = [w if t in ask or t in named else 0.0 if t not in vocabulary else w * share
           for t, w in zip(terms, weights)]
    return np.asarray(out, dtype=np.float64)


def _best_coverage(terms: Sequence[str], weights: np.ndarray, passage_terms: Sequence[set[str]]) -> float:
    """The best passage's coverage, or 0.9 of the two best passages' together when larger."""
    covs = [coverage(terms, weights, pt) for pt in passage_terms]
    best = max(covs)
    if len(passage_terms) > 1:
        top2 = sorted(range(len(passage_terms)), key=lambda i: -covs[i])[:2]
        union = coverage(terms, weights, passage_terms[top2[0]] | passage_terms[top2[1]])
        best = max(best, 0.9 * union)
    return best


def _is_cjk(term: str) -> bool:
    return bool(term) and "\u2e80" <= term[0] <= "\ud7ff"


def _seen(term: str, stats: TermStats) -> bool:
    return term in stats.vocabulary()


def expanded(present: frozenset[str], expansions: Sequence[Expansion],
             bound: frozenset[str] = frozenset()) -> frozenset[str]:
    """``present`` (a sentence's or passage's terms) plus the question terms an expansion stands for
    (``Expansion.matched_terms``) when it holds every term of one of the expansion's added phrases: "A lost
    notebook computer ..." holds "laptop" under the expansion laptop -> notebook computer. ``bound``: one-term
    phrases the text uses only inside another noun compound (``lexicon.compound_bound``: "holiday" in "public
    holiday"), which hold nothing. ``present`` itself (the same object) when no expansion applies."""
    extra = [t for e in expansions if not set(e.matched_terms) <= present
             and any(set(a) <= present and not (len(a) == 1 and a[0] in bound) for a in e.added_terms)
             for t in e.matched_terms]
    return present | frozenset(extra) if extra else present


def _held(text: str, analyzer: Analyzer, expansions: Sequence[Expansion]) -> frozenset[str]:
    """The terms of ``text`` (a document's) with the question terms its expansions stand for (``expanded``)."""
    present = frozenset(analyzer.analyze_document(text))
    if not expansions:
        return present
    return expanded(present, expansions, compound_bound(text, expansions, analyzer))


def expansion_weights(terms: Sequence[str], weights: np.ndarray, expansions: Sequence[Expansion],
                      stats: TermStats) -> np.ndarray:
    """``weights`` with each question term the corpus lacks (df = 0, the largest idf) that an expansion stands
    for weighed as the corpus's own words for it: the smallest over the expansion's added phrases of the
    phrase's idf (that of its rarest term), never more than before. "pic" said as "film" weighs what "film"
    weighs, as if the question had said "film": a film sentence covering it is common evidence, not the rarest.
    ``weights`` itself (the same object) when no expansion applies."""
    vocab = stats.vocabulary()
    out = None
    for i, t in enumerate(terms):
        if t in vocab:
            continue
        phrases = [a for e in expansions if t in e.matched_terms for a in e.added_terms]
        if not phrases:
            continue
        cap = min(float(np.max(stats.idf(list(a)))) for a in phrases)
        out = weights.copy() if out is None else out
        out[i] = min(out[i], cap)
    return weights if out is None else out


def coverage(terms: Sequence[str], weights: np.ndarray, present: set[str]) -> float:
    """idf-weighted share (0-1) of ``terms`` found in ``present``."""
    total = float(weights.sum())
    if total <= 0:
        return 0.0
    return float(sum(w for t, w in zip(terms, weights) if t in present)) / total


_CODE_RE = re.compile(r"^(?=.*\d)[^\W_]+(?:[-_./][^\W_]+)+$")  # analyzer's code-like compound terms
_COMPOUND_RE = re.compile(r"[^\W_]+(?:[-_./:][^\W_]+)*")
_DIGIT_GROUP_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _standalone_numbers(text: str) -> set[str]:
    """Numbers that stand as a word of their own in ``text`` (not a part of a date, version or code)."""
    return {t for t in _COMPOUND_RE.findall(_DIGIT_GROUP_RE.sub("", text)) if t.isdigit()}


def _rare_terms(terms: Sequence[str], weights: np.ndarray) -> set[str]:
    """The question's rarest content terms: the top third by idf weight, at least one (as ``rare_*`` features)."""
    order = np.argsort(-weights, kind="stable")
    return {terms[i] for i in order[:max(1, -(-len(terms) // 3))]}


_ENTITY_RE = re.compile(r"(?<![\w-])(?:[A-Z][\w'’-]*|[\w-]*\d[\w-]*)")


def _names(sentence: str, analyzer: Analyzer) -> frozenset[str]:
    """The terms of the names and codes a sentence states: capitalised words past its first word, words with a
    digit, and in a CJK sentence its terms (no capitals to tell a name by)."""
    if any(_is_cjk(ch) for ch in sentence[:40]):
        return frozenset(analyzer.analyze(sentence))
    words = [m.group(0) for m in _ENTITY_RE.finditer(sentence) if m.start() > 0]
    return frozenset(analyzer.analyze(" ".join(words)))


_NAME_RE = re.compile(r"(?:[A-Z0-9][\w'’.&-]*)(?:\s+(?:(?:of|the|and|de|von|van|for|in)\s+)*[A-Z0-9][\w'’.&-]*)*")


_AMOUNT_RE = re.compile(r"[A-Z]{3}\s*\d[\d.,]*(?:\s*(?:k|K|m|M|bn))?")  # a currency code and an amount
_QUOTED_RE = re.compile(r'"([^"]{2,80})"|“([^”]{2,80})”')
_NAME_JOIN = re.compile(r"\s+(?:and|or)\s+")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z])")


def question_names(question: str) -> list[str]:
    """Names the question states: runs of capitalised words (``Lewiston Maineiacs``), cut at "and"/"or" and
    without a leading article, case-folded, without the first word of each of the question's sentences (nor a
    following "I") unless the run goes on; quoted
    titles whole (``"Kiss and Tell"``)."""
    names = [m.group(1) or m.group(2) for m in _QUOTED_RE.finditer(question)]
    unquoted = _QUOTED_RE.sub(lambda m: " " * len(m.group(0)), question)
    for part in _SENTENCE_END.split(unquoted):
        for m in _NAME_RE.finditer(part):
            run = m.group(0).strip(" .")
            if m.start() == 0:  # the capital of a sentence's first word ("... ago. Can I take ...") is no name
                first, _, run = run.partition(" ")
                run = run[2:] if run == "I" or run.startswith("I ") else run
            # "Kalenderhane Mosque and Galata Bridge": two names; a leading article is not part of a name
            for k, name in enumerate(_NAME_JOIN.split(run)):
                name = _ARTICLE.sub("", name)
                if not any(ch.isupper() for ch in name) or _AMOUNT_RE.fullmatch(name):
                    continue  # "9-hour", "1984", "USD 450": a measure, a year or an amount, no name
                if len(name) >= 3 and " " in name or (len(name) >= 4 and (m.start() > 0 or k > 0)):
                    names.append(name)
    return list(dict.fromkeys(" ".join(n.casefold().split()) for n in names if n))


_FOCUS_RE = re.compile(r"\bwhat(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:the|a|an)\s+((?:[\w-]+\s+){0,3}?[\w-]+)"
                       r"\s*(?:\b(?:for|of|in|on|per|to|at|from|with|when|if|that|by|under|after|before)\b|[?,.]|$)",
                       re.I)
_HOW_TO_RE = re.compile(r"\bhow\s+(?:do|can|should|could|would|must|may|shall)\s+(?:i|we|you|one|users?)\b|"
                        r"\bhow\s+to\b|\bwhat\s+are\s+the\s+steps\b|如何|怎么|怎样|どうやって|どうすれば", re.I)


def _focus_terms(question: str, analyzer: Analyzer) -> set[str]:
    """The attribute a "what is the X" question asks for: the analyzer terms of the last word of X ("age" in
    "What is the minimum age for a library card?"); empty for any other question form."""
    m = _FOCUS_RE.search(question)
    return set(analyzer.analyze(m.group(1).split()[-1])) if m else set()


# a year: 1600-2099 standing alone (in a date "2024-03-01", a span "2024/25", "2024年"), not inside a code or an
# amount ("E-3071", "£2000", "12,2024")
_YEAR_RE = re.compile(r"(?<![0-9A-Za-z$€£¥.,_-])(1[6-9]\d\d|20\d\d)(?![0-9])(?![.,]\d)(?!\s*%)")


def _asked_year(question: str) -> str | None:
    """The one year a question states ("How many potholes were repaired in 2024?" -> "2024"); None when it
    states none or several (a span or a comparison of years)."""
    years = set(_YEAR_RE.findall(question))
    return years.pop() if len(years) == 1 else None


def _other_year(text: str, year: str | None) -> bool:
    """Whether ``text`` states a year but not ``year`` (False when ``year`` is None)."""
    if year is None:
        return False
    found = set(_YEAR_RE.findall(text))
    return bool(found) and year not in found


_LOWER_WORD_RE = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def _unseen_common_words(question: str, unseen: Sequence[str], analyzer: Analyzer) -> bool:
    """Whether every question term the corpus lacks (``unseen``) comes from a word written in lower case letters
    only, in a script with case ("laptop", "vacation"): a common word that documents may say with another word.
    A term only written with a capital or a digit ("Australia", "E-5512") is a name or an identifier, which a
    document holding the answer would use; a script without case (Han, kana) cannot tell the two apart."""
    common: set[str] = set()
    for word in _COMPOUND_RE.findall(question):
        if _LOWER_WORD_RE.fullmatch(word) and word == word.lower() and word != word.upper():
            common.update(analyzer.analyze(word))
    return bool(unseen) and all(t in common for t in unseen)


def _cased(text: str) -> bool:
    """Whether ``text``'s letters are mostly of a script with case (Latin, Greek, Cyrillic ...)."""
    letters = [ch for ch in text if ch.isalpha()]
    return sum(ch.lower() != ch.upper() for ch in letters) * 2 > len(letters)


@dataclass(frozen=True)
class Asked:
    """What every step reads of a question, read once: its content ``terms`` and their coverage ``weights``
    (``term_weights``, ``expansion_weights``), the expected answer type (``kind``), whether it asks how to do
    something (``how_to``), the numbers it states on their own (``numbers``), all its analyzer terms
    (``question_terms``), the attribute a "what is the X" question asks for (``focus``), the one year it states
    (``year``), the identifiers it names (``codes``) and the command-line options it names as written
    (``options``)."""

    question: str
    terms: Sequence[str]
    weights: np.ndarray
    kind: str | None
    how_to: bool
    numbers: frozenset[str]
    question_terms: frozenset[str]
    focus: frozenset[str]
    year: str | None
    codes: frozenset[str]
    options: Sequence[str]


def read_question(question: str, terms: Sequence[str], weights: np.ndarray, analyzer: Analyzer) -> Asked:
    """The ``Asked`` of ``question`` with its content ``terms`` (``content_terms``) and their ``weights``."""
    kind = expected_answer_type(question)
    return Asked(
        question=question, terms=terms, weights=weights, kind=kind, how_to=bool(_HOW_TO_RE.search(question)),
        # a number the question states on its own ("Debian 12") must be a number on its own in the sentence; one
        # inside a code of the question ("E-3071", "AX-TEAM-700") is matched inside the code
        numbers=frozenset({t for t in terms if t.isdigit()} & _standalone_numbers(question)),
        question_terms=frozenset(analyzer.analyze(question)),
        focus=frozenset(_focus_terms(question, analyzer) & set(terms) if kind is not None else set()),
        year=_asked_year(question),
        # an identifier in the question (E-5512, AX-PRO-500, v5.2) pins the subject (``candidates.rank``)
        codes=frozenset({t for t in terms if _CODE_RE.match(t)}),
        options=command_options(question))


@dataclass(frozen=True)
class Words:
    """What the corpus says of the question's words: the idf share of its terms the corpus lacks (``unseen``,
    a term an expansion says in the corpus's words excepted), whether the passages are in another language
    (``other_language``), whether words cannot decide so that the embedder reads the sentences
    (``dense_decides``), the narrower reading of that the dense-support fallback uses (``words_blind``), and
    whether every unseen term is a common lower-case word (``other_words``, ``_unseen_common_words``)."""

    unseen: float
    language: str
    other_language: bool
    dense_decides: bool
    words_blind: bool
    other_words: bool


def read_words(question: str, terms: Sequence[str], weights: np.ndarray, passages: Sequence[Passage],
               vocab: Mapping[str, int], said: frozenset[str], analyzer: Analyzer) -> Words:
    """The ``Words`` of ``question`` over ``passages``; ``said``: the question terms an expansion says in the
    corpus's words (not unseen: the question reads as if it said them)."""
    unseen = float(sum(w for t, w in zip(terms, weights) if t not in vocab and t not in said) /
                   (float(weights.sum()) or 1.0))
    language = question_language(question)
    other_language = all(question_language(p.chunk.text[:400]) != language for p in passages[:2])
    # the DENSE_SUPPORT fallback reads "words cannot decide" more narrowly: the question's words the corpus lacks
    # may be said otherwise only in a script with case (common words); in a script without case a word the
    # corpus lacks is most often a name it lacks, which decides (疣鹦嘴鱼 asked of pages on other parrotfish)
    missing = [t for t in terms if t not in vocab and t not in said]
    other_words = unseen > 0 and _unseen_common_words(question, missing, analyzer)
    return Words(unseen=unseen, language=language, other_language=other_language,
                 dense_decides=unseen >= 0.25 or other_language,
                 words_blind=other_language or (unseen >= 0.25 and _cased(question)), other_words=other_words)
