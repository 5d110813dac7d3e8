"""Answering as one object: retrieve passages, then the extractive answerer or an LLM, with citations checked.

``Answerer(retriever, config).ask(question, roles=...)`` is what ``Engine.ask`` runs. It depends on the retriever
(``openbook.retrieve.pipeline.Retriever``: search, term statistics, the store's documents), never on ``Engine``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Collection, Sequence

import numpy as np

from ..config import Config
from ..errors import OpenbookError, QueryError, StoreError
from ..index.embedders import cosines_to
from ..llm import Generator, ready
from ..retrieve.pipeline import Retriever, VisibleVocabulary, list_documents
from ..store.base import Visibility
from ..types import Answer, Hit, Passage

WHOLE_CORPUS_MAX_CHUNKS = 200
"""``ask`` with an LLM tries the whole corpus as the context (no retrieval) only up to this many visible chunks:
beyond it the token count alone would cost more than a search, and no default context budget holds them."""

MAX_QUESTION_CHARS = 4000
"""The longest question ``ask`` takes (characters, about 700 English words: a situation stated, then the ask).
Longer input is refused with a ``QueryError`` (the server answers 400) instead of being analysed, searched and
answered: analysis time grows with the question, and a question of tens of thousands of characters would hold a
server worker for minutes."""


def question_cosines(question: str, passages: Sequence[Passage], store: Any,
                     embed: Callable[[list[str], str], np.ndarray]) -> dict[str, float]:
    """The question's cosine to each passage the dense leg did not score, from the store's vectors.

    A passage found only by the BM25 leg (the second hop of ``[retrieval] hops = 2`` searches BM25 alone, and
    a hybrid search keeps BM25 hits the dense leg ranked too low) carries no dense score; the answerability
    features read its real cosine from here instead of nothing.

    Args:
        question: the question, embedded once as a query.
        passages: the passages the answerer reads (already filtered by roles, ``where`` and exclusions: only
            their own vectors are read).
        store: the open store (``get_vectors(chunk_ids) -> float32 [n, dim]``, ``StoreError`` for an id it does not
            index).
        embed: ``(texts, "query" | "passage") -> float [n, dim]``, the store's embedder.

    Returns:
        chunk id -> cosine in [-1, 1] for each passage without a ``dense`` leg (empty when every passage has
        one, or the store cannot give a passage's vector, e.g. a RAPTOR summary: the ``StoreError`` is not
        raised).
    """
    missing = list(dict.fromkeys(p.hit.chunk_id for p in passages if "dense" not in p.hit.legs))
    if not missing:
        return {}
    try:
        vectors = np.asarray(store.get_vectors(missing), dtype=np.float64)
    except StoreError:
        return {}
    q = np.asarray(embed([question], "query")[0], dtype=np.float64)
    return {cid: float(c) for cid, c in zip(missing, cosines_to(q, vectors))}


def _question_once(embedder: Any) -> Callable[[list[str], str], np.ndarray]:
    """``(texts, kind) -> float [n, dim]`` over ``embedder.embed`` that embeds a one-text query (the question)
    only once: the second-hop cosines, the sentence choice and the cross-language check all ask for it."""
    queries: dict[str, np.ndarray] = {}

    def embed(texts: list[str], kind: str) -> np.ndarray:
        if kind != "query" or len(texts) != 1:
            return embedder.embed(texts, kind=kind)
        if texts[0] not in queries:
            queries[texts[0]] = embedder.embed(texts, kind=kind)
        return queries[texts[0]]

    return embed


class Answerer:
    """Answers questions from one retriever's store with one configuration (``config.answer``, ``config.llm``).

    Args:
        retriever: finds the passages (and runs the query transforms with its own generator).
        config: ``config.answer`` and ``config.llm`` (prompt budget, drop_unsupported) above all.
        generator: the LLM that writes answers (the caller builds it from ``config.llm``:
            ``openbook.llm.factory``); None: the offline extractive answerer.
    """

    def __init__(self, retriever: Retriever, config: Config, generator: Generator | None = None) -> None:
        self.retriever = retriever
        self.store = retriever.store
        self.config = config
        self.generator = generator

    def search(self, query: str, k: int | None = None, **kwargs: Any) -> list[Hit]:
        return self.retriever.search(query, k, **kwargs)

    def passages(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                 mode: str | None = None, exclude_docs: Collection[str] = ()) -> list[Passage]:
        """Retrieve and number the passages an answerer sees (``config.answer.passages`` of them)."""
        from .context import assemble_passages

        n = self.config.answer.passages
        hits = self.search(question, k=max(n * 3, 20), roles=roles, where=where, mode=mode,
                           exclude_docs=exclude_docs)
        return assemble_passages(hits, n)

    def ask(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
            mode: str | None = None, generator: Any = None,
            on_token: Callable[[str], None] | None = None, exclude_docs: Collection[str] = ()) -> Answer:
        """Answer from the documents with ``[n]`` citations, or refuse.

        The LLM ``generator`` (None: the one this answerer was handed) writes the answer
        (``openbook.answer.llm``) and its citations are checked; with neither, the offline extractive answerer
        (``openbook.answer.extractive``) answers. ``on_token`` streams the LLM's text as it arrives.

        Raises:
            QueryError: empty question, or longer than ``MAX_QUESTION_CHARS``. StoreError: empty or missing store.
                GenerationError: LLM failure.
        """
        if not question or not question.strip():
            raise QueryError("empty question: ask something")
        if len(question) > MAX_QUESTION_CHARS:
            raise QueryError(f"question too long: {len(question)} characters, at most {MAX_QUESTION_CHARS}; ask "
                             f"about one thing at a time (to find passages like a whole text, use search)")
        if self.config.retrieval.transforms or (self.config.answer.skip_retrieval_small_corpus
                                                and (generator is not None or self.generator is not None)):
            return self._ask_llm_retrieval(question, roles=roles, where=where, mode=mode, generator=generator,
                                           on_token=on_token, exclude_docs=exclude_docs)
        passages = self.passages(question, roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)
        if generator is None:
            generator = ready(self.generator)
        if generator is None:
            return self.offline(question, passages, roles=roles, where=where, exclude_docs=exclude_docs)
        from .llm import generate_answer

        if self.config.answer.llm_gate:
            offline = self.offline(question, passages, roles=roles, where=where, exclude_docs=exclude_docs)
            if offline.refused:  # no passage the answerability model would answer from: the LLM is not asked
                return replace(offline, notes=(*offline.notes, "refused before the LLM call ([answer] llm_gate)"))
        return generate_answer(question, passages, generator, self.config.llm, on_token=on_token)

    def offline(self, question: str, passages: Sequence[Passage], *, roles: Sequence[str] = (),
                where: Sequence[str] = (), exclude_docs: Collection[str] = ()) -> Answer:
        """The offline extractive answer (``openbook.answer.extractive``) to ``question`` from ``passages``: its
        sentences with ``[n]`` citations, or the refusal, judged by the fitted answerability model on term
        statistics of what the caller may see (``roles``, ``where``, ``exclude_docs``)."""
        from .extractive import answer_extractive

        self.retriever.require_index()
        vectors = self.store.get_embedding()
        embed = None
        cosines: dict[str, float] = {}
        if vectors is not None:
            embed = _question_once(self.retriever.embedder())
            cosines = question_cosines(question, passages, self.store, embed)
        visibility = Visibility.of(roles, where, exclude_docs)
        # which question words the corpus lacks is judged on what the caller may see: the whole store's
        # vocabulary would tell, by the refusal's notes and confidence, whether a hidden document uses a word
        stats = VisibleStats(self.retriever, VisibleVocabulary(
            self.store, visibility, likely=self.retriever.analyzer.analyze(question)), roles=roles)
        return answer_extractive(question, passages, stats, self.config.answer,
                                 embed=embed, versions=self.store.get_versions(),
                                 embedder=vectors.model if vectors is not None else None, cosines=cosines,
                                 expansions=[e for e in self.retriever.expansions(question, visibility)
                                             if e.source != "wordnet" or self.config.answer.wordnet])

    def _ask_llm_retrieval(self, question: str, *, roles: Sequence[str], where: Sequence[str], mode: str | None,
                           generator: Any, on_token: Callable[[str], None] | None,
                           exclude_docs: Collection[str]) -> Answer:
        """``ask`` with an LLM that may skip retrieval (small corpus) or transform the query (LLM required)."""
        from .context import assemble_passages
        from .llm import generate_answer

        if generator is None:
            generator = ready(self.generator)
        if generator is not None and self.config.answer.skip_retrieval_small_corpus:
            whole = self.whole_corpus_passages(question, roles=roles, where=where, exclude_docs=exclude_docs)
            if whole is not None:
                answer = generate_answer(question, whole, generator, self.config.llm, on_token=on_token)
                note = (f"retrieval skipped: all {len({p.chunk.doc_id for p in whole})} visible document(s) fit "
                        f"[llm] context_tokens = {self.config.llm.context_tokens}")
                return replace(answer, retrieval="whole-corpus", notes=(note, *answer.notes))
        opts = dict(roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)
        if not self.config.retrieval.transforms:  # small corpus check only: retrieve as usual
            passages = self.passages(question, **opts)
            reports: list[dict[str, Any]] = []
        else:
            n = self.config.answer.passages
            found, done = self.retriever.search_transformed([question], max(n * 3, 20), generator=generator,
                                                  transforms=self.config.retrieval.transforms, **opts)
            passages, reports = assemble_passages(found[0], n), done[0]
        answer = generate_answer(question, passages, generator, self.config.llm, on_token=on_token)
        return replace(answer, transforms=tuple(reports))

    def whole_corpus_passages(self, question: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                              exclude_docs: Collection[str] = ()) -> list[Passage] | None:
        """Every chunk of every document these ``roles`` may see (``where`` and ``exclude_docs`` applied), in
        doc id and chunk order, numbered from 1, when the LLM prompt holds them all within ``[llm]
        context_tokens`` (counted by ``openbook.answer.prompt``); None when they do not fit, there are more than
        ``WHOLE_CORPUS_MAX_CHUNKS`` visible chunks (or ten times that many in the store), or no document is
        visible.

        Raises:
            QueryError: a bad ``where`` clause.
        """
        from .prompt import assemble_context

        if self.store.count_stored()[1] > 10 * WHOLE_CORPUS_MAX_CHUNKS:  # a large store: no listing of every document
            return None
        excluded = set(exclude_docs)
        docs = [d for d in list_documents(self.store, where=where, roles=roles) if d["doc_id"] not in excluded]
        if not docs or sum(d["chunks"] for d in docs) > WHOLE_CORPUS_MAX_CHUNKS:
            return None
        chunks = [c for d in docs for c in self.store.get_document_chunks(d["doc_id"])]
        passages = [Passage(n=i, hit=Hit(c.chunk_id, c.doc_id, 0.0, {}, c)) for i, c in enumerate(chunks, 1)]
        try:
            context = assemble_context(question, passages, self.config.llm)
        except OpenbookError:
            return None
        if context.over_budget or context.truncated:
            return None
        return passages


class VisibleStats:
    """The retriever's term statistics (``extractive.TermStats``) as a caller who sees only what a
    ``Visibility`` allows would find them: ``get_vocabulary()`` holds the terms of the documents it allows
    (``retrieve.pipeline.VisibleVocabulary``, membership tests only) and ``idf`` of any other term is that of a
    term the index lacks (df = 0), so neither a refusal's notes nor its confidence tells whether a hidden
    document uses a question word. idf counts the chunks ``roles`` may see (``Store.get_idf``), as BM25 scores them;
    the analyzer and ``known_characters`` are the whole index's."""

    _ABSENT = "\x00"  # never an analyzer term: its idf is that of df = 0

    def __init__(self, stats: Any, vocabulary: VisibleVocabulary, roles: Sequence[str] = ()) -> None:
        self._stats, self._vocabulary = stats, vocabulary
        self._roles = tuple(roles)
        self.analyzer = stats.analyzer

    def idf(self, terms: Sequence[str]) -> Any:
        out = np.array(self._stats.idf(terms, roles=self._roles), dtype=np.float64)
        self._vocabulary.prefetch(list(terms))
        hidden = [i for i, t in enumerate(terms) if t not in self._vocabulary]
        if hidden:
            out[hidden] = float(self._stats.idf([self._ABSENT], roles=self._roles)[0])
        return out

    def known_characters(self) -> frozenset[str]:
        return self._stats.known_characters()

    def vocabulary(self) -> Any:
        return self._vocabulary
