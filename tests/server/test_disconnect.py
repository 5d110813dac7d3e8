"""Streaming clients that leave, and slow ones: a real server on 127.0.0.1 over a real store, answering with a
scripted OpenAI-compatible LLM server that streams a long answer piece by piece and records when a stream ends
and why (every piece sent, or the connection closed by openbook)."""

from __future__ import annotations

import time

import httpx
import pytest

from helpers.scripted_llm import Reply, ScriptedLLMServer
from helpers.served import ServerThread, build_store, server_config

QUESTION = "How many days of annual leave do full-time employees get?"
PIECES = 300
LONG = " ".join(f"word{i}" for i in range(PIECES))  # 300 pieces, 0.05 s apart: 15 s to stream in full
PROMPT_S = 3.0  # the bound on "at once" here: a busy two-core test machine, against the 15 s of a full stream


@pytest.fixture()
def site(tmp_path):
    """A keyless loopback server with ONE reader thread (the worst case for starvation) and a scripted LLM."""
    from openbook.server import create_app

    store = build_store(tmp_path)
    with ScriptedLLMServer(piece_delay_s=0.05) as llm:
        config = server_config(store, **{"llm.backend": "openai", "llm.model": "scripted",
                                         "llm.base_url": llm.openai_url})
        with ServerThread(create_app(store, config, readers=1)) as server:
            yield server.url, llm


def _first_event(lines) -> str:
    """The first ``data:`` line of an SSE response's ``iter_lines()`` (kept by the caller: closing that
    iterator closes the connection)."""
    return next(line for line in lines if line.startswith("data:"))


def _wait_ended(llm: ScriptedLLMServer, n: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (len(llm.requests) < n or any(r.ended is None for r in llm.requests)):
        time.sleep(0.05)


def _timed_search(url: str) -> float:
    with httpx.Client(base_url=url, timeout=60) as c:
        t0 = time.monotonic()
        r = c.post("/v1/search", json={"query": "annual leave days", "k": 3})
        elapsed = time.monotonic() - t0
    assert r.status_code == 200 and r.json()["hits"]
    return elapsed


def test_clients_that_leave_end_their_llm_streams_and_a_search_is_served_at_once(site):
    import openai

    url, llm = site
    llm.push(Reply(LONG), Reply(LONG))
    with httpx.Client(base_url=url, timeout=60) as c:
        with c.stream("POST", "/v1/ask", json={"question": QUESTION, "stream": True}) as r:
            assert "word0" in _first_event(r.iter_lines())
        left = [time.monotonic()]  # the SSE client is gone (httpx closes a connection left unread)
    chat = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0)
    stream = chat.chat.completions.create(model="openbook", stream=True,
                                          messages=[{"role": "user", "content": QUESTION}])
    assert "word0" in next(iter(stream)).choices[0].delta.content
    stream.close()
    left.append(time.monotonic())
    search_s = _timed_search(url)
    _wait_ended(llm, 2, timeout=PROMPT_S)
    streams = [r for r in llm.requests if r.path.endswith("/chat/completions")]
    assert len(streams) == 2
    for request, gone in zip(streams, left):
        assert request.ended == "client closed", request.ended  # openbook closed its stream to the LLM
        assert request.ended_at - gone < PROMPT_S and request.pieces_sent < PIECES // 3
    assert search_s < PROMPT_S


def test_a_slow_streaming_client_does_not_keep_searches_waiting(site):
    url, llm = site
    llm.push(Reply(LONG))
    with httpx.Client(base_url=url, timeout=60) as slow:
        with slow.stream("POST", "/v1/ask", json={"question": QUESTION, "stream": True}) as r:
            lines = r.iter_lines()
            assert "word0" in _first_event(lines)  # then it reads nothing more for a while
            search_s = _timed_search(url)
            again_s = _timed_search(url)
            assert llm.requests[-1].ended is None  # the slow client's answer is still streaming meanwhile
        gone = time.monotonic()
    assert search_s < PROMPT_S and again_s < PROMPT_S
    _wait_ended(llm, 1, timeout=PROMPT_S)
    assert llm.requests[-1].ended == "client closed" and llm.requests[-1].ended_at - gone < PROMPT_S
