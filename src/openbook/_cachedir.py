"""The per-user folder where openbook keeps files it can rebuild (derived data, never user data).

``$OPENBOOK_CACHE_DIR`` when set, else the platform's user cache folder for "openbook", the folder
``platformdirs.user_cache_dir("openbook", appauthor=False)`` names: ``$XDG_CACHE_HOME/openbook`` when that is an
absolute path, else ``~/.cache/openbook``, on Linux and other Unix systems; ``~/Library/Caches/openbook`` on macOS;
``%LOCALAPPDATA%\\openbook\\Cache`` on Windows (``~\\AppData\\Local`` when the variable is unset). It is the same
per-user folder numba uses for its kernel cache (``index/_bm25_kernels``) when the package folder is read-only,
under openbook's own name. The variable is read the way numba reads ``NUMBA_CACHE_DIR``: a cache location belongs
to the machine, not to a store's configuration.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_folder"]


def cache_folder(name: str) -> Path:
    """The folder for the cache called ``name`` (``<user cache folder>/<name>``); not created here.

    Args:
        name: one folder name, such as ``"wordnet"``.

    Returns:
        An absolute path; it may not exist and may not be writable (a caller that cannot write there does
        without the cache).
    """
    root = os.environ.get("OPENBOOK_CACHE_DIR")
    return (Path(root).expanduser().absolute() if root else _user_cache_folder()) / name


def _user_cache_folder() -> Path:
    """The platform's per-user cache folder for "openbook" (the module docstring)."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        return Path(local or Path.home() / "AppData" / "Local") / "openbook" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "openbook"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "openbook"
