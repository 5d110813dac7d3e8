"""Second-stage rerankers: take a ranked list of hits (with chunks) and return it re-ordered.

Backends:

- ``LearnedReranker`` (``learned``, ``openbook.retrieve.learned``): a linear learning-to-rank model over the
  legs' scores and ranks and the query's term matches, fitted on public training splits and shipped in the
  package (numpy only).
- ``DenseRRFReranker`` (``dense-rrf``): orders the candidates by the embedder's cosine
  similarity to the query and fuses that order with the incoming one by reciprocal rank fusion (k = 60,
  Cormack et al. 2009). It needs no extra model: it reads the candidates' stored vectors when given a lookup,
  else embeds ``Chunk.indexed_text()``. On SciFact test (nDCG@10, ``benchmarks/embedders.py second-stage``, its
  docstring gives the figures): BM25's top 100 re-ordered by MiniLM cosine alone scores below BM25 (0.664-0.665
  against 0.683), the two orders fused score above it (0.715-0.718), hence RRF by default.
- ``CrossEncoderReranker`` (experimental: it needs sentence-transformers and torch, which CI does not install,
  so its tests are skipped there): any sentence-transformers ``CrossEncoder`` in a local folder (no package ships
  cross-encoder weights for offline use, so there is no default folder). Passages longer than the model's
  limit are scored window by window (max over windows) or, with ``long_passages="truncate"``, truncated with a
  ``LongPassageWarning``; never silently.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Callable, Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import ConfigError, RetrievalError
from ..index.analyzer import Analyzer
from ..index.embedders import Embedder
from ..types import Hit
from .fusion import RRF_K, rrf


@runtime_checkable
class Reranker(Protocol):
    """Re-orders a candidate list; ``name`` is its registry name."""

    name: str

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """Return the same hits best first, each with ``legs["rerank"] = (rank, score)`` and ``score`` = that score.

        Every hit needs its ``chunk`` (``RetrievalError`` otherwise, naming the chunk id).
        """
        ...


class LongPassageWarning(UserWarning):
    """A passage was longer than the cross-encoder's limit and was truncated."""


def _with_rerank(hits: Sequence[Hit], scores: Sequence[float]) -> list[Hit]:
    """Hits sorted by score descending (ties: input order), with the rerank leg and score set."""
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
    out = []
    for rank, i in enumerate(order, start=1):
        hit = hits[i]
        out.append(replace(hit, score=float(scores[i]), legs={**hit.legs, "rerank": (rank, float(scores[i]))}))
    return out


def _texts(hits: Sequence[Hit], who: str) -> list[str]:
    missing = [h.chunk_id for h in hits if h.chunk is None]
    if missing:
        raise RetrievalError(
            f"reranker {who!r} needs each hit's chunk, but {len(missing)} hit(s) have none "
            f"(first: {missing[0]}); load chunks from the store before reranking"
        )
    return [h.chunk.indexed_text() for h in hits]  # type: ignore[union-attr]


class DenseRRFReranker:
    """Fuse the incoming order with the embedder's cosine order by RRF; ``mode="cosine"`` uses cosine alone.

    Args:
        embedder: the embedder the query is embedded with (the dense index's model when ``lookup`` is given).
        lookup: chunk ids -> float [n, dim] stored vectors in that order (e.g. rows of the ``VectorIndex``); None
            embeds each candidate's ``indexed_text()`` at query time (slow with large models).
        mode: ``rrf`` (score = 1/(k + input rank) + 1/(k + cosine rank)) or ``cosine`` (score = cosine).
        k: RRF constant (Cormack et al. 2009).
    """

    name = "dense-rrf"

    def __init__(self, embedder: Embedder, *, lookup: Callable[[Sequence[str]], np.ndarray] | None = None,
                 mode: Literal["rrf", "cosine"] = "rrf", k: int = RRF_K) -> None:
        if mode not in ("rrf", "cosine"):
            raise ConfigError(f"DenseRRFReranker mode must be 'rrf' or 'cosine', got {mode!r}")
        self.embedder = embedder
        self.lookup = lookup
        self.mode = mode
        self.k = k
        if mode == "cosine":
            self.name = "dense-cosine"

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """Re-order ``hits`` (see the class docstring); returns all of them, best first.

        Raises:
            RetrievalError: a hit without its chunk (only when ``lookup`` is None).
        """
        hits = list(hits)
        if not hits:
            return []
        if self.lookup is not None:
            vectors = np.asarray(self.lookup([h.chunk_id for h in hits]), dtype=np.float32)
        else:
            vectors = self.embedder.embed(_texts(hits, self.name), kind="passage")
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        q = self.embedder.embed([query], kind="query")[0]
        cosine = vectors @ (q / max(float(np.linalg.norm(q)), 1e-12))
        if self.mode == "cosine":
            return _with_rerank(hits, cosine.tolist())
        by_cosine = [replace(hits[i], score=float(cosine[i]))
                     for i in sorted(range(len(hits)), key=lambda i: (-cosine[i], i))]
        fused = {h.chunk_id: h.score for h in rrf({"first": hits, "cosine": by_cosine}, k=self.k)}
        return _with_rerank(hits, [fused[h.chunk_id] for h in hits])


class CrossEncoderReranker:
    """Score (query, passage) pairs with a sentence-transformers ``CrossEncoder`` from a local folder.

    Args:
        folder: a saved cross-encoder (``config.json``, weights, tokenizer files); loaded with
            ``local_files_only=True``, so no model hub is contacted.
        long_passages: ``window`` scores a too-long passage as the max over overlapping windows (half a window
            of stride) that each fit with the query, each led by the chunk's title and heading path;
            ``truncate`` keeps the first window and warns (``LongPassageWarning``).
        max_length: pair limit in model tokens (query + passage + 3 special tokens); default: the model's.
        batch_size: pairs per forward pass.

    Raises:
        RetrievalError: sentence-transformers is missing, or the folder does not hold a model.
        ConfigError: an unknown ``long_passages`` value.
    """

    def __init__(self, folder: Path, *, long_passages: Literal["window", "truncate"] = "window",
                 max_length: int | None = None, batch_size: int = 16) -> None:
        if long_passages not in ("window", "truncate"):
            raise ConfigError(f"long_passages must be 'window' or 'truncate', got {long_passages!r}")
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise RetrievalError(
                "the cross-encoder reranker needs sentence-transformers: "
                "pip install torch==2.13.0 && pip install sentence-transformers"
            ) from exc
        folder = Path(folder)
        if not (folder / "config.json").is_file():
            raise RetrievalError(f"{folder} holds no cross-encoder (no config.json); pass a saved model folder")
        self.name = f"cross-encoder:{folder.name}"
        self._model = CrossEncoder(str(folder), device="cpu", local_files_only=True, max_length=max_length)
        self._tokenizer = self._model.tokenizer
        limit = max_length
        if limit is None:  # sentence-transformers 6 renamed CrossEncoder.max_length to max_seq_length
            modern = hasattr(type(self._model), "max_seq_length")
            limit = self._model.max_seq_length if modern else self._model.max_length
        self.max_length = int(limit or min(self._tokenizer.model_max_length, 512))
        self.long_passages = long_passages
        self.batch_size = batch_size

    def _count(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def _windows(self, query: str, head: str, body: str) -> list[str]:
        """Passage texts to pair with ``query``: ``head`` (title and headings) followed by each window of ``body``.

        Windows are token-aligned slices of ``body`` of at most the budget left by the query, the head and the
        3 special tokens, with a stride of half a window.
        """
        budget = self.max_length - self._count(query) - 3
        if budget < 8:
            raise RetrievalError(f"query is too long for {self.name} (max_length {self.max_length} tokens)")
        head_tokens = self._count(head + "\n") if head else 0
        if head_tokens > budget // 2:  # a head that leaves too little room for the body is dropped
            head, head_tokens = "", 0
        prefix = head + "\n" if head else ""
        budget -= head_tokens
        offsets = self._tokenizer(body, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        if len(offsets) <= budget:
            return [prefix + body]
        if self.long_passages == "truncate":
            warnings.warn(
                f"{self.name}: passage of {len(offsets)} tokens truncated to {budget} to fit max_length "
                f"{self.max_length}; use long_passages='window' to score every part",
                LongPassageWarning, stacklevel=3,
            )
            return [prefix + body[: offsets[budget - 1][1]]]
        stride = max(1, budget // 2)
        windows = []
        for start in range(0, len(offsets), stride):
            end = min(start + budget, len(offsets))
            windows.append(prefix + body[offsets[start][0] : offsets[end - 1][1]])
            if end == len(offsets):
                break
        return windows

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """Score every hit's chunk (title, heading path, text) against ``query``; returns all hits, best first.

        A hit's score is the model's output with its default activation (a sigmoid for one-label models;
        higher is more relevant), the max over the passage's windows; every window repeats the title and
        heading path.

        Raises:
            RetrievalError: a hit without its chunk.
        """
        hits = list(hits)
        if not hits:
            return []
        pairs, owner = [], []
        _texts(hits, self.name)  # refuses hits without chunks
        for i, hit in enumerate(hits):
            chunk = hit.chunk
            assert chunk is not None
            head = "\n".join(p for p in (chunk.title, chunk.section) if p)
            for window in self._windows(query, head, chunk.text):
                pairs.append((query, window))
                owner.append(i)
        raw = np.asarray(self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False,
                                             convert_to_numpy=True), dtype=np.float64).reshape(len(pairs), -1)[:, 0]
        scores = np.full(len(hits), -np.inf)
        np.maximum.at(scores, np.asarray(owner), raw)
        return _with_rerank(hits, scores.tolist())


def get_reranker(name: str, *, embedder: Embedder | None = None,
                 lookup: Callable[[Sequence[str]], np.ndarray] | None = None,
                 folder: Path | None = None, analyzer: Analyzer | None = None,
                 idf: Callable[[Sequence[str]], np.ndarray] | None = None,
                 embedder_name: str | None = None) -> Reranker:
    """Build a reranker by name: ``learned`` (needs ``analyzer`` and ``idf``; ``embedder_name`` picks the model:
    the store's embedder, None for a BM25-only search), ``dense-rrf``, ``dense-cosine`` (need ``embedder``) or
    ``cross-encoder`` (needs ``folder``).

    Raises:
        ConfigError: unknown name, a missing argument for the chosen backend, or the learned model's file is
            missing or malformed.
    """
    if name == "learned":
        if analyzer is None or idf is None:
            raise ConfigError("reranker 'learned' needs the index's analyzer and idf")
        from .learned import LearnedReranker

        return LearnedReranker(analyzer, idf, embedder=embedder_name)
    if name in ("dense-rrf", "dense-cosine"):
        if embedder is None:
            raise ConfigError(f"reranker {name!r} needs the embedder the index was built with")
        return DenseRRFReranker(embedder, lookup=lookup, mode="rrf" if name == "dense-rrf" else "cosine")
    if name == "cross-encoder":
        if folder is None:
            raise ConfigError("reranker 'cross-encoder' needs the folder of a saved cross-encoder model")
        return CrossEncoderReranker(folder)
    raise ConfigError(f"unknown reranker {name!r}; valid names: learned, dense-rrf, dense-cosine, cross-encoder")
