"""BEIR-format datasets: load queries and qrels, turn chunk hits into document rankings, write TREC run files.

A BEIR folder holds ``corpus.jsonl`` (``{"_id", "title", "text"}``), ``queries.jsonl`` (``{"_id", "text"}``)
and ``qrels/test.tsv`` (``query-id<TAB>corpus-id<TAB>score`` with a header line), as in Thakur et al. (2021).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from openbook.errors import EvaluationError
from openbook.types import Hit

from .metrics import Qrels


@dataclass(frozen=True)
class BeirDataset:
    """Paths and judged queries of one BEIR folder.

    Attributes:
        root: the dataset folder.
        name: the folder's name (``scifact``).
        corpus: path of ``corpus.jsonl``.
        queries: query id -> query text, judged queries only, in qrels order.
        qrels: query id -> document id -> graded relevance (judged queries whose line in ``queries.jsonl``
            was malformed are left out, and said so in ``warnings``).
        warnings: one line per skipped line of ``queries.jsonl`` and per judged query left out.
    """

    root: Path
    name: str
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    warnings: tuple[str, ...] = ()


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a BEIR qrels TSV (``query-id corpus-id score``, optional header).

    Returns:
        query id -> document id -> integer grade, queries in file order.

    Raises:
        EvaluationError: missing file, or a line without three fields or with a non-integer score.
    """
    if not path.is_file():
        raise EvaluationError(f"qrels file {path} not found; a BEIR dataset needs qrels/test.tsv")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\r\n").split("\t")
            if not line.strip():
                continue
            if lineno == 1 and fields[0].strip().lower() in ("query-id", "query_id", "qid"):
                continue
            if len(fields) == 4:  # TREC qrels: qid 0 docid grade
                fields = [fields[0], fields[2], fields[3]]
            if len(fields) != 3:
                raise EvaluationError(
                    f"{path}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score', got {line.strip()!r}"
                )
            qid, doc, score = (f.strip() for f in fields)
            try:
                grade = int(float(score))
            except ValueError:
                raise EvaluationError(f"{path}:{lineno}: score {score!r} is not a number") from None
            qrels.setdefault(qid, {})[doc] = grade
    return qrels


def load_queries(path: Path, skipped: list[str] | None = None) -> dict[str, str]:
    """Read ``queries.jsonl`` into query id -> text, in file order.

    Args:
        path: the file.
        skipped: if given, a malformed line (bad JSON, no ``_id`` / ``text``) is skipped and a one-line
            ``path:N: ...`` note appended here; if None such a line raises.

    Raises:
        EvaluationError: missing file; a malformed line when ``skipped`` is None.
    """
    if not path.is_file():
        raise EvaluationError(f"queries file {path} not found; a BEIR dataset needs queries.jsonl")
    queries: dict[str, str] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                queries[str(obj["_id"])] = str(obj["text"])
            except (json.JSONDecodeError, KeyError, TypeError):
                message = f"{path}:{lineno}: expected a JSON object with '_id' and 'text'"
                if skipped is None:
                    raise EvaluationError(message) from None
                skipped.append(f"{message}; line skipped")
    return queries


def load_beir(root: Path | str, split: str = "test") -> BeirDataset:
    """Load a BEIR folder's judged queries and qrels (the corpus is read by ingest).

    Args:
        root: folder with ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.
        split: qrels split name.

    Returns:
        The dataset; ``queries`` keeps only queries that have qrels, in qrels order.

    Raises:
        EvaluationError: a file is missing, qrels are malformed, or a judged query is missing from a
            ``queries.jsonl`` whose lines all parse. Malformed query lines are skipped (see ``warnings``).
    """
    root = Path(root)
    if not root.is_dir():
        raise EvaluationError(f"dataset folder {root} not found")
    corpus = root / "corpus.jsonl"
    if not corpus.is_file():
        raise EvaluationError(f"{corpus} not found; a BEIR dataset folder holds corpus.jsonl")
    qrels = load_qrels(root / "qrels" / f"{split}.tsv")
    warnings: list[str] = []
    all_queries = load_queries(root / "queries.jsonl", skipped=warnings)
    missing = [qid for qid in qrels if qid not in all_queries]
    if missing and not warnings:
        raise EvaluationError(
            f"{root}: {len(missing)} judged queries are missing from queries.jsonl (first: {missing[0]!r})"
        )
    if missing:  # their lines may be the malformed ones: evaluate the rest, and say so
        warnings.append(f"{root}: {len(missing)} judged queries left out, not readable in queries.jsonl "
                        f"(first: {missing[0]!r})")
        qrels = {qid: judged for qid, judged in qrels.items() if qid in all_queries}
    queries = {qid: all_queries[qid] for qid in qrels}
    return BeirDataset(root=root, name=root.name, corpus=corpus, queries=queries, qrels=qrels,
                       warnings=tuple(warnings))


def doc_ranking(hits: Iterable[Hit], k: int = 100) -> list[tuple[str, float]]:
    """Collapse chunk hits into documents: each document scores as its best chunk and appears once.

    Args:
        hits: chunk hits, best first.
        k: number of documents kept.

    Returns:
        At most ``k`` ``(doc_id, score)`` pairs, best first (ordered by the best chunk's score, ties kept in
        hit order).
    """
    best: dict[str, float] = {}
    for hit in hits:
        if hit.doc_id not in best or hit.score > best[hit.doc_id]:
            best[hit.doc_id] = hit.score
    order = {doc: i for i, doc in enumerate(best)}
    ranked = sorted(best.items(), key=lambda item: (-item[1], order[item[0]]))
    return ranked[:k]


def strictly_decreasing(scores: Sequence[float]) -> list[float]:
    """Round scores to float32 and nudge tied or out-of-order ones down by one float32 ulp.

    trec_eval re-sorts a run by score (held as a C ``float``) and breaks ties by document id descending;
    scores that fall strictly in float32 keep the run's own order under trec_eval, pytrec_eval and any
    evaluator that reads doubles.

    Returns:
        A list as long as ``scores`` of float32-representable values, each strictly below the one before,
        equal to the float32-rounded input where it already was.
    """
    out: list[float] = []
    for value in scores:
        s = float(np.float32(value))
        if out and not s < out[-1]:
            s = float(np.nextafter(np.float32(out[-1]), np.float32(-np.inf)))
        out.append(s)
    return out


def write_trec_run(path: Path, run: Mapping[str, Sequence[tuple[str, float]]], tag: str = "openbook") -> None:
    """Write a TREC run file: ``qid Q0 docid rank score tag``, ranks from 1, scores strictly decreasing.

    Args:
        path: output file (parent folders are created).
        run: query id -> ``(doc_id, score)`` pairs, best first.
        tag: the run tag column.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for qid, ranked in run.items():
            scores = strictly_decreasing([s for _, s in ranked])
            for rank, ((doc, _), score) in enumerate(zip(ranked, scores), 1):
                fh.write(f"{qid} Q0 {doc} {rank} {score!r} {tag}\n")


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into query id -> document id -> score.

    Raises:
        EvaluationError: missing file or a line without six fields.
    """
    if not path.is_file():
        raise EvaluationError(f"run file {path} not found")
    run: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise EvaluationError(f"{path}:{lineno}: expected 'qid Q0 docid rank score tag'")
            run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return run


def qrels_subset(qrels: Qrels, query_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """The qrels of the given queries only, in the given order (ids without qrels are skipped)."""
    return {qid: dict(qrels[qid]) for qid in query_ids if qid in qrels}
