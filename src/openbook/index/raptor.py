"""RAPTOR hierarchical summaries: cluster the chunks, summarise each cluster, recurse to a root.

After Sarthi et al. 2024, "RAPTOR: Recursive Abstractive Processing for Tree-Organized Retrieval". A broad
question ("what does this handbook say about remote work?") matches no single chunk well; a summary of a
cluster of related chunks from several documents matches it, and its children are the grounded passages.

Build (``build_tree``), level by level:

1. vectors of the level's items: the store's chunk embeddings when it has them, else LSA (a truncated SVD of
   the items' tf-idf term matrix, ``LSA_DIM`` dimensions) so a BM25-only store can build a tree too; summary
   nodes get the mean of their children's vectors.
2. k-means (``scipy.cluster.vq.kmeans2``, random-point seeding, fixed seed) with ``k = ceil(n / cluster_size)``.
   RAPTOR's paper uses Gaussian mixtures over UMAP-reduced vectors with soft assignment; k-means with hard
   assignment is the simpler choice kept here (one parent per node, so citations are a tree).
3. a summary per cluster of two or more items: an LLM's (``LLMSummarizer``) when configured, else extractive
   (``ExtractiveSummarizer``): the cluster's most central sentences (tf-idf cosine to the cluster centroid),
   at most one per child first, so the summary spans the cluster's documents.
4. recurse on the summaries until one node is left or ``levels`` levels are built.

Access lists: chunks are clustered only with chunks of documents that have the same access list (and none with
none), so a summary never mixes text some reader may not see with text they may. At search time a summary is
visible only when every chunk under it is visible to the query's roles and filters (fail closed: a chunk no
longer in the index hides the summary).

A summary node is never a passage: it carries its leaf chunk ids, and search brings those children in (see
``openbook.retrieve.raptor``), so an answer built on a summary cites the chunks under it.

Built after an ingest by ``openbook.ingest.raptor.rebuild``; searched by ``openbook.retrieve.raptor``.

Folder layout (``RaptorTree.save``, in ``<store>/raptor``): ``nodes.json`` (format, generation, the nodes) and, with embeddings,
``vectors.npy`` (float32 [nodes, dim], the summaries' own embeddings).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ..chunking import split_sentences
from ..files import write_json_atomic
from ..types import Chunk, content_hash

__all__ = ["RaptorNode", "RaptorTree", "Summarizer", "ExtractiveSummarizer", "LLMSummarizer", "build_tree",
           "FORMAT", "FOLDER"]

FORMAT = "openbook-raptor/1"
FOLDER = "raptor"
"""The tree's folder inside the store folder (``openbook.store.LocalIndex.path``)."""
LSA_DIM = 64
"""Dimensions of the LSA vectors a store without embeddings clusters on."""

SUMMARY_SENTENCES = 4
"""Sentences of an extractive summary."""

MAX_SENTENCE_CHARS = 400
MAX_SUMMARY_INPUT_CHARS = 12_000
"""Characters of children's text an LLM summary request holds at most (each child cut to its share)."""

@dataclass(frozen=True)
class RaptorNode:
    """One summary node.

    Attributes:
        node_id: ``raptor-`` and 20 hex digits of the hash of its children's ids.
        level: 1 for a summary of chunks, 2 for a summary of level-1 nodes, ...
        text: the summary (indexed and searchable, never shown as a citable passage).
        children: ids of the chunks (level 1) or nodes (higher levels) it summarises.
        leaves: the chunk ids under it, most central first (sources of the summary's sentences lead).
        doc_ids: the documents of its leaves, in first-leaf order.
    """

    node_id: str
    level: int
    text: str
    children: tuple[str, ...]
    leaves: tuple[str, ...]
    doc_ids: tuple[str, ...]


@dataclass
class RaptorTree:
    """The summary nodes of one index generation (``generation``), bottom level first."""

    generation: int
    nodes: list[RaptorNode] = field(default_factory=list)
    vectors: np.ndarray | None = None  # float32 [len(nodes), dim], unit length; None without embeddings
    model: str = ""  # the embedder of ``vectors``; the summarizer's name is in ``summarizer``
    summarizer: str = ""
    settings: dict[str, Any] = field(default_factory=dict)  # what it was built with; a change rebuilds it

    def save(self, folder: Path) -> None:
        """Write ``nodes.json`` (and ``vectors.npy``) into ``folder``; files are replaced atomically."""
        folder.mkdir(parents=True, exist_ok=True)
        if self.vectors is not None:
            tmp = folder / "vectors.tmp.npy"
            np.save(tmp, self.vectors.astype(np.float32))
            tmp.replace(folder / "vectors.npy")
        elif (folder / "vectors.npy").exists():
            (folder / "vectors.npy").unlink()
        write_json_atomic(folder / "nodes.json", {
            "format": FORMAT, "generation": self.generation, "model": self.model, "summarizer": self.summarizer,
            "settings": self.settings,
            "nodes": [asdict(n) for n in self.nodes]})

    @classmethod
    def load(cls, folder: Path) -> "RaptorTree | None":
        """The tree in ``folder``, or None when there is none or it was written by another format."""
        try:
            data = json.loads((folder / "nodes.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if data.get("format") != FORMAT:
            return None
        nodes = [RaptorNode(n["node_id"], int(n["level"]), n["text"], tuple(n["children"]), tuple(n["leaves"]),
                            tuple(n["doc_ids"])) for n in data["nodes"]]
        vectors = np.load(folder / "vectors.npy") if (folder / "vectors.npy").exists() else None
        if vectors is not None and len(vectors) != len(nodes):
            vectors = None
        return cls(int(data["generation"]), nodes, vectors, data.get("model", ""), data.get("summarizer", ""),
                   dict(data.get("settings") or {}))


class Summarizer(Protocol):
    """Summarises one cluster: the children's texts in, one summary and the children it drew on out."""

    name: str

    def summarize(self, texts: Sequence[str]) -> tuple[str, list[int]]:
        """``(summary, sources)``: sources are indexes into ``texts``, most important first."""
        ...


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if not line or line.startswith(("#", "|")):
            continue
        sents = [line[a:b] for a, b in split_sentences(line)]  # the chunker's splitter (BlingFire)
        out.extend(s[:MAX_SENTENCE_CHARS] for s in sents if len(s.split()) >= 4)
    return out


class ExtractiveSummarizer:
    """The cluster's most central sentences (tf-idf cosine to the centroid of all its sentences), at most one
    per child until every child has given one, in the children's order.

    Args:
        analyze: the analyzer's terms of a text (stemmed, stop words removed).
        sentences: sentences to keep.
    """

    name = "extractive"

    def __init__(self, analyze: Callable[[str], list[str]], sentences: int = SUMMARY_SENTENCES) -> None:
        self.analyze, self.n = analyze, sentences

    def summarize(self, texts: Sequence[str]) -> tuple[str, list[int]]:
        import scipy.sparse as sp

        sents: list[tuple[int, str]] = [(i, s) for i, t in enumerate(texts) for s in _sentences(t)]
        if not sents:
            sents = [(i, " ".join(t.split())[:MAX_SENTENCE_CHARS]) for i, t in enumerate(texts) if t.strip()]
        if not sents:
            return "", []
        m = _tfidf([sent for _, sent in sents], self.analyze)
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        m = sp.diags(1.0 / norms) @ m
        centroid = np.asarray(m.mean(axis=0)).ravel()
        score = m @ centroid
        order = sorted(range(len(sents)), key=lambda r: (-score[r], r))
        chosen: list[int] = []
        used: set[int] = set()
        for r in order:  # one sentence per child first, so the summary spans the cluster
            if len(chosen) >= self.n:
                break
            if sents[r][0] not in used:
                chosen.append(r)
                used.add(sents[r][0])
        for r in order:
            if len(chosen) >= self.n:
                break
            if r not in chosen:
                chosen.append(r)
        sources = list(dict.fromkeys(sents[r][0] for r in chosen))
        text = " ".join(sents[r][1] for r in sorted(chosen))
        return text, sources


class LLMSummarizer:
    """A summary written by a chat model (``openbook.llm.Generator``); the children it drew on are
    all of them, in order (an abstractive summary names no sources). Falls back to ``fallback`` when a call
    fails; ``calls`` and ``failed`` count the requests."""

    name = "llm"
    system = ("You summarise passages for a search index. Write a short, factual summary (at most five "
              "sentences) of what the passages below say together: the topics, names, numbers and rules they "
              "cover. Write only the summary.")

    def __init__(self, generator: Any, fallback: Summarizer, max_tokens: int = 300) -> None:
        self.generator, self.fallback, self.max_tokens = generator, fallback, max_tokens
        self.calls = self.failed = 0

    def summarize(self, texts: Sequence[str]) -> tuple[str, list[int]]:
        from ..errors import GenerationError

        share = max(200, MAX_SUMMARY_INPUT_CHARS // max(len(texts), 1))
        body = "\n\n".join(f"<passage>\n{t[:share]}\n</passage>" for t in texts)
        self.calls += 1
        try:
            reply = self.generator.generate([{"role": "system", "content": self.system},
                                             {"role": "user", "content": body}], max_tokens=self.max_tokens)
        except GenerationError:
            self.failed += 1
            return self.fallback.summarize(texts)
        text = " ".join(reply.split())[:2000]
        return (text, list(range(len(texts)))) if text else self.fallback.summarize(texts)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return (v / n).astype(np.float32)


def _tfidf(texts: Sequence[str], analyze: Callable[[str], list[str]]):
    """The tf-idf matrix of ``texts`` (scipy CSR, float64, [len(texts), vocabulary]): tf ``1 + ln(count)``, idf
    ``ln((1 + n) / (1 + df)) + 1`` (scikit-learn's smoothed, sublinear tf-idf), rows not normalised."""
    import scipy.sparse as sp

    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for r, t in enumerate(texts):
        counts: dict[int, int] = {}
        for term in analyze(t):
            j = vocab.setdefault(term, len(vocab))
            counts[j] = counts.get(j, 0) + 1
        for j, c in counts.items():
            rows.append(r)
            cols.append(j)
            vals.append(1.0 + math.log(c))
    m = sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), max(len(vocab), 1)), dtype=np.float64)
    df = np.bincount(m.indices, minlength=m.shape[1])
    return m.multiply(np.log((1 + len(texts)) / (1 + df)) + 1.0).tocsr()


def lsa_vectors(texts: Sequence[str], analyze: Callable[[str], list[str]], dim: int = LSA_DIM) -> np.ndarray:
    """Unit LSA vectors of ``texts``: float32 [len(texts), <= dim], a truncated SVD of the tf-idf matrix."""
    from scipy.sparse.linalg import svds

    m = _tfidf(texts, analyze)
    k = min(dim, min(m.shape) - 1)
    if k < 1:
        return _unit(m.toarray()[:, :dim].astype(np.float32))
    u, s, _ = svds(m, k=k, random_state=0)
    return _unit(u * s)


def _kmeans(vectors: np.ndarray, k: int) -> np.ndarray:
    """Cluster labels [n] (k random points as seeds, seed 0; scipy's k-means++ seeding is quadratic in k, 50 s
    of a 71 s build on HotpotQA dev 500); empty clusters are dropped by the caller."""
    from scipy.cluster.vq import kmeans2

    if k <= 1:
        return np.zeros(len(vectors), dtype=np.int64)
    _, labels = kmeans2(vectors.astype(np.float64), k, minit="points", seed=0, iter=20)
    return labels


def build_tree(chunks: Sequence[Chunk], vectors: np.ndarray, summarizer: Summarizer, *, generation: int,
               cluster_size: int = 8, levels: int = 3, embed: Callable[[list[str]], np.ndarray] | None = None,
               model: str = "") -> RaptorTree:
    """Build the summary levels above ``chunks``.

    Args:
        chunks: the index's chunks (any order; grouped by their documents' access lists).
        vectors: float [len(chunks), dim] to cluster on (embeddings, or ``lsa_vectors``).
        summarizer: writes each cluster's summary.
        generation: the index generation the tree belongs to.
        cluster_size: average items per cluster (k = ceil(n / cluster_size)).
        levels: the most summary levels built.
        embed: passage embedder for the summaries' own vectors (dense search of summaries); None for none.

    Returns:
        A ``RaptorTree``; empty when there are fewer than two chunks in every access group.
    """
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        acl = c.metadata.get("acl")
        key = json.dumps(sorted(str(a).casefold() for a in acl) if isinstance(acl, list) else acl, default=str)
        groups.setdefault(key, []).append(i)
    unit = _unit(np.asarray(vectors, dtype=np.float32))
    nodes: list[RaptorNode] = []
    for _, members in sorted(groups.items()):
        # an item: (id, text, vector, leaves, doc_ids)
        items = [(chunks[i].chunk_id, chunks[i].text, unit[i], (chunks[i].chunk_id,), (chunks[i].doc_id,))
                 for i in members]
        for level in range(1, levels + 1):
            if len(items) < 2:
                break
            k = max(1, math.ceil(len(items) / max(cluster_size, 2)))
            labels = _kmeans(np.vstack([it[2] for it in items]), k)
            next_items = []
            for label in sorted(set(int(x) for x in labels)):
                part = [items[j] for j in np.flatnonzero(labels == label)]
                if len(part) == 1:
                    next_items.append(part[0])  # a singleton rises unchanged
                    continue
                text, sources = summarizer.summarize([p[1] for p in part])
                if not text:
                    continue
                order = list(dict.fromkeys([*sources, *range(len(part))]))
                leaves = tuple(dict.fromkeys(leaf for j in order for leaf in part[j][3]))
                docs = tuple(dict.fromkeys(d for j in order for d in part[j][4]))
                children = tuple(p[0] for p in part)
                node = RaptorNode("raptor-" + content_hash(*children)[:20], level, text, children, leaves, docs)
                nodes.append(node)
                centroid = np.mean([p[2] for p in part], axis=0)
                next_items.append((node.node_id, text, centroid / (np.linalg.norm(centroid) or 1.0), leaves, docs))
            if len(next_items) >= len(items):
                break  # nothing merged: stop rather than loop
            items = next_items
    node_vectors = embed([n.text for n in nodes]) if embed is not None and nodes else None
    return RaptorTree(generation, nodes, node_vectors, model if node_vectors is not None else "", summarizer.name)
