"""Our BM25 index: a term-major sparse matrix of precomputed BM25 weights, persisted as plain ``.npy`` files.

Scoring, as in Lucene's ``BM25Similarity`` (Robertson et al.'s BM25 with Lucene's idf; Lucene drops the
constant ``(k1 + 1)`` factor, which does not change the ranking)::

    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    w(t, d)     = idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    score(q, d) = sum over query terms t of qtf(t) * w(t, d)

where ``qtf(t)`` counts the occurrences of ``t`` in the query: a term repeated in the query weighs more, as in
Lucene (a BooleanQuery with one clause per occurrence) and bm25s (which sums over the query's token ids).

``N`` counts indexed rows (chunks), ``|d|`` is a row's term count, ``avgdl`` the mean over rows. An index told
which document each row belongs to (``with_documents``) takes ``idf`` from documents instead: ``N`` counts
documents and ``df(t)`` the documents with a row holding ``t``, so a term that one long document repeats in each of
its chunks keeps the idf it has among documents (how the chunker cuts a document does not make its words look
commoner), while ``tf`` and the length norm stay per row. Like Lucene,
the index stores term frequencies and per-row lengths, not weights: at load, ``idf`` (per term) and the length
norm ``k1 * (1 - b + b * |d| / avgdl)`` (per row) are computed once, and a query scores only the rows in its
terms' posting lists (numba on large indexes, numpy on small ones), then keeps the top k with a heap. The same
stored frequencies let the index be rebuilt after an update without re-tokenising, and a change of ``k1``/``b``
needs no rebuild at all.

``BM25Index.from_texts`` builds from texts directly: from 20,000 texts on, compiled code analyses each distinct
whitespace-separated piece once and counts the postings without a Python object per token (``_build_kernels``),
giving the same arrays as ``build`` over ``Analyzer.analyze_document``.

Folder layout (``BM25Index.save``)::

    params.json   k1, b, idf, rows, avgdl, analyzer settings
    vocab.json    list of terms; a term's id is its position
    indptr.npy    int64 [V + 1]: postings of term t are [indptr[t], indptr[t + 1])
    indices.npy   int32 [nnz]: row ids, ascending within a term
    tf.npy        uint8 [nnz] (uint16 when some frequency exceeds 255): term frequencies
    doc_len.npy   int32 [rows]
"""

from __future__ import annotations

import json
import time
from array import array
from collections import defaultdict
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # scipy.sparse is imported where an index is built, not by a search (start-up time)
    import scipy.sparse as sp

    from .analyzer import Analyzer

from ..errors import IndexError_
from . import _bm25_kernels as kernels

FORMAT = "openbook-bm25/2"
FAST_BUILD_MIN_TEXTS = 20_000  # from_texts uses the compiled builder from this many texts on
_FAST_BATCH = 10_000  # texts per compiled batch


def lucene_idf(df: np.ndarray, n_rows: int) -> np.ndarray:
    """Lucene's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``; always positive. Shape as ``df``."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((n_rows - df + 0.5) / (df + 0.5))


class BM25Index:
    """BM25 over rows (chunks) of a term-frequency matrix. Build with ``build`` or ``from_tf``; query with
    ``search_batch``. Row ids are positions in build order; mapping rows to chunk ids is the store's job."""

    def __init__(self, vocab: list[str], indptr: np.ndarray, indices: np.ndarray, tf: np.ndarray,
                 doc_len: np.ndarray, k1: float, b: float, extra: Mapping[str, object] | None = None,
                 term_ids: dict[str, int] | None = None) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise IndexError_(f"BM25 parameters out of range: k1={k1} (must be >= 0), b={b} (must be in [0, 1])")
        self.vocab = vocab
        self.term_ids = {t: i for i, t in enumerate(vocab)} if term_ids is None else term_ids
        self.indptr = indptr
        self.indices = indices
        self.tf = tf
        self.doc_len = doc_len
        self.k1 = float(k1)
        self.b = float(b)
        self.extra = dict(extra or {})
        n = self.rows
        self.counted: np.ndarray | None = None  # rows the statistics count (None: every row; see with_stats_of)
        self.documents: np.ndarray | None = None  # document ordinal per row (None: idf over rows; with_documents)
        self._set_stats(np.diff(np.asarray(indptr)), n, np.asarray(doc_len))
        self._scores = np.zeros(n, dtype=np.float64)  # accumulator reused by every query (zero between queries)
        self._touched = np.zeros(n, dtype=np.int32)
        self._weights: np.ndarray | None = None  # float32 [postings], built on the first compiled-path query
        self._numpy_s = 0.0  # seconds the numpy path has spent scoring this index (see _use_kernel)

    def _set_stats(self, df: np.ndarray, n_rows: int, counted_len: np.ndarray,
                   idf_of: tuple[np.ndarray, int] | None = None) -> None:
        """idf per term from ``df`` among ``n_rows`` rows (or from ``idf_of``: ``(df, N)`` counted in
        documents), and every row's length norm with ``avgdl`` the mean of ``counted_len`` (the lengths of the
        rows the statistics count)."""
        self.stats_rows = int(n_rows)
        self.idf_by_term = lucene_idf(*(idf_of or (df, n_rows))).astype(np.float32)
        avgdl = float(counted_len.mean()) if len(counted_len) else 0.0
        self.stats_avgdl = avgdl
        if avgdl > 0:
            self.norm = (self.k1 * (1.0 - self.b + self.b * np.asarray(self.doc_len, dtype=np.float64) / avgdl)
                         ).astype(np.float32)
        else:
            self.norm = np.full(self.rows, self.k1, dtype=np.float32)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], k1: float = 1.2, b: float = 0.75,
              extra: Mapping[str, object] | None = None) -> "BM25Index":
        """Index one row per token list (analyzer output), in order; ``token_lists`` is consumed once.

        Raises:
            IndexError_: for a negative ``k1`` or ``b`` outside [0, 1].
        """
        tf, vocab = tf_matrix(token_lists)
        return cls.from_tf(tf, vocab, k1=k1, b=b, extra=extra)

    @classmethod
    def from_texts(cls, texts: Iterable[str], analyzer: Analyzer, k1: float = 1.2, b: float = 0.75,
                   extra: Mapping[str, object] | None = None, compiled: bool | None = None) -> "BM25Index":
        """Index one row per text, analysed with ``analyzer.analyze_document``; ``texts`` is consumed once.

        The index equals ``build(analyzer.analyze_document(t) for t in texts)`` array for array (same vocabulary
        order, postings, frequencies and lengths, so the same scores). From ``FAST_BUILD_MIN_TEXTS`` texts on
        (or with ``compiled=True``) it is built by compiled code (``_build_kernels``): each distinct
        whitespace-free piece of text is analysed once and the postings are counted without a Python object per
        token, several times faster than analysing text by text; below that the plain path is cheaper than
        loading numba.

        Raises:
            IndexError_: for a negative ``k1`` or ``b`` outside [0, 1].
        """
        it = iter(texts)
        head = list(islice(it, FAST_BUILD_MIN_TEXTS))
        if compiled is None:
            compiled = kernels.HAVE_NUMBA and len(head) >= FAST_BUILD_MIN_TEXTS
        if not compiled:
            return cls.build(map(analyzer.analyze_document, chain(head, it)), k1=k1, b=b, extra=extra)
        builder = _TextIndexer(analyzer)
        batch = head
        while batch:
            for start in range(0, len(batch), _FAST_BATCH):
                builder.add(batch[start : start + _FAST_BATCH])
            batch = list(islice(it, FAST_BUILD_MIN_TEXTS))
        vocab, indptr, indices, tf, doc_len = builder.finish()
        return cls(vocab=vocab, indptr=indptr, indices=indices, tf=tf, doc_len=doc_len, k1=k1, b=b, extra=extra)

    @classmethod
    def from_tf(cls, tf: sp.csr_matrix, vocab: list[str], k1: float = 1.2, b: float = 0.75,
                extra: Mapping[str, object] | None = None) -> "BM25Index":
        """Index a rows x terms term-frequency matrix whose column j is ``vocab[j]``."""
        import scipy.sparse as sp

        csc = sp.csc_matrix(tf)
        csc.sum_duplicates()
        csc.sort_indices()
        doc_len = np.asarray(tf.sum(axis=1)).ravel().astype(np.int32)
        data = csc.data
        tf_dtype = np.uint8 if (len(data) == 0 or data.max() <= 255) else np.uint16
        return cls(vocab=list(vocab), indptr=csc.indptr.astype(np.int64), indices=csc.indices.astype(np.int32),
                   tf=np.minimum(data, np.iinfo(tf_dtype).max).astype(tf_dtype), doc_len=doc_len, k1=k1, b=b,
                   extra=extra)

    def with_params(self, k1: float, b: float) -> "BM25Index":
        """The same postings scored with other ``k1``/``b`` (nothing is recomputed but the length norms)."""
        out = BM25Index(self.vocab, self.indptr, self.indices, self.tf, self.doc_len, k1, b, self.extra,
                        term_ids=self.term_ids)
        if self.documents is not None:
            out = out.with_documents(self.documents)
        return out if self.counted is None else out.with_stats_of(self.counted)

    def with_documents(self, documents: np.ndarray, document_df: np.ndarray | None = None) -> "BM25Index":
        """The same postings with ``idf`` over documents: ``N`` is the number of documents, ``df(t)`` the number
        of documents with a row holding ``t`` (module docstring); ``tf``, row lengths and ``avgdl`` stay per row.
        The postings and vocabulary are shared, not copied; costs one pass over the postings, unless
        ``document_df`` is given.

        Args:
            documents: int [rows], the document ordinal of each row; the rows of one document must be
                consecutive (as a store writes a document's chunks), since a document is counted once per run of
                its rows in a posting list.
            document_df: int [terms], ``document_frequencies(documents)`` as computed before (a store keeps it
                beside the index files, so that opening an index reads no posting); used only when the
                statistics count every row (not on a ``with_stats_of`` view).

        Raises:
            IndexError_: ``documents`` does not have one entry per row, or ``document_df`` one per term.
        """
        documents = np.asarray(documents)
        if documents.shape != (self.rows,):
            raise IndexError_(f"document ordinals of shape {documents.shape} for a BM25 index of {self.rows} rows")
        out = self._view()
        out.documents = documents
        if document_df is not None and self.counted is None:
            document_df = np.asarray(document_df)
            if document_df.shape != (len(self.vocab),):
                raise IndexError_(f"document frequencies of shape {document_df.shape} for a BM25 index of "
                                  f"{len(self.vocab)} terms")
            n_docs = int(np.count_nonzero(np.bincount(documents))) if self.rows else 0
            out._set_stats(np.diff(np.asarray(self.indptr)), self.rows, np.asarray(self.doc_len),
                           (document_df, n_docs))
            return out
        counted = self.counted if self.counted is not None else np.ones(self.rows, dtype=np.bool_)
        out._set_stats(*self._counted_stats(counted, documents))
        return out

    def document_frequencies(self, documents: np.ndarray) -> np.ndarray:
        """How many documents have a row holding each term, over every row: int64 [terms] (``with_documents``'s
        ``df(t)``, to be passed back to it as ``document_df``); one pass over the postings.

        Args:
            documents: int [rows], as for ``with_documents``.

        Raises:
            IndexError_: ``documents`` does not have one entry per row.
        """
        documents = np.asarray(documents)
        if documents.shape != (self.rows,):
            raise IndexError_(f"document ordinals of shape {documents.shape} for a BM25 index of {self.rows} rows")
        idf_of = self._counted_stats(np.ones(self.rows, dtype=np.bool_), documents)[3]
        assert idf_of is not None  # documents given
        return idf_of[0]

    def _counted_stats(self, counted: np.ndarray, documents: np.ndarray | None
                       ) -> tuple[np.ndarray, int, np.ndarray, tuple[np.ndarray, int] | None]:
        """``_set_stats``'s arguments for the rows where ``counted`` is True: df and N over those rows, their
        lengths, and (with ``documents``) df and N over their documents."""
        indptr = np.asarray(self.indptr)
        rows_of = np.asarray(self.indices)
        every = bool(counted.all())
        held = np.ones(len(rows_of), dtype=np.bool_) if every else counted[rows_of]
        df = np.diff(indptr) if every else _per_term_sum(held, indptr)
        lengths = np.asarray(self.doc_len)[counted]
        if documents is None:
            return df, int(counted.sum()), lengths, None
        doc_of = documents[rows_of]
        held[1:] &= doc_of[1:] != doc_of[:-1]  # now: a counted posting that starts its document's run ...
        starts = indptr[:-1][indptr[:-1] < indptr[1:]]
        held[starts] = counted[rows_of[starts]]  # ... in its term's list (a term's first posting always does)
        n_docs = int(np.count_nonzero(np.bincount(documents[counted]))) if counted.any() else 0
        return df, int(counted.sum()), lengths, (_per_term_sum(held, indptr), n_docs)

    def _view(self) -> "BM25Index":
        """A shallow copy with its own query scratch space (the statistics are the caller's to set)."""
        out = object.__new__(BM25Index)
        out.__dict__.update(self.__dict__)
        out._scores = np.zeros(self.rows, dtype=np.float64)
        out._touched = np.zeros(self.rows, dtype=np.int32)
        out._weights = None
        out._numpy_s = 0.0
        return out

    def with_stats_of(self, counted: np.ndarray) -> "BM25Index":
        """The same postings scored with the corpus statistics of the rows where ``counted`` (bool [rows]) is
        True: ``N`` is their number, ``df(t)`` counts those of them holding ``t``, ``avgdl`` is their mean
        length. Every score of a counted row then equals its score in an index built from the counted rows
        alone (same float32 steps), so the other rows leave no trace in it; search such a view with a ``mask``
        that hides the rows not counted (their scores are meaningless). Costs one pass over the postings; the
        postings and vocabulary are shared, not copied.

        Raises:
            IndexError_: ``counted`` does not have one entry per row.
        """
        counted = np.asarray(counted, dtype=np.bool_)
        if counted.shape != (self.rows,):
            raise IndexError_(f"row selection of shape {counted.shape} for a BM25 index of {self.rows} rows")
        out = self._view()
        out._set_stats(*self._counted_stats(counted, self.documents))
        out.counted = counted
        return out

    @property
    def rows(self) -> int:
        """Number of indexed rows."""
        return int(self.doc_len.shape[0])

    @property
    def avgdl(self) -> float:
        """Mean row length in terms, over every row (``stats_avgdl``: over the rows the statistics count)."""
        return float(np.asarray(self.doc_len).mean()) if self.rows else 0.0

    def tf_rows(self) -> sp.csr_matrix:
        """The rows x terms term-frequency matrix (CSR), for rebuilding after an update."""
        import scipy.sparse as sp

        csc = sp.csc_matrix(
            (np.asarray(self.tf, dtype=np.int32), np.asarray(self.indices), np.asarray(self.indptr)),
            shape=(self.rows, len(self.vocab)),
        )
        return csc.tocsr()

    def updated(self, keep: np.ndarray, new_token_lists: Iterable[Sequence[str]]) -> "BM25Index":
        """A new index: the rows where ``keep`` (bool [rows]) is True, in order, then the new rows.

        idf and avgdl are recomputed; kept rows are not re-tokenised. Terms that no longer occur are dropped.
        """
        import scipy.sparse as sp

        old = self.tf_rows()[np.flatnonzero(keep)]
        vocab = list(self.vocab)
        new_tf, vocab = tf_matrix(new_token_lists, vocab)
        old.resize((old.shape[0], len(vocab)))
        new_tf.resize((new_tf.shape[0], len(vocab)))
        tf = sp.vstack([old, new_tf], format="csr")
        used = np.flatnonzero(np.asarray((tf > 0).sum(axis=0)).ravel())
        if len(used) < len(vocab):
            tf = tf[:, used]
            vocab = [vocab[i] for i in used]
        return BM25Index.from_tf(tf, vocab, k1=self.k1, b=self.b, extra=self.extra)

    # ------------------------------------------------------------------ querying
    def _ids(self, terms: Sequence[str] | Sequence[tuple[str, float]]) -> tuple[np.ndarray, np.ndarray]:
        """Distinct indexed term ids of ``terms`` (first-seen order) and the sum of their weights (float32).

        A term is a string (weight 1, so a repeated term counts once per occurrence) or a ``(term, weight)``
        pair (query expansions enter with weights below 1).
        """
        counts: dict[int, float] = {}
        for t in terms:
            term, weight = (t, 1.0) if isinstance(t, str) else t
            i = self.term_ids.get(term)
            if i is not None:
                counts[i] = counts.get(i, 0.0) + weight
        return np.fromiter(counts, dtype=np.int64, count=len(counts)), \
            np.fromiter(counts.values(), dtype=np.float32, count=len(counts))

    def term_scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for the query terms: float64 [rows] (0 where no term matches).

        A term repeated in the query counts once per occurrence (query term frequency, as bm25s and Lucene).
        """
        scores = np.zeros(self.rows, dtype=np.float64)
        ids, qtf = self._ids(terms)
        if len(ids):
            idx, w = self._postings(ids, qtf)
            np.add.at(scores, idx, w)
        return scores

    def _postings(self, ids: np.ndarray, qtf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row ids and BM25 weights (times query term frequency) of these term ids' postings (numpy path)."""
        idx = np.concatenate([self.indices[self.indptr[t] : self.indptr[t + 1]] for t in ids])
        f = np.concatenate([self.tf[self.indptr[t] : self.indptr[t + 1]] for t in ids]).astype(np.float32)
        counts = [self.indptr[t + 1] - self.indptr[t] for t in ids]
        idf = np.repeat(self.idf_by_term[ids], counts)
        # the weight first, then times qtf: the same float32 steps as the compiled path's precomputed weights
        return idx, idf * f / (f + self.norm[idx]) * np.repeat(qtf, counts)

    def search_batch(self, queries: Sequence[Sequence[str]], k: int,
                     mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows per query.

        Args:
            queries: analyzer terms per query; a repeated term counts once per occurrence.
            k: hits wanted per query.
            mask: optional bool [rows]; rows where it is False are never returned and never push a True row
                out of the top k (the filter applies before the cut).

        Returns:
            ``(rows, scores)``: int64 and float32 arrays ``[len(queries), k]``, best first, ties broken by
            lower row id. Slots beyond the matching rows hold row -1 and score 0; only rows with a positive
            score (at least one query term) are returned.
        """
        nq = len(queries)
        out_rows = np.full((nq, max(k, 0)), -1, dtype=np.int64)
        out_scores = np.zeros((nq, max(k, 0)), dtype=np.float32)
        if k <= 0 or self.rows == 0:
            return out_rows, out_scores
        use_mask = mask is not None
        m = np.asarray(mask, dtype=np.bool_) if use_mask else np.ones(1, dtype=np.bool_)
        for qi, terms in enumerate(queries):
            ids, qtf = self._ids(terms)
            if not len(ids):
                continue
            if self._use_kernel():
                if self._weights is None:  # per-posting BM25 weights, computed once for the compiled path
                    self._weights = kernels.posting_weights(self.indptr, self.indices, self.tf, self.idf_by_term,
                                                            self.norm)
                kernels.compiled()(self.indptr, self.indices, self._weights, ids, qtf, m, use_mask, self._scores,
                                   self._touched, out_rows[qi], out_scores[qi])
            else:
                started = time.perf_counter()
                idx, w = self._postings(ids, qtf)
                scores = np.bincount(idx, weights=w, minlength=self.rows)
                if use_mask:
                    scores[~m] = 0.0
                top = _top_k(scores, k)
                out_rows[qi, : len(top)] = top
                out_scores[qi, : len(top)] = scores[top]
                self._numpy_s += time.perf_counter() - started
        return out_rows, out_scores

    def _use_kernel(self) -> bool:
        """Score with the compiled kernel (same scores and order as numpy) when numba is installed and the index
        is large (``MIN_ROWS``), the kernel is loaded already, or numpy has spent the kernel's one-time load
        cost (``LOAD_COST_S``) on this index: the rent-or-buy (ski rental) rule of Karlin et al.
        1988, which spends at most about twice the cheaper of the two ways."""
        return kernels.HAVE_NUMBA and (self.rows >= kernels.MIN_ROWS or kernels.loaded()
                                       or self._numpy_s >= kernels.LOAD_COST_S)

    def search(self, terms: Sequence[str], k: int, mask: np.ndarray | None = None):
        """``search_batch([terms], k, mask)`` for one query: ``(rows [k], scores [k])``."""
        rows, scores = self.search_batch([terms], k, mask)
        return rows[0], scores[0]

    def document_frequency(self, terms: Sequence[str]) -> np.ndarray:
        """How many rows hold each term, int64 [len(terms)] (0 when absent): every row, or for a
        ``with_stats_of`` view the rows it counts (rows, also after ``with_documents``, whose scores take their idf
        from documents)."""
        ids = self.term_ids
        if self.counted is None:
            return np.array([int(self.indptr[ids[t] + 1] - self.indptr[ids[t]]) if t in ids else 0 for t in terms],
                            dtype=np.int64)
        counted = self.counted
        return np.array([int(counted[np.asarray(self.indices[self.indptr[ids[t]] : self.indptr[ids[t] + 1]])].sum())
                         if t in ids else 0 for t in terms], dtype=np.int64)

    def idf(self, terms: Sequence[str]) -> np.ndarray:
        """Lucene idf per term, float64 [len(terms)], over the rows the statistics count (every row, or those of
        a ``with_stats_of`` view); a term absent from them gets the idf of df=0. Counted in rows, also after
        ``with_documents`` (``idf_by_term`` holds the idf scores use)."""
        return lucene_idf(self.document_frequency(terms), self.stats_rows)

    # ------------------------------------------------------------------ persistence
    def save(self, folder: Path) -> None:
        """Write the index files into ``folder`` (created if needed)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "indptr.npy", np.asarray(self.indptr))
        np.save(folder / "indices.npy", np.asarray(self.indices))
        np.save(folder / "tf.npy", np.asarray(self.tf))
        np.save(folder / "doc_len.npy", np.asarray(self.doc_len))
        with open(folder / "vocab.json", "w", encoding="utf-8") as fh:
            json.dump(self.vocab, fh, ensure_ascii=False)
        params = {"format": FORMAT, "k1": self.k1, "b": self.b, "idf": "lucene", "rows": self.rows,
                  "avgdl": self.avgdl, "terms": len(self.vocab), **self.extra}
        (folder / "params.json").write_text(json.dumps(params, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, mmap: bool = True) -> "BM25Index":
        """Load an index written by ``save``; postings are memory-mapped when ``mmap``.

        Raises:
            IndexError_: missing files or an unknown format.
        """
        folder = Path(folder)
        try:
            params = json.loads((folder / "params.json").read_text(encoding="utf-8"))
            if params.get("format") != FORMAT:
                raise IndexError_(f"{folder}: BM25 index format {params.get('format')!r}, expected {FORMAT!r}; "
                                  f"re-ingest the documents into a new store (`openbook ingest PATH --store NEW_FOLDER`)")
            mode = "r" if mmap else None
            # np.asarray: a plain ndarray view of the map (np.memmap's __getitem__ costs about 1 us a read, and
            # queries read indptr one term at a time)
            arrays = {name: np.asarray(np.load(folder / f"{name}.npy", mmap_mode=mode))
                      for name in ("indptr", "indices", "tf", "doc_len")}
            with open(folder / "vocab.json", encoding="utf-8") as fh:
                vocab = json.load(fh)
        except (OSError, ValueError) as exc:
            raise IndexError_(f"cannot load BM25 index from {folder}: {exc}; re-ingest to rebuild it") from None
        extra = {k: v for k, v in params.items()
                 if k not in ("format", "k1", "b", "idf", "rows", "avgdl", "terms")}
        return cls(vocab=vocab, k1=params["k1"], b=params["b"], extra=extra, **arrays)


def tf_matrix(token_lists: Iterable[Sequence[str]],
              vocab: list[str] | None = None) -> tuple[sp.csr_matrix, list[str]]:
    """Rows x terms term-frequency matrix (CSR, int32) and the vocabulary (extended in place if given).

    Term ids are collected in a compact ``array('i')`` (4 bytes a token, not a Python int object each).
    """
    import scipy.sparse as sp

    vocab = [] if vocab is None else vocab
    term_ids: defaultdict[str, int] = defaultdict(lambda: len(term_ids))  # a new term gets the next id
    term_ids.update((t, i) for i, t in enumerate(vocab))
    flat = array("i")
    indptr = array("q", [0])
    for tokens in token_lists:
        flat.extend(map(term_ids.__getitem__, tokens))  # dictionary lookups in C, not a Python loop
        indptr.append(len(flat))
    vocab.extend(sorted(term_ids, key=term_ids.__getitem__)[len(vocab):])
    cols = np.frombuffer(flat, dtype=np.int32) if len(flat) else np.zeros(0, dtype=np.int32)
    ptr = np.frombuffer(indptr, dtype=np.int64)
    data = np.ones(len(cols), dtype=np.int32)
    m = sp.csr_matrix((data, cols, ptr), shape=(len(ptr) - 1, max(len(vocab), 1)))
    m.sum_duplicates()
    return m, vocab


class _TextIndexer:
    """Accumulates texts batch by batch into term-major postings, with the compiled kernels of
    ``_build_kernels`` (see its docstring for why analysing each distinct whitespace-free piece once gives the
    same terms as analysing each text)."""

    def __init__(self, analyzer: Analyzer) -> None:
        from . import _build_kernels

        self.k = _build_kernels.kernels()
        self.analyzer = analyzer
        self.table = np.full(1 << 16, -1, dtype=np.int32)  # hash slot -> piece id
        self.p_hash = np.zeros(1 << 14, dtype=np.uint64)  # per piece: hash, bytes offset, bytes length
        self.p_off = np.zeros(1 << 14, dtype=np.int64)
        self.p_len = np.zeros(1 << 14, dtype=np.int64)
        self.p_bytes = np.zeros(1 << 20, dtype=np.uint8)
        self.state = np.zeros(6, dtype=np.int64)  # pieces, bytes used, then _scan's resume point
        self.piece_ptr = array("q", [0])  # terms of piece p: piece_terms[piece_ptr[p] : piece_ptr[p + 1]]
        self.piece_terms = array("i")
        self.vocab: list[str] = []
        self.term_ids: dict[str, int] = {}
        self.last = np.full(1 << 16, -1, dtype=np.int64)  # per term: last row seen, and its pair's slot
        self.slot_of = np.zeros(1 << 16, dtype=np.int64)
        self.terms: list[np.ndarray] = []  # per batch: (term, tf) pairs, row by row
        self.tfs: list[np.ndarray] = []
        self.doc_terms: list[np.ndarray] = []  # per batch: pairs of each row
        self.doc_lens: list[np.ndarray] = []
        self.rows = 0

    def add(self, texts: Sequence[str]) -> None:
        """Index ``texts`` as the next rows."""
        if not texts:
            return
        joined = "\x00".join(texts)
        if joined.count("\x00") != len(texts) - 1:  # NUL inside a text: like a space, never part of a token
            joined = "\x00".join(t.replace("\x00", " ") for t in texts)
        data = np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        k = self.k
        ids = np.empty(len(data) // 2 + 1, dtype=np.int32)
        doc_ptr = np.empty(len(texts) + 1, dtype=np.int64)
        known = int(self.state[0])
        self.state[2:] = 0
        while not k["scan"](data, _CUT, ids, doc_ptr, self.table, self.p_hash, self.p_off, self.p_len, self.p_bytes,
                            self.state):
            self._grow(int(self.state[5]))
        n = int(self.state[4])
        ids = ids[:n]
        self._analyze_new(known)
        piece_ptr = np.frombuffer(self.piece_ptr, dtype=np.int64).copy()
        piece_terms = np.frombuffer(self.piece_terms, dtype=np.int32).copy()
        if len(self.last) < len(self.vocab):
            grow = max(len(self.vocab), 2 * len(self.last)) - len(self.last)
            self.last = np.concatenate([self.last, np.full(grow, -1, dtype=np.int64)])
            self.slot_of = np.concatenate([self.slot_of, np.zeros(grow, dtype=np.int64)])
        total = int(np.diff(piece_ptr)[ids].sum()) if n else 0
        out_term = np.empty(total, dtype=np.int32)
        out_tf = np.empty(total, dtype=np.int32)
        doc_len = np.empty(len(texts), dtype=np.int32)
        doc_terms = np.empty(len(texts), dtype=np.int32)
        m = int(k["count"](ids, doc_ptr, len(texts), self.rows, piece_ptr, piece_terms, self.last, self.slot_of,
                           out_term, out_tf, doc_len, doc_terms))
        self.terms.append(out_term[:m].copy())
        self.tfs.append(np.minimum(out_tf[:m], np.iinfo(np.uint16).max).astype(np.uint16))
        self.doc_lens.append(doc_len)
        self.doc_terms.append(doc_terms)
        self.rows += len(texts)

    def _grow(self, need_bytes: int) -> None:
        n, used = int(self.state[0]), int(self.state[1])
        if n >= len(self.p_hash):
            size = 2 * len(self.p_hash)
            self.p_hash = np.resize(self.p_hash, size)
            self.p_off = np.resize(self.p_off, size)
            self.p_len = np.resize(self.p_len, size)
        if used + need_bytes > len(self.p_bytes):
            self.p_bytes = np.resize(self.p_bytes, max(2 * len(self.p_bytes), used + need_bytes))
        if 2 * (n + 1) > len(self.table):
            self.table = np.full(2 * len(self.table), -1, dtype=np.int32)
            self.k["rehash"](self.p_hash, n, self.table)

    def _analyze_new(self, first: int) -> None:
        """Terms of pieces ``first ..`` (new in this batch, in order of first occurrence), so that term ids
        are given in the order the plain path gives them."""
        n = int(self.state[0])
        if n == first:
            return
        base = int(self.p_off[first])
        blob = self.p_bytes[base : int(self.state[1])].tobytes()
        offs = (self.p_off[first:n] - base).tolist()
        lens = self.p_len[first:n].tolist()
        term_ids, vocab, analyze = self.term_ids, self.vocab, self.analyzer.analyze_document
        for off, ln in zip(offs, lens):
            for term in analyze(blob[off : off + ln].decode("utf-8", "surrogatepass")):
                i = term_ids.get(term)
                if i is None:
                    i = term_ids[term] = len(vocab)
                    vocab.append(term)
                self.piece_terms.append(i)
            self.piece_ptr.append(len(self.piece_terms))

    def finish(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(vocab, indptr int64 [V + 1], indices int32, tf uint8/uint16, doc_len int32 [rows])``."""
        terms = _concat_and_clear(self.terms, np.int32)  # one list at a time: bounds the peak memory
        tfs = _concat_and_clear(self.tfs, np.uint16)
        doc_len = _concat_and_clear(self.doc_lens, np.int32)
        doc_terms = _concat_and_clear(self.doc_terms, np.int32)
        n_cols = max(len(self.vocab), 1)  # as tf_matrix: one empty column when there is no term at all
        tf_dtype = np.uint8 if (len(tfs) == 0 or int(tfs.max()) <= 255) else np.uint16
        indptr = np.empty(n_cols + 1, dtype=np.int64)
        indices = np.empty(len(terms), dtype=np.int32)
        tf = np.empty(len(terms), dtype=tf_dtype)
        self.k["postings"](doc_terms, terms, tfs, n_cols, indptr, indices, tf, np.iinfo(tf_dtype).max)
        return list(self.vocab), indptr, indices, tf, doc_len


_CUT = np.zeros(256, dtype=np.bool_)  # bytes that end a piece: NUL and ASCII whitespace (see _build_kernels)
_CUT[[0, 9, 10, 11, 12, 13, 32]] = True


def _per_term_sum(flags: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """How many postings of each term have ``flags`` (bool [postings]) set: int64 [terms]."""
    out = np.zeros(len(indptr) - 1, dtype=np.int64)
    full = np.flatnonzero(indptr[:-1] < indptr[1:])
    if len(full):
        out[full] = np.add.reduceat(flags.view(np.uint8), indptr[full], dtype=np.int64)
    return out


def _concat_and_clear(arrays: list[np.ndarray], dtype) -> np.ndarray:
    out = np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)
    arrays.clear()
    return out


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest positive scores, best first, ties by lower index."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) == 0:
        return positive
    if len(positive) > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        kth = scores[positive[part]].min()
        cand = positive[scores[positive] >= kth]  # every row tied with the k-th, so the tie-break is exact
    else:
        cand = positive
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:k]
