"""Errors of the CLI as a script meets them: a ``--json`` command that fails prints a JSON error object and exits
non-zero; a first ingest that cannot run leaves no store behind. Real subprocesses, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("OPENBOOK_STORE", None)
    return subprocess.run([sys.executable, "-m", "openbook", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


def test_ask_json_with_an_empty_question_prints_a_json_error_and_fails(tmp_path):
    (tmp_path / "notes.md").write_text("# Notes\n\nThe canteen closes at three.\n", encoding="utf-8")
    assert run("ingest", "notes.md", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 0
    r = run("ask", "--json", "", "--store", "s", cwd=tmp_path)
    assert r.returncode == 1
    assert json.loads(r.stdout) == {"error": {"type": "QueryError", "message": "empty question: ask something"}}
    assert "error: empty question" in r.stderr


def test_an_unknown_embedder_fails_before_a_store_is_created(tmp_path):
    (tmp_path / "notes.md").write_text("# Notes\n\nThe canteen closes at three.\n", encoding="utf-8")
    r = run("ingest", "notes.md", "--store", "s", "--embedder", "no-such-model", "--json", cwd=tmp_path)
    assert r.returncode == 1 and "unknown embedder 'no-such-model'" in r.stderr
    assert json.loads(r.stdout)["error"]["type"] == "ConfigError"
    assert not (tmp_path / "s").exists()
