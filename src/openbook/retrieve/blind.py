"""Which fused chunks the BM25 leg cannot see: text in a script the query has none of.

BM25 matches the analyzer's terms, and no term of a query in one script (an English question) occurs in a
chunk written in another (a Chinese guide): such a chunk gets no BM25 rank whatever its content, and plain
reciprocal rank fusion then scores it by its dense rank alone, half of what a chunk both legs rank alike gets.
In a corpus of several languages the one document that answers a question in another language is thereby
pushed out of the top k by any same-language chunk that shares a few common words with the question.
``blind_chunks`` names those chunks; the retriever gives the dense leg's best of them, in the blind leg, the rank
the dense leg gave it (``openbook.retrieve.fusion.rrf``'s ``blind``; ``Retriever._blind_to_bm25``). A corpus in
one script is unaffected.
"""

from __future__ import annotations

from typing import Sequence

from ..scripts import FAMILIES, family_of
from ..types import Hit

SCRIPT_FAMILIES = FAMILIES
"""The script families the BM25 analyzer reads apart (``openbook.scripts.FAMILIES``): Latin, CJK (Han and kana,
both cut into character bigrams, so a Chinese query can match Japanese text) and each other script of
``openbook.scripts.OTHER_SCRIPTS`` (Hangul, Cyrillic, Arabic, Hebrew, Greek, Devanagari, Thai)."""

MAX_DENSE_RANK = 3
"""Only a chunk the dense leg ranks among its first ``MAX_DENSE_RANK`` is imputed: across languages the cosines
run lower than within one, so a chunk of another script that still ranks among the very best is about the
question; an unrelated one (a menu in a mixed corpus, ranked 7th for a password question) is left as plain RRF
ranks it. Not fitted: no public set mixes scripts, so public data cannot choose the bound. On the public sets it
makes no difference: running ``Retriever._blind_to_bm25`` with the limit raised to 10 (2026-12-01, one ``search``
per question), HotpotQA dev 500 has no cross-script chunk among the dense leg's first ten for any of its 500
questions, and CMRC 2018 dev (the seed-7 sample and 300 other questions) 10 of 500, one within the first 3, with the
same answers at a limit of 0, 3 or 10 (8 of the 10 contain gold each time). The value is a hand-set bound, to be
fitted once a public mixed-script set exists, or the imputation removed if it never earns its place there."""

SAMPLE_CHARS = 2000
"""A chunk's script is read on its first characters (a chunk's text is a few hundred words)."""


def scripts(text: str) -> set[str]:
    """The script families (``SCRIPT_FAMILIES`` names) that occur among ``text``'s letters."""
    return {name for name, pattern in SCRIPT_FAMILIES if pattern.search(text)}


def main_script(text: str) -> str | None:
    """The script family with the most letters in ``text[:SAMPLE_CHARS]``; None when it has none of them."""
    return family_of(text[:SAMPLE_CHARS])


def blind_chunks(query: str, hits: Sequence[Hit]) -> set[str]:
    """Chunk ids of ``hits`` (with ``Hit.chunk`` attached; others are skipped) whose text is mostly in a script
    family that ``query`` has no letter of: the BM25 leg cannot match any of their words."""
    asked = scripts(query)
    if not asked:
        return set()
    return {h.chunk_id for h in hits if h.chunk is not None
            and (main_script(h.chunk.text) or next(iter(asked))) not in asked}
