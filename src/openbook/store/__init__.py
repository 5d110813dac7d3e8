"""Where a corpus and its index live. The boundary is ``openbook.store.base.Store``; backends are chosen by the
store location's URL scheme (a plain path is the embedded store).

    BACKENDS      scheme -> "module:Class", imported on first use
    open_store    location (folder or URL) -> an opened Store
    require_local_index   store, feature -> its ``LocalIndex`` (a folder beside the generations), or ConfigError
"""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..errors import StoreError
from .base import (CorpusStats, EmbeddingInfo, IndexSettings, LocalIndex, QueryTerms, Store, StoredDocument,
                   VectorSource, Visibility, require_local_index, weighted_terms)

BACKENDS: dict[str, str] = {
    "embedded": "openbook.store.embedded:EmbeddedStore",
    "postgresql": "openbook.store.postgres:PostgresStore",
}
"""Backend name (= URL scheme) -> the ``module:Class`` implementing ``Store``. ``postgres://`` is an alias of
``postgresql://``."""

_ALIASES = {"postgres": "postgresql"}


def backend_name(location: str | Path) -> str:
    """The backend a location names: the URL scheme when it is one of ``BACKENDS`` (or an alias), else
    ``embedded`` (a folder path; ``file://`` paths too)."""
    text = str(location)
    if "://" in text:
        scheme = text.split("://", 1)[0].lower()
        scheme = _ALIASES.get(scheme, scheme)
        if scheme in BACKENDS:
            return scheme
        if scheme != "file":
            raise StoreError(f"unknown store URL scheme {scheme!r} in {text.split('@')[-1]!r}; known: "
                             f"{', '.join(sorted(BACKENDS))}, or a folder path for the embedded store")
    return "embedded"


def local_folder(location: str | Path) -> Path:
    """The folder on this host for a store's local files (the server's API keys, uploaded originals).

    For the embedded store it is the store folder itself. A database store has no folder, so its local files go to
    ``$OPENBOOK_STATE_DIR`` (default ``$XDG_STATE_HOME/openbook``, else ``~/.local/state/openbook``) under
    ``stores/<backend>-<16 hex digits>``, named by a SHA-256 of the URL without its password, so each database has
    its own folder and a password change keeps it. The folder is not created here.
    """
    name = backend_name(location)
    if name == "embedded":
        text = str(location)
        return Path(text[len("file://"):] if text.startswith("file://") else text)
    parts = urlsplit(str(location))
    netloc = parts.netloc.rsplit("@", 1)
    if len(netloc) == 2:
        netloc[0] = netloc[0].split(":", 1)[0]  # drop the password, keep the user
    url = urlunsplit((name, "@".join(netloc), parts.path, parts.query, ""))
    state = os.environ.get("OPENBOOK_STATE_DIR") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state"), "openbook")
    return Path(state) / "stores" / f"{name}-{hashlib.sha256(url.encode('utf-8')).hexdigest()[:16]}"


def open_store(location: str | Path, create: bool = False) -> Store:
    """Open (or with ``create`` make) the store at ``location``: a folder (embedded) or a backend URL.

    Raises:
        StoreError: missing store, unknown scheme, or the backend's optional dependency is not installed.
        StoreVersionError: an incompatible format or schema.
    """
    name = backend_name(location)
    module_name, cls_name = BACKENDS[name].split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if exc.name == module_name:
            raise StoreError(f"this openbook has no {name} store backend ({module_name} is missing); "
                             f"use a folder path for the embedded store") from None
        raise StoreError(f"the {name} store needs an optional dependency that is not installed ({exc.name}): "
                         f"pip install 'openbook[{name}]'") from None
    cls = getattr(module, cls_name)
    if name == "embedded":
        text = str(location)
        location = text[len("file://"):] if text.startswith("file://") else text
    return cls.open(location, create=create)


__all__ = ["BACKENDS", "CorpusStats", "EmbeddingInfo", "IndexSettings", "LocalIndex", "QueryTerms", "Store",
           "StoredDocument", "VectorSource", "Visibility", "backend_name", "local_folder", "open_store",
           "require_local_index", "weighted_terms"]
