"""Where a corpus and its index live. The boundary is ``openbook.store.base.Store``, the composition of the role
protocols ``StoreHandle``, ``Transactions``, ``DocumentStore``, ``IndexWriter`` and ``SearchIndex``; backends are chosen by the
store location's URL scheme (a plain path is the embedded store).

    BACKENDS      scheme -> "module:Class", imported on first use
    open_store    location (folder or URL) -> an opened Store
    require_local_index   store, feature -> its ``LocalIndex`` (a folder beside the generations), or ConfigError
    store_exists, remove_empty_store, copy_committed   what the CLI and evaluation do to a store by location,
                  whichever backend it is
"""

from __future__ import annotations

import importlib
import os
from contextlib import closing
from pathlib import Path
from typing import Collection
from urllib.parse import urlsplit, urlunsplit

from .._extras import install_command
from ..errors import StoreError
from .base import (CorpusStats, DocumentStore, EmbeddingInfo, IndexSettings, IndexWriter, LocalIndex, QueryTerms,
                   SearchIndex, Store, StoredDocument, StoreHandle, Transactions, VectorSource, Visibility,
                   require_local_index, weighted_terms)

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
    import hashlib

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
                         f"{install_command(name)}") from None
    cls = getattr(module, cls_name)
    if name == "embedded":
        text = str(location)
        location = text[len("file://"):] if text.startswith("file://") else text
    return cls.open(location, create=create)


def store_exists(location: str | Path) -> bool:
    """Whether ``location`` already holds a store: an embedded store folder with its database; a URL store is
    assumed to exist (opening it says otherwise)."""
    if backend_name(location) != "embedded":
        return True
    from .embedded import DB_NAME

    return (local_folder(location) / DB_NAME).exists()


def remove_empty_store(location: str | Path, kept: Collection[str] | None) -> bool:
    """Remove the embedded store a first ingest created at ``location`` when it holds no document, leaving the
    folder entries named in ``kept`` (None: the folder is new and goes too); see
    ``openbook.store.embedded.remove_empty_store``. A database store is never removed.

    Returns:
        True when the store was removed. Raises StoreError: the store cannot be opened or locked.
    """
    if backend_name(location) != "embedded":
        return False
    from .embedded import remove_empty_store as remove

    return remove(local_folder(location), kept)


def copy_committed(src: str | Path, dest: str | Path) -> bool:
    """Copy the committed state of the store at ``src`` into ``dest`` (a new or empty folder), which becomes an
    embedded store: an embedded source as files (its database and current generation, under one read snapshot),
    another backend through ``openbook.store.copy.copy_store`` (no vector recomputed).

    Returns:
        True; False, writing nothing, when an embedded ``src`` has nothing indexed.

    Raises:
        StoreError, StoreVersionError: opening or reading ``src``, or writing ``dest``.
    """
    dest = Path(dest)
    if backend_name(src) == "embedded":
        from .embedded import copy_committed as copy_files

        return copy_files(local_folder(src), dest)
    from .copy import copy_store

    with closing(open_store(src)) as source, closing(open_store(dest, create=True)) as target:
        copy_store(source, target)
    return True


__all__ = ["BACKENDS", "CorpusStats", "DocumentStore", "EmbeddingInfo", "IndexSettings", "IndexWriter", "LocalIndex",
           "QueryTerms", "SearchIndex", "Store", "StoreHandle", "StoredDocument", "Transactions", "VectorSource", "Visibility", "backend_name", "copy_committed", "local_folder",
           "open_store", "remove_empty_store", "require_local_index", "store_exists", "weighted_terms"]
