"""Compiled BM25 query kernel (numba), compiled on first use and cached on disk.

``score_top_k`` adds the query terms' posting lists into a per-row accumulator and keeps the top k with a heap:
O(postings + touched * log k) for short lists; for long ones (an eighth of the rows or more) it reads every row
once in order instead of listing the rows touched, about twice as fast on a million rows
(``benchmarks/bm25_query.py`` run against both kernels). Both ways sum each row's score in the same order, so the
scores and the top k are the same.

Start-up: importing numba and loading the cached kernel costs more than a whole query on a small index
(``LOAD_COST_S``, below), so this module does not import it; ``compiled()`` does, on the first query against
an index of at least ``MIN_ROWS`` rows (smaller indexes use the numpy path in ``sparse.py``, which ranks
identically: ``tests/index/test_sparse.py``, until numpy has spent ``LOAD_COST_S`` scoring them or the kernel is
loaded anyway). The compiled machine code is cached on disk (numba ``cache=True``): next to this file in
``__pycache__`` when that folder is writable, else in numba's per-user cache folder (``NUMBA_CACHE_DIR``
overrides it), so a read-only install compiles once per user, not once per process; with no writable folder at
all it compiles in each process rather than fail. ``HAVE_NUMBA`` is False when numba is missing.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Callable

import numpy as np

HAVE_NUMBA = importlib.util.find_spec("numba") is not None  # the accelerate extra
MIN_ROWS = 50_000  # indexes with fewer rows are scored by numpy: cheaper than loading numba for one query
# CPU seconds a process spends once to import numba and load the cached kernel (BENCHMARKS.md, "BM25 against its
# peers", where openbook's time goes: 0.78 s). A smaller index switches to the kernel when numpy has spent this
# long scoring it (or the kernel is loaded already): a batch of thousands of queries, or a long-lived server, then
# pays the load once and then runs about 7 times faster per query (BENCHMARKS.md, "BM25 against its peers", a
# small index in a long-lived process: ``benchmarks/bm25_batches.py``); a single query never pays it.
LOAD_COST_S = 0.8

_compiled: Callable[..., int] | None = None
_load_lock = threading.Lock()  # one thread loads the kernel; others reaching it at once wait, then use it


def loaded() -> bool:
    """Whether ``compiled()`` has run in this process (numba imported, the kernel loaded): using it is then free."""
    return _compiled is not None


def compiled() -> Callable[..., int]:
    """The numba-compiled ``score_top_k`` (imports numba and loads or compiles the kernel on first call).

    Safe to call from several threads at once: the first loads the kernel, the others wait for it.

    Raises:
        ImportError: numba is not installed (check ``HAVE_NUMBA`` first).
    """
    kernel = _compiled
    if kernel is None:
        with _load_lock:
            kernel = _compiled if _compiled is not None else _load()
    return kernel


def _load() -> Callable[..., int]:
    """Compile the helpers and the kernel, publish them and return the kernel (the caller holds ``_load_lock``)."""
    global _compiled, _worse, _push, _top_k_scan, _top_k_touched
    from numba import njit

    try:
        cache_worse = njit(cache=True, nogil=True, inline="always")(_worse)
        cache_push = njit(cache=True, nogil=True, inline="always")(_push)
        cache_scan = njit(cache=True, nogil=True, fastmath=True)(_top_k_scan)
        cache_touched = njit(cache=True, nogil=True, fastmath=True)(_top_k_touched)
        cache_kernel = njit(cache=True, nogil=True, fastmath=True)(_score_top_k)
    except RuntimeError:  # no writable cache folder at all (read-only install and home): compile each time
        cache_worse = njit(nogil=True, inline="always")(_worse)
        cache_push = njit(nogil=True, inline="always")(_push)
        cache_scan = njit(nogil=True, fastmath=True)(_top_k_scan)
        cache_touched = njit(nogil=True, fastmath=True)(_top_k_touched)
        cache_kernel = njit(nogil=True, fastmath=True)(_score_top_k)
    _worse = cache_worse  # the kernel calls the compiled helpers (looked up when the kernel compiles)
    _push = cache_push
    _top_k_scan = cache_scan
    _top_k_touched = cache_touched
    _compiled = cache_kernel
    return cache_kernel


def posting_weights(indptr: np.ndarray, indices: np.ndarray, tf: np.ndarray, idf: np.ndarray,
                    norm: np.ndarray) -> np.ndarray:
    """Each posting's BM25 weight, float32 [postings]: ``idf[t] * tf / (tf + norm[row])``, computed in float32
    exactly as the numpy path computes it per query, so both paths give identical scores. Precomputing it
    (bm25s does the same) takes the per-posting division and the random ``norm[row]`` read out of every query.
    """
    out = np.empty(len(tf), dtype=np.float32)
    counts = np.diff(np.asarray(indptr))
    step = 1 << 22  # postings per slice: bounds the temporaries at a few tens of MB
    term_of = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    for start in range(0, len(out), step):
        end = min(start + step, len(out))
        f = np.asarray(tf[start:end]).astype(np.float32)
        out[start:end] = idf[term_of[start:end]] * f / (f + norm[np.asarray(indices[start:end])])
    return out


def _worse(s1: float, r1: int, s2: float, r2: int) -> bool:
    """(s1, r1) ranks below (s2, r2): lower score, or equal score and higher row id."""
    return s1 < s2 or (s1 == s2 and r1 > r2)


def _push(s, d, heap_s, heap_r, size):
    """Offer row ``d`` with score ``s`` to the min-heap of the best ``len(heap_s)`` rows; returns its new size."""
    k = heap_s.shape[0]
    if size < k:
        pos = size
        size += 1
        while pos > 0:
            parent = (pos - 1) // 2
            if _worse(s, d, heap_s[parent], heap_r[parent]):
                heap_s[pos] = heap_s[parent]
                heap_r[pos] = heap_r[parent]
                pos = parent
            else:
                break
        heap_s[pos] = s
        heap_r[pos] = d
    elif _worse(heap_s[0], heap_r[0], s, d):
        pos = 0
        while True:
            c = 2 * pos + 1
            if c >= size:
                break
            if c + 1 < size and _worse(heap_s[c + 1], heap_r[c + 1], heap_s[c], heap_r[c]):
                c += 1
            if _worse(heap_s[c], heap_r[c], s, d):
                heap_s[pos] = heap_s[c]
                heap_r[pos] = heap_r[c]
                pos = c
            else:
                break
        heap_s[pos] = s
        heap_r[pos] = d
    return size


def _top_k_scan(indptr, indices, weights, ids, qtf, mask, use_mask, scores, heap_s, heap_r):
    """Many postings: add them without bookkeeping, then read every row in order against the k-th best score so
    far (a branch almost never taken, so the read runs at memory speed). Returns the heap's size."""
    k = heap_s.shape[0]
    size = 0
    for j in range(ids.shape[0]):
        t = ids[j]
        q = qtf[j]
        if use_mask:
            for p in range(indptr[t], indptr[t + 1]):
                d = indices[p]
                if mask[d]:
                    scores[d] += weights[p] * q
        else:  # the loop without the mask test
            for p in range(indptr[t], indptr[t + 1]):
                scores[indices[p]] += weights[p] * q
    threshold = 0.0  # positive scores, then only rows that beat the heap's worst
    n_rows = scores.shape[0]
    n_blocks = n_rows // 8
    for b in range(n_blocks + 1):
        b0 = 8 * b
        if b < n_blocks:  # a block of 8 rows is read as one maximum first: most blocks end there
            m = max(max(max(scores[b0], scores[b0 + 1]), max(scores[b0 + 2], scores[b0 + 3])),
                    max(max(scores[b0 + 4], scores[b0 + 5]), max(scores[b0 + 6], scores[b0 + 7])))
            if not m > threshold:
                continue
            b1 = b0 + 8
        else:
            b1 = n_rows
        for d in range(b0, b1):
            s = scores[d]
            if s > threshold:  # rows come in ascending order: a tie with the worst never displaces it
                size = _push(s, d, heap_s, heap_r, size)  # inlined by numba (inline="always")
                if size == k:
                    threshold = heap_s[0]
    scores[:] = 0.0
    return size


def _top_k_touched(indptr, indices, weights, ids, qtf, mask, use_mask, scores, touched, heap_s, heap_r):
    """Few postings: list the rows touched while adding, then read only them. Returns the heap's size."""
    size = 0
    n_touched = 0
    for j in range(ids.shape[0]):
        t = ids[j]
        q = qtf[j]
        for p in range(indptr[t], indptr[t + 1]):
            d = indices[p]
            if use_mask and not mask[d]:
                continue
            s = scores[d]
            touched[n_touched] = d  # branch-free: the slot is kept only when the row was untouched
            n_touched += s == 0.0
            scores[d] = s + weights[p] * q
    for i in range(n_touched):
        d = touched[i]
        s = scores[d]
        scores[d] = 0.0
        if s > 0.0:
            size = _push(s, d, heap_s, heap_r, size)
    return size


def _score_top_k(indptr, indices, weights, ids, qtf, mask, use_mask, scores, touched, out_rows, out_scores):
    """Score the rows of the postings of term ids ``ids`` and write the best ``len(out_rows)`` of them.

    Args:
        indptr, indices: term-major postings (CSC) of the index.
        weights: float32 [postings], each posting's BM25 weight ``idf * tf / (tf + norm)`` (``posting_weights``).
        ids: int64 distinct query term ids; qtf: float32 [len(ids)], how often each occurs in the query.
        mask, use_mask: bool [rows] visibility; rows with False are skipped when ``use_mask``.
        scores: float64 [rows] accumulator, all zero on entry and on return.
        touched: int32 [rows] scratch space.
        out_rows, out_scores: int64 / float32 [k] outputs, filled best first (ties: lower row first).

    Each row's score is summed in float64, in the order of ``ids``, whichever way is taken. With many postings
    (at least an eighth of the rows) they are added without bookkeeping and every row is then read in order
    (``_top_k_scan``); with few, the rows touched are listed while adding (a loop-carried dependency that costs
    on long lists, but is cheaper than reading every row) and only they are read (``_top_k_touched``).

    Returns:
        How many output slots were filled (rows with a positive score).
    """
    k = out_rows.shape[0]
    heap_s = np.empty(k, np.float64)
    heap_r = np.empty(k, np.int64)
    n_postings = 0
    for j in range(ids.shape[0]):
        n_postings += indptr[ids[j] + 1] - indptr[ids[j]]
    size = -1
    if 8 * n_postings >= scores.shape[0]:
        size = _top_k_scan(indptr, indices, weights, ids, qtf, mask, use_mask, scores, heap_s, heap_r)
    if size < 0:
        size = _top_k_touched(indptr, indices, weights, ids, qtf, mask, use_mask, scores, touched, heap_s, heap_r)
    by_row = np.argsort(heap_r[:size])
    by_score = np.argsort(-heap_s[:size][by_row], kind="mergesort")
    order = by_row[by_score]
    for i in range(size):
        out_rows[i] = heap_r[order[i]]
        out_scores[i] = heap_s[order[i]]
    return size
