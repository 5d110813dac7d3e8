"""Answering with an LLM: assemble the context, generate (optionally streaming), then check what came back.

The model's text is not trusted: citations of ids that were not in the context are dropped and reported, each
sentence is checked against the passages it cites (``cite.check_citations``), and a refusal is recognised even
when worded slightly differently, in which case the answer is the exact refusal sentence.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..config import LLMConfig
from ..errors import GenerationError
from ..llm import Generator
from ..types import Answer, Citation, Passage
from .cite import MIN_OVERLAP, CitationCheck, check_citations, content_tokens
from .numbering import StreamNumbering, number_sources
from .prompt import Context, TokenCounter, assemble_context
from .refusal import refusal_sentence


def citation_for(passage: Passage) -> Citation:
    """The sources-list entry of one passage."""
    chunk = passage.chunk
    updated = (chunk.metadata or {}).get("updated")
    return Citation(
        n=passage.n,
        doc_id=chunk.doc_id,
        chunk_id=chunk.chunk_id,
        title=chunk.title,
        page=chunk.page,
        section=chunk.section,
        updated=str(updated) if updated else None,
    )


def _date_note(check: CitationCheck, by_n: dict[int, Passage]) -> str | None:
    dated: dict[str, str] = {}
    for n in check.cited:
        chunk = by_n[n].chunk
        updated = (chunk.metadata or {}).get("updated")
        if updated:
            dated.setdefault(chunk.doc_id, str(updated))
    if len(set(dated.values())) < 2:
        return None
    ordered = sorted(dated.items(), key=lambda kv: kv[1], reverse=True)
    listing = ", ".join(f"{doc} (updated {date})" for doc, date in ordered)
    return f"the answer cites documents of different dates, newest first: {listing}"


def _newer_uncited(check: CitationCheck, passages: Sequence[Passage]) -> list[str]:
    """Notes for sentences that cite only older documents while a newer passage, cited nowhere in the answer,
    covers the same words.

    This is how a conflict the model missed shows up: it answered from an outdated document.
    """
    by_n = {p.n: p for p in passages}
    notes: list[str] = []
    for s in check.sentences:
        if not s.cited:
            continue
        dates = [str((by_n[n].chunk.metadata or {}).get("updated") or "") for n in s.cited]
        newest_cited = max(dates)
        cited_docs = {by_n[n].chunk.doc_id for n in s.cited}
        tokens = content_tokens(s.text)
        for p in passages:
            updated = str((p.chunk.metadata or {}).get("updated") or "")
            if p.n in check.cited or p.chunk.doc_id in cited_docs or not newest_cited or updated <= newest_cited:
                continue
            if tokens and len(tokens & content_tokens(p.chunk.text)) / len(tokens) >= MIN_OVERLAP:
                notes.append(
                    f"possible conflict: {s.text!r} cites a document updated {newest_cited}, but passage [{p.n}] "
                    f"({p.chunk.doc_id}, updated {updated}) is newer and covers the same subject"
                )
                break
    return notes


def answer_from_text(question: str, text: str, context: Context, finish_reason: str | None = None,
                     drop_unsupported: bool = True) -> Answer:
    """Check a model's ``text`` against ``context`` and build the ``Answer``.

    Args:
        drop_unsupported: remove the sentences the citation check marks unsupported from the answer text
            (they stay listed in ``unsupported``); an answer left without a supported sentence that cites a
            passage becomes the refusal. False keeps them in the text, flagged in ``notes``.

    Returns:
        ``Answer`` whose ``text`` is the model's text minus dropped markers (and unsupported sentences), or the
        exact refusal sentence when it refused or nothing supported was left; ``citations`` one per source,
        numbered 1, 2, ... in order of first citation, the markers and ``passages`` renumbered to match
        (``numbering.number_sources``); ``passages`` = the context's passages; ``unsupported`` sentences; and ``notes`` for dropped
        ids, truncation, unsupported sentences, dates, and sentences that cite only an older document while a
        newer uncited passage covers the same subject.
    """
    check = check_citations(text, context.passages)
    by_n = {p.n: p for p in context.passages}
    notes: list[str] = []
    if check.dropped:
        ids = ", ".join(f"[{n}]" for n in check.dropped)
        notes.append(f"dropped citation(s) {ids}: not among the {len(context.passages)} passages in the context")
    if finish_reason == "length":
        notes.append("the answer was cut off at max_tokens; raise [llm] max_tokens for a complete answer")
    if context.duplicates:
        notes.append(f"{context.duplicates} duplicate passage(s) left out of the context")
    if context.over_budget or context.truncated:
        notes.append(
            f"{context.over_budget} passage(s) left out{' and one cut' if context.truncated else ''} to fit "
            f"context_tokens"
        )
    if check.refused:
        return Answer(
            text=refusal_sentence(question),
            refused=True,
            passages=context.passages,
            notes=tuple(notes),
        )
    removed = check.unsupported if drop_unsupported else ()
    if removed:
        kept = [s for s in check.sentences if s.supported]
        if not any(s.cited for s in kept):
            reasons = "; ".join(f"{s.text!r} ({s.reason})" for s in check.sentences if not s.supported)
            notes.append(f"refused: no sentence of the model's answer is supported by the passages it cites: "
                         f"{reasons}")
            return Answer(text=refusal_sentence(question), refused=True, passages=context.passages,
                          unsupported=check.unsupported, notes=tuple(notes))
        cited = tuple(dict.fromkeys(n for s in kept for n in s.cited))
        check = CitationCheck(" ".join(s.text for s in kept), cited, check.dropped, check.sentences, False)
    for s in check.sentences:
        if not s.supported:
            notes.append(f"{'removed unsupported' if removed else 'unsupported'}: {s.text!r} ({s.reason})")
    notes.extend(_newer_uncited(check, context.passages))
    date_note = _date_note(check, by_n)
    if date_note:
        notes.append(date_note)
    return number_sources(Answer(
        text=check.text,
        refused=False,
        citations=tuple(citation_for(by_n[n]) for n in check.cited),
        passages=context.passages,
        unsupported=check.unsupported,
        notes=tuple(notes),
    ))


def generate_answer(
    question: str,
    passages: Sequence[Passage],
    generator: Generator,
    config: LLMConfig,
    on_token: Callable[[str], None] | None = None,
    counter: TokenCounter | None = None,
) -> Answer:
    """Answer ``question`` from ``passages`` with ``generator``, then verify the answer's citations.

    Args:
        question: the user's question.
        passages: retrieved passages, strongest first (renumbered for the prompt; see ``prompt.assemble_context``).
        generator: the chat backend.
        config: ``context_tokens`` (prompt budget, tokens) and ``max_tokens`` (answer limit, tokens).
        on_token: called with each text piece as it arrives, its citation markers already numbered as the
            answer's sources (``numbering.StreamNumbering``; an open marker is held until it closes); when given,
            the answer is streamed and checked once the stream ends. An exception it raises stops the answer: the backend's stream is closed at
            once (the request to the LLM server ends) and the exception propagates.
        counter: token counter for the budget; None uses the default offline counter.

    Returns:
        The checked ``Answer``. With no passages at all the model is not called and the answer is a refusal.

    Raises:
        GenerationError: the backend failed, or it returned no text.
    """
    if not passages:
        return Answer(text=refusal_sentence(question), refused=True, notes=("no passages were retrieved",))
    context = assemble_context(question, passages, config, counter)
    if on_token is None:
        text = generator.generate(context.messages, max_tokens=config.max_tokens)
    else:
        pieces: list[str] = []
        numbering = StreamNumbering(context.passages)  # the streamed markers numbered as the answer's sources
        stream = generator.stream(context.messages, max_tokens=config.max_tokens)
        try:
            for piece in stream:
                pieces.append(piece)
                shown = numbering.feed(piece)
                if shown:
                    on_token(shown)
            tail = numbering.flush()
            if tail:
                on_token(tail)
        finally:  # at once when on_token raised (a streaming client left): the backend ends its HTTP stream
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        text = "".join(pieces)
    if not text.strip():
        raise GenerationError(
            f"the {generator.name} backend returned an empty answer (finish reason "
            f"{generator.last_finish_reason!r}); check the model and max_tokens"
        )
    return answer_from_text(question, text, context, generator.last_finish_reason, config.drop_unsupported)


__all__ = ["answer_from_text", "citation_for", "generate_answer"]
