"""Candidate sentences and their scores: each sentence of each passage scored on its words (``Scored``,
``score_sentences``: coverage read with its subject, its own words, its passage's rank and coverage, a superseded
document, an echo of the question, another year, a table row that mismatches a value the question names, the
answer type), then ranked with the semantic score, an identifier's pin and a command-line option's bonus into
``Candidate`` s, best first (``rank_candidates``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from ...index.analyzer import Analyzer
from ...index.embedders import cosines_to
from ...question import has_answer_type
from ...retrieve.glossary import Expansion
from ...retrieve.snippets import strip_emphasis
from ...types import Passage
from ..bridge import Definition, definition, governing
from ..injection import looks_like_injection
from .units import _Unit, _units
from .terms import Asked, Embedder, _held, _other_year, _standalone_numbers, coverage


@dataclass(frozen=True)
class Candidate:
    """A sentence (list item, table row, procedure, code block) that may answer: its passage, its text, its final
    score (higher is better), its ``coverage`` of the question read with its subject (0-1), its own analyzer
    ``terms``, the ``subject`` terms it inherits (title, headings, a definition it uses), whether it is a
    procedure, and the words of the definition of a term it uses (``defined``)."""

    passage: Passage
    text: str
    score: float
    coverage: float
    terms: frozenset[str]
    subject: frozenset[str] = frozenset()
    procedure: bool = False  # the numbered steps of a list, for a how-to question
    defined: frozenset[str] = frozenset()  # the words of the definition of a term the sentence uses


_Candidate = Candidate  # the name the tests know


@dataclass(frozen=True)
class Scored:
    """A sentence of a passage scored on its words, before the scores that need the whole pool (the semantic
    score, an identifier's pin, a command-line option): ``lexical`` its score so far, ``coverage`` its coverage
    read with its ``subject``, ``typed`` the bonus for stating a value of the asked type (folded into ``lexical``
    by ``_fold_type_bonus``), ``procedure`` whether it is the numbered steps of a list, ``cells`` a table row's
    ``(header, value)`` pairs (empty for a sentence)."""

    lexical: float
    coverage: float
    passage: Passage
    text: str
    terms: frozenset[str]
    subject: frozenset[str]
    typed: float
    procedure: bool
    cells: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class _Entry:
    """A sentence of a passage as read for scoring: its text and terms, the subject it inherits, whether it is a
    procedure, a table row's cells, and the frame it is read with for the year check (title, headings)."""

    text: str
    terms: frozenset[str]
    subject: frozenset[str]
    procedure: bool
    cells: tuple[tuple[str, str], ...]
    frame: str


SEMANTIC_WEIGHT = 0.5

# A command-line option the question names (``question.command_options``, as written: the analyzer keeps neither
# the dash nor the case, so "grep -v" and "grep -V" read alike)
OPTION_BONUS = 1.0  # a sentence stating every option the question names, as written (as an identifier pins)


def _option_bonus(sentence: str, options: Sequence[str]) -> float:
    """``OPTION_BONUS`` times the share of ``options`` the sentence states with the same case, plus half of it
    more when the sentence opens with one (a manual's entry for it: "-v, --invert-match: Invert the sense of
    matching ..."), so the option's own entry answers "What does grep -v do?", not a sentence mentioning it
    in passing nor the entry of -V."""
    if not options:
        return 0.0
    held = [o for o in options if re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", sentence)]
    opens = any(sentence.lstrip("*_` ").startswith(o) for o in held)
    return OPTION_BONUS * (len(held) / len(options) + (0.5 if opens else 0.0))


SEMANTIC_CANDIDATES = 6


def _passage_cosine(p: Passage) -> float:
    """The passage's cosine to the question from the dense leg (0 without one)."""
    leg = p.hit.legs.get("dense")
    return float(leg[1]) if leg else 0.0


def _semantic_scores(question: str, sentences: list[str], embed: Embedder | None) -> list[float]:
    """Each sentence's cosine to the question, rescaled to [0, 1] over the candidates (0s without an embedder)."""
    if embed is None or not sentences:
        return [0.0] * len(sentences)
    q = embed([question], "query")[0]
    cos = cosines_to(q, embed(sentences, "passage"))  # in the embedder's dtype (float32)
    lo, hi = float(cos.min()), float(cos.max())
    return [float((c - lo) / (hi - lo)) if hi > lo else 1.0 for c in cos]


TYPE_BONUS = 0.3
OWN_WEIGHT = 0.15  # weight of a sentence's coverage by its own words, added to that read with its subject
ROW_MISMATCH = 0.5  # demotion of a table row whose value differs in a column the question names a value of
FOCUS_BONUS = 0.3  # a sentence naming the asked attribute ("limit") itself and a value of the asked type
PROCEDURE_MAX_STEPS = 12
PROCEDURE_MAX_CHARS = 1200


def _named_values(rows: Sequence[tuple[str, Sequence[tuple[str, str]]]], question_terms: set[str],
                  analyzer: Analyzer) -> dict[str, dict[str, set[str]]]:
    """Per document, the table columns whose value the question names whole in some row (every term of the
    cell is a term of the question: "Business" in "a Business plan customer"), each with the values named:
    ``{doc_id: {header: {value, ...}}}``. ``rows`` are ``(doc_id, (header, value) pairs)``; sentences have no
    pairs."""
    named: dict[str, dict[str, set[str]]] = {}
    for doc, cells in rows:
        for h, v in cells:
            t = set(analyzer.analyze_document(strip_emphasis(v)))
            if h and t and t <= question_terms:
                named.setdefault(doc, {}).setdefault(h, set()).add(v)
    return named


def _mismatched(cells: Sequence[tuple[str, str]], named: Mapping[str, set[str]]) -> bool:
    """Whether a table row (its ``(header, value)`` pairs) holds another value in a column where the question
    names one (``named``, from ``_named_values`` for the row's document)."""
    return any(h in named and v not in named[h] for h, v in cells)


def _procedures(units: Sequence[_Unit], analyzer: Analyzer, terms: set[str],
                subjects: Mapping[str, frozenset[str]], section: str = "") -> list[tuple[str, frozenset[str]]]:
    """The procedures of a passage for a how-to question: each list whose topic (the heading it sits under in
    the passage, else the chunk's ``section`` when the passage starts below its heading, and the sentence
    that introduces it with a colon) shares a term with the question, as ``(text, subject)``: its steps
    numbered as the document numbers them ("3. Open ... 4. Untick ..." for a list that starts at 3), a more
    indented item joined to the step above it, and the terms of its document's subject, heading and
    introduction. Only an ordered list is a procedure (the loaders keep list numbers: a bulleted list, of
    error codes or options, is a list of facts); one of more than ``PROCEDURE_MAX_STEPS`` steps or
    ``PROCEDURE_MAX_CHARS`` characters is no procedure to quote whole."""
    out: list[tuple[str, frozenset[str]]] = []
    for run in sorted({u.run for u in units if u.run >= 0}):
        items = [u for u in units if u.run == run]
        first = units.index(items[0])
        intro = units[first - 1].text if first > 0 and units[first - 1].run < 0 and \
            units[first - 1].text.endswith(":") else ""
        topic = set(analyzer.analyze_document(f"{items[0].heading or section} {intro}"))
        steps: dict[int, list[str]] = {}
        numbers: dict[int, int | None] = {}
        for u in items:
            steps.setdefault(u.step, []).append(u.text)
            numbers.setdefault(u.step, u.number)
        if not topic & terms or len(steps) < 2 or len(steps) > PROCEDURE_MAX_STEPS or \
                any(n is None for n in numbers.values()):
            continue  # (a bulleted list, of definitions or options, is no procedure)
        text = " ".join(f"{numbers[step]}. {' '.join(parts)}" for step, parts in steps.items())
        if len(text) <= PROCEDURE_MAX_CHARS:
            out.append((text, subjects[items[0].heading] | frozenset(analyzer.analyze_document(intro))))
    return out


ECHO_PENALTY = 0.5
_QUESTION_END = re.compile(r"[?？؟]\W*$")


def _echoes(sentence: str, question_terms: set[str], analyzer: Analyzer) -> bool:
    """True for a sentence that cannot hold an answer: a question itself (an FAQ's "Q: ...?" line), or one
    whose every content term is already in the question ("The client says error E-3071.")."""
    if _QUESTION_END.search(sentence):
        return True
    return not (set(analyzer.analyze(sentence)) - question_terms)


YEAR_MISMATCH = 0.5  # demotion of a sentence about another year than the one the question states


def _document_definitions(passages: Sequence[Passage], units: Sequence[Sequence[_Unit]],
                          analyzer: Analyzer) -> dict[str, list[tuple[Passage, Definition]]]:
    """Per document, the definitions its retrieved passages state (``bridge.definition``), each with its
    passage, in passage order."""
    out: dict[str, list[tuple[Passage, Definition]]] = {}
    for p, us in zip(passages, units):
        for u in us:
            d = definition(u.text, analyzer) if not u.cells else None
            if d is not None and all(d.text != x.text for _, x in out.get(p.chunk.doc_id, [])):
                out.setdefault(p.chunk.doc_id, []).append((p, d))
    return out


def _rule_over_definition(candidates: list[Candidate],
                          governed: Mapping[tuple[int, str], tuple[Passage, Definition]]) -> list[Candidate]:
    """When the best candidate is a definition and a sentence using its term covers more of the question read
    with it ("Category B items may be renewed twice" for "How many times can I renew a printed music score?"
    over "Category B item means a 7-day loan: printed music scores ..."), that sentence answers first."""
    if not candidates:
        return candidates
    top = candidates[0]
    rule = next((c for c in candidates[1:] if (g := governed.get((c.passage.n, c.text))) is not None
                 and g[1].text == top.text and c.coverage > top.coverage), None)
    return candidates if rule is None else [rule] + [c for c in candidates if c is not rule]


def _with_context(c: Candidate) -> str:
    """A chosen sentence read with what frames it: its document's title and section, and the heading inside the
    passage it sits under; a table row with its table's header (every column: "Price (USD)" frames a row whose
    cells an export shifted). Not the rest of the passage: a price elsewhere in it ("a GBP 5 million budget")
    does not make "up to 28 days" a price."""
    unit = next((u for u in _units(c.passage) if u.text == c.text), _Unit(""))
    return " \n".join(x for x in (c.passage.chunk.title, c.passage.chunk.section, unit.heading,
                                   " | ".join(unit.columns), c.text) if x)


def _legs_agree(passages: Sequence[Passage]) -> bool:
    """Whether the lexical and dense legs agree: the passage the dense leg ranks first is also among the BM25
    leg's three best (a hybrid store only)."""
    dense = [p for p in passages if "dense" in p.hit.legs and p.hit.legs["dense"][0] == 1]
    return bool(dense) and "bm25" in dense[0].hit.legs and dense[0].hit.legs["bm25"][0] <= 3


Governed = dict[tuple[int, str], tuple[Passage, Definition]]  # (passage n, sentence) -> the definition it uses


def _entries(p: Passage, units: Sequence[_Unit], asked: Asked, analyzer: Analyzer,
             expansions: Sequence[Expansion]) -> list[_Entry]:
    """The sentences of one passage as read for scoring; for a how-to question also its procedures."""
    # a sentence inherits its document's subject (title and section heading, and the heading inside the
    # passage it sits under): "Its headquarters are in Murray Hill." under "Nokia Bell Labs" answers a
    # question naming Bell Labs and headquarters
    doc_subject = " ".join(x for x in (p.chunk.title, p.chunk.section) if x)
    headings = {u.heading: _held(f"{doc_subject} {u.heading}", analyzer, expansions) for u in units}
    entries = [_Entry(u.text, _held(u.text, analyzer, expansions), headings[u.heading], False, u.cells,
                      f"{doc_subject} {u.heading}") for u in units]
    if asked.how_to:  # a how-to question asks for a procedure: the steps of a list whose topic the question names
        entries += [_Entry(text, _held(text, analyzer, expansions), subject, True, (), doc_subject)
                    for text, subject in _procedures(units, analyzer, set(asked.terms), headings,
                                                     p.chunk.section or "")]
    return entries


def _scored(e: _Entry, p: Passage, rank: int, pcov: float, asked: Asked, analyzer: Analyzer,
            defined: Mapping[str, list[tuple[Passage, Definition]]], older: Mapping[str, str],
            governed: Governed) -> Scored:
    """One sentence's ``Scored`` (recording in ``governed`` the definition it uses, if any)."""
    terms, weights, sent, st, subject = asked.terms, asked.weights, e.text, e.terms, e.subject
    rule = governing(sent, [d for _, d in defined.get(p.chunk.doc_id, [])]) if not e.procedure else None
    if rule is not None:
        subject = subject | rule.body
        governed[(p.n, sent)] = next((q, d) for q, d in defined[p.chunk.doc_id] if d is rule)
    if asked.numbers & st:  # "Debian 12" must not match the 12 of a date 2023-12-12 or a version 1.12
        st = st - (asked.numbers - _standalone_numbers(sent))
    # (only a sentence that shares a term with the question itself, or through the term it uses and
    # the question paraphrases, "an alumnus" for "associate members", is a candidate)
    scov = coverage(terms, weights, st | subject) if set(terms) & (st | (rule.body if rule else st)) \
        else 0.0
    typed = TYPE_BONUS if scov > 0 and has_answer_type(sent, asked.kind, asked.question) else 0.0
    # a sentence that names the asked attribute itself and states a value of the asked type ("Standard
    # limit: 600 requests per minute" for "What is the API rate limit ...?") answers it, unlike one that
    # has the attribute only from its document's title
    typed += FOCUS_BONUS if typed and asked.focus and asked.focus <= st else 0.0
    # what the sentence states itself counts a little more than what it inherits from its subject: of
    # sentences under one title, the one that names what the question names answers it
    own = OWN_WEIGHT * coverage(terms, weights, st) if scov > 0 else 0.0
    lexical = scov + own + 0.3 * pcov + 0.05 / (rank + 1) - (0.5 if p.chunk.doc_id in older else 0.0)
    lexical -= ECHO_PENALTY if _echoes(sent, asked.question_terms, analyzer) else 0.0
    # "How many potholes were repaired in 2024?": a sentence (read with its title and headings) that
    # states another year and not this one is about another year, whatever else it shares
    lexical -= YEAR_MISMATCH if _other_year(f"{e.frame}\n{sent}", asked.year) else 0.0
    return Scored(lexical, scov, p, sent, st, subject, typed, e.procedure, e.cells)


def score_sentences(asked: Asked, passages: Sequence[Passage], passage_units: Sequence[Sequence[_Unit]],
                    suspect: set[str], covs: Sequence[float], older: Mapping[str, str], analyzer: Analyzer,
                    expansions: Sequence[Expansion]) -> tuple[list[Scored], Governed]:
    """Every sentence of ``passages`` scored on its words (``Scored``), strongest first (lexical score plus its
    passage's dense-leg cosine), and the definitions the sentences use. ``passage_units``: each passage's
    ``_units``; ``suspect``: texts never quoted (an instruction aimed at a model); ``covs``: each passage's
    coverage of the question; ``older``: superseded doc ids (``context.superseded_docs``)."""
    # a term a document defines ("Category A item means a standard loan: most printed books ...") governs the
    # rules below that use it ("Category A items are lent to undergraduates for 28 days"): such a sentence reads
    # with its definition's words as a subject it inherits, and the definition joins the answer as its hop
    defined = _document_definitions(passages, passage_units, analyzer)
    governed: Governed = {}
    pool: list[Scored] = []
    for rank, (p, pcov) in enumerate(zip(passages, covs)):
        for e in _entries(p, passage_units[rank], asked, analyzer, expansions):
            if e.text in suspect or (e.procedure and looks_like_injection(e.text)):
                continue  # (a procedure quotes its steps whole: read once more)
            pool.append(_scored(e, p, rank, pcov, asked, analyzer, defined, older, governed))
    # a table row whose cell the question names whole ("a Business plan customer" -> plan: Business) sets the
    # value of that column: rows of the same table with another value there (plan: Team) are about something
    # else, whatever words they share with the question in other cells ("8 business hours")
    named = _named_values([(x.passage.chunk.doc_id, x.cells) for x in pool], asked.question_terms, analyzer)
    pool = [replace(x, lexical=x.lexical - ROW_MISMATCH) if _mismatched(x.cells, named.get(x.passage.chunk.doc_id, {}))
            else x for x in pool]
    pool = _fold_type_bonus(pool)
    # the embedder reads only the few strongest sentences (lexical score plus their passage's cosine from the
    # dense leg, which costs nothing): embedding is the slow part of an offline answer on a hybrid store
    pool.sort(key=lambda x: -(x.lexical + _passage_cosine(x.passage)))
    return pool, governed


def _fold_type_bonus(pool: list[Scored]) -> list[Scored]:
    """``pool`` with each sentence's type bonus added to its lexical score; the answer type of a how-to question
    is a procedure: when one is on offer, it alone takes the type bonus."""
    procedure = any(x.procedure and x.coverage > 0 for x in pool)
    return [replace(x, lexical=x.lexical + (x.typed if not procedure or x.procedure else 0.0)) for x in pool]


def rank_candidates(pool: Sequence[Scored], semantic: Sequence[float], asked: Asked, pinned: bool,
         governed: Governed) -> list[Candidate]:
    """The candidates, best first: each sentence of ``pool`` that shares a term with the question or whose
    ``semantic`` score (``_semantic_scores``, 0 past the embedded few) is at least 0.5, scored on words, on
    meaning (``SEMANTIC_WEIGHT``), on the question's identifiers when some sentence holds them all (``pinned``:
    one that does not is demoted) and on the options it names (``_option_bonus``); a definition that ranks
    first yields to a rule using its term that covers more (``_rule_over_definition``)."""
    candidates: list[Candidate] = []
    for x, sem in zip(pool, semantic):
        if x.coverage <= 0 and sem < 0.5:
            continue
        score = x.lexical + SEMANTIC_WEIGHT * sem - (1.0 if pinned and not asked.codes <= x.terms else 0.0)
        score += _option_bonus(x.text, asked.options)
        rule = governed.get((x.passage.n, x.text))
        candidates.append(Candidate(x.passage, x.text, score, x.coverage, x.terms, x.subject, x.procedure,
                                    rule[1].body if rule else frozenset()))
    candidates.sort(key=lambda c: -c.score)
    return _rule_over_definition(candidates, governed)
