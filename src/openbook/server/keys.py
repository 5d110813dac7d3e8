"""API keys: who is asking, and so which access roles a request has.

Keys live in ``STORE/keys.json`` (mode 0600), one record per key: name, roles, whether it may write (ingest,
delete), creation and revocation time, and the SHA-256 of the token. The token itself is shown once, by
``openbook keys add``, and never stored. A plain SHA-256 is enough here because tokens are 256 random bits (a
slow password hash defends guessable secrets; nobody can enumerate 2**256 tokens); lookups compare digests with
``hmac.compare_digest``.

The file is re-read when it changes, so ``openbook keys revoke`` takes effect on a running server at its next
request. A store whose file holds any record (even only revoked ones) requires a key on every request; with no
file, or an empty one, the server serves anonymous requests with no roles (public documents only) and
``openbook serve`` refuses to bind anywhere but loopback.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError
from ..files import write_json_atomic

KEYS_FILE = "keys.json"
TOKEN_PREFIX = "ob_"


@dataclass(frozen=True)
class Principal:
    """Who a request runs as: a key's name, its access roles and whether it may ingest and delete."""

    name: str
    roles: tuple[str, ...] = ()
    write: bool = False


ANONYMOUS = Principal("anonymous", (), True)  # loopback only, public documents only (see module docstring)


@dataclass(frozen=True)
class KeyRecord:
    name: str
    roles: tuple[str, ...]
    write: bool
    sha256: str
    prefix: str
    created: str
    revoked: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"roles": list(self.roles)}


class AuthError(Exception):
    """No key, or a key that is unknown or revoked (HTTP 401)."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


class KeyStore:
    """The keys of one store, in ``keys.json`` in its local folder (``openbook.store.local_folder``: the store
    folder, or a per-database folder on this host for a URL store). Thread-safe; re-reads the file when its
    modification time changes."""

    def __init__(self, store: str | Path) -> None:
        from ..store import local_folder

        self.path = local_folder(store) / KEYS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._records: list[KeyRecord] = []

    # ------------------------------------------------------------------ reading
    def records(self) -> list[KeyRecord]:
        """Every key record, revoked ones included, in creation order.

        Raises:
            ConfigError: the file exists but is not a readable key list (fails closed: no request is served).
        """
        with self._lock:
            try:
                st = self.path.stat()
            except FileNotFoundError:
                self._stamp, self._records = None, []
                return []
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                self._records = self._read()
                self._stamp = stamp
            return list(self._records)

    def _read(self) -> list[KeyRecord]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [KeyRecord(name=str(r["name"]), roles=tuple(str(x) for x in r["roles"]), write=bool(r["write"]),
                              sha256=str(r["sha256"]), prefix=str(r["prefix"]), created=str(r["created"]),
                              revoked=r.get("revoked")) for r in data["keys"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{self.path}: not a readable openbook key list ({exc}); fix or delete it and "
                              f"re-create keys with `openbook keys add`") from None

    @property
    def required(self) -> bool:
        """True when any key was ever created for this store: every request must then carry a valid key."""
        return bool(self.records())

    def authenticate(self, token: str | None) -> Principal:
        """The principal for a request's token (None: no key given).

        Raises:
            AuthError: keys are required and the token is missing, unknown or revoked.
        """
        records = self.records()
        if not records:
            return ANONYMOUS
        if not token:
            raise AuthError("this server requires an API key: send `Authorization: Bearer KEY` "
                            "(create one with `openbook keys add NAME --role ROLE`)")
        digest = _digest(token.strip())
        for r in records:
            if hmac.compare_digest(r.sha256, digest):
                if r.revoked:
                    raise AuthError(f"API key {r.name!r} was revoked on {r.revoked}; ask for a new one")
                return Principal(r.name, r.roles, r.write)
        raise AuthError("unknown API key: check the key, or create one with `openbook keys add NAME --role ROLE`")

    def principal_from_headers(self, headers: Mapping[str, str]) -> Principal:
        """``authenticate`` with the token of an ``Authorization: Bearer`` or ``X-API-Key`` header."""
        auth = headers.get("authorization") or ""
        token = auth[7:] if auth[:7].lower() == "bearer " else headers.get("x-api-key")
        return self.authenticate(token or None)

    # ------------------------------------------------------------------ writing
    def _write(self, records: list[KeyRecord]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path, {"keys": [r.to_json() for r in records]})
        os.chmod(self.path, 0o600)

    def add(self, name: str, roles: tuple[str, ...] | list[str], write: bool = False) -> str:
        """Create a key and return its token (shown once; only its SHA-256 is stored).

        Raises:
            ConfigError: an active key already has this name, or the name is empty.
        """
        name = name.strip()
        if not name:
            raise ConfigError("a key needs a name, e.g. `openbook keys add alice --role staff`")
        records = self.records()
        if any(r.name == name and not r.revoked for r in records):
            raise ConfigError(f"an active key named {name!r} exists; revoke it first (`openbook keys revoke {name}`)")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        records.append(KeyRecord(name, tuple(dict.fromkeys(r.strip() for r in roles if r.strip())), write,
                                 _digest(token), token[:7], _now()))
        self._write(records)
        return token

    def revoke(self, name: str) -> bool:
        """Revoke the active key called ``name``; False when there is none."""
        records = self.records()
        hit = False
        out = []
        for r in records:
            if r.name == name and not r.revoked:
                r = KeyRecord(r.name, r.roles, r.write, r.sha256, r.prefix, r.created, _now())
                hit = True
            out.append(r)
        if hit:
            self._write(out)
        return hit
