"""openbook's exceptions: one root, one subclass per pipeline stage.

The tree::

    OpenbookError
    ├── ConfigError          bad or unknown configuration key, bad value
    ├── MissingExtraError    a feature's optional packages are not installed; names the ``pip install`` extra
    ├── IngestError          a file could not be read or parsed (reported, batch continues)
    │   └── UnsupportedFormatError   not a failure: a file openbook does not read (type, binary); a skip
    ├── ChunkingError
    ├── IndexError_          an index could not be built or loaded
    │   └── ModelMismatchError   query embedder differs from the one the index was built with
    ├── StoreError           missing, empty, locked or incompatible store
    │   └── StoreVersionError
    ├── QueryError           empty query, bad --where expression, unknown mode
    ├── RetrievalError
    ├── GenerationError      an LLM backend failed or is unreachable
    └── EvaluationError      bad dataset folder, qrels or baseline

Every message says what was wrong, with the file / chunk / backend involved, and how to fix it.
"""

from __future__ import annotations


class OpenbookError(Exception):
    """Root of every error openbook raises on purpose."""


class ConfigError(OpenbookError):
    """A configuration file, environment variable or flag is unknown or has a bad value."""


class MissingExtraError(OpenbookError):
    """A feature needs packages of an optional extra that are not installed. The message is one line naming the
    feature and the command: ``PDF support needs the pdf extra: pip install 'openbook[pdf]'``.

    Attributes:
        extra: the extra's name (``pdf``, ``embed``, ...).
    """

    def __init__(self, message: str, extra: str) -> None:
        super().__init__(message)
        self.extra = extra

    def __reduce__(self):  # picklable across processes despite the second constructor argument
        return type(self), (str(self), self.extra)


class IngestError(OpenbookError):
    """A source file could not be turned into documents. The batch reports it and goes on."""


class UnsupportedFormatError(IngestError):
    """No loader handles this file (its type, or binary content): the ingest report lists it as skipped."""


class ChunkingError(OpenbookError):
    """A document could not be cut into chunks."""


class IndexError_(OpenbookError):  # trailing underscore: do not shadow the builtin IndexError
    """An index could not be built, saved or loaded."""


class ModelMismatchError(IndexError_):
    """The embedder asked for at query time is not the one the index was built with."""


class StoreError(OpenbookError):
    """The store folder is missing, empty, locked or damaged."""


class StoreVersionError(StoreError):
    """The store was written by an incompatible openbook version."""


class QueryError(OpenbookError):
    """The query or one of its filters is empty or malformed."""


class RetrievalError(OpenbookError):
    """A retriever failed while searching."""


class GenerationError(OpenbookError):
    """An answer could not be generated (LLM backend unreachable, timed out, or malformed output)."""


class EvaluationError(OpenbookError):
    """An evaluation dataset, qrels file or baseline report is missing or malformed."""
