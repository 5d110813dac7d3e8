"""The REST API fuzzed from its own OpenAPI schema (schemathesis), against a real uvicorn server with keys over a
small real store, once per caller: no key, a read-only key and a writer key.

Every operation in ``/openapi.json`` is called with requests schemathesis builds from the schema (its examples,
its coverage cases at the edges of each field, and random ones, valid and not), and each response must pass
schemathesis's checks: no 5xx, a status and a content type the schema documents, a body that matches the
documented schema (so every error is ``{"error": {"type", "message", "code"}}``), and invalid requests refused.
The server's log must hold no traceback and no error line. The generation is bounded (a few examples per
operation, a fixed seed) so that the run is reproducible and short."""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from helpers.served import Served, ServerThread, build_store, server_config

pytestmark = pytest.mark.slow  # schemathesis over the whole schema, three keys: about 15 s

EXAMPLES = 12
"""Random (fuzzing-phase) requests per operation and caller, besides the schema's examples and coverage cases."""

CALLERS = ("nobody", "reader", "writer")
ACCEPTED = ["2XX", "400", "401", "403", "404", "409"]


class _Faults(logging.Handler):
    """Collects log records that carry a traceback or are errors."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory) -> Iterator[tuple[Served, _Faults]]:
    """The server, and the handler that collects its log's faults (uvicorn's loggers and every other one)."""
    from openbook.server import KeyStore, create_app

    root = tmp_path_factory.mktemp("fuzzed")
    store = build_store(root)
    keys = KeyStore(store)
    tokens = {"reader": keys.add("reader", ["staff"]), "writer": keys.add("writer", ["staff", "finance"], write=True)}
    faults = _Faults()
    with ServerThread(create_app(store, server_config(store), readers=2)) as server:
        # (after the start: uvicorn's logging set-up replaces the handlers of its loggers, which do not propagate)
        loggers = [logging.getLogger(), logging.getLogger("uvicorn"), logging.getLogger("uvicorn.access")]
        for logger in loggers:
            logger.addHandler(faults)
        try:
            yield Served(server.url, store, root / "corpus", tokens), faults
        finally:
            for logger in loggers:
                logger.removeHandler(faults)


@pytest.fixture(scope="module", params=CALLERS)
def api_schema(request, fuzzed) -> schemathesis.BaseSchema:
    served, _ = fuzzed
    headers = {"Authorization": f"Bearer {served.tokens[request.param]}"} if request.param in served.tokens else {}
    return schemathesis.openapi.from_url(f"{served.url}/openapi.json", config=_config(headers), headers=headers)


def _config(headers: dict[str, str], stateful: bool = False) -> schemathesis.Config:
    """Bounded, reproducible generation with the checks' expectations of this API (see the comments)."""
    return schemathesis.Config.from_dict({
        "seed": 2026,
        "headers": headers,
        "request-timeout": 60,
        "generation": {"max-examples": EXAMPLES},
        "phases": {"stateful": {"enabled": stateful}},
        # a request the schema allows may still be refused for what it means (400: an empty query, a filter
        # that does not parse, a mode the store cannot serve); never with 422, the status of a schema mismatch
        "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}},
        # an upload whose files all fail to ingest is 422 (IngestError, with the report). A multipart file part
        # is bytes whatever they spell, so the "negative" upload whose file parts hold digits (the mutation of
        # `files` items from string to integer) is a valid upload of small text files: that check does not apply
        "operations": [{"include-name": "POST /v1/ingest",
                        "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "413", "422"]},
                                   "negative_data_rejection": {"enabled": False}}}],
    })


schema = schemathesis.pytest.from_fixture("api_schema")


TALLY: Counter[tuple[str, str, int]] = Counter()
"""Responses of the fuzzing test by (caller, operation, status), for the test that follows it."""
SECONDS: list[float] = []


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_in_its_documented_shape_without_a_server_error(case, fuzzed):
    served, faults = fuzzed
    token = (case.headers or {}).get("Authorization", "").removeprefix("Bearer ")
    caller = next((who for who, t in served.tokens.items() if t == token), "nobody")
    start = time.perf_counter()
    response = case.call_and_validate()
    SECONDS.append(time.perf_counter() - start)
    TALLY[caller, case.operation.label, response.status_code] += 1
    assert not faults.records, [faults.format(r) for r in faults.records]


def test_the_fuzzing_reached_every_operation_as_every_caller(fuzzed):
    """As the writer, each operation's handler ran at least once (an answer that is not 401, 403, 405 or 422: the
    fuzzing got past validation and the access rule), and without a key each protected operation answered 401."""
    if not TALLY:
        pytest.skip("the fuzzing test did not run")
    operations = {op for _, op, _ in TALLY}
    print(f"\nschemathesis: {len(operations)} operations, {sum(TALLY.values())} requests in {sum(SECONDS):.1f} s; "
          + ", ".join(f"{who} {sum(n for (w, _, _), n in TALLY.items() if w == who)}" for who in CALLERS))
    for (who, op), statuses in sorted(_by_call().items()):
        print(f"  {who:7} {op:30} {dict(sorted(statuses.items()))}")
    reached = {op for (who, op), statuses in _by_call().items()
               if who == "writer" and set(statuses) - {401, 403, 405, 422}}
    assert reached == operations, sorted(operations - reached)
    public = {"GET /v1/health", "GET /v1/models"}
    refused = {op for (who, op), statuses in _by_call().items() if who == "nobody" and 401 in statuses}
    assert refused == operations - public, sorted(operations - public - refused)
    served = {op for (who, op), statuses in _by_call().items()
              if who == "nobody" and {s for s in statuses if 200 <= s < 300}}
    assert served <= public, sorted(served - public)


def _by_call() -> dict[tuple[str, str], Counter[int]]:
    calls: dict[tuple[str, str], Counter[int]] = {}
    for (who, op, status), n in TALLY.items():
        calls.setdefault((who, op), Counter())[status] += n
    return calls


def test_linked_calls_in_sequence_keep_their_contract(fuzzed):
    """Schemathesis's stateful phase as the writer: sequences that follow the schema's links (an upload, a search
    or the document list, then showing or deleting the document whose id it returned), with the checks that need
    a sequence (a deleted document is gone, a created one is there) besides every single-call check."""
    served, faults = fuzzed
    headers = {"Authorization": f"Bearer {served.tokens['writer']}"}
    api = schemathesis.openapi.from_url(f"{served.url}/openapi.json", config=_config(headers, stateful=True),
                                         headers=headers)
    api.as_state_machine().run(settings=settings(max_examples=8, stateful_step_count=4, deadline=None,
                                                 suppress_health_check=list(HealthCheck)))
    assert not faults.records, [faults.format(r) for r in faults.records]
