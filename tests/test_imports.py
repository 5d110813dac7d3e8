"""openbook's packages import each other's public names only.

The layer, acyclic and private-module contracts are checked by ``lint-imports`` (``[tool.importlinter]`` in
pyproject.toml, run by ``.ci/run``); import-linter sees modules, not names, so this test reads every
``from X import name`` in the package and fails on a private name (``_name``) taken from another top-level
package or module (``openbook.cli`` and ``openbook.server`` are two; ``openbook.answer.extractive`` and
``openbook.answer.refusal`` are one, ``openbook.answer``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import openbook

ROOT = Path(openbook.__file__).resolve().parent


def _module_name(path: Path) -> tuple[str, bool]:
    """(dotted module name, whether it is a package's ``__init__``)."""
    parts = ["openbook", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _unit(module: str) -> str:
    """The top-level package or module a module belongs to: ``openbook.answer.extractive`` -> ``openbook.answer``."""
    return ".".join(module.split(".")[:2])


def private_imports_across_packages() -> list[str]:
    """``path:line importer <- module.name`` for each private name imported from another top-level unit."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module, is_package = _module_name(path)
        base = module.split(".") if is_package else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "openbook" and not target.startswith("openbook."):
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not name.startswith("__") and _unit(target) != _unit(module):
                    found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {module} <- {target}.{name}")
    return found


def test_no_private_name_is_imported_across_packages() -> None:
    assert private_imports_across_packages() == []


def test_the_check_sees_a_private_import(tmp_path, monkeypatch) -> None:
    """The reader resolves relative imports: a probe module importing another package's private helper is
    reported, one importing its own package's is not."""
    fake = tmp_path / "openbook"
    (fake / "server").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "server" / "__init__.py").write_text("")
    (fake / "server" / "shapes.py").write_text("from ..cli import _hit_dict\nfrom .keys import _digest\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake)
    assert private_imports_across_packages() == [
        "openbook/server/shapes.py:1 openbook.server.shapes <- openbook.cli._hit_dict"]


def test_every_top_level_module_is_in_a_layer() -> None:
    """A module missing from the layers contract would not be checked: each one under ``src/openbook`` (Python
    module or package) is named in exactly one layer of ``[tool.importlinter]``."""
    import re
    import tomllib

    config = tomllib.loads((ROOT.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    [layers] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    listed = [name.strip() for layer in layers["layers"] for name in re.split(r"[|:]", layer)]
    present = {f"openbook.{p.stem}" for p in ROOT.glob("*.py") if p.stem != "__init__"}
    present |= {f"openbook.{p.name}" for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(listed) == sorted(present)
