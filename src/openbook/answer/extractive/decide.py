"""Answer or refuse (``decide``): every refusal of the offline answerer passes here and names its reason
(``Decision.reason``), with the note the answer carries and its confidence: nothing to read, no candidate, or the
answerability score (``refusal.answerability``, the fitted model over ``refusal.FEATURES``) below
``AnswerConfig.min_confidence``; a passage in another language answers when the cross-language rule holds
(``crosslingual.cross_sentence``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ...types import Passage
from ..crosslingual import CrossSentence
from ..refusal import READABLE_FEATURES, against
from .terms import Words
from .candidates import Candidate


NOTHING_TO_READ = "nothing to read"  # no passages, or a question with no content term
READABLE = "readable"  # passages and content terms, not judged further yet
NO_CANDIDATE = "no candidate"  # no sentence shares a content term with the question
ANSWERABLE = "answerable"  # answerability at least min_confidence
OTHER_LANGUAGE = "other language"  # a passage in another language answers (crosslingual.cross_sentence)
LOW_ANSWERABILITY = "low answerability"  # answerability below min_confidence


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
    candidates are ranked (``candidates`` not None), the answerability ``confidence`` of the best one, the
    threshold, what the corpus says of the question's words (``words``: its language), the embedder whose
    hybrid model scored it (``dense``; None: the BM25-only model) and the ``features`` it read.

    ``cross``: the best sentence of a passage in another language (None without an embedder)."""

    passages: Sequence[Passage]
    terms: Sequence[str]
    candidates: Sequence[Candidate] | None = None
    cross: CrossSentence | None = None
    confidence: float = 0.0
    min_confidence: float = 0.0
    words: Words | None = None
    dense: str | None = None
    features: Mapping[str, float] = field(default_factory=dict)


def decide(ev: Evidence) -> Decision:
    """Answer or refuse on the evidence gathered so far, naming the reason; every refusal of
    ``answer_extractive`` is one of these. Before the candidates are ranked: refuse when there is nothing to
    read. Once they are: refuse without a candidate, answer from another language's passage when the
    cross-language rule holds, answer when answerability reaches ``min_confidence``, else refuse, naming the
    features that pulled the score down most (``refusal.against``)."""
    if not ev.passages or not ev.terms:
        why = "no passage matched the question" if not ev.passages else "the question has no content word"
        return Decision(False, NOTHING_TO_READ, None, f"refused: {why}")
    if ev.candidates is None:
        return Decision(True, READABLE, None)
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
    why = f"answerability {confidence:.2f} < {threshold:.2f}"
    language = ev.words.language if ev.words is not None else "en"
    pulls = against(ev.features, language, ev.dense) if ev.features else []
    why += f" (most against it: {'; '.join(f'{READABLE_FEATURES.get(p, p)} ({p})' for p in pulls)})" if pulls else ""
    why += f"; another language's best sentence: {cross.why}" if cross is not None else ""
    return Decision(False, LOW_ANSWERABILITY, confidence, f"refused: {why}")
