"""The documentation a newcomer reads stays true to the code: README's length, set-up commands and links, the
configuration reference against ``openbook.config``, and BENCHMARKS.md's tables each with a command and a date."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

from openbook.config import Config, load_config

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
BENCHMARKS = REPO / "BENCHMARKS.md"
CONFIG_DOC = REPO / "docs" / "configuration.md"


def _code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_readme_is_at_most_200_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_readme_setup_commands_are_the_ones_ci_runs():
    # .ci/run runs README's two set-up commands as written there (it adds only its failure messages)
    setup = README.read_text(encoding="utf-8").split("## Set up on a fresh machine", 1)[1]
    blocks = _code_blocks(setup, "bash")[:2]
    # the main job runs hybrid (the embed extra), and the tests get every extra
    assert blocks[0].strip() == "pip install -e '.[embed]' && openbook quickstart"
    assert "pip install -e '.[all,test]'" in blocks[1]
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    for block in blocks:
        for command in block.strip().splitlines():
            assert any(line == command or line.startswith(command + " ||") for line in ci_lines), command


def test_readme_lists_every_extra():
    # the table of extras under "The core and the extras" names each extra pyproject.toml declares
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    section = README.read_text(encoding="utf-8").split("### The core and the extras", 1)[1].split("\n## ", 1)[0]
    listed = {name for row in re.findall(r"^\| (.+?) \|", section, re.M) for name in re.findall(r"`(\w+)`", row)}
    assert listed == set(extras) - {"test", "bench"}


def test_readme_links_resolve():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+?)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert any(t.startswith("docs/") for t in local)
    missing = [t for t in local if not (REPO / t).exists()]
    assert missing == []


def test_docs_links_resolve():
    missing = []
    for page in (REPO / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+?)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                missing.append(f"{page.name}: {target}")
    assert missing == []


def _documented_keys() -> dict[str, dict[str, str]]:
    text = CONFIG_DOC.read_text(encoding="utf-8")
    sections: dict[str, dict[str, str]] = {}
    for name, body in re.findall(r"^### `\[(\w+)\]`\n(.*?)(?=^### |\Z)", text, re.S | re.M):
        sections[name] = dict(re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", body, re.M))
    return sections


def test_configuration_reference_lists_every_key_with_its_default():
    documented = _documented_keys()
    cfg = Config()
    sections = [f.name for f in dataclasses.fields(cfg) if dataclasses.is_dataclass(getattr(cfg, f.name))]
    assert sorted(documented) == sorted(sections)
    for section in sections:
        value = getattr(cfg, section)
        keys = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        assert sorted(documented[section]) == sorted(keys), section
        for key, default in keys.items():
            written = tomllib.loads(f"x = {documented[section][key]}")["x"]
            assert written == (list(default) if isinstance(default, tuple) else default), f"{section}.{key}"


def test_configuration_reference_example_loads(tmp_path):
    example = _code_blocks(CONFIG_DOC.read_text(encoding="utf-8"), "toml")[0]
    path = tmp_path / "openbook.toml"
    path.write_text(example, encoding="utf-8")
    cfg = load_config(path)
    assert cfg.retrieval.top_k == 8 and cfg.llm.backend == "openai"


def _sections(text: str) -> list[tuple[str, str]]:
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return [(p.splitlines()[0], p) for p in parts]


def test_every_benchmarks_table_has_a_command_and_a_date():
    text = BENCHMARKS.read_text(encoding="utf-8")
    lacking = []
    for title, body in _sections(text):
        if not re.search(r"^\|.*\|$", body, re.M):
            continue
        has_date = re.search(r"\b20\d\d-\d\d-\d\d\b", body)
        has_command = re.search(r"(python[0-9]?\s|openbook (ingest|eval|store|search|ask))", body)
        if not (has_date and has_command):
            lacking.append(title)
    assert lacking == []


def test_benchmarks_has_no_branch_changelog():
    text = BENCHMARKS.read_text(encoding="utf-8")
    assert not re.search(r"\bsession \d+\b|\bbranch h-|\(issue \d+", text)


@pytest.fixture(scope="module")
def peers():
    spec = importlib.util.spec_from_file_location("peers_for_docs_test", REPO / "benchmarks" / "peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_peers_report_marks_a_figure_it_did_not_measure_as_published(peers):
    data = {"command": "python benchmarks/peers.py", "when": "2026-12-02", "machine": "test", "k1": 1.2, "b": 0.75,
            "rounds": 1, "versions": {"python": "3"}, "datasets": [], "java": "no Java"}
    text = peers.render_markdown(data)
    # with no dataset run, the only figure left is the published one, and it says so with its source
    figures = re.findall(r"\b0\.\d{3,}\b", text)
    assert figures == ["0.6789"]
    paragraph = next(p for p in text.split("\n\n") if "0.6789" in p)
    assert "Published figure" in paragraph and "castorini/anserini" in paragraph


def test_serving_doc_names_every_status_the_server_answers():
    # docs/serving.md said 400 where a request that does not match the schema gets 422, and left out 409/415/5xx
    import ast

    from openbook.server.app import STATUS

    app_source = (REPO / "src" / "openbook" / "server" / "app.py").read_text(encoding="utf-8")
    raised = {int(node.args[0].value) for node in ast.walk(ast.parse(app_source))
              if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ApiError"
              and node.args and isinstance(node.args[0], ast.Constant)}
    statuses = {code for cls, code in STATUS if code != 500} | raised | {422}
    text = " ".join((REPO / "docs" / "serving.md").read_text(encoding="utf-8").split())
    errors = text.split("Every error is", 1)[1].split("- **OpenAI-compatible**", 1)[0]
    assert '"code"' in errors and "invalid_request" in errors
    missing = sorted(code for code in statuses if not re.search(rf"\b{code}\b", errors))
    assert not missing, f"docs/serving.md does not say when the server answers {missing}"
