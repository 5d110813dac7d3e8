"""Choosing the answer's sentences from the ranked candidates (``compose``): the first one, its second hop (a
definition, a bridge sentence, an entity's row, an identifier's line, a multi-hop value), the sentences stitched on
that add question terms, a near-tie, one sentence of each side of a comparison or the sentence naming the
subject, the code block a sentence introduces; and the notes on expansions the answer relied on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ...index.analyzer import Analyzer
from ...question import has_answer_type
from ...retrieve.glossary import Expansion
from ...types import Passage
from ..bridge import Definition, code_sentence, entity_sentence, is_table_row, row_by_bridge
from .units import _Unit
from .terms import Asked, _names, _rare_terms, coverage, question_names
from .candidates import PROCEDURE_MAX_CHARS, PROCEDURE_MAX_STEPS, Candidate, Governed, _echoes, _with_context

NEAR_TIE = 0.9  # a second sentence of the top document scoring at least this share of the first joins it
STITCH_RATIO = 0.3  # an added sentence covers at least this share of what the first one covers
# a sentence of another document adding one common word of the question joins only when scoring at least this
# share of the first sentence. Calibrated on the calibration split (HotpotQA dev 500 and CMRC 2018 dev outside
# the seed-7 reported sample, 300 each; benchmarks/calibrate_answers.py --one-word-share, BENCHMARKS.md): no
# value from 0 to 1 loses a gold answer (CMRC: no answer changes at all), so the rule is the most documents
# outside the question's qrels dropped minus qrels documents dropped, against the gate off: 0.65 0, 0.75 1,
# 0.80 3, 0.85 2, 1.0 3 (a tie to the lower value); above 0.80 the gate drops the second half of comparisons
ONE_WORD_SHARE = 0.8


def _relied_on(chosen: Sequence[Candidate], expansions: Sequence[Expansion], analyzer: Analyzer) -> list[str]:
    """One note per expansion some chosen sentence (with its subject) holds only through an added phrase."""
    notes = []
    for e in expansions:
        for c in chosen:
            own = set(analyzer.analyze_document(_with_context(c)))  # its words, title, headings, table header
            held = [(len(a), p) for p, a in zip(e.added, e.added_terms) if set(a) <= own]
            phrase = max(held)[1] if held else None  # the longest: "notebook computer" over "notebook"
            if phrase is not None and not set(e.matched_terms) <= own:
                notes.append(f"read {e.matched!r} as {phrase!r} ({e.source} expansion)")
                break
    return notes


def _other_definition(c: Candidate, chosen: Sequence[Candidate],
                      governed: Mapping[tuple[int, str], tuple[Passage, Definition]]) -> bool:
    """Whether ``c`` uses a defined term that the answer's first sentence does not, when that sentence uses one:
    a rule about another defined thing (Category A beside the answer's Category B), whatever words it shares."""
    mine = governed.get((chosen[0].passage.n, chosen[0].text))
    theirs = governed.get((c.passage.n, c.text))
    return mine is not None and theirs is not None and theirs[1].text != mine[1].text


def _definition_hop(top: Candidate, candidates: Sequence[Candidate],
                    governed: Mapping[tuple[int, str], tuple[Passage, Definition]], analyzer: Analyzer,
                    terms: Sequence[str], weights: np.ndarray) -> Candidate | None:
    """The definition of the term the answering sentence uses, when it explains question terms the sentence
    lacks ("Category A item means a standard loan: most printed books" for "Category A items are lent to
    undergraduates for 28 days" and "How long can an undergraduate borrow a standard printed book?"): the
    candidate sentence, or one made of it; None when the answering sentence uses no defined term."""
    found = governed.get((top.passage.n, top.text))
    if found is None:
        return None
    p, d = found
    if not coverage(terms, weights, set(d.body) - set(top.terms)):
        return None
    same = next((c for c in candidates if c.passage.n == p.n and c.text == d.text), None)
    if same is not None:
        return same
    own = frozenset(analyzer.analyze_document(d.text))
    return Candidate(p, d.text, 0.0, coverage(terms, weights, own), own)


def _bridge_sentence(top: Candidate, candidates: Sequence[Candidate], analyzer: Analyzer,
                     terms: Sequence[str], weights: np.ndarray, kind: str | None,
                     question: str) -> Candidate | None:
    """The second hop of a multi-hop answer: when the answering passage names another passage's document
    (all of its title terms: "... starring Shirley Temple" -> "Shirley Temple"), the sentence of that passage
    that adds the largest idf share of question terms the answering sentence and its document's title lack
    (best-scored first on ties), or else the best one holding the expected answer type; None when there is no
    such passage or sentence."""
    top_doc = top.passage.chunk.doc_id
    top_passage = set(analyzer.analyze(top.passage.chunk.text))
    question_terms = set(analyzer.analyze(question))
    linked: set[str] = set()
    for c in candidates:
        doc = c.passage.chunk.doc_id
        if doc == top_doc or doc in linked:
            continue
        title = set(analyzer.analyze(c.passage.chunk.title))
        if title and title <= top_passage and not title <= question_terms:
            linked.add(doc)
    if not linked:
        return None
    covered = set(top.terms) | set(analyzer.analyze(top.passage.chunk.title))
    best: tuple[float, Candidate] | None = None
    typed: Candidate | None = None
    for c in candidates:  # best first
        if c.passage.chunk.doc_id not in linked:
            continue
        gain = coverage(terms, weights, {t for t in c.terms if t not in covered})
        if gain > 0 and (best is None or gain > best[0] + 1e-9):
            best = (gain, c)
        if typed is None and kind is not None and has_answer_type(c.text, kind, question):
            typed = c
    return best[1] if best is not None else typed


_PAIR_GAP = re.compile(r"[\s,\"“”']*(?:and|or|vs\.?|versus)?[\s\"“”']*(?:the\s+)?")


def _entity_sentences(question: str, candidates: Sequence[Candidate], analyzer: Analyzer) -> list[Candidate]:
    """For a question naming two or more things that each have a retrieved document of their own (the title's
    terms are the name's: "Emma Bull or Virginia Woolf", "Eric Ambler and Carol Shields"), the best-scored
    sentence of each one's document, in the question's order; [] when fewer than two such names."""
    low = " ".join(question.casefold().split())
    spans = sorted((low.index(n), low.index(n) + len(n), n) for n in question_names(question) if n in low)
    # only names the question sets side by side ("A or B", "A and B", "A, B"), as a comparison does
    paired: list[str] = []
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        if _PAIR_GAP.fullmatch(low[end:start]):
            paired += [n for n in (a, b) if n not in paired]
    names = [set(analyzer.analyze(n)) for n in paired]
    out: list[Candidate] = []
    used: set[str] = set()
    for name in names:
        if not name:
            continue
        own = [c for c in candidates  # best first
               if (title := set(analyzer.analyze(c.passage.chunk.title))) and (title <= name or name <= title)
               and len(title & name) >= min(2, len(name)) and c.passage.chunk.doc_id not in used]
        if own:  # the document's first choice that states the name ("Adeline Virginia Woolf (1882-1941) ...")
            doc = own[0].passage.chunk.doc_id
            pick = next((c for c in own if c.passage.chunk.doc_id == doc and name <= c.terms), own[0])
            out.append(pick)
            used.add(doc)
    return out if len(out) >= 2 else []


def _naming_sentence(top: Candidate, candidates: Sequence[Candidate], analyzer: Analyzer,
                     question_terms: set[str]) -> Candidate | None:
    """When the answering sentence leaves its subject unnamed (its document's title is neither in it nor in the
    question: "It follows the adventures of ..." under "The Spiderwick Chronicles"), the best-scored candidate
    sentence of the same document that states the whole title; else None."""
    title = set(analyzer.analyze(top.passage.chunk.title))
    if not title or title <= top.terms or title <= question_terms:
        return None
    doc = top.passage.chunk.doc_id
    return next((c for c in candidates if c.passage.chunk.doc_id == doc and c.text != top.text
                 and title <= c.terms), None)


def _with_introduced_code(chosen: list[Candidate], units: Mapping[int, Sequence[_Unit]],
                          analyzer: Analyzer) -> list[Candidate]:
    """``chosen`` with the code block that a chosen sentence ending in a colon introduces placed right after it
    ("To take a manual backup, run:" + the ``pg_dump ...`` block that follows it in its passage), unless the
    answer already quotes that block. ``units``: passage number -> its ``_units``, in passage order."""
    out: list[Candidate] = []
    for c in chosen:
        out.append(c)
        if c.procedure or not c.text.rstrip().endswith((":", "：")):
            continue
        seq = list(units.get(c.passage.n, ()))
        at = next((i for i, u in enumerate(seq) if u.text == c.text and not u.code), None)
        if at is None or at + 1 >= len(seq) or not seq[at + 1].code:
            continue
        code = seq[at + 1].text
        if any(code in x.text for x in chosen):
            continue
        out.append(Candidate(c.passage, code, c.score, c.coverage, frozenset(analyzer.analyze_document(code)),
                              c.subject))
    return out


@dataclass(frozen=True)
class Composed:
    """The answer's ``sentences``, in order, and the ``candidates`` as the hops left them (best first; a hop may
    move a candidate to the front)."""

    sentences: list[Candidate]
    candidates: list[Candidate]


def compose(asked: Asked, candidates: list[Candidate], governed: Governed, older: Mapping[str, str],
            analyzer: Analyzer, max_sentences: int, units: Mapping[int, Sequence[_Unit]],
            said_otherwise: set[str], pinned: bool, one_word_share: float = ONE_WORD_SHARE) -> Composed:
    """Choose the answer's sentences from ``candidates`` (best first, at least one): the first, its hop
    (``_hop``), the sentences stitched on that add question terms (``_stitched``), a near-tie of the first in its
    document, then one sentence of each named thing of a comparison, or else the sentence naming the first's
    subject, and the code block a chosen sentence ending in a colon introduces; a quoted list keeps its lead-in and a
    sentence opening with "As a result" or "However" the sentence it refers back to. ``units``: passage number -> its
    ``_units``; ``said_otherwise``: the terms of the expansions' added phrases; ``pinned``: some candidate holds
    every identifier the question names; ``one_word_share``: ``ONE_WORD_SHARE``. At most ``max_sentences``
    sentences (one for a procedure), a code block it introduces aside."""
    candidates, hop, bridged = _hop(asked, candidates, governed, older, analyzer, max_sentences, said_otherwise)
    # a procedure is the whole answer to a how-to question: no sentence is stitched to it
    slots = 1 if candidates[0].procedure else max_sentences
    chosen = _stitched(asked, candidates, hop, bridged, governed, older, analyzer, slots, pinned, one_word_share)
    top_doc = candidates[0].passage.chunk.doc_id
    for c in candidates[1:]:  # a slot left over goes to a near-tie of the first sentence in its document,
        # which words alone cannot tell apart from it ("X is ..." and "X was ..." covering the same terms)
        if len(chosen) >= slots or c.score < NEAR_TIE * chosen[0].score:
            break
        if c.passage.chunk.doc_id == top_doc and all(c.text not in x.text for x in chosen) and \
                not _echoes(c.text, asked.question_terms, analyzer) and not c.text.endswith((":", "：")) and \
                not _other_definition(c, chosen, governed):
            chosen.append(c)
    chosen = _compared_or_named(asked, chosen, candidates, governed, analyzer, slots)
    # "To take a manual backup, run:" or "... with the following format:" says nothing without the code block
    # it introduces, whatever the question asks
    chosen = _with_introduced_code(chosen, units, analyzer)
    chosen = _with_list_context(chosen, units, analyzer)
    chosen = _with_antecedents(chosen, units, analyzer)
    return Composed(chosen, candidates)


def _hop(asked: Asked, candidates: list[Candidate], governed: Governed, older: Mapping[str, str],
         analyzer: Analyzer, max_sentences: int,
         said_otherwise: set[str]) -> tuple[list[Candidate], Candidate | None, list[Candidate]]:
    """The candidates (reordered when tied table rows or a multi-hop link decide the first), the second hop of
    the first candidate (a definition, a bridge sentence, an entity's row, an identifier's line, or the value a
    multi-hop link leads to; None when none), and the tied rows a bridge decided."""
    question, terms, weights, kind = asked.question, asked.terms, asked.weights, asked.kind
    row, set_aside = row_by_bridge(candidates, analyzer, question, NEAR_TIE)
    if set_aside:  # tied rows of one table: the row of the entity another passage affirms answers
        candidates = [row] + [c for c in candidates if c is not row and all(c is not x for x in set_aside)]
    # the tied row the bridge decided (when the best candidate is a sentence, it joins as the second hop)
    bridged = [c for c in candidates if set_aside and c.passage.n == set_aside[0].passage.n
               and c.score >= min(x.score for x in set_aside)]
    current = [c for c in candidates if c.passage.chunk.doc_id not in older]
    hop = _definition_hop(candidates[0], candidates, governed, analyzer, terms, weights)
    if hop is None:
        hop = _bridge_sentence(candidates[0], current, analyzer, terms, weights, kind, question)
    if hop is None:  # the bridge named as an entity, not a title: the row of the plan the answer names
        hop = entity_sentence(candidates[0], current, analyzer, terms, weights, question, coverage,
                              said=said_otherwise)
        if hop is not None and len(set(terms) & hop.terms) < 2:
            hop = None  # as for any sentence of another passage: one sharing one word with the question is unrelated
    if hop is None:  # ... or as an identifier ("tracked as BUG-7310"): the line that lists it, after its title
        hop = code_sentence(candidates[0], current, question)
    if hop is None and kind is not None and max_sentences > 1:
        # multi-hop: a sentence of another document explains more of the question but lacks the asked value
        # ("Offline maps are stored on the Trail model only" for "the price of the cheapest model that stores
        # offline maps"); the name it affirms leads to the sentence or row that holds the value
        for b in candidates[1:]:
            if b.score < 0.4 * candidates[0].score:
                break
            if b.coverage <= candidates[0].coverage or b.passage.chunk.doc_id in older or \
                    has_answer_type(b.text, kind, question):
                continue
            value = entity_sentence(b, current, analyzer, terms, weights, question, coverage,
                                    said=said_otherwise)
            if value is not None and has_answer_type(value.text, kind, question):
                candidates = [b] + [c for c in candidates if c is not b]
                hop = value
            break
    return candidates, hop, bridged


def _stitched(asked: Asked, candidates: Sequence[Candidate], hop: Candidate | None, bridged: Sequence[Candidate],
              governed: Governed, older: Mapping[str, str], analyzer: Analyzer, slots: int, pinned: bool,
              one_word_share: float) -> list[Candidate]:
    """The first candidate, its ``hop`` when a slot is left, and each further candidate that adds question terms
    the chosen sentences and their subjects lack, under the rules of the module docstring; at most ``slots``."""
    question, terms, weights, codes = asked.question, asked.terms, asked.weights, asked.codes
    chosen = [candidates[0]]
    # what the answer already says: its sentences and the subject each inherits (title, headings)
    covered = set(candidates[0].terms) | candidates[0].subject
    top_cov, top_doc = candidates[0].coverage, candidates[0].passage.chunk.doc_id
    rare = _rare_terms(terms, weights)
    named_terms = _names(question, analyzer)  # the words of the names and codes the question states
    if hop is not None and slots > 1:
        chosen.append(hop)
        covered |= hop.terms | hop.subject
    for c in candidates[1:]:
        if len(chosen) >= slots:
            break
        if c.score < 0.4 * chosen[0].score or any(c.text in x.text for x in chosen) or \
                older.get(c.passage.chunk.doc_id) == top_doc:
            continue
        if _echoes(c.text, asked.question_terms, analyzer) or c.text.endswith((":", "：")):
            continue  # (a sentence ending in a colon introduces what follows it and says nothing alone)
        if len(set(terms) & c.terms) < 2 and all(c.passage.n != x.passage.n for x in chosen):
            continue  # from another passage, a sentence sharing one word with the question is unrelated
        if pinned and not codes <= c.terms and c.passage.chunk.doc_id != top_doc:
            continue  # the question's identifier pins the subject: another document without it is about another
        if _other_definition(c, chosen, governed):
            continue  # "Category A items may be renewed up to 10 times" beside the rule for Category B items
        adds = {t for t in terms if t in c.terms and t not in covered}
        if not adds:
            continue
        if not adds & rare and all(c is not b for b in bridged) and \
                all(c.passage.chunk.doc_id != x.passage.chunk.doc_id for x in chosen):
            continue  # from another document, a sentence must add one of the question's rarest terms (or be the
            # row a bridge decided): sharing common words ("take", "apply") with the question is no answer
        # a weaker sentence joins only when it brings a real share of the question with it: never a
        # sentence that matches one word
        if len(adds) == 1 and not adds & named_terms and c.score < one_word_share * chosen[0].score and \
                all(c is not b for b in bridged) and \
                all(c.passage.chunk.doc_id != x.passage.chunk.doc_id for x in chosen):
            continue  # from another document, a weaker sentence adding one common word of the question ("keeps a
            # record ... for 12 months" for "How long can I keep a book ...?") pads the answer; one adding a name
            # the question states (the other side of a comparison), scoring close to the first, or the row a bridge
            # decided may answer it
        gain = coverage(terms, weights, set(adds))
        if c.coverage < STITCH_RATIO * top_cov or (c.score < 0.6 * chosen[0].score and gain < 0.15):
            continue
        chosen.append(c)
        covered |= c.terms | c.subject
    return chosen


def _compared_or_named(asked: Asked, chosen: list[Candidate], candidates: Sequence[Candidate],
                       governed: Governed, analyzer: Analyzer, slots: int) -> list[Candidate]:
    """For a comparison of named things, one sentence of each one's document first (``_entity_sentences``),
    then ``chosen`` in the slots left; else ``chosen`` with the sentence naming the first one's subject
    (``_naming_sentence``) second when a slot is left."""
    entities = _entity_sentences(asked.question, candidates, analyzer)
    if len(entities) >= 2 and slots >= 2:
        # a comparison of two named things ("Who was born earlier, Emma Bull or Virginia Woolf?"): one sentence
        # from each one's own document, then what was chosen before in the slots left
        return (entities + [c for c in chosen if all(c.text != e.text for e in entities)])[:slots]
    # (a sentence using a defined term names its subject by it: "Category A items are lent ...", and a table
    # row by its cells)
    naming = _naming_sentence(chosen[0], candidates, analyzer, set(asked.question_terms)) \
        if (chosen[0].passage.n, chosen[0].text) not in governed and not is_table_row(chosen[0].text) else None
    if naming is not None and is_table_row(naming.text):
        naming = None  # a table row is a record of its own: another row does not name its subject
    if naming is not None and len(chosen) < slots and all(naming.text not in c.text for c in chosen):
        # "It follows the adventures of ..." under "The Spiderwick Chronicles": the sentence of the same
        # document that names its subject takes a slot left, since the name may be what the question asks
        return [chosen[0], naming, *chosen[1:]]
    return chosen


# an opening that refers back to the sentence before it (a consequence, a contrast, an exception): quoted alone,
# the sentence can say the opposite of what its passage says ("As a result, `permalink: pretty` will not work",
# whose cause, "in front matter", is the sentence before). English discourse connectives of the Penn Discourse
# Treebank's contingency and comparison classes that take the previous sentence as their first argument.
_LEANS_BACK = re.compile(
    r"^(?:as a (?:result|consequence)|consequently|therefore|thus|hence|accordingly|for (?:this|that) reason|"
    r"because of (?:this|that)|in (?:this|that|which) case|if so|if not|otherwise|however|instead|nevertheless|"
    r"nonetheless|even so|in contrast|by contrast|conversely|(?:this|that) (?:means|is (?:why|because)))\b",
    re.IGNORECASE)


def _with_antecedents(chosen: list[Candidate], units: Mapping[int, Sequence[_Unit]],
                      analyzer: Analyzer) -> list[Candidate]:
    """``chosen`` with the sentence before each chosen sentence that opens by referring back to it
    (``_LEANS_BACK``: "As a result, ...", "However, ..."), placed before it, when that sentence is prose of the
    same section of its passage (not a list item, table row or code) and the answer does not already quote it.
    ``units``: passage number -> its ``_units``, in passage order."""
    out: list[Candidate] = []
    for c in chosen:
        if not c.procedure and _LEANS_BACK.match(c.text.lstrip("*_\"'“‘( ")):
            seq = list(units.get(c.passage.n, ()))
            at = next((i for i, u in enumerate(seq) if u.text == c.text and not u.code and u.run < 0), None)
            before = seq[at - 1] if at else None
            if before is not None and not before.code and before.run < 0 and not before.cells and \
                    before.heading == seq[at].heading and not any(before.text in x.text for x in (*out, *chosen)):
                out.append(Candidate(c.passage, before.text, c.score, c.coverage,
                                     frozenset(analyzer.analyze_document(before.text)), c.subject))
        out.append(c)
    return out


def _list_text(items: Sequence[_Unit]) -> str:
    """A list's items as one quote: an ordered item with its own number ("3. Open ..."), the sentences of one item
    together, an item without closing punctuation followed by ``;``."""
    steps: dict[int, list[_Unit]] = {}
    for u in items:
        steps.setdefault(u.step, []).append(u)
    texts = [(f"{parts[0].number}. " if parts[0].number is not None else "") + " ".join(u.text for u in parts)
             for parts in steps.values()]
    return " ".join(t if t.endswith((".", "!", "?", ";", "。")) or k == len(texts) - 1 else f"{t};"
                    for k, t in enumerate(texts))


def _with_list_context(chosen: list[Candidate], units: Mapping[int, Sequence[_Unit]],
                       analyzer: Analyzer) -> list[Candidate]:
    """``chosen`` with each quoted list kept with its lead-in, the sentence that introduces the list with a colon
    ("The following options are available:"): a chosen list item or procedure is preceded by it, and a chosen
    lead-in is followed by its list's items (``_list_text``; a list of more than ``PROCEDURE_MAX_STEPS`` items or
    ``PROCEDURE_MAX_CHARS`` characters is not quoted whole: the lead-in stays alone), unless the answer already
    quotes them. ``units``: passage number -> its ``_units``, in passage order."""
    out: list[Candidate] = []

    def quoted(text: str) -> bool:
        return any(text in x.text for x in (*out, *chosen))

    for c in chosen:
        seq = list(units.get(c.passage.n, ()))
        at = next((i for i, u in enumerate(seq) if not u.code and (
            u.text == c.text or c.procedure and u.run >= 0 and u.text in c.text)), None)
        run = seq[at].run if at is not None else -1
        if run >= 0:  # an item: its list's lead-in goes before it
            first = next(i for i, u in enumerate(seq) if u.run == run)
            lead = seq[first - 1] if first > 0 else None
            if lead is not None and lead.run < 0 and not lead.code and lead.text.endswith((":", "：")) and \
                    not quoted(lead.text):
                out.append(Candidate(c.passage, lead.text, c.score, c.coverage,
                                      frozenset(analyzer.analyze_document(lead.text)), c.subject))
        out.append(c)
        if at is not None and run < 0 and c.text.endswith((":", "：")) and at + 1 < len(seq) and \
                seq[at + 1].run >= 0 and not seq[at + 1].code:  # a lead-in: its items go after it
            items = [u for u in seq[at + 1:] if u.run == seq[at + 1].run and not u.code]
            text = _list_text(items)
            if len({u.step for u in items}) <= PROCEDURE_MAX_STEPS and len(text) <= PROCEDURE_MAX_CHARS and \
                    not any(quoted(u.text) for u in items):
                out.append(Candidate(c.passage, text, c.score, c.coverage,
                                      frozenset(analyzer.analyze_document(text)), c.subject))
    return out
