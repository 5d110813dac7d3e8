"""The answerability features of a question and its best candidate (``answer_features``, read by
``refusal.answerability``): coverage of the question's terms and of its rarest ones by the answering sentence,
by two sentences together and by the passages, BM25 scores over their bound, names and titles, and on a hybrid
store the dense leg's cosines."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np

from ...index.analyzer import Analyzer
from ...index.embedders import cosines_to
from ...question import expected_unit, has_answer_type, question_parts, states_unit
from ...types import Passage
from ..refusal import dense_scaled
from .terms import (Asked, Embedder, TermStats, Words, _focus_terms, _names, _other_year, _standalone_numbers,
                    coverage, question_names)
from .candidates import Candidate, _legs_agree, _passage_cosine, _with_context
from .units import _units


def answer_features(question: str, terms: Sequence[str], weights: np.ndarray, passages: Sequence[Passage],
                    passage_terms: Sequence[set[str]], passage_coverage: float, top: Candidate,
                    kind: str | None, stats: TermStats,
                    candidates: Sequence[Candidate] = (), embedder: str | None = None,
                    cosines: Mapping[str, float] | None = None, embed: Embedder | None = None,
                    rescore: bool = False, said: frozenset[str] = frozenset()) -> dict[str, float]:
    """The answerability features (``refusal.FEATURES``) of a question and its best-scoring sentence.

    ``rare_*``: idf-weighted share of the question's rarest content terms (the top third by idf, at least one)
    found in the answering sentence / in any of the two best passages; ``unseen``: idf share of terms the
    corpus never contains; ``type_missing``: 1 when the question asks for a person/date/place/number/duration
    and the sentence holds none beyond the question's own words; ``bm25_norm``: the best passage's BM25 score
    over its bound ``(k1 + 1) * sum(idf)`` (0 without a BM25 leg); ``few_terms``: 1 / number of content terms;
    ``two_sentences`` / ``rare_two`` / ``names_two``: idf share of the question's terms / of its rarest terms /
    share of the names it states (``question_names``; 1 when none) found in the answering sentence plus the
    one other candidate sentence that adds most to it, each sentence counted with its document's title and
    heading (an answer composed of two sentences, as a multi-hop question needs, explains the whole question;
    hard negatives on the same topic explain only a part). With ``embedder`` (a hybrid store): ``dense_top``,
    the best dense-leg cosine among the passages, and ``dense_answer``, that of the answering sentence's passage,
    each rescaled to 0-1 (``refusal.dense_scaled``); 0 without. A passage the dense leg did not score (a
    second-hop passage) counts with its cosine from ``cosines`` (chunk id -> cosine), else not at all;
    ``dense_sentence``, the question's cosine to the answering sentence itself (one more embedding, through
    ``embed``; 0 without), rescaled the same way: a long passage that mixes topics dilutes the passage cosine
    while the sentence that answers keeps its own; ``dense_top_or_sentence`` / ``dense_answer_or_sentence``, the
    larger of ``dense_top`` / ``dense_answer`` and ``dense_sentence`` (the sentence's cosine as a floor under the
    passage's); ``legs_agree``, 1 when the dense leg's first passage is among the BM25 leg's three best.
    ``rescore``: ``weights`` are not those the candidates were scored with (a scenario question's
    ``scenario_weights``): the answering sentence's coverage is read again with them, and ``names_two`` reads
    only the names the ask states (one the situation states must be in the passages, ``names_found``).
    ``said``: question terms the corpus lacks that an expansion says in its words (``expansion_weights``): not
    counted in ``unseen``.
    """
    top_coverage = top.coverage
    if rescore:
        top_coverage = coverage(terms, weights, top.terms | top.subject) if set(terms) & (top.terms | top.defined) \
            else 0.0
    total = float(weights.sum()) or 1.0
    order = np.argsort(-weights, kind="stable")
    n_rare = max(1, -(-len(terms) // 3))
    rare = [terms[i] for i in order[:n_rare]]
    rare_w = weights[order[:n_rare]]
    rare_total = float(rare_w.sum()) or 1.0
    vocab = stats.vocabulary()
    top2 = sorted(range(len(passages)), key=lambda i: -len(passage_terms[i] & set(rare)))[:2]
    rare_passage = max(sum(w for t, w in zip(rare, rare_w) if t in passage_terms[i]) for i in top2) / rare_total
    bm25, bm25_second, idf_sum = _bm25_scores(passages, terms, stats)
    analyzer = stats.analyzer
    passage_features = _passage_features(question, terms, weights, passages, passage_terms, top2, analyzer)
    names_found, asked = _names_found(question, passage_terms, analyzer, rescore)
    covered = top.terms | top.subject
    gain, second = _second_sentence(question, terms, weights, top, candidates, analyzer)
    both = covered | second
    dense = _dense_features(question, passages, top, embedder, cosines, embed)
    return {
        **dense,
        "two_sentences": min(top_coverage + gain, 1.0),
        "rare_two": sum(w for t, w in zip(rare, rare_w) if t in both) / rare_total,
        "names_two": (sum(1 for n in asked if n <= both) / len(asked)) if asked else 1.0,
        "names_found": names_found,
        "passage_coverage": passage_coverage,
        "sentence_coverage": top_coverage,
        # (a term the sentence uses stands for the words of its definition)
        "rare_in_sentence": sum(w for t, w in zip(rare, rare_w) if t in top.terms | top.defined) / rare_total,
        "rare_in_passage": rare_passage,
        "unseen": sum(w for t, w in zip(terms, weights) if t not in vocab and t not in said) / total,
        "type_missing": 0.0 if has_answer_type(top.text, kind, question) else 1.0,
        "bm25_norm": min(bm25 / (2.2 * idf_sum), 1.0),
        "few_terms": 1.0 / len(terms),
        "bm25_second": min(bm25_second / (2.2 * idf_sum), 1.0),
        **passage_features,
    }


def _bm25_scores(passages: Sequence[Passage], terms: Sequence[str], stats: TermStats) -> tuple[float, float, float]:
    """The best and second-best document's BM25 score (a document's best passage; 0 without a BM25 leg) and the
    question terms' idf sum (1 when 0), for ``bm25_norm`` / ``bm25_second``."""
    by_doc: dict[str, float] = {}
    for p in passages:
        if "bm25" in p.hit.legs:
            by_doc[p.chunk.doc_id] = max(by_doc.get(p.chunk.doc_id, 0.0), p.hit.legs["bm25"][1])
    doc_scores = sorted(by_doc.values(), reverse=True) + [0.0, 0.0]
    idf_sum = float(np.asarray(stats.idf(list(terms))).sum()) or 1.0
    return doc_scores[0], doc_scores[1], idf_sum


def _passage_features(question: str, terms: Sequence[str], weights: np.ndarray, passages: Sequence[Passage],
                      passage_terms: Sequence[set[str]], top2: Sequence[int],
                      analyzer: Analyzer) -> dict[str, float]:
    """``title_overlap``, ``union_coverage``, ``bridge``, ``bridge_coverage`` and ``titles_named`` (in that order):
    what the passages' titles and the two passages richest in rare terms (``top2``) cover of the question."""
    titles = [set(analyzer.analyze(p.chunk.title)) for p in passages]
    title_overlap = max((coverage(terms, weights, t) for t in titles[:3]), default=0.0)
    union = coverage(terms, weights, passage_terms[top2[0]] | passage_terms[top2[-1]])
    pair = bridge_pair(passages[:4], passage_terms[:4], analyzer)
    bridge = 1.0 if pair is not None else 0.0
    bridge_cov = coverage(terms, weights, passage_terms[pair[0]] | passage_terms[pair[1]]) if pair else 0.0
    q_terms = set(analyzer.analyze(question))
    named = {p.chunk.doc_id for p, t in zip(passages, titles + [set()] * len(passages)) if t and t <= q_terms}
    return {
        "title_overlap": title_overlap,
        "union_coverage": union,
        "bridge": bridge,
        "bridge_coverage": bridge_cov,
        "titles_named": min(len(named), 2) / 2,
    }


def _names_found(question: str, passage_terms: Sequence[set[str]], analyzer: Analyzer,
                 rescore: bool) -> tuple[float, list[set[str]]]:
    """``names_found``: the share of the names the question states (``question_names``) found in one of the four
    first passages (1 when none); and the names ``names_two`` reads (those the ask states, with ``rescore``)."""
    names = [set(analyzer.analyze(n)) for n in question_names(question)]
    names = [n for n in names if n]
    names_found = (sum(1 for n in names if any(n <= pt for pt in passage_terms[:4])) / len(names)) if names else 1.0
    # a name only the situation of a scenario question states must be found in the passages, not in the answer
    asked = names
    if rescore:
        ask = set(analyzer.analyze(question_parts(question).ask))
        asked = [n for n in names if n <= ask]
    return names_found, asked


def _second_sentence(question: str, terms: Sequence[str], weights: np.ndarray, top: Candidate,
                     candidates: Sequence[Candidate], analyzer: Analyzer) -> tuple[float, frozenset[str]]:
    """The coverage gain of the one other candidate (of the first ``SECOND_SENTENCES``) that adds most to ``top``,
    each read with its subject, and that sentence's terms with its subject (0 and none when no candidate adds)."""
    q_terms = set(analyzer.analyze(question))
    covered = top.terms | top.subject
    gain, second = 0.0, frozenset()
    titles_of: dict[str, frozenset[str]] = {}
    # the attribute a "what is the X" question asks for, when the answering sentence lacks it
    focus = (_focus_terms(question, analyzer) & set(terms)) - covered
    for c in candidates[1:SECOND_SENTENCES]:
        if focus & c.terms and not _linked(top, c, analyzer, q_terms, titles_of):
            continue  # two unrelated sentences, each covering one half of the question, answer neither half
        g = coverage(terms, weights, (c.terms | c.subject) - covered)
        if g > gain:
            gain, second = g, c.terms | c.subject
    return gain, second


def _dense_features(question: str, passages: Sequence[Passage], top: Candidate, embedder: str | None,
                    cosines: Mapping[str, float] | None, embed: Embedder | None) -> dict[str, float]:
    """``dense_top``, ``dense_answer``, ``dense_sentence``, ``dense_top_or_sentence``, ``dense_answer_or_sentence``
    and ``legs_agree`` (in that order; all 0 without ``embedder``), as ``answer_features`` states them."""
    dense_top = dense_answer = dense_sentence = legs_agree = 0.0
    if embedder is not None:
        cos = {p.hit.chunk_id: _passage_cosine(p) for p in passages if "dense" in p.hit.legs}
        cos.update({c: v for c, v in (cosines or {}).items() if c not in cos})
        dense_top = dense_scaled(max((cos[p.hit.chunk_id] for p in passages if p.hit.chunk_id in cos),
                                     default=0.0), embedder)
        dense_answer = dense_scaled(cos[top.passage.hit.chunk_id], embedder) if top.passage.hit.chunk_id in cos \
            else 0.0
        if embed is not None:
            q = np.asarray(embed([question], "query")[0], dtype=np.float64)
            v = np.asarray(embed([top.text], "passage"), dtype=np.float64)
            dense_sentence = dense_scaled(float(cosines_to(q, v)[0]), embedder)
        legs_agree = float(_legs_agree(passages))
    return {
        "dense_top": dense_top,
        "dense_answer": dense_answer,
        "dense_sentence": dense_sentence,
        "dense_top_or_sentence": max(dense_top, dense_sentence),
        "dense_answer_or_sentence": max(dense_answer, dense_sentence),
        "legs_agree": legs_agree,
    }


SECOND_SENTENCES = 40  # candidates searched for the second sentence of ``two_sentences``


def _linked(top: Candidate, other: Candidate, analyzer: Analyzer, question_terms: set[str],
            titles: dict[str, frozenset[str]]) -> bool:
    """Whether ``other`` can complete ``top`` as the second sentence of one answer: it sits in the same passage,
    one's passage names the other's document title (the bridge of a multi-hop question), the question names
    both documents' titles (a comparison), a term one uses is defined by the other, or both state a name the
    question does not (a shared entity: "MU-Guest", "Ashdown House"). Two sentences of one topic that share
    none of these ("Visitors connect to the MU-Guest network." and "... eduroam with their ... password.")
    each answer a half of the question, not the question. ``titles``: a cache, doc id -> title terms."""
    if top.passage.hit.chunk_id == other.passage.hit.chunk_id:
        return True
    if top.defined and other.defined and top.defined == other.defined or \
            top.defined and top.defined <= other.terms or other.defined and other.defined <= top.terms:
        return True
    t1, t2 = (titles.setdefault(c.passage.chunk.doc_id, frozenset(analyzer.analyze(c.passage.chunk.title)))
              for c in (top, other))
    if top.passage.chunk.doc_id != other.passage.chunk.doc_id:
        if t2 and t2 <= set(analyzer.analyze(top.passage.chunk.text)) or \
                t1 and t1 <= set(analyzer.analyze(other.passage.chunk.text)):
            return True
        if t1 and t2 and t1 <= question_terms and t2 <= question_terms:
            return True
    return bool(_names(top.text, analyzer) & _names(other.text, analyzer) - question_terms)


def bridge_pair(passages: Sequence[Passage], passage_terms: Sequence[set[str]],
                analyzer: Analyzer) -> tuple[int, int] | None:
    """A multi-hop link among the passages: ``(i, j)`` where passage ``i`` names passage ``j``'s document
    title (every title term occurs in ``i``) and they come from different documents; the best-ranked pair,
    or None."""
    titles = [set(analyzer.analyze(p.chunk.title)) for p in passages]
    for j, tj in enumerate(titles):
        if not tj:
            continue
        for i, p in enumerate(passages):
            if p.chunk.doc_id != passages[j].chunk.doc_id and tj <= passage_terms[i]:
                return (i, j)
    return None


_NEGATION_RE = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n't\b|\bnon-|"
                          r"[不没未非无]", re.I)
"""Negation: English negators (Quirk et al., *A Comprehensive Grammar of the English Language*, 10.54-10.64)
and the Chinese negation characters 不 没 未 非 无."""


def on_topic_features(asked: Asked, weights: np.ndarray, top: Candidate, passages: Sequence[Passage],
                      passage_terms: Sequence[set[str]], words: Words, analyzer: Analyzer,
                      dense_top: float) -> dict[str, float]:
    """Features that tell an on-topic passage that holds the answer from one that does not.

    ``miss_sentence_max`` / ``miss_window_max`` / ``miss_passage_max``: the largest weight (``weights``, the
    question terms' idf-based coverage weights) of a question term missing from the answering sentence with its
    subject / from it and its neighbouring units in the passage / from the whole answering passage, over the
    largest weight of any question term (0 when none is missing): a question that swaps one entity of an
    on-topic passage for another lacks exactly that term. ``window_coverage``: the coverage of the sentence and
    its neighbours. ``negation_unmatched``: 1 when the question states a negation (``_NEGATION_RE``) and the
    sentence and its neighbours state none. ``number_missing``: 1 when a number the question states on its own is
    not in the answering passage. ``novel_terms``: the share of the sentence's terms the question does not use
    (what the sentence adds). ``year_other``: 1 when the question states one year and the sentence, read with its
    title, headings and table header, states another and not that one. ``unit_missing``: 1 when the question asks
    for a size or a price (``question.expected_unit``) and the sentence so read states none. ``unseen_common``:
    1 when every question word the corpus lacks is a common lower-case word (``Words.other_words``).
    ``codes_held``: 1 when words cannot decide (``Words.dense_decides``) and a passage holds every identifier the
    question names. ``dense_blind``: ``dense_top`` where words cannot decide (``Words.words_blind``), else 0.
    """
    terms = asked.terms
    wmax = float(np.max(weights)) if len(weights) else 1.0
    wmax = wmax or 1.0

    def missing(held: set[str] | frozenset[str]) -> float:
        return max((float(w) for t, w in zip(terms, weights) if t not in held), default=0.0) / wmax

    sentence = top.terms | top.subject | top.defined
    window_text = _window(top)
    window = sentence | set(analyzer.analyze_document(window_text))
    at = next((i for i, p in enumerate(passages) if p is top.passage), None)
    passage = passage_terms[at] if at is not None else set(analyzer.analyze_document(top.passage.chunk.text))
    framed = _with_context(top)
    unit = expected_unit(asked.question)
    negated = bool(_NEGATION_RE.search(asked.question))
    return {
        "window_coverage": coverage(terms, weights, window),
        "miss_sentence_max": missing(sentence),
        "miss_window_max": missing(window),
        "miss_passage_max": missing(passage | sentence),
        "negation_unmatched": float(negated and not _NEGATION_RE.search(window_text)),
        "number_missing": float(bool(asked.numbers - _standalone_numbers(top.passage.chunk.text))),
        "novel_terms": len(top.terms - asked.question_terms) / max(len(top.terms), 1),
        "year_other": float(_other_year(framed, asked.year)),
        "unit_missing": float(unit is not None and not states_unit(framed, unit)),
        "unseen_common": float(words.other_words),
        "codes_held": float(words.dense_decides and bool(asked.codes)
                            and any(asked.codes <= pt for pt in passage_terms)),
        "dense_blind": dense_top if words.words_blind else 0.0,
    }


def _window(top: Candidate) -> str:
    """The answering sentence with the units just before and after it in its passage."""
    texts = [u.text for u in _units(top.passage)]
    if top.text not in texts:
        return top.text
    i = texts.index(top.text)
    return " ".join(texts[max(0, i - 1):i + 2])
