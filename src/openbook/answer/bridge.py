"""The second sentence of a multi-hop answer, chosen by the entity the first sentence affirms.

"What is the yearly list price of the cheapest model that stores offline maps?" is answered in two steps: one
passage says which model ("Offline maps are stored on the Trail model only; the Road model cannot keep them."),
another passage, often a table, gives the price of each model. Word overlap with the question alone picks
whichever row shares most words with it ("yearly, list price"), which may be another model's row. Here the row
(or sentence) must hold the *bridge entity*: a name the first sentence affirms and the question does not state.
A name in a negated clause ("the Road model cannot ...") is not affirmed.

The bridge may also be an identifier (``code_sentence``): the answering passage says "This defect is tracked as
BUG-7310", and the release notes list "BUG-7310: sync waits between retries ...". That line does not say which
release it is in: its document's title does ("... VIEWER 2.4 - RELEASE NOTES"), so it is quoted after the
title.

``entity_sentence``, then ``code_sentence``, are used by ``openbook.answer.extractive`` when the title-based
bridge (``_bridge_sentence``: the answering passage names another passage's document title) finds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Collection, Sequence

import numpy as np

from ..question import asked_value, identifiers, states_value

__all__ = ["affirmed_names", "entity_sentence", "code_sentence", "holds_name", "row_by_bridge", "MIN_GAIN",
           "Definition", "definition", "governing", "is_table_row"]

_CLAUSE_RE = re.compile(r";|:|\s+but\s+|,\s+(?:while|whereas|although)\s+", re.IGNORECASE)
_NEGATION_RE = re.compile(r"\b(?:not|no|never|cannot|without|neither|nor)\b|n't\b", re.IGNORECASE)
_NAME_RE = re.compile(r"(?<![\w-])[A-Z][\w-]*")
_LOWER_NEXT_RE = re.compile(r"\s+[a-z]")

_ROW_RE = re.compile(r"[^:;]+: [^;]*(?:; [^:;]+: [^;]*)+")  # a table row as the answerer renders it: "Column: value; ..."
_ITEM_RE = re.compile(r"\s*[,;/]\s*")  # the items of a list-valued table cell: "Northgate, Kilnworth"
STITCH_SHARE = 0.4
"""A row scoring under this share of the best candidate cannot join the answer (``extractive``'s stitching
bound), so its table's ties need no deciding."""
MIN_GAIN = 0.15
"""The bridge sentence must add at least this idf-weighted share (0-1) of the question's terms that the first
sentence lacks (the share ``extractive`` asks of any weaker sentence it stitches on)."""


def affirmed_names(sentence: str, question: str) -> list[str]:
    """Names ``sentence`` affirms and ``question`` does not state: runs of capitalised words outside negated
    clauses, in order ("Niagara Purple Eagles" is one name, so a row naming another "Eagles" does not match).

    Clauses are cut at ``;``, ``:``, "but" and ", while/whereas/although"; a clause holding "not", "no",
    "never", "cannot", "without", "neither", "nor" or "n't" is negated. The sentence's first word counts only
    when it is all capitals (an acronym), never as a mere sentence start, and so does a later clause's first
    word followed by a lower-case word (a table cell "Issued automatically at hiring", not "Business" nor
    "Aster 14 Pro"); a word the question holds ends a run.
    """
    asked = {w.casefold() for w in re.findall(r"[\w-]+", question)}
    names: list[str] = []
    for k, clause in enumerate(_CLAUSE_RE.split(sentence.strip())):
        if _NEGATION_RE.search(clause):
            continue
        run: list[str] = []
        end = 0
        for m in _NAME_RE.finditer(clause):
            word = m.group(0)
            if run and clause[end:m.start()].strip():  # a lower-case word in between ends the run
                names.append(" ".join(run))
                run = []
            end = m.end()
            # a clause's first word: a sentence start in the first clause, and in a later one (a table cell,
            # after a colon) when a lower-case word follows it ("request_via: Issued automatically at hiring")
            sentence_start = not clause[: m.start()].strip() and (k == 0 or _LOWER_NEXT_RE.match(clause, m.end()))
            if (sentence_start and not word.isupper()) or word.casefold() in asked:
                if run:
                    names.append(" ".join(run))
                    run = []
                continue
            run.append(word)
        if run:
            names.append(" ".join(run))
    return list(dict.fromkeys(names))


def entity_sentence(top: Any, candidates: Sequence[Any], analyzer: Any, terms: Sequence[str],
                    weights: np.ndarray, question: str, coverage: Any, said: Collection[str] = ()) -> Any | None:
    """The candidate from another document that holds a whole name ``top`` affirms and adds the most question
    terms.

    Args:
        top: the answering candidate (``text``, ``terms``, ``passage.chunk``), from ``extractive``.
        candidates: candidates best first, same shape.
        analyzer: openbook's analyzer (names become index terms with it).
        terms, weights: the question's content terms and their idf weights.
        coverage: ``extractive.coverage`` (idf-weighted share of ``terms`` in a set of terms).
        said: terms the question says in other words (an expansion's added phrases, "notebook computer" for
            "laptop"): like the question's own words, a name made of them is what the question asks about, not a
            name that leads elsewhere.

    Returns:
        The candidate adding the largest share of question terms that ``top`` and its title lack (at least
        ``MIN_GAIN``; best-scored first on ties), or None.
    """
    asked = set(analyzer.analyze(question)) | set(said)
    names = [frozenset(analyzer.analyze(n)) - asked for n in affirmed_names(top.text, question)]
    names = [n for n in names if n]
    if not names:
        return None
    top_doc = top.passage.chunk.doc_id
    covered = set(top.terms) | set(analyzer.analyze(top.passage.chunk.title))
    best: tuple[float, Any] | None = None
    for c in candidates:
        if c.passage.chunk.doc_id == top_doc or not any(holds_name(c, n, analyzer) for n in names):  # a whole name
            continue
        gain = coverage(terms, weights, {t for t in c.terms if t not in covered})
        if gain >= MIN_GAIN and (best is None or gain > best[0] + 1e-9):
            best = (gain, c)
    return best[1] if best is not None else None


def code_sentence(top: Any, candidates: Sequence[Any], question: str) -> Any | None:
    """The sentence of another document that an identifier of the answering passage leads to, when it states the
    value the question asks for and the answering sentence does not.

    Args:
        top: the answering candidate (``text``, ``passage.chunk``), from ``extractive``.
        candidates: candidates best first, same shape (dataclasses).
        question: the question text.

    Returns:
        The best-scored candidate from another document holding an identifier (``question.identifiers``) of
        ``top``'s passage that the question lacks, whose text read after its document's title states a value of
        the kind the question asks for (``question.asked_value``: a version, a date, a number); returned as a
        copy whose text is ``"title: sentence"`` when the title is not in the sentence. None when the question
        asks for no such value, ``top``'s sentence states one, or no candidate qualifies.
    """
    kind = asked_value(question)
    if kind is None or states_value(top.text, kind, question):
        return None
    asked = set(identifiers(question))
    codes = set(identifiers(top.passage.chunk.text)) - asked
    if not codes:
        return None
    top_doc = top.passage.chunk.doc_id
    for c in candidates:  # best first
        if c.passage.chunk.doc_id == top_doc or not codes & set(identifiers(c.text)):
            continue
        title = " ".join(c.passage.chunk.title.split())
        text = f"{title}: {c.text}" if title and title not in c.text else c.text
        if states_value(text, kind, question):
            return replace(c, text=text) if text != c.text else c
    return None


def is_table_row(text: str) -> bool:
    """Whether ``text`` is a table row as the answerer renders it ("Column: value; Column: value")."""
    return bool(_ROW_RE.fullmatch(text))


def holds_name(candidate: Any, name: frozenset[str], analyzer: Any) -> bool:
    """Whether ``candidate`` holds the whole name ``name`` (its analyzed terms). A sentence holds it when its terms
    do; a table row (``"Column: value; ..."``) only when one item of one cell does, a cell being read as a list
    of items separated by ``,``, ``;`` or ``/`` ("Areas: Northgate, Kilnworth" holds "Kilnworth"), so that a
    name of two words never matches one word from each of two cells."""
    if not name:
        return False
    if not _ROW_RE.fullmatch(candidate.text):
        return name <= candidate.terms
    for cell in candidate.text.split("; "):
        value = cell.split(": ", 1)[-1]
        if any(name <= set(analyzer.analyze(item)) for item in _ITEM_RE.split(value)):
            return True
    return False


def row_by_bridge(candidates: Sequence[Any], analyzer: Any, question: str,
                  near_tie: float) -> tuple[Any, list[Any]]:
    """The table row that answers when the best candidates hold near-tied rows of one table.

    Rows of a price list share the question's words equally ("monthly, per seat" in every plan's row), so word
    overlap cannot choose between them. When a sentence from another document affirms a name (``affirmed_names``)
    that exactly one of the tied rows holds (``holds_name``: "... available on the Enterprise plan only", or one
    item of a list-valued cell, "Areas: Northgate, Kilnworth" for "the Kilnworth recycling centre"), that row
    answers; the other tied rows are set aside.

    The tied rows are those of the table of the best-scored row, scoring at least ``near_tie`` of it, when that
    row scores at least ``STITCH_SHARE`` of the best candidate (one that could join the answer). When the best
    candidate is a sentence, not one of the tied rows, and no bridge name decides, every tied row is set aside:
    the first of them would be an arbitrary one.

    Args:
        candidates: the answerer's candidates, best first (``text``, ``terms``, ``score``, ``passage.chunk``).
        analyzer: openbook's analyzer.
        question: the question text.
        near_tie: rows scoring at least this share of the best row are tied.
    Returns:
        ``(top, set_aside)``: the answering candidate (the decided row when the best candidate is one of the
        tied rows, else the best candidate itself) and the tied rows that must not join the answer;
        ``(candidates[0], [])`` when there is no tie of rows, or the best candidate is a tied row and no bridge
        decides.
    """
    top = candidates[0]
    first_row = next((c for c in candidates if _ROW_RE.fullmatch(c.text)), None)
    if first_row is None or first_row.score < STITCH_SHARE * top.score:
        return top, []
    doc = first_row.passage.chunk.doc_id
    tied = [c for c in candidates if c.score >= near_tie * first_row.score and c.passage.chunk.doc_id == doc
            and _ROW_RE.fullmatch(c.text)]
    if len(tied) < 2:
        return top, []
    top_is_row = any(c is top for c in tied)
    asked = set(analyzer.analyze(question))
    for other in candidates:
        if other.passage.chunk.doc_id == doc:
            continue
        names = [frozenset(analyzer.analyze(n)) - asked for n in affirmed_names(other.text, question)]
        rows = [c for c in tied if any(holds_name(c, n, analyzer) for n in names)]
        if len(rows) == 1:
            return (rows[0] if top_is_row else top), [c for c in tied if c is not rows[0]]
    return (top, []) if top_is_row else (top, tied)


# A definition: "Category A item means a standard loan: ...", "A "contractor" is a person who ...", or a bold
# label of a definitions list, "Reserved room: any meeting room booked ..." (the answerer reads
# "**Reserved room**: ..." without its emphasis). The defined term is one to five words.
_TERM = r"[^\W\d_][\w'’-]*(?:\s+[\w'’-]+){0,4}"
_DEFINITION_RES = (
    re.compile(rf"^(?:(?:an?|the)\s+)?[\"“]?(?P<term>{_TERM}?)[\"”]?\s+(?:means|is defined as|refers to|denotes|"
               rf"shall mean)\s+(?P<body>\S.*)$", re.IGNORECASE | re.DOTALL),
    re.compile(rf"^(?:(?:an?|the)\s+)?[\"“](?P<term>{_TERM}?)[\"”]\s+(?:is|are)\s+(?P<body>\S.*)$",
               re.IGNORECASE | re.DOTALL),
    re.compile(rf"^(?P<term>[A-Z][\w'’-]*(?:\s+[\w'’-]+){{0,3}}):\s+(?P<body>(?:an?|any|each|every)\s.*)$",
               re.DOTALL),
)


_NOT_TERMS = frozenset("this that it these those which what who he she they there here we you i note notes tip "
                       "warning caution important example step".split())


@dataclass(frozen=True)
class Definition:
    """A sentence that defines a term: the term's pattern in other sentences (its plural too, any case), the
    analyzed terms of what defines it, and the sentence itself."""

    pattern: re.Pattern[str]
    body: frozenset[str]
    text: str


def definition(sentence: str, analyzer: Any) -> Definition | None:
    """The definition ``sentence`` states (``_DEFINITION_RES``), or None. A table row ("Column: value; ...") is
    no definition."""
    if _ROW_RE.fullmatch(sentence):
        return None
    for rx in _DEFINITION_RES:
        m = rx.match(sentence.strip())
        if m is None:
            continue
        term = " ".join(m.group("term").split())
        if term.split()[0].casefold() in _NOT_TERMS or m.group("body").casefold().startswith("that "):
            return None  # "This means that ...": a consequence, no definition
        body = frozenset(analyzer.analyze_document(m.group("body"))) - frozenset(analyzer.analyze(term))
        if not body or len(term) > 50:
            return None
        stem = term[:-1] if term.endswith("s") and not term.endswith("ss") else term
        words = r"\s+".join(re.escape(w) for w in stem.split())
        return Definition(re.compile(rf"(?<![\w-]){words}(?:s|es)?(?![\w-])", re.IGNORECASE), body, sentence)
    return None


def governing(sentence: str, definitions: Sequence[Definition]) -> Definition | None:
    """The first of ``definitions`` (those of the sentence's own document) whose term ``sentence`` uses, other
    than the definition itself: the sentence means what it says with the term read as its definition."""
    return next((d for d in definitions if d.text != sentence and d.pattern.search(sentence)), None)
