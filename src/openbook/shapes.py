"""The JSON shapes of hits and answers: what ``openbook search --json`` / ``ask --json`` print and what the
HTTP server returns, built in one place so that the two cannot drift.

    hit_dict       Hit (+ snippet)  -> {chunk_id, doc_id, score, legs, title, section, page, updated,
                                        suspect_instructions[, snippet]}
    search_notes   hits, applied    -> [one-line remarks on a search's hits] (a search's "notes")
    answer_dict    Answer           -> {answer, refused, confidence, features, citations, passages, unsupported,
                                        notes, retrieval, transforms}

Every value is a JSON type (str, float, int, bool, None, list, dict): ``json.dumps`` takes the result as is.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .answer.injection import looks_like_injection
from .types import Answer, Hit

__all__ = ["MEANING_ONLY", "answer_dict", "hit_dict", "search_notes"]


def hit_dict(hit: Hit, snippet: str | None = None) -> dict[str, Any]:
    """One hit: ids, fused ``score``, each retrieval leg's ``{"rank", "score"}`` under ``legs``; when the chunk
    is loaded also its ``title``, ``section``, ``page``, ``updated`` (metadata, or None) and
    ``suspect_instructions`` (the chunk reads like instructions aimed at a model); ``snippet`` when given."""
    c = hit.chunk
    out: dict[str, Any] = {"chunk_id": hit.chunk_id, "doc_id": hit.doc_id, "score": hit.score,
                           "legs": {k: {"rank": r, "score": s} for k, (r, s) in hit.legs.items()}}
    if c is not None:
        out.update(title=c.title, section=c.section, page=c.page, updated=c.metadata.get("updated"),
                   suspect_instructions=looks_like_injection(c.text))
    if snippet is not None:
        out["snippet"] = snippet
    return out


MEANING_ONLY = "no word of the query occurs in the documents searched: these hits match it by meaning only"
"""The note on hits found while the BM25 leg found nothing (``applied["words_matched"]`` False)."""


def search_notes(hits: Sequence[Hit], applied: Mapping[str, Any]) -> list[str]:
    """One-line remarks on a search's ``hits`` for the user (``notes`` in ``search --json`` and the server's
    search): ``MEANING_ONLY`` when there are hits and ``applied["words_matched"]`` (``Retriever.search_explained``)
    is False; ``[]`` otherwise."""
    return [MEANING_ONLY] if hits and applied.get("words_matched") is False else []


def answer_dict(answer: Answer) -> dict[str, Any]:
    """One answer: its text, ``refused``, ``confidence``, the ``features`` the answerability model read (plain
    floats), ``citations`` (the sources list), ``passages`` (what the answerer read, with text and
    ``suspect_instructions``), ``unsupported`` sentences, ``notes``, ``retrieval`` (``search`` or
    ``whole-corpus``) and ``transforms`` (what each LLM query transform did)."""
    return {
        "answer": answer.text,
        "refused": answer.refused,
        "confidence": answer.confidence,
        "features": {name: float(value) for name, value in answer.features.items()},
        "citations": [{"n": c.n, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "title": c.title, "page": c.page,
                       "section": c.section, "updated": c.updated} for c in answer.citations],
        "passages": [{"n": p.n, "doc_id": p.chunk.doc_id, "chunk_id": p.chunk.chunk_id, "title": p.chunk.title,
                      "section": p.chunk.section, "page": p.chunk.page,
                      "updated": p.chunk.metadata.get("updated"), "score": p.hit.score, "text": p.chunk.text,
                      "suspect_instructions": looks_like_injection(p.chunk.text)}
                     for p in answer.passages],
        "unsupported": list(answer.unsupported),
        "notes": list(answer.notes),
        "retrieval": answer.retrieval,
        "transforms": list(answer.transforms),
    }
