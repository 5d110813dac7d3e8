"""What a plain ``openbook search`` / offline ``ask`` on a BM25-only store imports: none of the libraries that only
other paths need (building an index, embedding, an LLM, the server, writing, date parsing, WordNet's database).

Each command runs as a user runs it, in a fresh ``python -m openbook`` process; the process reports
``sys.modules`` after the command. Start-up time itself is measured by ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.stores import bm25_engine

REPO = Path(__file__).resolve().parents[1]

NOT_FOR_A_SEARCH = (
    "scipy", "numba", "torch", "onnxruntime", "sentence_transformers", "transformers", "tokenizers", "model2vec",
    "httpx", "openai", "anthropic", "fastapi", "starlette", "uvicorn", "pydantic", "openbook.server",
    "openbook.ingest", "markdown_it", "filelock", "dateutil", "wn", "jieba", "py3langid", "blingfire", "tomllib",
)
"""Top-level modules (and their submodules) a search on a BM25-only store never needs."""
NOT_FOR_AN_ASK = tuple(m for m in NOT_FOR_A_SEARCH if m not in ("blingfire",))
"""The same for an offline ask, which splits passages into sentences (BlingFire)."""

_REPORT = ("import json, runpy, sys\n"
           "sys.argv = ['openbook', *sys.argv[1:]]\n"
           "try:\n    runpy.run_module('openbook', run_name='__main__')\n"
           "except SystemExit as exc:\n    code = exc.code\n"
           "else:\n    code = 0\n"
           "print('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
           "sys.exit(code)\n")

DOCS = {"loans.md": "# Loans\n\nEach child may borrow five titles at a time from the reading room shelves. "
                    "Children under twelve can borrow with a parent's card; the desk tells how many titles a card "
                    "allows, and the data on loans is kept for a year.\n",
        "hours.md": "# Opening hours\n\nThe reading room opens at nine and closes at six on weekdays.\n"}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lazy")
    with bm25_engine(root, DOCS):
        pass
    return root / "store"


def _imported(*args: str, cwd: Path) -> set[str]:
    """The modules a ``python -m openbook ARGS`` process run in ``cwd`` has imported when the command ends."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}  # this checkout's openbook, from any folder
    env.pop("OPENBOOK_STORE", None)
    done = subprocess.run([sys.executable, "-c", _REPORT, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.rsplit("\nMODULES ", 1)[1]))


def _loaded(modules: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == r or m.startswith(r + ".") for r in roots))


def test_a_search_imports_none_of_the_other_paths_libraries(store: Path) -> None:
    """The question names an irregular plural ("children") and an ambiguous one ("data"), which the analyzer
    reads from WordNet's exception lists; every word is in the corpus, so no WordNet expansion is looked up
    (``retrieve.lexicon``, which opens WordNet itself)."""
    modules = _imported("search", "How many titles can children borrow and is the data kept?", "--store",
                        str(store), cwd=store.parent)
    assert "openbook.index.sparse" in modules  # the search ran
    assert _loaded(modules, NOT_FOR_A_SEARCH) == []


def test_an_offline_ask_imports_none_of_the_other_paths_libraries(store: Path) -> None:
    modules = _imported("ask", "How many titles can children borrow?", "--store", str(store), cwd=store.parent)
    assert "openbook.answer.extractive" in modules  # the offline answerer ran
    assert _loaded(modules, NOT_FOR_AN_ASK) == []


def test_the_check_sees_an_import(store: Path, tmp_path: Path) -> None:
    """A path that needs one of the libraries shows it: a config file is read with tomllib."""
    (tmp_path / "openbook.toml").write_text("[retrieval]\n", encoding="utf-8")
    modules = _imported("search", "children", "--store", str(store), cwd=tmp_path)
    assert _loaded(modules, NOT_FOR_A_SEARCH) == ["tomllib", "tomllib._parser", "tomllib._re", "tomllib._types"]
