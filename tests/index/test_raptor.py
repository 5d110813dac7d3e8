"""RAPTOR hierarchical summaries (``openbook.index.raptor``, ``openbook.retrieve.raptor``) on a small real
handbook corpus (tests/data/handbook): the tree, access lists, search visibility, and answers that cite the
summaries' children."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.scripted_llm import Reply, ScriptedLLMServer  # noqa: E402

from openbook.api import Engine  # noqa: E402
from openbook.config import Config, EmbeddingConfig, IndexConfig, LLMConfig  # noqa: E402
from openbook.index.analyzer import Analyzer  # noqa: E402
from openbook.index.raptor import ExtractiveSummarizer, RaptorTree, build_tree, lsa_vectors  # noqa: E402
from openbook.types import Chunk  # noqa: E402

HANDBOOK = Path(__file__).resolve().parents[1] / "data" / "handbook"
BROAD = "what does this handbook say about remote work?"
REMOTE_DOCS = {"remote-work-policy.md", "home-office-equipment.md", "remote-security.md", "expenses.md"}


def _config(**index) -> Config:
    return Config(embedding=EmbeddingConfig(enabled=False),
                  index=IndexConfig(raptor=True, raptor_cluster_size=3, **index))


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("raptor")
    with Engine.open(root / "s", _config(), create=True) as engine:
        report = engine.ingest([HANDBOOK])
        assert report.ok and report.raptor["nodes"] >= 2 and report.raptor["summarizer"] == "extractive"
    return root / "s"


def test_tree_reaches_a_root_and_every_node_knows_its_chunks(store):
    tree = RaptorTree.load(store / "raptor")
    assert tree is not None and tree.nodes
    with Engine.open(store, _config()) as engine:
        chunk_ids = {c.chunk_id for d in engine.documents() for c in engine.store.get_document_chunks(d["doc_id"])}
        assert tree.generation == engine.store.generation
    by_id = {n.node_id: n for n in tree.nodes}
    top = max(n.level for n in tree.nodes)
    assert [n for n in tree.nodes if n.level == top]  # a root level
    for n in tree.nodes:
        assert set(n.leaves) <= chunk_ids and len(n.children) >= 2
        below = [by_id[c].leaves if c in by_id else (c,) for c in n.children]
        assert set(n.leaves) == {leaf for part in below for leaf in part}  # leaves are exactly the subtree's


def test_broad_question_gets_a_summary_spanning_several_documents(store):
    with Engine.open(store, _config()) as engine:
        found = engine.summaries(BROAD, k=3)
        assert found
        best = found[0].node
        assert len(set(best.doc_ids) & REMOTE_DOCS) >= 2
        assert all(not c.startswith("raptor-") for c in best.leaves)
        hits = engine.search(BROAD, k=8)
        assert all(h.chunk is not None and not h.chunk_id.startswith("raptor-") for h in hits)
        assert any("raptor" in h.legs for h in hits)
        assert len({h.doc_id for h in hits} & REMOTE_DOCS) >= 3
        answer = engine.ask(BROAD)
        stored = {c.chunk_id for d in engine.documents() for c in engine.store.get_document_chunks(d["doc_id"])}
        assert {c.chunk_id for c in answer.citations} <= stored  # citations point at chunks, never a summary
        assert {p.chunk.chunk_id for p in answer.passages} <= stored


def test_unchanged_reingest_keeps_the_tree_and_off_means_no_summary_leg(store, tmp_path):
    with Engine.open(store, _config()) as engine:
        assert engine.ingest([HANDBOOK]).raptor == {"nodes": len(RaptorTree.load(store / "raptor").nodes),
                                                     "unchanged": True}
    with Engine.open(store, Config(embedding=EmbeddingConfig(enabled=False))) as engine:
        assert all("raptor" not in h.legs for h in engine.search(BROAD, k=8))


def test_a_summary_never_mixes_access_lists_and_hides_from_other_roles(tmp_path):
    folder = tmp_path / "docs"
    shutil.copytree(HANDBOOK, folder)
    secret = ("---\ntitle: Remote work for finance\nacl: [finance]\n---\n# Remote work for finance\n\nFinance staff "
              "working remotely must use the FINANCE-VAULT-9 token. Remote work in finance is limited to two days "
              "a week. Remote payroll approvals need the vault token.\n")
    (folder / "finance-remote.md").write_text(secret, encoding="utf-8")
    (folder / "finance-remote-2.md").write_text(secret.replace("two days", "one day").replace(
        "Remote work for finance", "Finance remote rules"), encoding="utf-8")
    with Engine.open(tmp_path / "s", _config(), create=True) as engine:
        engine.ingest([folder])
        tree = RaptorTree.load(tmp_path / "s" / "raptor")
        finance = {"finance-remote.md", "finance-remote-2.md"}
        for n in tree.nodes:  # a node holds finance documents only, or none
            assert set(n.doc_ids) <= finance or not set(n.doc_ids) & finance
        assert any(set(n.doc_ids) == finance for n in tree.nodes)
        for s in engine.summaries("remote work finance vault token", k=10):
            assert not set(s.node.doc_ids) & finance  # no role: no finance summary
        assert any(set(s.node.doc_ids) & finance
                   for s in engine.summaries("remote work finance vault token", k=10, roles=["finance"]))
        hits = engine.search("remote work finance vault token", k=10)
        assert not {h.doc_id for h in hits} & finance
        # a summary whose chunks are partly filtered out is hidden too
        for s in engine.summaries(BROAD, k=10, where=["title != Remote work policy"]):
            assert "remote-work-policy.md" not in s.node.doc_ids


def test_extractive_summary_takes_central_sentences_one_per_child_first():
    texts = ["Remote work is allowed three days a week. The kitchen closes at six.",
             "Remote workers get a home office allowance. Remote work needs a VPN connection.",
             "The VPN is required for remote work from cafes."]
    analyzer = Analyzer()
    text, sources = ExtractiveSummarizer(analyzer.analyze, sentences=3).summarize(texts)
    assert sorted(sources) == [0, 1, 2] and "kitchen" not in text
    assert text.count(".") == 3


def test_llm_summaries_through_the_scripted_server(tmp_path):
    chunks = [Chunk(f"c{i}", f"d{i % 3}.md", t) for i, t in enumerate(
        ["Remote work three days a week.", "Home office allowance 400 EUR.", "VPN for remote work.",
         "Kitchen cleaned at 18:00.", "Coffee machine descaled monthly.", "Fridge labels required."])]
    analyzer = Analyzer()
    vectors = lsa_vectors([c.text for c in chunks], analyzer.analyze)
    from openbook.llm.factory import get_generator
    from openbook.index.raptor import LLMSummarizer

    with ScriptedLLMServer() as server:
        server.push(*[Reply(f"Summary {i}.") for i in range(10)])
        gen = get_generator(LLMConfig(backend="openai", model="scripted", base_url=server.openai_url,
                                      api_key="t", max_retries=0))
        summarizer = LLMSummarizer(gen, ExtractiveSummarizer(analyzer.analyze))
        tree = build_tree(chunks, vectors, summarizer, generation=1, cluster_size=3, levels=2)
        assert summarizer.calls == len(tree.nodes) == len(server.requests) and summarizer.failed == 0
        body = server.requests[0].body
    system, user = body["messages"]
    assert system["role"] == "system" and "summar" in system["content"]
    assert user["content"].count("<passage>") == len(tree.nodes[0].children)
    assert all(n.text.startswith("Summary ") for n in tree.nodes)
    assert np.isfinite(vectors).all()


def test_a_store_with_embeddings_clusters_on_them_and_searches_summaries_densely(tmp_path):
    cfg = Config(index=IndexConfig(raptor=True, raptor_cluster_size=3))
    with Engine.open(tmp_path / "s", cfg, create=True) as engine:
        report = engine.ingest([HANDBOOK])
        assert report.chunks_embedded == report.chunks_added and report.raptor["nodes"] >= 2
        tree = RaptorTree.load(tmp_path / "s" / "raptor")
        assert tree.vectors is not None and tree.vectors.shape[0] == len(tree.nodes)
        assert tree.model == engine.embedder().name
        assert np.allclose(np.linalg.norm(tree.vectors, axis=1), 1.0, atol=1e-3)
        hits = engine.search(BROAD, k=8, mode="hybrid")
        assert any("raptor" in h.legs for h in hits) and all(h.chunk is not None for h in hits)
        assert len({h.doc_id for h in hits} & REMOTE_DOCS) >= 3


def test_other_raptor_settings_rebuild_the_tree(tmp_path):
    with Engine.open(tmp_path / "s", _config(), create=True) as engine:
        first = engine.ingest([HANDBOOK]).raptor
        assert engine.ingest([HANDBOOK]).raptor.get("unchanged") is True
    with Engine.open(tmp_path / "s", _config().with_overrides({"index.raptor_cluster_size": 2})) as engine:
        again = engine.ingest([HANDBOOK]).raptor
        assert "unchanged" not in again and again["nodes"] > first["nodes"]
        assert RaptorTree.load(tmp_path / "s" / "raptor").settings["cluster_size"] == 2


def test_llm_summaries_at_ingest_are_cached_for_the_next_build(tmp_path):
    from openbook.llm.factory import get_generator
    from openbook.ingest.raptor import rebuild

    with ScriptedLLMServer() as server:
        server.push(*[Reply(f"Summary {i} of handbook passages.") for i in range(20)])
        llm = LLMConfig(backend="openai", model="scripted", base_url=server.openai_url, api_key="t", max_retries=0)
        with Engine.open(tmp_path / "s", replace(_config(), llm=llm), create=True) as engine:
            first = engine.ingest([HANDBOOK]).raptor
            assert first["summarizer"] == "llm" and first["llm_calls"] == first["nodes"] == len(server.requests)
            assert first["llm_failed"] == 0 and first["llm_cached"] == 0
            again = rebuild(engine, get_generator(llm))
            assert again["llm_calls"] == 0 and again["llm_cached"] == first["nodes"]
            assert len(server.requests) == first["nodes"]
            assert all(n.text.startswith("Summary ") for n in RaptorTree.load(tmp_path / "s" / "raptor").nodes)
