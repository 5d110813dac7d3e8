"""Optional extras: the packages a feature beyond the core install needs, imported when that feature is used.

``pip install openbook`` installs the core (ingest of text, Markdown, HTML, CSV and man pages; BM25; the offline
answer; the CLI). Each other feature names its extra in ``pyproject.toml``'s ``[project.optional-dependencies]``
and imports its packages through ``require``, inside the function that needs them, so that a missing extra
costs nothing until the feature is used and then says, in one line, how to install it.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["hint", "installed", "require"]


def hint(feature: str, extra: str) -> str:
    """The one-line message for a missing extra: ``"PDF support needs the pdf extra: pip install 'openbook[pdf]'"``.

    It holds no ``(``, ``,`` or ``;``: an ingest report groups skipped files by the words before those."""
    return f"{feature} needs the {extra} extra: pip install 'openbook[{extra}]'"


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
