"""Peer benchmark: openbook's BM25 against rank_bm25, bm25s (numpy, numba) and tantivy in one run.

Every tool runs in its own subprocess (so that peak RSS is its own), on the same machine, the same queries,
and is scored by the same evaluator (``openbook.eval.metrics``, trec_eval semantics). Every tool uses BM25 with
the same k1 and b (default 1.2 and 0.75, Lucene's; ``--k1``/``--b``; tantivy's are fixed at 1.2 and 0.75) on
title + text, one thread for building and for querying. openbook analyses documents and queries as the engine
does (``Analyzer.analyze_document``: stop words indexed; ``Analyzer.search_terms``, as the BM25 leg: dropped from
queries) and builds with ``BM25Index.from_texts``.

Datasets: SciFact (nDCG@10 on the 300 test queries, plus speed), and a synthetic corpus of short documents made
from SciFact sentences by ``make_synthetic.py``, queried with the first 100 SciFact test queries (speed only).

Per tool and dataset: index build time (tokenise + index + write to disk), single-query latency p50/p95
(tokenise + top-10, one query at a time, after 10 warm-up queries), batch QPS (all queries in one call where
the tool has a batch API), peak RSS of the subprocess (includes the corpus text held in memory, shown apart as
``corpus RSS``), index size on disk; medians over the rounds; openbook's ratio to each peer.

    python benchmarks/peers.py            # SciFact + 1,000,000 synthetic docs, 3 rounds -> BENCHMARKS.md
    python benchmarks/peers.py --quick    # SciFact + 100,000 synthetic docs, 1 round -> <work>/BENCHMARKS.quick.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

TOOLS = ["openbook", "bm25s-numpy", "bm25s-numba", "tantivy", "rank_bm25"]
K1 = float(os.environ.get("OPENBOOK_BENCH_K1", "1.2"))  # set by the parent from --k1 / --b
B = float(os.environ.get("OPENBOOK_BENCH_B", "0.75"))
WARMUP = 10
RANK_BM25_MAX_DOCS = 200_000  # rank_bm25 scores every document in Python per query term: hours at 1M


# ----------------------------------------------------------------------------------------------- child side
def _load_corpus(path: Path) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            ids.append(str(obj["_id"]))
            title = obj.get("title") or ""
            texts.append(f"{title}\n{obj.get('text', '')}" if title else obj.get("text", ""))
    return ids, texts


def _dir_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class _Tool:
    """One engine under test: ``build`` then ``search(queries, k) -> list of row-id lists``, best first."""

    batch_api = True

    def build(self, texts: list[str], folder: Path) -> None:
        raise NotImplementedError

    def search(self, queries: list[str], k: int) -> list[list[int]]:
        raise NotImplementedError


class _Openbook(_Tool):
    def build(self, texts, folder):
        from openbook.index.analyzer import Analyzer
        from openbook.index.sparse import BM25Index

        self.analyzer = Analyzer()
        # documents as the engine indexes them (stop words kept); compiled builder from 20,000 texts on
        index = BM25Index.from_texts(texts, self.analyzer, k1=K1, b=B)
        index.save(folder)
        self.index = index

    def search(self, queries, k):
        rows, _ = self.index.search_batch([self.analyzer.search_terms(q) for q in queries], k)  # query analysis
        return [[int(r) for r in row if r >= 0] for row in rows]


class _Bm25s(_Tool):
    def __init__(self, backend: str) -> None:
        self.backend = backend

    def build(self, texts, folder):
        import bm25s
        import Stemmer

        self.stemmer = Stemmer.Stemmer("english")
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.retriever = bm25s.BM25(k1=K1, b=B, method="lucene", backend=self.backend)
        self.retriever.index(tokens, show_progress=False)
        self.retriever.save(str(folder), show_progress=False)

    def search(self, queries, k):
        import bm25s

        tokens = bm25s.tokenize(queries, stopwords="en", stemmer=self.stemmer, show_progress=False)
        rows, _ = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1,
                                          backend_selection=self.backend)
        return [[int(r) for r in row] for row in rows]


class _Tantivy(_Tool):
    batch_api = False

    def build(self, texts, folder):
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        builder.add_integer_field("row", stored=True, indexed=False, fast=True)
        schema = builder.build()
        folder.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(schema, path=str(folder))
        writer = self.index.writer(heap_size=256_000_000, num_threads=1)
        for i, text in enumerate(texts):
            writer.add_document(tantivy.Document(body=text, row=i))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, queries, k):
        out = []
        for q in queries:
            query, _errors = self.index.parse_query_lenient(q, ["body"])
            hits = self.searcher.search(query, k).hits
            out.append([self.searcher.doc(addr)["row"][0] for _, addr in hits])
        return out


class _RankBM25(_Tool):
    batch_api = False

    def build(self, texts, folder):
        import pickle

        import bm25s
        import Stemmer
        from rank_bm25 import BM25Okapi

        self.stemmer = Stemmer.Stemmer("english")
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False)
        self.model = BM25Okapi(tokens, k1=K1, b=B)
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "rank_bm25.pkl").open("wb") as fh:  # rank_bm25 has no format of its own
            pickle.dump(self.model, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def search(self, queries, k):
        import bm25s
        import numpy as np

        tokens = bm25s.tokenize(queries, stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False)
        out = []
        for terms in tokens:
            scores = self.model.get_scores(terms)
            top = np.argsort(-scores, kind="stable")[:k]
            out.append([int(r) for r in top])
        return out


def _make_tool(name: str) -> _Tool:
    factories: dict[str, Callable[[], _Tool]] = {
        "openbook": _Openbook,
        "bm25s-numpy": lambda: _Bm25s("numpy"),
        "bm25s-numba": lambda: _Bm25s("numba"),
        "tantivy": _Tantivy,
        "rank_bm25": _RankBM25,
    }
    return factories[name]()


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def run_child(tool_name: str, corpus: Path, queries_file: Path, folder: Path, run_k: int) -> dict[str, Any]:
    """Build, time and query one tool in this process; the parent reads the returned dict as JSON."""
    ids, texts = _load_corpus(corpus)
    queries: dict[str, str] = json.loads(queries_file.read_text(encoding="utf-8"))
    qtexts = list(queries.values())
    rss_corpus = _peak_rss_mb()
    tool = _make_tool(tool_name)
    if folder.exists():
        shutil.rmtree(folder)
    start = time.perf_counter()
    tool.build(texts, folder)
    build_s = time.perf_counter() - start
    for q in qtexts[:WARMUP]:
        tool.search([q], 10)
    latencies = []
    for q in qtexts:
        t0 = time.perf_counter()
        tool.search([q], 10)
        latencies.append((time.perf_counter() - t0) * 1000.0)
    batch_times = []  # median of 3 passes; one pass when a pass takes over 10 s
    while len(batch_times) < 3 and sum(batch_times) < 10.0:
        t0 = time.perf_counter()
        tool.search(qtexts, 10)
        batch_times.append(time.perf_counter() - t0)
    batch_s = statistics.median(batch_times)
    run = {}
    if run_k:
        rows = tool.search(qtexts, run_k)
        run = {qid: [ids[r] for r in ranked] for qid, ranked in zip(queries, rows)}
    latencies.sort()
    return {
        "tool": tool_name,
        "docs": len(ids),
        "queries": len(qtexts),
        "build_s": build_s,
        "p50_ms": statistics.median(latencies),
        "p95_ms": latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))],
        "qps": len(qtexts) / batch_s if batch_s > 0 else float("inf"),
        "batch_api": tool.batch_api,
        "peak_rss_mb": _peak_rss_mb(),
        "corpus_rss_mb": rss_corpus,
        "index_mb": _dir_bytes(folder) / 1e6,
        "run": run,
    }


# ----------------------------------------------------------------------------------------------- parent side
def _child_env(k1: float, b: float) -> dict[str, str]:
    env = dict(os.environ)
    env["OPENBOOK_BENCH_K1"], env["OPENBOOK_BENCH_B"] = repr(k1), repr(b)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _available(tool: str) -> str | None:
    """None when the tool can run here, else the reason it is skipped."""
    modules = {"bm25s-numpy": ["bm25s", "Stemmer"], "bm25s-numba": ["bm25s", "Stemmer", "numba"],
               "tantivy": ["tantivy"], "rank_bm25": ["rank_bm25", "bm25s", "Stemmer"], "openbook": ["openbook.index.sparse"]}
    import importlib.util

    for mod in modules[tool]:
        try:
            found = importlib.util.find_spec(mod) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"not installed: pip install {mod.split('.')[0].replace('_', '-')}"
    return None


def _run_tool(tool: str, corpus: Path, queries_file: Path, work: Path, run_k: int, timeout_s: int,
              params: tuple[float, float]) -> dict[str, Any]:
    result_file = work / f"result-{tool}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", tool, "--corpus", str(corpus),
           "--queries-file", str(queries_file), "--index-dir", str(work / f"index-{tool}"),
           "--run-k", str(run_k), "--result", str(result_file)]
    try:
        proc = subprocess.run(cmd, env=_child_env(*params), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"tool": tool, "error": f"timed out after {timeout_s} s"}
    finally:
        shutil.rmtree(work / f"index-{tool}", ignore_errors=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"tool": tool, "error": f"exit {proc.returncode}: {' | '.join(tail)}"}
    return json.loads(result_file.read_text(encoding="utf-8"))


def _median_of(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rounds if "error" not in r]
    if not ok:
        return {"tool": rounds[0]["tool"], "error": rounds[0]["error"]}
    out = dict(ok[0])
    for key in ("build_s", "p50_ms", "p95_ms", "qps", "peak_rss_mb", "corpus_rss_mb", "index_mb"):
        out[key] = statistics.median(r[key] for r in ok)
    out["rounds"] = len(ok)
    out.pop("run", None)
    return out


def bench_dataset(label: str, corpus: Path, queries: dict[str, str], qrels: dict | None, tools: list[str],
                  rounds: int, work: Path, timeout_s: int, log: Callable[[str], None],
                  params: tuple[float, float] = (1.2, 0.75)) -> dict[str, Any]:
    """All rounds of all tools on one corpus; returns per-tool medians (and nDCG@10 when qrels are given)."""
    from openbook.eval.metrics import evaluate_run

    work.mkdir(parents=True, exist_ok=True)
    queries_file = work / "queries.json"
    queries_file.write_text(json.dumps(queries), encoding="utf-8")
    n_docs = sum(1 for _ in corpus.open(encoding="utf-8"))
    per_tool: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    skipped: dict[str, str] = {}
    for t in tools:
        reason = _available(t)
        if reason is None and t == "rank_bm25" and n_docs > RANK_BM25_MAX_DOCS:
            reason = f"skipped above {RANK_BM25_MAX_DOCS:,} docs (pure-Python scoring of every document per term)"
        if reason:
            skipped[t] = reason
    for rnd in range(rounds):
        for t in tools:  # interleaved, so that machine load drifts hit every tool alike
            if t in skipped:
                continue
            res = _run_tool(t, corpus, queries_file, work, 100 if qrels else 0, timeout_s, params)
            if qrels and "error" not in res:
                res["ndcg@10"] = evaluate_run(res["run"], qrels, ["ndcg@10"])["ndcg@10"]
            per_tool[t].append(res)
            brief = res.get("error") or (f"build {res['build_s']:.1f} s, p50 {res['p50_ms']:.2f} ms, "
                                         f"qps {res['qps']:.0f}, rss {res['peak_rss_mb']:.0f} MB")
            log(f"[{label}] round {rnd + 1}/{rounds} {t}: {brief}")
    results = {t: _median_of(r) for t, r in per_tool.items() if r}
    for t, res in results.items():
        ok = [r for r in per_tool[t] if "ndcg@10" in r]
        if ok:
            res["ndcg@10"] = ok[0]["ndcg@10"]  # deterministic: identical in every round
    return {"label": label, "docs": n_docs, "queries": len(queries), "results": results, "skipped": skipped}


NOTES_MARKER = "<!-- Hand-written notes below this line are kept when peers.py rewrites the file. -->"

PYSERINI_PUBLISHED = (
    "Published figure: BM25 over a flat title + text index of BEIR SciFact, nDCG@10 0.6789 on the test queries\n"
    "(Anserini/Pyserini BEIR regressions, castorini/anserini `docs/regressions/regressions-beir-v1.0.0-scifact.flat.md`;\n"
    "run with Anserini's default `-bm25` parameters and analyzer, not this benchmark's k1 and b)."
)
"""A figure this script does not produce, written as published, with its source (it is not a measurement)."""

RATIO_KEYS = [("build_s", "build"), ("p50_ms", "p50"), ("qps", "QPS"), ("peak_rss_mb", "RSS"), ("index_mb", "size")]


def render_markdown(data: dict[str, Any]) -> str:
    """The BENCHMARKS.md text for one benchmark run."""
    lines = [
        "# Benchmarks",
        "",
        "Current measurements only: each table says the command that produces it and when it was run; earlier",
        "figures are in git history. A figure measured elsewhere is marked as published, with its source.",
        "",
        "## BM25 against its peers (`benchmarks/peers.py`)",
        "",
        f"Produced by `{data['command']}` on {data['when']} ({data['machine']}).",
        "",
        f"All tools: BM25 k1={data['k1']}, b={data['b']} (tantivy: always its fixed 1.2 and 0.75) over title + text,",
        "one thread (build and query), each tool in its own",
        "subprocess; same queries, same evaluator (`openbook.eval.metrics`, equal to trec_eval). Build time =",
        "tokenise + index + write to disk. Latency = tokenise + top-10 for one query, after 10 warm-up queries.",
        "QPS = all queries in one batch call, median of 3 passes (tantivy and rank_bm25: a loop). Peak RSS is the",
        "subprocess's maximum resident set and includes the corpus text held in Python (shown as corpus RSS).",
        f"Medians over {data['rounds']} round(s). Ratios are openbook / peer (below 1 is better for openbook,",
        "except QPS where above 1 is better).",
        "",
    ]
    versions = ", ".join(f"{k} {v}" for k, v in data["versions"].items())
    lines.append(f"Versions: {versions}.")
    lines.append("")
    for ds in data["datasets"]:
        lines.append(f"### {ds['label']} ({ds['docs']:,} documents, {ds['queries']} queries)")
        lines.append("")
        has_ndcg = any("ndcg@10" in r for r in ds["results"].values())
        head = "| tool | " + ("nDCG@10 | " if has_ndcg else "") + \
            "build s | p50 ms | p95 ms | batch QPS | peak RSS MB | corpus RSS MB | index MB |"
        lines.append(head)
        lines.append("|" + "---|" * (head.count("|") - 1))
        for tool, r in ds["results"].items():
            if "error" in r:
                lines.append(f"| {tool} | failed: {r['error']} |")
                continue
            cells = [tool] + ([f"{r['ndcg@10']:.4f}"] if has_ndcg else []) + [
                f"{r['build_s']:.2f}", f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}", f"{r['qps']:.0f}",
                f"{r['peak_rss_mb']:.0f}", f"{r['corpus_rss_mb']:.0f}", f"{r['index_mb']:.1f}"]
            lines.append("| " + " | ".join(cells) + " |")
        for tool, reason in ds["skipped"].items():
            lines.append(f"| {tool} | {reason} |")
        ob = ds["results"].get("openbook")
        if ob and "error" not in ob:
            lines.append("")
            lines.append("openbook / peer: " + ", ".join(lab for _, lab in RATIO_KEYS) +
                         (", nDCG@10 difference" if has_ndcg else ""))
            lines.append("")
            lines.append("| peer | " + " | ".join(lab for _, lab in RATIO_KEYS) + (" | ΔnDCG@10 |" if has_ndcg else " |"))
            lines.append("|" + "---|" * (len(RATIO_KEYS) + 1 + has_ndcg))
            for tool, r in ds["results"].items():
                if tool == "openbook" or "error" in r:
                    continue
                cells = [f"{ob[k] / r[k]:.3g}" if r[k] else "-" for k, _ in RATIO_KEYS]
                if has_ndcg:
                    cells.append(f"{ob['ndcg@10'] - r['ndcg@10']:+.4f}")
                lines.append(f"| {tool} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "### Pyserini (published, not measured here)",
        "",
        "Pyserini is not run: it needs Java 21+ (this machine has " + data.get("java", "no Java") + ").",
        PYSERINI_PUBLISHED,
        "",
    ]
    return "\n".join(lines)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("openbook", "numpy", "scipy", "bm25s", "numba", "PyStemmer", "tantivy", "rank-bm25"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            pass
    return out


def _java() -> str:
    try:
        proc = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
        return (proc.stderr or proc.stdout).splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        return "no Java"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="openbook BM25 against rank_bm25, bm25s and tantivy.")
    parser.add_argument("--quick", action="store_true", help="100,000 synthetic docs, 1 round")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per tool (default 3, --quick 1)")
    parser.add_argument("--synthetic-docs", type=int, default=None, help="default 1,000,000 (--quick 100,000)")
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "datasets" / "scifact")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}")
    parser.add_argument("--datasets", default="scifact,synthetic", help="comma-separated: scifact, synthetic")
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "openbook-bench")
    parser.add_argument("--out", type=Path, default=None, help="Markdown report (default BENCHMARKS.md; --quick: <work>/BENCHMARKS.quick.md)")
    parser.add_argument("--k1", type=float, default=1.2, help="BM25 k1 for every tool (default 1.2)")
    parser.add_argument("--b", type=float, default=0.75, help="BM25 b for every tool (default 0.75)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per tool run")
    # child mode (internal)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--index-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run-k", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        res = run_child(args.child, args.corpus, args.queries_file, args.index_dir, args.run_k)
        args.result.write_text(json.dumps(res), encoding="utf-8")
        return 0

    from make_synthetic import generate
    from openbook.eval.beir import load_beir

    rounds = args.rounds or (1 if args.quick else 3)
    n_synth = args.synthetic_docs or (100_000 if args.quick else 1_000_000)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        parser.error(f"unknown tools {unknown}; choose from {TOOLS}")
    out = args.out or (args.work / "BENCHMARKS.quick.md" if args.quick else REPO / "BENCHMARKS.md")
    args.work.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    scifact = load_beir(args.scifact)
    wanted = [d.strip() for d in args.datasets.split(",")]
    datasets = []
    if "scifact" in wanted:
        datasets.append(bench_dataset("SciFact", scifact.corpus, scifact.queries, scifact.qrels, tools, rounds,
                                      args.work / "scifact", args.timeout, log, (args.k1, args.b)))
    if "synthetic" in wanted:
        corpus = generate(args.scifact, args.work / f"synthetic-{n_synth}", n_synth)
        first100 = dict(list(scifact.queries.items())[:100])
        datasets.append(bench_dataset(f"Synthetic {n_synth:,}", corpus, first100, None, tools, rounds,
                                      args.work / f"synthetic-{n_synth}", args.timeout, log, (args.k1, args.b)))
    command = "python benchmarks/peers.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    data = {
        "command": command.strip(),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs visible, {platform.platform()}",
        "rounds": rounds,
        "k1": args.k1,
        "b": args.b,
        "versions": _versions(),
        "java": _java(),
        "datasets": datasets,
    }
    (args.work / "peers-results.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    text = render_markdown(data)
    if out.is_file() and NOTES_MARKER in (old := out.read_text(encoding="utf-8")):
        text += "\n" + NOTES_MARKER + old.split(NOTES_MARKER, 1)[1]
    out.write_text(text, encoding="utf-8")
    log(f"wrote {out} and {args.work / 'peers-results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
