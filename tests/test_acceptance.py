"""The main job's acceptance figures on real data: SciFact and CMRC 2018 (gated), and the Skyladder lab.

Skyladder is a development lab (answer work was kept or dropped by its figures), so its tests are marked ``lab``:
they gate on behaviour (access control, ingest cleaning) and only report the lab's figures (printed, and kept
as the test's user properties, which ``--junitxml`` writes)."""

from __future__ import annotations

import json
import random

import pytest

from openbook.api import Engine
from openbook.config import Config
from openbook.eval.beir import doc_ranking, load_beir
from openbook.eval.metrics import evaluate_run

pytestmark = pytest.mark.slow

# the BM25 figures; embedding all of SciFact or CMRC with the default embedder takes tens of minutes here
BM25_ONLY = Config().with_overrides({"embedding.enabled": False})


def _report(request, name: str, missed: list[str], total: int) -> None:
    """Report a lab figure (questions missed out of ``total``) without gating on it."""
    request.node.user_properties.append((name, {"missed": missed, "total": total}))
    print(f"Skyladder (development lab, reported only): {name}: {total - len(missed)}/{total}, missed {missed}")


@pytest.fixture(scope="module")
def lab(shared, tmp_path_factory):
    root = shared / "labs" / "skyladder"
    engine = Engine.open(tmp_path_factory.mktemp("lab") / "store", Config(), create=True)
    report = engine.ingest([root / "docs"])
    assert not report.failed and len(report.added) == 30
    questions = [json.loads(line) for line in (root / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    yield engine, questions
    engine.close()


@pytest.mark.lab
def test_lab_relevant_document_in_top_10(lab, request):
    engine, questions = lab
    misses, asked = [], 0
    for q in questions:
        if not q["answerable"] or q["trap"] == "synonym":
            continue
        asked += 1
        hits = engine.search(q["question"], k=10, roles=q["user_acl"])
        assert len(hits) <= 10
        if not any(h.doc_id.startswith(r) for h in hits for r in q["relevant"]):
            misses.append(q["id"])
    _report(request, "relevant document in the top 10", misses, asked)


@pytest.mark.lab
def test_lab_no_boilerplate_in_any_chunk(lab):
    engine, _ = lab
    texts = [r[0] for r in engine.store.conn.execute("SELECT text FROM chunks")]
    for needle in ("@context", "application/ld+json", "<script", "schema.org", "function(", "cookie"):
        assert not [t for t in texts if needle.lower() in t.lower()], needle


@pytest.mark.lab
def test_lab_acl_question(lab):
    # the access rule is behaviour, not a figure: the document a role may not see never reaches its context
    engine, questions = lab
    acl = [q for q in questions if q["trap"] == "acl"]
    denied = next(q for q in acl if not q["answerable"])
    allowed = next(q for q in acl if q["answerable"])
    a = engine.ask(denied["question"], roles=denied["user_acl"])
    assert all(not p.chunk.doc_id.startswith(allowed["relevant"][0]) for p in a.passages)
    assert all(not c.doc_id.startswith(allowed["relevant"][0]) for c in a.citations)
    b = engine.ask(allowed["question"], roles=allowed["user_acl"])
    assert any(p.chunk.doc_id.startswith(allowed["relevant"][0]) for p in b.passages)


def test_scifact_bm25_ndcg(shared, tmp_path):
    data = load_beir(shared / "datasets" / "scifact")
    with Engine.open(tmp_path / "store", BM25_ONLY, create=True) as engine:
        engine.ingest([data.corpus])
        qids = list(data.qrels)
        hits = engine.search_batch([data.queries[q] for q in qids], 300, load_chunks=False)
    run = {q: [d for d, _ in doc_ranking(h, 100)] for q, h in zip(qids, hits)}
    metrics = evaluate_run(run, data.qrels)
    print(f"SciFact BM25 nDCG@10 {metrics['ndcg@10']:.4f}")
    assert metrics["ndcg@10"] >= 0.685


def test_cmrc2018_recall_at_10(shared, tmp_path):
    data = load_beir(shared / "datasets" / "cmrc2018_dev")
    qids = sorted(data.qrels)
    random.Random(2018).shuffle(qids)
    qids = qids[:200]
    with Engine.open(tmp_path / "store", BM25_ONLY, create=True) as engine:
        engine.ingest([data.corpus])
        hits = engine.search_batch([data.queries[q] for q in qids], 50, load_chunks=False)
    run = {q: [d for d, _ in doc_ranking(h, 10)] for q, h in zip(qids, hits)}
    metrics = evaluate_run(run, {q: data.qrels[q] for q in qids})
    print(f"CMRC 2018 dev, 200 sampled questions: Recall@10 {metrics['recall@10']:.3f}")
    assert metrics["recall@10"] >= 0.9


# q02: the newer support answer says "Some older material, including the user manual chapter on versions and the
# Trash, still mentions a longer period": the manual is named as older (``context.named_as_older``), so its
# "Tick the items you want back." no longer comes first
@pytest.mark.lab
def test_lab_conflicts_and_versions_answered_from_the_newer_document(lab, request):
    engine, questions = lab
    missed, asked = [], 0
    for q in questions:
        if q["trap"] not in ("conflict", "dup") or not q["answerable"]:
            continue
        asked += 1
        a = engine.ask(q["question"], roles=q["user_acl"])
        ok = (not a.refused and all(s.lower() in a.text.lower() for s in q["must_contain"])
              and bool(a.citations) and a.citations[0].doc_id.startswith(q["relevant"][0]))  # newer cited first
        if not ok:
            missed.append(q["id"])
    assert asked
    _report(request, "conflicts and versions answered from the newer document", missed, asked)


@pytest.mark.lab
def test_lab_hybrid_finds_synonym_and_chinese_questions(lab, request):
    engine, questions = lab
    assert engine.effective_mode() == "hybrid"
    missed, asked = [], 0
    for q in questions:
        if q["answerable"] and q["trap"] in ("synonym", "cjk"):
            asked += 1
            hits = engine.search(q["question"], k=10, roles=q["user_acl"])
            if not any(h.doc_id.startswith(r) for h in hits for r in q["relevant"]):
                missed.append(q["id"])
    assert asked
    _report(request, "synonym and Chinese questions: relevant document in the hybrid top 10", missed, asked)


@pytest.mark.lab
def test_lab_chinese_question_answered_from_an_english_document(lab, request):
    engine, questions = lab
    # the Chinese questions whose only relevant document is not Chinese (doc-029/030 are the Chinese ones)
    cross = [q for q in questions if q["trap"] == "cjk" and q["answerable"]
             and not any(r in ("doc-029", "doc-030") for r in q["relevant"])]
    assert cross
    missed = []
    for q in cross:
        a = engine.ask(q["question"], roles=q["user_acl"])
        if a.refused or not all(s in a.text for s in q["must_contain"]) or not a.citations \
                or not a.citations[0].doc_id.startswith(q["relevant"][0]):
            missed.append(q["id"])
    _report(request, "Chinese questions answered from an English document", missed, len(cross))
