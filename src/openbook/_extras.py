"""Optional extras: the packages a feature beyond the core install needs, imported when that feature is used.

``pip install openbook`` installs the core (ingest of text, Markdown, HTML, CSV and man pages; BM25; the offline
answer; the CLI). Each other feature names its extra in ``pyproject.toml``'s ``[project.optional-dependencies]``
and imports its packages through ``require``, inside the function that needs them, so that a missing extra
costs nothing until the feature is used and then says, in one line, how to install it.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["checkout_root", "hint", "install_command", "installed", "require"]


def checkout_root(package: Path | None = None) -> Path | None:
    """The source checkout this openbook runs from (``src/openbook`` beside a ``pyproject.toml`` whose project
    is ``openbook``: ``PYTHONPATH=src`` or ``pip install -e .``), or None for an installed package.

    ``package``: the ``openbook`` package folder (default: this one)."""
    package = package or Path(__file__).resolve().parent
    root = package.parent.parent
    if package.parent.name != "src" or not (root / "pyproject.toml").is_file():
        return None
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if re.search(r'(?m)^name\s*=\s*"openbook"\s*$', text) else None


def install_command(extra: str, package: Path | None = None) -> str:
    """The command that installs ``extra``: ``pip install 'openbook[pdf]'``, or from a source checkout (see
    ``checkout_root``) ``pip install -e '/path/to/checkout[pdf]'``, which installs the extra's packages without
    replacing the checkout by a released openbook."""
    root = checkout_root(package)
    return f"pip install -e '{root}[{extra}]'" if root is not None else f"pip install 'openbook[{extra}]'"


def hint(feature: str, extra: str) -> str:
    """The one-line message for a missing extra: ``"PDF support needs the pdf extra: pip install 'openbook[pdf]'"``
    (``install_command``: the checkout's form when openbook runs from one).

    It holds no ``(``, ``,`` or ``;``: an ingest report groups skipped files by the words before those (a checkout
    path holding one of them still groups: the words before it are the feature's)."""
    return f"{feature} needs the {extra} extra: {install_command(extra)}"


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` (dotted name), a package of the optional ``extra``.

    Args:
        module: the import name, such as ``"pypdf"`` or ``"docx.oxml.parser"``.
        extra: the extra that installs it (``pdf``, ``office``, ``embed``, ...).
        feature: what needs it, in words, starting the message (``"PDF support"``).

    Returns:
        The imported module.

    Raises:
        MissingExtraError: ``module``, or a package it imports, is not installed; the message is ``hint``'s line.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise MissingExtraError(hint(feature, extra), extra) from None


def installed(*modules: str) -> bool:
    """Whether every one of ``modules`` (top-level import names) is installed, found without importing it."""
    return all(importlib.util.find_spec(m) is not None for m in modules)
