"""Engine calls that return the JSON shapes of the CLI's ``--json`` output (hits and answers are built by
``openbook.shapes``, as the CLI builds them, so the two cannot drift). Each takes the engine first, to run on a
``Service`` thread."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, Callable, Mapping, Sequence

from ..api import Engine
from ..shapes import answer_dict, hit_dict, search_notes


def search_json(engine: Engine, query: str, k: int | None, where: Sequence[str], roles: Sequence[str],
                mode: str | None, with_text: bool = False) -> dict[str, Any]:
    """``openbook search --json``: ``{"query", "hits": [{chunk_id, doc_id, score, legs, title, section, page,
    updated, suspect_instructions, snippet[, text]}], "notes": openbook.shapes.search_notes, "applied":
    Engine.search_explained's dict}``, hits best first. Raises QueryError / StoreError."""
    from ..retrieve.snippets import highlight

    hits, applied = engine.search_explained(query, k, where=where, roles=roles, mode=mode)
    terms = set(engine.query_terms(query))
    rows = []
    for h in hits:
        row = hit_dict(h, highlight(h.chunk.text, terms, engine.analyzer, format=h.chunk.format) if h.chunk else "")
        if with_text and h.chunk is not None:
            row["text"] = h.chunk.text
        rows.append(row)
    return {"query": query, "hits": rows, "notes": search_notes(hits, applied), "applied": applied}


def generator_for(engine: Engine) -> Any:
    """The engine's LLM generator (built now: ``ConfigError`` when it cannot be), or None for the offline
    answerer."""
    from ..llm import ready

    return ready(engine.generator)


def answer_json(engine: Engine, question: str, where: Sequence[str], roles: Sequence[str], mode: str | None,
                history: Sequence[Mapping[str, str]] = (), on_token: Callable[[str], None] | None = None
                ) -> dict[str, Any]:
    """``openbook ask --json`` plus ``question``: the standalone question actually asked (a follow-up in
    ``history`` is condensed first, see ``openbook.answer.condense``). Raises QueryError / StoreError /
    GenerationError."""
    from ..answer.condense import condense_question

    standalone = condense_question(history, question, generator_for(engine)) if history else question
    answer = engine.ask(standalone, roles=roles, where=where, mode=mode, on_token=on_token)
    applied = engine.applied(standalone, transforms=answer.transforms, roles=roles, where=where)
    return {"question": standalone, **answer_dict(answer), "applied": applied}


def caller_source(source: str, root: str | None) -> str:
    """A document's ``source`` as the server shows it to callers: the path relative to the folder it was ingested
    from (an upload: its name), never the server's absolute path; the file name when it lies outside that
    folder or the folder is unknown."""
    path = PurePath(source)
    if root and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return path.name


def documents_json(engine: Engine, prefix: str, where: Sequence[str], roles: Sequence[str]) -> dict[str, Any]:
    """``openbook documents --json``: ``{"documents": [{doc_id, title, source, updated, chunks, metadata}]}``,
    ``source`` as ``caller_source`` shows it."""
    docs = engine.documents(prefix=prefix, where=where, roles=roles)
    roots = {d: s.root for d, s in engine.store.get_documents().items()} if docs else {}
    return {"documents": [d | {"source": caller_source(d["source"], roots.get(d["doc_id"]))} for d in docs]}


def document_json(engine: Engine, doc_id: str, roles: Sequence[str]) -> dict[str, Any] | None:
    """``openbook show --json``: ``Engine.document``'s dict, ``source`` as ``caller_source`` shows it; None when
    missing or hidden from ``roles``."""
    doc = engine.document(doc_id, roles=roles)
    if doc is None:
        return None
    stored = engine.store.get_documents().get(doc_id)
    return doc | {"source": caller_source(doc["source"], stored.root if stored is not None else None)}
