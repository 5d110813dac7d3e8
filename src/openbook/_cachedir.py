"""The per-user folder where openbook keeps files it can rebuild (derived data, never user data).

``$OPENBOOK_CACHE_DIR`` when set, else the platform's user cache folder for "openbook" as ``platformdirs`` names it
(``$XDG_CACHE_HOME/openbook`` or ``~/.cache/openbook`` on Linux, ``~/Library/Caches/openbook`` on macOS,
``%LOCALAPPDATA%\\openbook\\Cache`` on Windows): the same per-user folder numba uses for its kernel cache
(``index/_bm25_kernels``) when the package folder is read-only, under openbook's own name. The variable is read the
way numba reads ``NUMBA_CACHE_DIR``: a cache location belongs to the machine, not to a store's configuration.
"""

from __future__ import annotations

import os
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
    if not root:
        from platformdirs import user_cache_dir

        root = user_cache_dir("openbook", appauthor=False)
    return Path(root).expanduser().absolute() / name
