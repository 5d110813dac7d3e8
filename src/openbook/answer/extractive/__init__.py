"""The offline answerer: no model, no key. Picks the sentences of the retrieved passages that best answer the
question, cites each as ``[n]``, or refuses.

The steps, a module each, as ``answer_extractive`` runs them: ``terms`` reads the question's words once
(``Asked``, ``Words``); ``units`` reads each passage's sentences; ``candidates`` scores them (``Scored``) and ranks
them (``Candidate``); ``features`` gives the answerability features of the best one; ``decide`` answers or refuses,
naming its reason (``Decision``); ``compose`` chooses the answer's sentences.

Refusal: one calibrated answerability score (``refusal.answerability``: a logistic model fitted on public QA
sets by ``benchmarks/fit_answerer.py`` and loaded from ``refusal.MODEL_FILE``) over the features of the question
and of its best sentence (``features.answer_features``, ``features.on_topic_features``): idf-weighted
*query-term coverage* of the best passage, of the two best passages, of the sentence and its neighbours::

    coverage(p) = sum(idf(t) for t in Q if t in p) / sum(idf(t) for t in Q)

where ``Q`` is the question's distinct analyzer terms minus question words ("what", "how many", "多少", ...) and
a term absent from the whole corpus gets the largest possible idf (df = 0); coverage of the rarest terms; the
weight of the rarest question term the sentence, its neighbours or its passage lack; the BM25 score over its
bound; unseen words; names and answer type; a negation the question states and the sentence does not; a number
the question states and the passage does not; another year than the one asked; a size or price asked and none
stated; on a hybrid store the dense leg's cosines. The answer is refused when the score is below
``AnswerConfig.min_confidence``; the refusal's note names the features that pulled it down most. A question
that states a situation before it asks ("A tenant moved out two months ago and the deposit has not come back.
Can they still claim it themselves?", ``question.question_parts``) is judged on its ask and the names its
situation states; the situation's other words choose the sentence but are not required of it
(``scenario_weights``). Sentences about another year than the one asked are demoted (``YEAR_MISMATCH``) in
sentence choice.

Sentence choice: each sentence of each passage scores its coverage read together with its document's title and
section heading (the subject it inherits; a sentence must share a term with the question itself), plus a small
bonus for the passage's rank, plus (with an embedder) its cosine to the question rescaled over the candidates, which lets a sentence in
another language or with other words ("notebook computer" for "laptop") win; sentences of documents superseded by another retrieved document (``supersedes`` metadata, or the same
title family with a later ``updated`` date) are demoted, so the newer value wins and the older one is named
with its date. A comparison of two names set side by side ("A or B") answers with a sentence of each one's own
document; a sentence that leaves its document's subject unnamed takes the sentence naming it in a slot left.

What a sentence is (``_units``): a markdown list item and a line opening with a bold label start one of their own,
a table row reads as ``header: value; ...``, and a heading inside the passage is the subject of what sits under
it. A sentence's own words count a little over those it inherits (``OWN_WEIGHT``); one that names the attribute a
"what is the X" question asks for and a value of the asked type wins (``FOCUS_BONUS``: "Standard limit: 600
requests per minute" for "What is the API rate limit ...?"); a table row whose value differs in a column where
the question names a value ("a Business plan customer" -> plan: Business) is demoted (``ROW_MISMATCH``); a
command-line option the question names as written ("grep -V") favours sentences stating it with the same case,
most its manual entry opening with it (``OPTION_BONUS``: the analyzer reads -v and -V alike). A how-to
question ("How do I ...") is answered by a procedure when one is on offer: the numbered steps of a list whose
heading (in the passage, else the chunk's section) or introduction shares a term with the question, quoted whole
and alone with the document's own numbers; a bulleted list is no procedure. A further sentence joins only
when it adds question terms that the chosen sentences and the subjects they inherit lack; never one ending in a
colon, nor one of another document without the identifier the question names, nor one of another document that
adds none of the question's rarest terms (the top third by idf): common words shared do not make it an answer.

Defined terms (``bridge.definition``): a sentence that uses a term its document defines in a retrieved passage
("Category A items are lent to undergraduates for 28 days" under "Category A item means a standard loan: most
printed books ...") reads with the definition's words as a subject it inherits, so the rule far below the
definition answers "How long can an undergraduate borrow a printed book?"; the definition joins it as its hop
and counts in ``rare_in_sentence``, a definition that ranks first yields to a rule using its term that covers
more of the question, and no sentence about another defined term (Category A beside Category B) is stitched
on. A table row takes no other row as the sentence naming its subject. From another document, a sentence that
adds one common word of the question (not of a name it states) joins only when it scores ``ONE_WORD_SHARE`` of
the first sentence: "The library keeps a record ... for 12 months" does not pad "How long can I keep ...". In
the ``two_sentences`` features, a second sentence that supplies the attribute a "what is the X" question asks
for, which the answering sentence lacks, counts only when linked to it (``_linked``: same passage, a title
bridge, a comparison the question names, a definition, or a shared name).

Expansions (``retrieve.glossary.Expansion``: the user's glossary, and WordNet's with ``[answer] wordnet``): a
sentence, heading or passage holding every term of an added phrase holds the question terms it stands for
(``expanded``), in sentence choice and in every coverage feature; such a term the corpus lacks weighs what the
corpus's word for it weighs (``expansion_weights``) and is not unseen. The answer's notes name the expansion it
relied on.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ...config import AnswerConfig
from ...index.analyzer import Analyzer
from ...retrieve.glossary import Expansion
from ...types import Answer, Passage
from ..context import citation_for, superseded_docs
from ..numbering import number_sources
from ..crosslingual import cross_sentence
from ..injection import looks_like_injection
from ..refusal import DENSE_SCALE, answerability, reads_sentence_cosine, refusal_sentence
from .units import (MAX_SENTENCE_CHARS, _BULLET_DASH_RE, _LABEL_LINE_RE, _LIST_ITEM_RE, _TABLE_SEP_RE, _Unit, _cap,
                    _units, _without_code)
from .terms import (Asked, Embedder, QUESTION_WORDS_CJK, QUESTION_WORDS_EN, REFERRING_WORDS_EN, SITUATION_WEIGHT,
                    TermStats, Words, _AMOUNT_RE, _ARTICLE, _CODE_RE, _COMPOUND_RE, _DIGIT_GROUP_RE, _ENTITY_RE,
                    _FOCUS_RE, _HOW_TO_RE, _LOWER_WORD_RE, _MEASURE_RE, _NAME_JOIN, _NAME_RE, _QUOTED_RE,
                    _SENTENCE_END, _YEAR_RE, _asked_year, _best_coverage, _cased, _focus_terms, _held, _is_cjk, _names,
                    _other_year, _rare_terms, _seen, _standalone_numbers, _unseen_common_words, _word_bigrams,
                    content_terms, coverage, expanded, expansion_weights, question_names, read_question, read_words,
                    scenario_weights, term_weights)
from .candidates import (Candidate, ECHO_PENALTY, FOCUS_BONUS, Governed, OPTION_BONUS, OWN_WEIGHT, PROCEDURE_MAX_CHARS,
                         PROCEDURE_MAX_STEPS, ROW_MISMATCH, SEMANTIC_CANDIDATES, SEMANTIC_WEIGHT, Scored, TYPE_BONUS,
                         YEAR_MISMATCH, _Candidate, _QUESTION_END, _document_definitions, _echoes, _legs_agree,
                         _mismatched, _named_values, _option_bonus, _passage_cosine, _procedures,
                         _rule_over_definition, _semantic_scores, _with_context, rank_candidates, score_sentences)
from .features import SECOND_SENTENCES, _linked, answer_features, bridge_pair, on_topic_features
from .compose import (Composed, NEAR_TIE, ONE_WORD_SHARE, STITCH_RATIO, _PAIR_GAP, _bridge_sentence, _definition_hop,
                      _entity_sentences, _naming_sentence, _other_definition, _relied_on, _with_introduced_code,
                      compose)
from .decide import (ANSWERABLE, Decision, Evidence, LOW_ANSWERABILITY, NOTHING_TO_READ, NO_CANDIDATE,
                     OTHER_LANGUAGE, READABLE, decide)


def answer_extractive(question: str, passages: Sequence[Passage], stats: TermStats,
                      config: AnswerConfig, embed: Embedder | None = None, versions: Mapping[str, str] | None = None,
                      embedder: str | None = None, cosines: Mapping[str, float] | None = None,
                      expansions: Sequence[Expansion] = ()) -> Answer:
    """Answer ``question`` from ``passages`` by extraction, or refuse.

    ``embedder``: the store's embedder name (hybrid store); with passages scored by the dense leg and a
    ``refusal.DENSE_SCALE`` entry for it, the answerability score adds the dense features and uses the hybrid
    model fitted for that embedder. ``cosines``: chunk id -> the question's cosine to a passage the dense leg
    did not score (``answer.pipeline.question_cosines``: a second-hop passage), read by the dense features.
    ``expansions``: those the BM25 leg used (``Retriever.expansions``: glossary, WordNet): a sentence, heading or
    passage holding an added phrase holds the question terms it stands for (``expanded``), in sentence choice
    and in the answerability features alike; an answer that relies on one says so in its notes.

    Returns:
        An ``Answer`` whose text is one to ``config.max_sentences`` sentences, each followed by ``[n]``, and a
        ``citations`` list in order of first citation; or the refusal sentence with ``refused=True`` and no
        citations. ``passages`` are always returned for inspection; ``confidence`` is the answerability score
        (``refusal.answerability``) compared with ``config.min_confidence``, or for an answer from a passage in
        another language the cross-language rule's (``crosslingual.CrossSentence.confidence``).
    """
    analyzer = stats.analyzer
    terms = content_terms(question, analyzer)
    decision = decide(Evidence(passages, terms))
    if not decision.answer:
        return _refused(question, passages, decision)
    weights = expansion_weights(terms, term_weights(terms, stats, question), expansions, stats)
    asked = read_question(question, terms, weights, analyzer)
    passage_terms, whole_units, suspect = _read_passages(passages, asked, analyzer, expansions)
    # a code block (a config file, a log) is a candidate only for a how-to question: a command it presents is a
    # way to do something, while the words a question asking a fact shares with a code line make no statement of
    # it; the answer may still quote the block a chosen sentence introduces ("..., run:"), so compose reads all
    passage_units = [[u for u in units if asked.how_to or not u.code] for units in whole_units]
    # a scenario question's situation ("A tenant moved out two months ago ...") chooses the sentence
    # with all its words, but answerability reads them at SITUATION_WEIGHT: the answer need not repeat them all
    judged = scenario_weights(question, terms, weights, analyzer, stats.vocabulary(), SITUATION_WEIGHT)
    older = superseded_docs(passages, versions, analyzer)
    pool, governed = score_sentences(asked, passages, passage_units, suspect,
                                     [coverage(terms, weights, pt) for pt in passage_terms], older, analyzer,
                                     expansions)
    said = frozenset(t for e in expansions for t in e.matched_terms)
    words = read_words(question, terms, weights, passages, stats.vocabulary(), said, analyzer)
    # the embedder reads the few strongest sentences, and only when words cannot decide: the question's words
    # are missing from the corpus (a synonym) or the passages are in another language
    semantic = _semantic_scores(question, [x.text for x in pool[:SEMANTIC_CANDIDATES]],
                                embed if words.dense_decides else None)
    semantic += [0.0] * (len(pool) - len(semantic))
    # an identifier in the question (E-5512, AX-PRO-500, v5.2) pins the subject: when some sentence holds
    # every one of them, sentences that do not are demoted, whatever else they share with the question
    pinned = bool(asked.codes) and any(asked.codes <= x.terms for x in pool)
    candidates = rank_candidates(pool, semantic, asked, pinned, governed)
    # a passage in another language: its best sentence competes on dense evidence (answer/crosslingual.py)
    readable = [[u.text for u in units if u.text not in suspect] for units in passage_units]
    cross = cross_sentence(question, words.language, passages, readable,
                           embed, embedder, asked.kind, own=candidates[0].text if candidates else None,
                           shared=lambda s: coverage(terms, weights, set(analyzer.analyze_document(s)))) \
        if embed is not None and embedder is not None else None
    features, dense = _answerability(asked, judged, passages, passage_terms, candidates, stats, words, said,
                                     embedder, cosines, embed)
    confidence = answerability(features, words.language, dense) if features else 0.0
    evidence = Evidence(passages, terms, candidates, cross, confidence, config.min_confidence, words, dense,
                        features)
    decision = decide(evidence)
    if not decision.answer:
        return _refused(question, passages, decision, features)
    if decision.reason == OTHER_LANGUAGE and cross is not None:
        top_score = max((c.score for c in candidates), default=1.0)
        candidates.insert(0, Candidate(cross.passage, cross.text, 10.0 * max(top_score, 1.0), 1.0,
                                       frozenset(analyzer.analyze_document(cross.text))))
    said_otherwise = {t for e in expansions for phrase in e.added_terms for t in phrase}  # "notebook computer"
    quotable = {p.n: [u for u in units if u.text not in suspect] for p, units in zip(passages, whole_units)}
    composed = compose(asked, candidates, governed, older, analyzer, config.max_sentences, quotable,
                       said_otherwise, pinned, ONE_WORD_SHARE)
    return _cited(composed, passages, older, expansions, analyzer, decision, features)


def _read_passages(passages: Sequence[Passage], asked: Asked, analyzer: Analyzer,
                   expansions: Sequence[Expansion]) -> tuple[list[set[str]], list[list[_Unit]], set[str]]:
    """Each passage's terms (what it holds of the question, ``_held``), each passage's units (code blocks
    included), and the units' texts never quoted (an instruction aimed at a model,
    ``injection.looks_like_injection``)."""
    # support is judged on what the reader sees: a contextual-retrieval context is not part of the passage
    # and for a question asking a fact, not on its code blocks (a config file's keys state nothing: ``_units``)
    passage_terms = [set(_held(_without_code(p.chunk.indexed_text(context=False), asked.how_to), analyzer,
                               expansions)) for p in passages]
    # each passage's sentences, read once (the cross-language check reuses them)
    units: list[list[_Unit]] = [_units(p) for p in passages]
    # an instruction aimed at a model (untrusted document text) is never quoted as an answer, in any language
    suspect = {u.text for whole in units for u in whole if looks_like_injection(u.text)}
    return passage_terms, units, suspect


def _answerability(asked: Asked, judged: np.ndarray, passages: Sequence[Passage],
                   passage_terms: Sequence[set[str]], candidates: Sequence[Candidate], stats: TermStats,
                   words: Words, said: frozenset[str], embedder: str | None, cosines: Mapping[str, float] | None,
                   embed: Embedder | None) -> tuple[dict[str, float], str | None]:
    """The answerability features of the best candidate (``refusal.FEATURES``; empty without one) and the
    embedder whose hybrid model reads them (None: the BM25-only model, as on a store whose passages carry no
    dense leg). ``judged``: the weights answerability reads (``scenario_weights``)."""
    if not candidates:
        return {}, None
    question, terms = asked.question, asked.terms
    dense = embedder if embedder in DENSE_SCALE and any("dense" in p.hit.legs for p in passages) else None
    features = answer_features(question, terms, judged, passages, passage_terms,
                               _best_coverage(terms, judged, passage_terms), candidates[0], asked.kind,
                               stats, candidates, embedder=dense, cosines=cosines,
                               embed=embed if reads_sentence_cosine(dense) else None,
                               rescore=judged is not asked.weights, said=said)
    features.update(on_topic_features(asked, judged, candidates[0], passages, passage_terms, words,
                                      stats.analyzer, features["dense_top"]))
    return {name: float(value) for name, value in features.items()}, dense


def _refused(question: str, passages: Sequence[Passage], decision: Decision,
             features: Mapping[str, float] | None = None) -> Answer:
    """The refusal ``decision`` names: the refusal sentence, no citations, the decision's note and confidence, and
    the features it was judged on."""
    return Answer(text=refusal_sentence(question), refused=True, passages=tuple(passages),
                  notes=(decision.note,) if decision.note else (), confidence=decision.confidence,
                  features=dict(features or {}))


def _cited(composed: Composed, passages: Sequence[Passage], older: Mapping[str, str],
           expansions: Sequence[Expansion], analyzer: Analyzer, decision: Decision,
           features: Mapping[str, float]) -> Answer:
    """The answer: each chosen sentence followed by ``[n]``, the note naming an older, superseded version of the
    top answer's document (its values named, not quoted), and the notes: the decision's, the older version's,
    the expansions relied on."""
    chosen, candidates = composed.sentences, composed.candidates
    notes = [decision.note] if decision.note else []
    top = chosen[0]
    older_note = ""
    for c in candidates[1:]:  # name an older, superseded version of the top answer with its date
        doc = c.passage.chunk.doc_id
        if older.get(doc) == top.passage.chunk.doc_id and c.coverage >= 0.6 * top.coverage:
            date = c.passage.chunk.metadata.get("updated")
            dated = f", updated {date}" if date else ""
            notes.append(f"older version: {doc}{dated}")
            # named, not quoted or cited: its superseded values must not blend into the answer
            older_note = f"(This supersedes an older version, {c.passage.chunk.title or doc}{dated}.)"
            break
    notes += _relied_on(chosen, expansions, analyzer)
    cited: dict[int, Passage] = {}
    parts = []
    for c in chosen:
        parts.append(f"{c.text} [{c.passage.n}]")
        cited.setdefault(c.passage.n, c.passage)
    citations = tuple(citation_for(p) for p in cited.values())
    if older_note:
        parts.append(older_note)
    return number_sources(Answer(text=" ".join(parts), refused=False, citations=citations,
                                 passages=tuple(passages), notes=tuple(notes), confidence=decision.confidence,
                                 features=dict(features)))
