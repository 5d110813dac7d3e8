"""Compiled helpers (numba) for building a BM25 index straight from texts (``sparse.build_from_texts``).

The analyzer's terms are local to whitespace: a token never spans a space, tab or line break, and every rule
that looks at a neighbouring character (clitics, digit-group commas, ``C#``/``C++``) treats whitespace exactly
as the start or end of the text (``Analyzer.analyze_document`` says so and ``tests/index/test_build_fast.py``
checks it). So the terms of a text are the concatenation of the terms of its *pieces*, the maximal runs of
non-whitespace characters, and each distinct piece needs analysing once. Here the pieces are found, hashed and
interned in the UTF-8 bytes of a batch of texts, without one Python object per piece; Python analyses only
the pieces never seen before (with the analyzer itself), and the per-document term frequencies and the
term-major postings are counted here too.

Only ASCII whitespace bytes (``\\t \\n \\v \\f \\r`` and space) cut pieces: other whitespace (no-break space,
ideographic space) stays inside a piece and is handled by the analyzer like any other character. A NUL byte
separates the texts of a batch (texts that contain NUL have it replaced by a space first: NUL, like a space,
is never part of a token).

Interning is exact: a 64-bit hash of the bytes picks the slot, and the bytes are compared with the stored
piece.

Like ``_bm25_kernels``, numba is imported on first use and the machine code is cached on disk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_kernels: dict[str, Any] = {}


def kernels() -> dict[str, Any]:
    """The compiled kernels by name (imports numba and loads or compiles them on first call).

    Raises:
        ImportError: numba is not installed.
    """
    if not _kernels:
        from numba import njit

        built: dict[str, Any] = {}
        for name, fn in (("scan", _scan), ("rehash", _rehash), ("count", _count), ("postings", _postings)):
            try:
                built[name] = njit(cache=True, nogil=True)(fn)
            except RuntimeError:  # no writable cache folder: compile in each process rather than fail
                built[name] = njit(nogil=True)(fn)
        _kernels.update(built)  # all at once: another thread never sees a half-filled table
    return _kernels


def _scan(data, cut, ids, doc_ptr, table, p_hash, p_off, p_len, p_bytes, state):
    """Pieces of ``data`` (uint8, texts separated by NUL; ``cut`` marks the bytes that end a piece), in order, as piece ids written to ``ids``; an unseen
    piece gets the next id (so ids follow first occurrence) and its bytes are stored in ``p_bytes``.

    ``ids`` needs room for ``len(data) // 2 + 1`` pieces; ``doc_ptr`` (int64, one more than the number of
    texts) receives each text's first piece index. ``table`` (int32, power-of-two size, -1 = empty) maps hash
    slots to piece ids; ``p_hash``/``p_off``/``p_len`` describe each piece. ``state`` is ``[pieces, bytes used,
    byte position, text, pieces of this batch, bytes wanted]``, so that a call resumes where the last stopped.

    Returns True when ``data`` is done; False when an array is full (the caller grows the arrays, at least
    ``p_bytes`` to hold ``state[5]`` more bytes, and calls again).
    """
    mask = table.shape[0] - 1
    size = data.shape[0]
    mix1 = np.uint64(0xFF51AFD7ED558CCD)
    mix2 = np.uint64(0xC4CEB9FE1A85EC53)
    i = state[2]
    doc = state[3]
    n = state[4]
    if i == 0:
        doc_ptr[0] = 0
    while i < size:
        c = data[i]
        if c == 0:
            doc += 1
            doc_ptr[doc] = n
            i += 1
            continue
        if cut[c]:
            i += 1
            continue
        h = np.uint64(0)
        start = i
        while i < size:
            c = data[i]
            if cut[c]:
                break
            h = ((h << np.uint64(7)) | (h >> np.uint64(57))) ^ np.uint64(c)  # cheap per byte; mixed below
            i += 1
        ln = i - start
        h ^= h >> np.uint64(33)  # murmur3's finaliser: spreads every input bit over the slot bits
        h *= mix1
        h ^= h >> np.uint64(33)
        h *= mix2
        h ^= h >> np.uint64(33)
        slot = np.int64(h & np.uint64(mask))
        while True:
            pid = table[slot]
            if pid < 0:
                break
            if p_hash[pid] == h and p_len[pid] == ln:
                off = p_off[pid]
                same = True
                for k in range(ln):
                    if p_bytes[off + k] != data[start + k]:
                        same = False
                        break
                if same:
                    break
            slot = (slot + 1) & mask
        if pid < 0:
            count = state[0]
            used = state[1]
            if count >= p_hash.shape[0] or used + ln > p_bytes.shape[0] or 2 * (count + 1) > table.shape[0]:
                state[2] = start  # resume at this piece once the arrays have grown
                state[3] = doc
                state[4] = n
                state[5] = ln
                return False
            pid = count
            table[slot] = pid
            p_hash[pid] = h
            p_off[pid] = used
            p_len[pid] = ln
            for k in range(ln):
                p_bytes[used + k] = data[start + k]
            state[0] = count + 1
            state[1] = used + ln
        ids[n] = pid
        n += 1
    doc_ptr[doc + 1] = n
    state[2] = i
    state[3] = doc
    state[4] = n
    return True


def _rehash(p_hash, n, table):
    """Insert pieces ``0 .. n - 1`` into the empty (all -1) ``table``."""
    mask = table.shape[0] - 1
    for pid in range(n):
        slot = np.int64(p_hash[pid] & np.uint64(mask))
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = pid


def _count(ids, doc_ptr, n_docs, row0, piece_ptr, piece_terms, last, slot_of, out_term, out_tf, doc_len,
           doc_terms):
    """Term frequencies of each text: for text ``d`` (row ``row0 + d``), one ``(term, tf)`` pair per distinct
    term, in order of first occurrence, appended to ``out_*``; its term count into ``doc_len[d]`` and its
    number of distinct terms into ``doc_terms[d]``.

    ``last`` / ``slot_of`` (int64, one per term) are scratch space; ``last`` must not hold any of these rows.
    Returns the number of pairs written.
    """
    n_out = 0
    for d in range(n_docs):
        row = row0 + d
        total = 0
        first = n_out
        for j in range(doc_ptr[d], doc_ptr[d + 1]):
            pid = ids[j]
            for q in range(piece_ptr[pid], piece_ptr[pid + 1]):
                t = piece_terms[q]
                total += 1
                if last[t] != row:
                    last[t] = row
                    slot_of[t] = n_out
                    out_term[n_out] = t
                    out_tf[n_out] = 1
                    n_out += 1
                else:
                    out_tf[slot_of[t]] += 1
        doc_len[d] = total
        doc_terms[d] = n_out - first
    return n_out


def _postings(doc_terms, terms, tfs, n_terms, indptr, indices, tf_out, cap):
    """Term-major postings from the ``(term, tf)`` pairs of rows 0, 1, ... (``doc_terms[row]`` pairs each): a
    counting sort by term, stable, so rows ascend within a term; frequencies above ``cap`` are clipped."""
    counts = np.zeros(n_terms + 1, np.int64)
    for i in range(terms.shape[0]):
        counts[terms[i] + 1] += 1
    for t in range(n_terms):
        counts[t + 1] += counts[t]
    for t in range(n_terms + 1):
        indptr[t] = counts[t]
    i = 0
    for row in range(doc_terms.shape[0]):
        for _ in range(doc_terms[row]):
            t = terms[i]
            p = counts[t]
            counts[t] = p + 1
            indices[p] = row
            f = tfs[i]
            tf_out[p] = f if f <= cap else cap
            i += 1
