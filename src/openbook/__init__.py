"""openbook: retrieval, cited answers and honest refusal over your own documents.

The public surface (imported on first use, so ``import openbook`` and the CLI start fast)::

    Engine, IngestReport, IngestInterrupted          openbook.api (the facade over the stages)
    Config                                           openbook.config
    Document, Chunk, Hit, Passage, Answer, Citation  openbook.types
    Store, Visibility, IndexSettings, CorpusStats,   openbook.store (the backend boundary, ``open_store``,
      EmbeddingInfo, open_store, BACKENDS              the backend registry)
    Retriever                                        openbook.retrieve.pipeline
    OpenbookError and its subclasses                 openbook.errors
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Engine": "openbook.api",
    "IngestReport": "openbook.api",
    "IngestInterrupted": "openbook.api",
    "Config": "openbook.config",
    "Document": "openbook.types",
    "Chunk": "openbook.types",
    "Hit": "openbook.types",
    "Passage": "openbook.types",
    "Answer": "openbook.types",
    "Citation": "openbook.types",
    "Store": "openbook.store",
    "Visibility": "openbook.store",
    "IndexSettings": "openbook.store",
    "CorpusStats": "openbook.store",
    "EmbeddingInfo": "openbook.store",
    "BACKENDS": "openbook.store",
    "open_store": "openbook.store",
    "Retriever": "openbook.retrieve.pipeline",
    "OpenbookError": "openbook.errors",
    "ConfigError": "openbook.errors",
    "IngestError": "openbook.errors",
    "StoreError": "openbook.errors",
    "StoreVersionError": "openbook.errors",
    "QueryError": "openbook.errors",
    "ModelMismatchError": "openbook.errors",
    "GenerationError": "openbook.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'openbook' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
