"""Scores tell nothing of documents a caller may not see: a real BM25 store (real files, analyzer, ingest and
retriever) searched anonymously, with and without restricted documents in it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.stores import bm25_engine  # noqa: E402

PUBLIC = {
    "notes/deposit.md": "# Deposits\n\nThe room deposit is refunded after the final inspection of the flat.\n",
    "notes/keys.md": "# Keys\n\nSpare keys are kept at the front desk and handed out against an ID card.\n",
}
RESTRICTED = {
    f"finance/escrow-{i}.md": ("---\nacl: [finance]\n---\n# Escrow\n\nThe escrow deposit ledger, quarter "
                               f"{i}: every deposit is held in escrow with the bank until the audit closes.\n")
    for i in range(1, 5)
}
QUERIES = ["escrow deposit", "deposit", "front desk keys", "final inspection"]  # hidden words, shared, absent


def _scores(engine, roles=()) -> list[list[tuple[str, float]]]:
    return [[(h.chunk_id, h.score) for h in hits]
            for hits in engine.search_batch(QUERIES, 5, mode="bm25", roles=list(roles))]


def test_an_anonymous_search_scores_the_same_with_and_without_restricted_documents(tmp_path):
    with bm25_engine(tmp_path / "with", {**PUBLIC, **RESTRICTED}) as engine:
        with_hidden = _scores(engine)
        finance = _scores(engine, ["finance"])
        assert engine.stats(roles=[])["documents"] == len(PUBLIC)
    with bm25_engine(tmp_path / "without", PUBLIC) as engine:
        without = _scores(engine)
    assert all(with_hidden)  # every query finds a public note
    assert with_hidden == without  # the same chunks with the same scores: nothing tells of the hidden documents
    assert finance[0][0][1] != with_hidden[0][0][1] or finance[0][0][0] != with_hidden[0][0][0]  # finance sees them
