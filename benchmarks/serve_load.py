"""Bounded load on ``openbook serve`` over loopback: search and ask latency (p50/p99) and errors, with and
without a concurrent ingest.

    python benchmarks/serve_load.py                       # 8 and 32 clients, 1000 requests each, BM25-only store
    python benchmarks/serve_load.py --clients 8 --requests 200 --embed   # hybrid store (embeds the corpus first)

The corpus is the Skyladder lab (``../shared/labs/skyladder/docs``, 30 documents); the requests cycle through its
questions, half ``POST /v1/search`` (k=10) and half ``POST /v1/ask`` (the offline answerer), with a key holding
the ``staff`` role. The server runs as its own process (``openbook serve``), so the load generator (one asyncio
process with httpx, N concurrent clients sharing a fixed number of requests) does not share its interpreter; on a
small machine both still share the cores, which the figures include. "With ingest" runs, for the whole scenario,
a loop that uploads 5 new documents through ``POST /v1/ingest`` and deletes them again (each upload and each delete
writes a new index generation that the readers switch to), so reads meet every stage of a write. Every run stops
by itself after its requests; the script prints a Markdown table (and ``--json`` writes the raw figures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
LAB = REPO.parent / "shared" / "labs" / "skyladder"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openbook(*args: str, env: dict[str, str]) -> str:
    r = subprocess.run([sys.executable, "-m", "openbook", *args], capture_output=True, text=True, env=env,
                       check=False)
    if r.returncode:
        raise SystemExit(f"openbook {' '.join(args)} failed: {r.stderr.strip()}")
    return r.stdout


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def _ingest_loop(client: httpx.AsyncClient, stop: asyncio.Event, stats: dict[str, Any]) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        files = [("files", (f"load-{n}-{i}.md", f"# Load test note {n}-{i}\n\nThe widget batch {n}-{i} ships on "
                                                 f"day {i} with {n * 7 + i} units.\n".encode()))
                 for i in range(5)]
        t = time.perf_counter()
        r = await client.post("/v1/ingest", files=files)
        stats["ingest_s"].append(time.perf_counter() - t)
        stats["ingest_errors"] += r.status_code != 200
        for _, (name, _) in files:
            r = await client.delete(f"/v1/documents/{name}")
            stats["ingest_errors"] += r.status_code != 200
        stats["ingest_rounds"] += 1


async def _scenario(url: str, token: str, admin: str, clients: int, requests: int, questions: list[str],
                    with_ingest: bool) -> dict[str, Any]:
    lat: dict[str, list[float]] = {"search": [], "ask": []}
    errors: dict[str, int] = {"search": 0, "ask": 0}
    samples: list[str] = []
    counter = iter(range(requests))
    limits = httpx.Limits(max_connections=clients + 2, max_keepalive_connections=clients + 2)

    async def worker(client: httpx.AsyncClient) -> None:
        for i in counter:
            kind = "ask" if i % 2 else "search"
            q = questions[(i // 2) % len(questions)]
            body = {"question": q} if kind == "ask" else {"query": q, "k": 10}
            t = time.perf_counter()
            try:
                r = await client.post(f"/v1/{kind}", json=body)
                ok = r.status_code == 200
                if not ok and len(samples) < 3:
                    samples.append(f"{kind} {r.status_code} {r.text[:200]}")
            except httpx.HTTPError as exc:
                ok = False
                if len(samples) < 3:
                    samples.append(f"{kind} {type(exc).__name__}: {exc}")
            lat[kind].append(time.perf_counter() - t)
            errors[kind] += not ok

    ingest = {"ingest_s": [], "ingest_errors": 0, "ingest_rounds": 0}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as client, \
            httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {admin}"}, timeout=300) as writer:
        stop = asyncio.Event()
        loop_task = asyncio.create_task(_ingest_loop(writer, stop, ingest)) if with_ingest else None
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(clients)))
        wall = time.perf_counter() - t0
        stop.set()
        if loop_task is not None:
            await loop_task
    out: dict[str, Any] = {"clients": clients, "requests": requests, "with_ingest": with_ingest,
                           "wall_s": wall, "throughput_rps": requests / wall, "error_samples": samples}
    for kind in ("search", "ask"):
        out[kind] = {"p50_ms": 1000 * _pct(lat[kind], 0.5), "p99_ms": 1000 * _pct(lat[kind], 0.99),
                     "mean_ms": 1000 * statistics.fmean(lat[kind]) if lat[kind] else float("nan"),
                     "n": len(lat[kind]), "errors": errors[kind]}
    if with_ingest:
        out["ingest"] = {"rounds": ingest["ingest_rounds"], "errors": ingest["ingest_errors"],
                         "upload_p50_s": _pct(ingest["ingest_s"], 0.5)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", default="8,32", help="Comma-separated concurrent client counts.")
    ap.add_argument("--requests", type=int, default=1000, help="Requests per scenario (half search, half ask).")
    ap.add_argument("--readers", type=int, default=None, help="Server reader threads (default: CPUs, max 4).")
    ap.add_argument("--embed", action="store_true", help="Embed the corpus (hybrid retrieval); default BM25 only.")
    ap.add_argument("--json", dest="json_out", default=None, help="Write the raw figures to this file.")
    args = ap.parse_args()
    if not LAB.is_dir():
        raise SystemExit(f"{LAB} not found: the benchmark reads the Skyladder lab from ../shared")
    questions = [json.loads(line)["question"] for line in (LAB / "questions.jsonl").read_text().splitlines()
                 if line.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="openbook-serve-load-"))
    store = tmp / "store"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if not args.embed:
        env["OPENBOOK_EMBEDDING_ENABLED"] = "false"
    server = None
    try:
        _openbook("ingest", str(LAB / "docs"), "--store", str(store), *([] if args.embed else ["--no-embed"]),
                  env=env)
        token = _openbook("keys", "add", "bench", "--role", "staff", "--store", str(store), env=env).strip()
        admin = _openbook("keys", "add", "bench-writer", "--role", "staff", "--write", "--store", str(store),
                          env=env).strip()
        port = _free_port()
        cmd = [sys.executable, "-m", "openbook", "serve", "--store", str(store), "--port", str(port)]
        cmd += ["--readers", str(args.readers)] if args.readers else []
        cmd += [] if args.embed else ["--no-embed"]
        server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{url}/v1/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server did not start: {server.stderr.read() if server.stderr else ''}")
            time.sleep(0.2)
        # warm-up: every reader thread has loaded the index at start; a few requests warm the answer path
        asyncio.run(_scenario(url, token, admin, 2, 20, questions, False))
        results = []
        for clients in (int(c) for c in args.clients.split(",")):
            for with_ingest in (False, True):
                r = asyncio.run(_scenario(url, token, admin, clients, args.requests, questions, with_ingest))
                results.append(r)
                print(json.dumps(r), file=sys.stderr)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)
    mode = "hybrid" if args.embed else "bm25"
    print(f"\nopenbook serve, {mode} store, Skyladder lab (30 documents), {args.requests} requests per row "
          f"(half search, half ask), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    print("| clients | concurrent ingest | search p50 / p99 ms | ask p50 / p99 ms | failed requests | req/s | "
          "ingest rounds (errors) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        s, a = r["search"], r["ask"]
        ing = f"{r['ingest']['rounds']} ({r['ingest']['errors']})" if r["with_ingest"] else "-"
        print(f"| {r['clients']} | {'yes' if r['with_ingest'] else 'no'} | {s['p50_ms']:.0f} / {s['p99_ms']:.0f} | "
              f"{a['p50_ms']:.0f} / {a['p99_ms']:.0f} | {s['errors'] + a['errors']} | {r['throughput_rps']:.0f} | "
              f"{ing} |")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
