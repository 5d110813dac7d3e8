"""Checking an LLM answer against the passages it was given: citations, support, refusal.

``check_citations`` parses ``[N]`` markers (also ``[1, 2]``, ``[1-3]``, ``[1][2]``, ``[Passage 2]`` and the
full-width ``［1］``/``【1】``), drops ids that were not in the context, and marks each answer sentence as
supported or not by the passages it cites. A sentence is supported when:

1. it cites at least one passage that was in the context;
2. every number in it (``30``, ``4.50``, ``2021-06-30``, the ``3071`` of ``E-3071``) appears among the numbers of
   the cited passages (their text, title, section and ``updated``/``version`` metadata);
3. at least ``MIN_OVERLAP`` (0.5) of its content words (CJK: character bigrams) appear in the cited passages.

This is a lexical check: it catches invented numbers, citations of the wrong passage and citations of ids that
do not exist; it cannot catch a paraphrase that reverses a claim's meaning with the same words.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from ..chunking import split_sentences as sentence_spans
from ..types import Passage
from .refusal import REFUSALS

MIN_OVERLAP = 0.5

_OPEN, _CLOSE = r"[\[［【]", r"[\]］】]"
_REF = r"(?:(?:passages?|sources?|docs?|documents?)\s*)?\d+"
_CITE = re.compile(
    rf"{_OPEN}\s*({_REF}(?:\s*(?:[,;，、]|-|–|and)\s*{_REF})*)\s*{_CLOSE}", re.IGNORECASE
)
_LEADING_CITES = re.compile(rf"(?:\s*{_CITE.pattern})+[.,;:。]?", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_STOP = frozenset(
    """a an the and or but if then than that this these those there here of to in on at by for with from as is are
    was were be been being it its it's they them their he she his her we you your our i me my not no yes do does
    did done can could would should will shall may might must has have had having so such also only very more most
    what which who whom whose when where why how about into over under after before between per each any all both
    other some same own just up down out off again further once according says said state states stated""".split()
)


@dataclass(frozen=True)
class CitedSpan:
    """Where in a cited passage the answer sentence's evidence most likely is.

    ``start``/``end`` are character offsets into the chunk text (end exclusive); ``text`` is that slice.
    """

    n: int
    doc_id: str
    chunk_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class SentenceCheck:
    """One answer sentence and its verdict.

    Attributes:
        text: the sentence, with its (valid) citation markers.
        cited: valid passage numbers it cites, in order of appearance.
        supported: True when the cited passages back it (see the module docstring).
        reason: why it is unsupported ('' when supported).
        spans: the best matching span of each cited passage.
        overlap: share of its content words found in the cited passages (0-1).
    """

    text: str
    cited: tuple[int, ...]
    supported: bool
    reason: str = ""
    spans: tuple[CitedSpan, ...] = ()
    overlap: float = 0.0


@dataclass(frozen=True)
class CitationCheck:
    """Result of ``check_citations``.

    Attributes:
        text: the answer with markers of unknown ids removed.
        cited: valid passage numbers in order of first citation.
        dropped: cited ids that were not in the context, in order of first appearance.
        sentences: every answer sentence with its verdict (refusal sentences count as supported).
        refused: True when the answer is a refusal (see ``is_refusal``).
    """

    text: str
    cited: tuple[int, ...]
    dropped: tuple[int, ...]
    sentences: tuple[SentenceCheck, ...]
    refused: bool

    @property
    def unsupported(self) -> tuple[str, ...]:
        """Texts of the sentences no cited passage supports, in answer order."""
        return tuple(s.text for s in self.sentences if not s.supported)


def parse_citation_ids(marker_body: str) -> list[int]:
    """Passage numbers in a marker's inside: ``"1, 3"`` -> [1, 3]; ``"2-4"`` -> [2, 3, 4] (ranges up to 20)."""
    body = re.sub(r"(?i)passages?|sources?|documents?|docs?", "", marker_body)
    out: list[int] = []
    for part in re.split(r"\s*(?:[,;，、]|and)\s*", body):
        part = part.strip()
        m = re.fullmatch(r"(\d+)\s*[-–]\s*(\d+)", part)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            out.extend(range(a, b + 1) if 0 <= b - a <= 20 else (a, b))
        elif part.isdigit():
            out.append(int(part))
    return out


def citation_ids(text: str) -> list[int]:
    """Every passage number cited in ``text``, in order of appearance, repeats kept."""
    return [n for m in _CITE.finditer(text) for n in parse_citation_ids(m.group(1))]


def split_sentences(text: str) -> list[str]:
    """Answer sentences in order; a citation that follows the full stop joins the sentence before it.

    Each line is cut into sentences by ``chunking.split_sentences`` (BlingFire, and after ``。！？``), the one
    sentence splitter the chunker and the answerer's units use; a line break always ends a sentence. List bullets
    (``- ``, ``* ``, ``1. ``) are removed.
    """
    out: list[str] = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
        if not line:
            continue
        for s, e in sentence_spans(line):
            piece = line[s:e]
            lead = _LEADING_CITES.match(piece)
            if out and lead:  # "... 14 days. [1] Next sentence": the marker belongs to the sentence before
                out[-1] = f"{out[-1]} {lead.group(0).strip()}"
                piece = piece[lead.end():].strip()
                if not piece.strip(" .,;:。"):
                    continue
            out.append(piece)
    return out


def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")


def numbers_in(text: str) -> set[str]:
    """Numbers in ``text`` as strings: thousands separators removed, ``2021-06-30`` and ``4.50`` kept whole.

    A trailing zero decimal is normalised (``4.50`` and ``4.5`` match) when comparing with passages.
    """
    found: set[str] = set()
    for m in _NUMBER.finditer(unicodedata.normalize("NFKC", text)):
        tok = m.group(0)
        if _THOUSANDS.match(tok):
            tok = tok.replace(",", "")
        found.add(tok)
    return found


def _norm_number(tok: str) -> str:
    return tok.rstrip("0").rstrip(".") if re.fullmatch(r"\d+\.\d+", tok) else tok


def _passage_numbers(text: str) -> set[str]:
    # whole numbers only: "2021-06-30" must not vouch for a bare "30"
    return {_norm_number(t) for t in numbers_in(text)}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_tokens(text: str) -> set[str]:
    """Content words of ``text``: casefolded, light plural stemming, stop words and 1-2 letter words out;
    CJK runs become character bigrams (single characters for one-character runs)."""
    norm = _normalize(text)
    tokens: set[str] = set()
    for run in _CJK_RUN.findall(norm):
        tokens.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    for w in _WORD.findall(_CJK_RUN.sub(" ", norm)):
        if w.isdigit() or len(w) < 3 or w in _STOP:
            continue
        tokens.add(_stem(w))
    return tokens


def _evidence(passage: Passage) -> str:
    chunk = passage.chunk
    meta = chunk.metadata or {}
    extra = [str(meta.get(k, "")) for k in ("updated", "version", "supersedes")]
    return "\n".join([chunk.title, chunk.section, chunk.doc_id, *extra, chunk.text])


_EN_REFUSAL = [
    re.compile(
        r"\b(?:could ?n[o']t|can ?n[o']t|cannot|did ?n[o']t|do ?n[o']t|was unable to|am unable to|unable to|"
        r"were unable to|not able to)\s+(?:find|locate|identify|determine|see|answer)\b.*\b(?:documents?|passages?|"
        r"context|material|sources?|information|provided|knowledge base)\b"
    ),
    re.compile(
        r"\b(?:documents?|passages?|context|material|sources?)\s+(?:provided\s+)?(?:do|does|did)\s*(?:n[o']t|not)\s+"
        r"(?:contain|mention|include|say|specify|state|cover|provide|answer)\b"
    ),
    re.compile(
        r"\bnot (?:found|mentioned|stated|covered|specified) in the (?:provided )?(?:documents?|passages?|context)\b"
    ),
]
_CJK_REFUSAL = re.compile(r"(?:没有|沒有|未能?|无法|找不到).{0,6}(?:找到|提到|提及|答案)|見つかりません|記載がありません|見当たりません")


def _is_refusal_sentence(sentence: str) -> bool:
    norm = _normalize(_CITE.sub("", sentence)).strip()
    bare = re.sub(r"[\W_]+", " ", norm).strip()
    for refusal in REFUSALS.values():
        target = re.sub(r"[\W_]+", " ", _normalize(refusal)).strip()
        if bare == target or difflib.SequenceMatcher(None, bare, target).ratio() >= 0.85:
            return True
    return any(p.search(norm) for p in _EN_REFUSAL) or bool(_CJK_REFUSAL.search(norm))


def is_refusal(text: str) -> bool:
    """True when ``text`` declines to answer: it has a refusal sentence and no other sentence cites a passage.

    Accepts the exact sentences of ``refusal.REFUSALS`` and small variations ("I couldn't find this in the
    provided documents.", "The passages do not mention ...", "文档中没有提到", "見つかりませんでした").
    An answer that cites passages for other claims next to a refusal sentence is a partial answer, not a refusal.
    """
    sentences = split_sentences(text)
    refusing = [_is_refusal_sentence(s) for s in sentences]
    if not any(refusing):
        return False
    return not any(_CITE.search(s) for s, r in zip(sentences, refusing) if not r)


def _spans(sentence_tokens: set[str], sentence_numbers: set[str], n: int, passage: Passage) -> CitedSpan:
    chunk = passage.chunk
    best: tuple[float, int, int] = (-1.0, 0, len(chunk.text))
    for m in re.finditer(r"[^\n.!?。！？]+(?:[.!?。！？]+|\n|$)", chunk.text):
        piece = m.group(0)
        if not piece.strip():
            continue
        shared_numbers = {_norm_number(x) for x in sentence_numbers} & _passage_numbers(piece)
        score = len(sentence_tokens & content_tokens(piece)) + 2 * len(shared_numbers)
        if score > best[0]:
            start = m.start() + (len(piece) - len(piece.lstrip()))
            best = (score, start, m.start() + len(piece.rstrip()))
    _, start, end = best
    return CitedSpan(n, chunk.doc_id, chunk.chunk_id, start, end, chunk.text[start:end])


def _check_sentence(sentence: str, by_n: dict[int, Passage]) -> SentenceCheck:
    ids = list(dict.fromkeys(n for n in citation_ids(sentence) if n in by_n))
    claim = _CITE.sub(" ", sentence)
    tokens = content_tokens(claim)
    numbers = numbers_in(claim)
    if not ids:
        if not tokens and not numbers:
            return SentenceCheck(sentence, (), True)  # "Yes." / connective text: nothing to check
        return SentenceCheck(sentence, (), False, "no citation of a passage in the context")
    evidence = "\n".join(_evidence(by_n[n]) for n in ids)
    ev_numbers = _passage_numbers(evidence)
    ev_tokens = content_tokens(evidence)
    spans = tuple(_spans(tokens, numbers, n, by_n[n]) for n in ids)
    overlap = len(tokens & ev_tokens) / len(tokens) if tokens else 1.0
    missing = sorted(n for n in numbers if _norm_number(n) not in ev_numbers)
    cited = ", ".join(f"[{n}]" for n in ids)
    if missing:
        reason = f"number(s) {', '.join(missing)} not in cited passage(s) {cited}"
        return SentenceCheck(sentence, tuple(ids), False, reason, spans, overlap)
    if overlap < MIN_OVERLAP:
        reason = f"only {overlap:.0%} of its words are in cited passage(s) {cited}"
        return SentenceCheck(sentence, tuple(ids), False, reason, spans, overlap)
    return SentenceCheck(sentence, tuple(ids), True, "", spans, overlap)


def _drop_unknown(text: str, known: set[int]) -> tuple[str, list[int]]:
    dropped: list[int] = []

    def fix(m: re.Match[str]) -> str:
        ids = parse_citation_ids(m.group(1))
        good = [n for n in ids if n in known]
        dropped.extend(n for n in ids if n not in known and n not in dropped)
        if good == ids:
            return m.group(0)
        return "".join(f"[{n}]" for n in good)

    cleaned = _CITE.sub(fix, text)
    cleaned = re.sub(r"[ \t]+([.,;:!?。])", r"\1", cleaned) if dropped else cleaned
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned) if dropped else cleaned
    return cleaned, dropped


def check_citations(text: str, passages: Sequence[Passage]) -> CitationCheck:
    """Parse and verify the citations of an answer against the passages that were in its context.

    Args:
        text: the model's answer.
        passages: the numbered passages of the prompt (``[n]`` refers to the passage with ``n``).

    Returns:
        A ``CitationCheck``: cleaned text, valid cited ids (first-citation order), dropped ids, one
        ``SentenceCheck`` per sentence (answer order) and the refusal flag.
    """
    by_n = {p.n: p for p in passages}
    cleaned, dropped = _drop_unknown(text, set(by_n))
    checks: list[SentenceCheck] = []
    for sentence in split_sentences(cleaned):
        if _is_refusal_sentence(sentence):
            checks.append(SentenceCheck(sentence, (), True, "refusal"))
        else:
            checks.append(_check_sentence(sentence, by_n))
    cited = tuple(dict.fromkeys(n for n in citation_ids(cleaned) if n in by_n))
    return CitationCheck(cleaned, cited, tuple(dropped), tuple(checks), is_refusal(cleaned))


__all__ = [
    "CitationCheck",
    "CitedSpan",
    "MIN_OVERLAP",
    "SentenceCheck",
    "check_citations",
    "citation_ids",
    "content_tokens",
    "is_refusal",
    "numbers_in",
    "parse_citation_ids",
    "split_sentences",
]
