"""LLM query transforms: multi-query paraphrases, HyDE, and decomposition into sub-questions.

Each transform is a small component behind the ``QueryTransform`` Protocol. It receives the queries so far (the
first is always the user's question) and returns the new list plus a ``TransformReport`` of what it did:

- ``multi-query``: the LLM writes ``n`` paraphrases of the question; each is searched and the lists are fused
  by RRF (Cormack, Clarke and Büttcher 2009).
- ``hyde``: the LLM writes a hypothetical answer passage; the dense leg embeds that passage (as a document)
  instead of the question, while the BM25 leg keeps the question (Gao et al. 2022, "Precise Zero-Shot Dense
  Retrieval without Relevance Labels"). No effect on a store without embeddings (the LLM is not called).
- ``decompose``: the LLM splits a compound question into sub-questions; each is searched; fused by RRF.

Transforms compose in the order given (``--transform multi-query,hyde``): the expanding ones add queries
generated from the question; HyDE sets the dense text of the question's own query. Every transform is off by
default: its effect on quality is unmeasured (no capable LLM runs in this project's test environment).
A failed LLM call never fails the search: the transform leaves the queries as they were and says why in its
report. The model's text is untrusted: at most ``n`` lines are kept, each cut to ``MAX_QUERY_CHARS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Protocol, Sequence, runtime_checkable

from ..errors import ConfigError, GenerationError

__all__ = ["TransformedQuery", "TransformReport", "QueryTransform", "MultiQuery", "HyDE", "Decompose",
           "TRANSFORMS", "parse_transform_names", "build_transforms", "apply_transforms"]

MAX_QUERY_CHARS = 300
"""A generated query longer than this many characters is cut (a model that rambles)."""

MAX_PASSAGE_CHARS = 2000
"""A HyDE passage longer than this many characters is cut."""

_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d+[.)]|[a-z][.)]|Q\d*:|sub-question\s*\d*:)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class TransformedQuery:
    """One query to search.

    Attributes:
        text: what the BM25 leg searches (and the dense leg embeds, unless ``dense_text`` is set).
        dense_text: a passage the dense leg embeds instead of ``text`` (HyDE), or None.
        source: ``question``, or the transform that wrote it with its position (``multi-query:1``).
    """

    text: str
    dense_text: str | None = None
    source: str = "question"


@dataclass(frozen=True)
class TransformReport:
    """What one transform did for one question: the queries (or passage) it wrote, and a note when it did
    nothing (LLM failure, no embeddings)."""

    name: str
    generated: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "generated": list(self.generated), "note": self.note}


@runtime_checkable
class QueryTransform(Protocol):
    """A query transform: the queries so far (``queries[0]`` is the question) in, the new list and a report out."""

    name: str

    def transform(self, queries: Sequence[TransformedQuery]) -> tuple[list[TransformedQuery], TransformReport]:
        ...


def _lines(text: str, limit: int, exclude: str) -> list[str]:
    """The model's reply as at most ``limit`` distinct queries: bullets and numbering removed, blank lines and
    repeats of ``exclude`` (the question) dropped, each cut to ``MAX_QUERY_CHARS``."""
    out: list[str] = []
    seen = {" ".join(exclude.casefold().split())}
    for line in text.splitlines():
        q = _BULLET.sub("", line).strip().strip('"').strip()[:MAX_QUERY_CHARS]
        key = " ".join(q.casefold().split())
        if q and key not in seen:
            seen.add(key)
            out.append(q)
        if len(out) >= limit:
            break
    return out


def _ask(generator: Any, system: str, question: str, max_tokens: int) -> str:
    return generator.generate([{"role": "system", "content": system}, {"role": "user", "content": question}],
                              max_tokens=max_tokens)


class _Expanding:
    """Shared shape of multi-query and decompose: one LLM call, one query per reply line, appended."""

    name = ""
    system = ""

    def __init__(self, generator: Any, n: int = 3, max_tokens: int = 200) -> None:
        self.generator, self.n, self.max_tokens = generator, n, max_tokens

    def transform(self, queries: Sequence[TransformedQuery]) -> tuple[list[TransformedQuery], TransformReport]:
        question = queries[0].text
        try:
            reply = _ask(self.generator, self.system.format(n=self.n), question, self.max_tokens)
        except GenerationError as exc:
            return list(queries), TransformReport(self.name, note=f"LLM call failed, searched without it: {exc}")
        new = _lines(reply, self.n, question)
        if not new:
            return list(queries), TransformReport(self.name, note="the LLM wrote no usable query")
        added = [TransformedQuery(q, source=f"{self.name}:{i}") for i, q in enumerate(new, start=1)]
        return [*queries, *added], TransformReport(self.name, tuple(new))


class MultiQuery(_Expanding):
    """``n`` paraphrases of the question, each searched; fused with the question's own list by RRF."""

    name = "multi-query"
    system = ("You help a search engine. Rewrite the user's question as {n} different search queries that ask "
              "for the same information in other words (synonyms, expanded abbreviations, related terms). "
              "Write one query per line, with no numbering and no other text.")


class Decompose(_Expanding):
    """The sub-questions of a compound question, each searched; fused with the question's own list by RRF."""

    name = "decompose"
    system = ("You help a search engine. If the user's question combines several questions, or needs a fact "
              "found first to answer it, split it into at most {n} simple, self-contained sub-questions. Write "
              "one sub-question per line, with no numbering and no other text. If the question is already "
              "simple, write it unchanged.")


class HyDE:
    """A hypothetical answer passage, embedded by the dense leg instead of the question (BM25 keeps the question).

    Args:
        generator: the chat backend. dense: whether the store has embeddings; without, the LLM is not called
            and the report says the transform has no effect.
    """

    name = "hyde"
    system = ("Write a short passage, about three sentences, that answers the user's question the way a "
              "reference document or policy would. Write only the passage. It need not be correct; it is used "
              "to find similar documents.")

    def __init__(self, generator: Any, dense: bool = True, max_tokens: int = 200) -> None:
        self.generator, self.dense, self.max_tokens = generator, dense, max_tokens

    def transform(self, queries: Sequence[TransformedQuery]) -> tuple[list[TransformedQuery], TransformReport]:
        if not self.dense:
            return list(queries), TransformReport(self.name, note="no effect: the search has no dense leg "
                                                                  "(a BM25-only store or --mode bm25)")
        question = queries[0].text
        try:
            passage = _ask(self.generator, self.system, question, self.max_tokens).strip()[:MAX_PASSAGE_CHARS]
        except GenerationError as exc:
            return list(queries), TransformReport(self.name, note=f"LLM call failed, searched without it: {exc}")
        if not passage:
            return list(queries), TransformReport(self.name, note="the LLM wrote no passage")
        return [replace(queries[0], dense_text=passage), *queries[1:]], TransformReport(self.name, (passage,))


TRANSFORMS = ("multi-query", "hyde", "decompose")
"""Transform names, as given to ``--transform`` and ``[retrieval] transforms``."""


def parse_transform_names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"multi-query,hyde"`` or ``["multi-query", "hyde"]`` -> ``("multi-query", "hyde")`` (repeats dropped).

    Raises:
        ConfigError: an unknown name (the message lists the valid ones).
    """
    if not value:
        return ()
    items = value.split(",") if isinstance(value, str) else [x for v in value for x in str(v).split(",")]
    names = tuple(dict.fromkeys(x.strip().lower() for x in items if x.strip()))
    unknown = [x for x in names if x not in TRANSFORMS]
    if unknown:
        raise ConfigError(f"unknown query transform(s) {', '.join(unknown)}; valid: {', '.join(TRANSFORMS)}")
    return names


def build_transforms(names: Sequence[str], generator: Any, dense: bool) -> list[QueryTransform]:
    """The transforms named, in order, sharing one ``generator``; ``dense``: the search has a dense leg."""
    made: list[QueryTransform] = []
    for name in names:
        if name == "multi-query":
            made.append(MultiQuery(generator))
        elif name == "decompose":
            made.append(Decompose(generator))
        elif name == "hyde":
            made.append(HyDE(generator, dense=dense))
    return made


def apply_transforms(question: str, transforms: Sequence[QueryTransform]
                     ) -> tuple[list[TransformedQuery], list[TransformReport]]:
    """Run ``transforms`` in order on ``question``.

    Returns:
        ``(queries, reports)``: the queries to search (the question first), and one report per transform.
    """
    queries = [TransformedQuery(question)]
    reports: list[TransformReport] = []
    for t in transforms:
        queries, report = t.transform(queries)
        reports.append(report)
    return queries, reports
