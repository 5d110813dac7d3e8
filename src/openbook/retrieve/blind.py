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
ranks it. Not calibrated on public data: no public set mixes scripts. How often it could fire was measured on
2026-12-01 by running ``Retriever._blind_to_bm25`` with the limit raised to 10 and reading the rank of the dense
leg's first cross-script chunk, one ``search`` per question: HotpotQA dev 500, none in 500 questions; CMRC 2018
dev (the seed-7 sample and 300 calibration questions) 10 of 500, 1 within the first 3, and its answers are the
same with 0, 3 or 10 (8 of 10 contain gold each time); the development labs: Marrowgate 4 of 40 at ranks 2-3 (the
Chinese guide for English questions, and English pages for Chinese ones), Skyladder 1 of 40 at rank 8. So 3 rests
on the lab cases and an unrelated menu ranked 7th."""

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
