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


def test_a_malformed_ray_address_is_a_usage_error_before_a_store_is_created(tmp_path):
    # `--ray garbage` was reported as "cannot reach the Ray cluster", as if a cluster had been tried
    (tmp_path / "notes.md").write_text("# Notes\n\nThe canteen closes at three.\n", encoding="utf-8")
    for bad in ("garbage", "10.0.0.5:99999", "host:", ":6379"):
        r = run("ingest", "notes.md", "--ray", bad, "--store", "s", cwd=tmp_path)
        assert r.returncode == 2, (bad, r.stderr)
        assert f"invalid Ray address {bad!r}: give auto, HOST:PORT or ray://HOST:PORT" in r.stderr
        assert "cannot reach" not in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "s").exists()


def test_ray_addresses_of_every_accepted_form_pass_the_check():
    from openbook.ingest.distributed import check_address

    for good in ("auto", "127.0.0.1:6379", "head.example:10001", "ray://10.0.0.5:10001", "[::1]:6379"):
        assert check_address(good) == good
