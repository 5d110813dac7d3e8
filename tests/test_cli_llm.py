"""``openbook ask --llm`` end to end: the real CLI, a real store, a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ -> import helpers.*

from helpers.scripted_llm import Reply, ScriptedLLMServer  # noqa: E402

pytestmark = pytest.mark.slow  # CLI processes against a scripted LLM server, each loading the answer stack: about 12 s

REPO = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENBOOK_EMBEDDING_ENABLED": "false"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "openbook", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared) -> Path:
    cwd = tmp_path_factory.mktemp("llm")
    r = run("ingest", str(shared / "labs" / "skyladder" / "docs"), "--store", "s", cwd=cwd)
    assert r.returncode == 0, r.stderr
    return cwd


def ask(cwd: Path, server: ScriptedLLMServer, *extra: str) -> subprocess.CompletedProcess:
    return run("ask", "How long are deleted files kept in the Trash?", "--role", "staff", "--store", "s",
               "--llm", "openai:scripted", "--base-url", server.openai_url, *extra, cwd=cwd)


def test_llm_answer_is_checked_and_bad_citations_reported(store):
    with ScriptedLLMServer() as server:
        server.push(Reply("Deleted files are kept for 14 days [1]. Support can restore them for 90 days [42]."))
        out = json.loads(ask(store, server, "--json").stdout)
        sent = server.requests[0].body["messages"]
    assert "I could not find this in the documents." in sent[0]["content"]  # the refusal instruction
    assert sent[-1]["content"].rstrip().endswith("How long are deleted files kept in the Trash?")
    assert out["refused"] is False and [c["n"] for c in out["citations"]] == [1]
    assert any("42" in n for n in out["notes"])  # the invented id is dropped and reported
    assert out["unsupported"]


def test_llm_refusal_and_streaming(store):
    with ScriptedLLMServer() as server:
        server.push(Reply("I could not find this in the documents."))
        assert json.loads(ask(store, server, "--json").stdout)["refused"] is True
        server.push(Reply("Files stay in the Trash for 14 days [1]."))
        r = ask(store, server, "--stream")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("Files stay in the Trash for 14 days [1].") and "Sources:" in r.stdout
        assert server.requests[-1].body.get("stream") is True


def test_show_prompt_needs_no_server(store):
    r = run("ask", "How long are deleted files kept in the Trash?", "--role", "staff", "--store", "s",
            "--show-prompt", cwd=store)
    assert r.returncode == 0 and "--- system ---" in r.stdout and "[1]" in r.stdout


def test_unreachable_llm_is_one_clear_error(store):
    r = run("ask", "How long are deleted files kept?", "--role", "staff", "--store", "s", "--llm", "openai:x",
            "--base-url", "http://127.0.0.1:9/v1", cwd=store)
    assert r.returncode == 1 and "openai" in r.stderr.lower() and "Traceback" not in r.stderr


def test_non_json_reply_is_one_clear_error(store):
    with ScriptedLLMServer() as server:
        server.push(Reply(raw="not json"))
        r = ask(store, server)
    assert r.returncode == 1 and "not JSON" in r.stderr and "Traceback" not in r.stderr
