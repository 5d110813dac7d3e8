"""The HTTP API against a real server on 127.0.0.1 with a real HTTP client (httpx)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from helpers.served import FINANCE_SECRET, Served, ServerThread, build_store, server_config

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How many days of annual leave do full-time employees get?"


def client(served: Served, who: str | None = "staff") -> httpx.Client:
    return httpx.Client(base_url=served.url, headers=served.auth(who) if who else {}, timeout=60)


def test_health_stats_and_openapi(served):
    with client(served) as c:
        assert c.get("/v1/health").json()["status"] == "ok"
        stats = c.get("/v1/stats").json()
        assert stats["documents"] == 7 and stats["keys_required"] is True  # 8 stored, finance/budget.md hidden
        assert stats["you"] == {"name": "staff", "roles": ["staff"], "write": False}
        assert stats["store"] == stats["location"] == "STORE"  # the server's path is not the caller's business
        paths = c.get("/openapi.json").json()["paths"]
    for path in ("/v1/search", "/v1/ask", "/v1/documents", "/v1/documents/{doc_id}", "/v1/ingest",
                 "/v1/chat/completions"):
        assert path in paths


def test_stats_counts_only_what_the_caller_may_see(served):
    # documents under an access list the caller lacks are not counted (their number is no one else's business)
    # and no other number (the manifest's rows and documents) tells it either: each equals what they can search
    from openbook.store import Visibility, open_store

    store = open_store(str(served.store))
    every_term = [[(t, 1.0) for t in store.get_vocabulary()]]  # every chunk holds one of them
    counts = {}
    for who, roles in (("public", []), ("staff", ["staff"]), ("finance", ["finance"]),
                       ("admin", ["staff", "finance"])):
        with client(served, who) as c:
            stats = c.get("/v1/stats").json()
            listed = c.get("/v1/documents").json()["documents"]
        assert stats["documents"] == len(listed) and stats["chunks"] == sum(d["chunks"] for d in listed)
        searchable = store.bm25_top_k(every_term, 10_000, Visibility.of(roles=roles))[0]
        assert (stats["documents"], stats["chunks"]) == (len({h.doc_id for h in searchable}), len(searchable))
        assert (stats["manifest"]["documents"], stats["manifest"]["rows"]) == (stats["documents"], stats["chunks"])
        counts[who] = {d["doc_id"] for d in listed}
    store.close()
    assert "staff/parking.md" not in counts["public"] and "finance/budget.md" not in counts["staff"]
    assert counts["public"] < counts["staff"] < counts["admin"] and "finance/budget.md" in counts["finance"]


def test_search_has_the_cli_json_shape(served):
    with client(served) as c:
        out = c.post("/v1/search", json={"query": "annual leave", "k": 3}).json()
    assert out["query"] == "annual leave"
    top = out["hits"][0]
    assert top["doc_id"] == "leave-policy.md" and "**leave**" in top["snippet"].lower()
    assert set(top) >= {"chunk_id", "doc_id", "score", "legs", "title", "section", "updated", "snippet",
                        "suspect_instructions"}
    assert out["notes"] == []
    assert out["applied"] == {"transforms": [], "hops": 2, "expansions": [], "contextualized": False,
                              "raptor": None, "dense_coverage": None, "words_matched": True,
                              "follow_up_queries": ["annual leave Leave Policy"],
                              "reordered": False, "identifier_query": None, "identifier_link": None,
                              "llm_query": None, "llm_note": ""}  # two hops by default


def test_ask_json_and_sse_stream(served):
    with client(served) as c:
        out = c.post("/v1/ask", json={"question": QUESTION}).json()
        assert out["applied"]["hops"] == 2 and out["applied"]["transforms"] == []
        assert out["refused"] is False and "25 days" in out["answer"] and out["citations"][0]["doc_id"] == \
            "leave-policy.md"
        assert 0.5 <= out["confidence"] <= 1  # the answerability score, as in `ask --json`
        with c.stream("POST", "/v1/ask", json={"question": QUESTION, "stream": True}) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            events = [line[7:] for line in r.iter_lines() if line.startswith("event: ")]
        assert events[0] == "token" and events[-1] == "answer"
        refusal = c.post("/v1/ask", json={"question": "What is the capital of Australia?"}).json()
    assert refusal["refused"] is True and refusal["citations"] == []


def test_follow_up_is_condensed_with_history(served):
    history = [{"role": "user", "content": "How much does the staff parking permit cost?"},
               {"role": "assistant", "content": "12 EUR per month [1]."}]
    with client(served) as c:
        out = c.post("/v1/ask", json={"question": "When is it renewed?", "history": history}).json()
    assert "parking" in out["question"] and out["question"].startswith("When is it renewed?")
    assert "January" in out["answer"]


def test_errors_keep_the_cli_messages_and_statuses(served):
    with client(served) as c:
        empty = c.post("/v1/search", json={"query": "  "})
        bad_filter = c.post("/v1/search", json={"query": "leave", "where": ["updated >> 2024"]})
        unknown_field = c.post("/v1/search", json={"query": "leave", "top": 3})
        missing = c.get("/v1/documents/nope.md")
    assert empty.status_code == 400
    assert empty.json()["error"] == {"type": "QueryError", "message": "empty query: give the words to search for",
                                     "code": "QueryError"}
    assert bad_filter.status_code == 400 and "cannot parse filter" in bad_filter.json()["error"]["message"]
    assert unknown_field.status_code == 422 and "top" in unknown_field.json()["error"]["message"]
    assert missing.status_code == 404


def test_keys_are_required_and_roles_cannot_be_widened(served, tmp_path):
    from openbook.server import KeyStore

    with client(served, None) as c:
        assert c.post("/v1/search", json={"query": "leave"}).status_code == 401
        assert c.post("/v1/search", json={"query": "leave"}, headers={"Authorization": "Bearer ob_wrong"}
                      ).status_code == 401
    with client(served) as c:  # a request naming roles is refused, not widened
        r = c.post("/v1/search", json={"query": "marketing budget", "roles": ["finance"]})
        assert r.status_code == 422 and "roles come from the API key" in r.json()["error"]["message"]
        r = c.post("/v1/search?roles=finance", json={"query": "marketing budget"})
        assert all(h["doc_id"] != "finance/budget.md" for h in r.json()["hits"])
    keys = KeyStore(served.store)
    token = keys.add("temp", ["finance"])
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {token}"}) as c:
        assert c.post("/v1/search", json={"query": "marketing budget"}).status_code == 200
        keys.revoke("temp")  # takes effect on the running server at the next request
        r = c.post("/v1/search", json={"query": "marketing budget"})
    assert r.status_code == 401 and "revoked" in r.json()["error"]["message"]


def test_staff_never_receives_a_finance_passage(served):
    """Search, ask, ask-stream, document list, document get: nothing of the finance-only document."""
    with client(served, "finance") as c:  # the control: the finance key does see it
        assert any(FINANCE_SECRET in (p["text"]) for p in
                   c.post("/v1/ask", json={"question": "What is the budget approval code?"}).json()["passages"])
    for who in ("staff", "public"):
        with client(served, who) as c:
            seen = [
                c.post("/v1/search", json={"query": "marketing budget approval code", "k": 50}).text,
                c.post("/v1/search", json={"query": "budget", "where": ["updated>=2026-01-01"]}).text,
                c.post("/v1/ask", json={"question": "What is the budget approval code?"}).text,
                c.post("/v1/ask", json={"question": "What is the marketing budget?", "stream": True}).text,
                c.get("/v1/documents").text,
                c.get("/v1/documents", params={"prefix": "finance/"}).text,
            ]
            assert c.get("/v1/documents/finance/budget.md").status_code == 404
        for text in seen:
            assert FINANCE_SECRET not in text and "finance/budget.md" not in text and "480,000" not in text


def test_documents_list_show_and_filters(served):
    with client(served) as c:
        docs = c.get("/v1/documents").json()["documents"]
        ids = [d["doc_id"] for d in docs]
        assert "staff/parking.md" in ids and ids == sorted(ids)
        assert [d["doc_id"] for d in c.get("/v1/documents", params={"prefix": "staff/"}).json()["documents"]] \
            == ["staff/parking.md"]
        dated = c.get("/v1/documents", params={"where": "updated>=2025-06-01"}).json()["documents"]
        assert "staff/parking.md" in [d["doc_id"] for d in dated]
        assert all(d["updated"] >= "2025-06-01" for d in dated)
        doc = c.get("/v1/documents/staff/parking.md").json()
    assert doc["title"] == "Staff parking" and doc["updated"] == "2025-09-01" and doc["chunks"][0]["text"]


def test_upload_size_limit_write_role_and_delete(served, tmp_path):
    upload = ("kiln-glossary.md", b"# Kiln glossary\n\nA cone is a pyrometric indicator of heat work.\n")
    with client(served, "staff") as c:
        r = c.post("/v1/ingest", files=[("files", upload)])
        assert r.status_code == 403 and "--write" in r.json()["error"]["message"]
    with client(served, "admin") as c:
        r = c.post("/v1/ingest", files=[("files", upload)])
        assert r.status_code == 200, r.text
        assert r.json()["added"] == ["kiln-glossary.md"]
        hits = c.post("/v1/search", json={"query": "pyrometric cone"}).json()["hits"]
        assert hits[0]["doc_id"] == "kiln-glossary.md"  # searchable at once, no restart
        big = c.post("/v1/ingest", files=[("files", ("big.txt", b"x" * (21 * 1024 * 1024)))])
        assert big.status_code == 413 and "big.txt" in big.json()["error"]["message"]
        bad = c.post("/v1/ingest", files=[("files", ("broken.pdf", b"%PDF-1.4 not really a pdf"))])
        assert bad.status_code == 422 and bad.json()["failed"][0][0].endswith("broken.pdf")
        gone = c.delete("/v1/documents/kiln-glossary.md")
        assert gone.json() == {"deleted": ["kiln-glossary.md"]}
        assert c.get("/v1/documents/kiln-glossary.md").status_code == 404
        assert not (served.store / "uploads" / "kiln-glossary.md").exists()


def test_an_upload_report_counts_only_what_the_writer_may_see(served):
    # the report's totals were the store's: a staff writer learned how many finance documents it holds
    from openbook.server import KeyStore

    token = KeyStore(served.store).add("staff-writer", ["staff"], write=True)
    upload = ("kiln-shelves.md", b"# Kiln shelves\n\nKiln wash keeps glaze drips off the shelves.\n")
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        report = c.post("/v1/ingest", files=[("files", upload)]).json()
        stats = c.get("/v1/stats").json()
        assert report["added"] == ["kiln-shelves.md"]
        assert (report["documents_total"], report["chunks_total"]) == (stats["documents"], stats["chunks"])
        with client(served, "admin") as admin:
            assert admin.get("/v1/stats").json()["documents"] > report["documents_total"]  # finance/budget.md
        assert c.delete("/v1/documents/kiln-shelves.md").json() == {"deleted": ["kiln-shelves.md"]}


def test_a_generation_written_by_another_process_is_served_without_restart(served, tmp_path):
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "clay-storage.md").write_text("# Clay storage\n\nStore clay in sealed zanzibar bags.\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENBOOK_EMBEDDING_ENABLED": "false"}
    with client(served) as c:
        before = c.get("/v1/health").json()["generation"]
        r = subprocess.run([sys.executable, "-m", "openbook", "ingest", str(extra), "--store", str(served.store),
                            "--json"], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["added"] == ["clay-storage.md"]
        assert c.get("/v1/health").json()["generation"] > before
        hits = c.post("/v1/search", json={"query": "zanzibar"}).json()["hits"]
        assert [h["doc_id"] for h in hits] == ["clay-storage.md"]
        r = subprocess.run([sys.executable, "-m", "openbook", "delete", "clay-storage.md", "--store",
                            str(served.store)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert c.post("/v1/search", json={"query": "zanzibar"}).json()["hits"] == []


def test_injected_instructions_are_flagged(served):
    with client(served) as c:
        out = c.post("/v1/search", json={"query": "kiln cleaning vacuum floor"}).json()
    flagged = {h["doc_id"]: h["suspect_instructions"] for h in out["hits"]}
    assert flagged["notes/kiln-cleaning.txt"] is True
    assert flagged.get("kiln-safety.txt", False) is False


def test_no_keys_serves_public_only_and_refuses_a_public_address(tmp_path):
    from openbook.server import create_app

    store = build_store(tmp_path)
    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, timeout=60) as c:
        ids = [d["doc_id"] for d in c.get("/v1/documents").json()["documents"]]
        assert "staff/parking.md" not in ids and "finance/budget.md" not in ids and "leave-policy.md" in ids
        stats = c.get("/v1/stats").json()
        assert stats["you"]["roles"] == [] and stats["documents"] == len(ids)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    r = subprocess.run([sys.executable, "-m", "openbook", "serve", "--store", str(store), "--host", "0.0.0.0"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "loopback only" in r.stderr and r.stderr.startswith("error: ")
    assert len(r.stderr.strip().splitlines()) == 1


def test_readers_do_not_wait_for_a_writer(served):
    """While another writer holds the store's write lock (an ingest in progress), search and ask still answer."""
    import time

    from openbook.api import Engine

    engine = Engine.open(served.store, server_config(served.store))
    try:
        with engine.store.transaction(), client(served) as c:
            t = time.monotonic()
            assert c.post("/v1/search", json={"query": "annual leave"}).status_code == 200
            assert c.post("/v1/ask", json={"question": QUESTION}).json()["refused"] is False
            assert time.monotonic() - t < 10  # SQLite's busy timeout is 30 s: no read waited for the lock
    finally:
        engine.close()


def test_search_says_when_its_hits_match_by_meaning_only(tmp_path):
    # with no word of the query in any document, the dense leg's hits came back with nothing said
    from openbook.api import Engine
    from openbook.config import load_config
    from openbook.server import create_app
    from openbook.shapes import MEANING_ONLY

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "trash.md").write_text("# Trash\n\nDeleted files stay in the Trash for 30 days.\n")
    store = tmp_path / "store"
    config = load_config(None, environ=None, flags={"store": str(store), "retrieval.wordnet": False})
    with Engine.open(store, config, create=True) as engine:
        assert engine.ingest([tmp_path / "docs"]).ok and engine.has_embeddings
    with ServerThread(create_app(store, config, readers=1)) as server, \
            httpx.Client(base_url=server.url, timeout=60) as c:
        blind = c.post("/v1/search", json={"query": "qwxyz plugh", "mode": "hybrid"}).json()
        worded = c.post("/v1/search", json={"query": "deleted files", "mode": "hybrid"}).json()
        dense = c.post("/v1/search", json={"query": "qwxyz plugh", "mode": "dense"}).json()
    assert blind["hits"] and blind["notes"] == [MEANING_ONLY] and blind["applied"]["words_matched"] is False
    assert worded["hits"] and worded["notes"] == [] and worded["applied"]["words_matched"] is True
    assert dense["notes"] == [] and dense["applied"]["words_matched"] is None  # no BM25 leg ran: nothing to say
