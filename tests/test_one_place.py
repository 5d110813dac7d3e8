"""Dates are read in one module (``openbook.dates``) and languages told in one (``openbook.question``, over
``openbook._langid``): a second date parser or language identifier elsewhere in the package fails here."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "openbook"


@functools.cache
def _modules() -> dict[str, ast.Module]:
    return {path.relative_to(SRC).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(SRC.rglob("*.py"))}


def _imports(tree: ast.Module) -> set[str]:
    """Every module name ``tree`` imports, absolute or relative (``from .._langid import x`` gives ``_langid``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module:
                names.add(node.module)
            names.update(alias.name for alias in node.names if node.level)  # `from . import _langid`
    return names


def _importers(root: str) -> set[str]:
    return {path for path, tree in _modules().items()
            if any(name == root or name.startswith(root + ".") or name.rsplit(".", 1)[-1] == root
                   for name in _imports(tree))}


def test_the_modules_are_found():
    modules = _modules()
    assert {"dates.py", "question.py", "_langid.py", "store/filters.py"} <= set(modules)
    assert "dateutil" in _imports(modules["dates.py"])  # the check below can see an import


@pytest.mark.parametrize("library, allowed", [
    ("dateutil", {"dates.py"}),  # python-dateutil: the lenient date reading, dates.iso_date
    ("py3langid", {"_langid.py"}),  # the Latin-script language model, mapped from its cache
    ("_langid", {"question.py"}),  # the model's one caller: question.latin_language
])
def test_one_module_imports(library, allowed):
    assert _importers(library) <= allowed


def test_dates_are_parsed_in_dates_only():
    # the standard library's parsers too: a second strict ISO reading drifts from dates.iso_value
    parser = re.compile(r"\b(?:fromisoformat|strptime)\s*\(")
    found = {path for path in _modules() if parser.search((SRC / path).read_text(encoding="utf-8"))}
    assert found <= {"dates.py"}


def test_languages_are_told_in_question_only():
    # a function that tells a text's language (``def text_language``, ``def question_language`` ...) lives in
    # question.py; elsewhere a language is asked of it
    defined = {path for path, tree in _modules().items() for node in ast.walk(tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.endswith("_language")}
    assert defined == {"question.py"}
