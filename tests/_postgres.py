"""A throwaway PostgreSQL cluster for a test session (``pytest --store postgresql``).

Usage::

    cluster = PostgresCluster.start()        # initdb into a new temporary folder, then pg_ctl start
    url = cluster.create_database("hint")    # "postgresql+asyncpg://arena@127.0.0.1:PORT/t1_hint"
    cluster.drop_database(url)               # DROP DATABASE ... WITH (FORCE): its connections go
    cluster.stop()                           # pg_ctl stop -m immediate, and the folder is removed

The server binaries are Debian's (``postgresql`` package): the folder ``pg_config --bindir``
names, else the newest ``/usr/lib/postgresql/*/bin``, else ``initdb`` on the PATH. Nothing needs to
run beforehand and nothing is left behind: the cluster lives in a folder of its own (data, unix
socket, log), listens on a free TCP port of 127.0.0.1 only, trusts every local connection (the
superuser is ``arena``), and runs without fsync, synchronous commits or full-page writes (a test's
data need not survive a power cut). PostgreSQL refuses to run as root: as root (CI, containers)
the binaries run as the ``postgres`` user (``runuser``), which owns the folder.

Databases are created and dropped over one superuser connection (asyncpg) held by a thread of its
own, so that the calls are synchronous (fixtures of sync and async tests alike) and never touch
the caller's event loop; each takes a few tens of milliseconds.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import itertools
import locale
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

#: The superuser of the test cluster (trust authentication: no password).
USER = "arena"
#: The OS user that runs the binaries when the tests run as root.
OS_USER = "postgres"
INSTALL_HINT = "install Debian's postgresql package: apt-get install postgresql"

#: Bounds on every wait, well under the tests' own time limit (pytest-timeout, 120 s).
INITDB_TIMEOUT_S = 60
START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 20
SQL_TIMEOUT_S = 30

#: Settings for speed (a test's data need not survive a crash) and for the servers the tests
#: start (each opens a pool of connections).
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "max_connections": "300",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "autovacuum": "off",
    "shared_buffers": "128MB",
    "log_min_messages": "warning",
    "log_min_error_statement": "panic",
    "log_connections": "off",
    "log_disconnections": "off",
}

T = TypeVar("T")


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries here, or the cluster could not be started."""


def find_bindir() -> Path:
    """The folder of PostgreSQL's server binaries (initdb, pg_ctl, postgres)."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(Path(done.stdout.strip()))

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", path.parent.name)) or (0,)

    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    initdb = shutil.which("initdb")
    if initdb is not None:
        # /usr/local/bin/initdb may be a link into /usr/lib/postgresql/N/bin, where pg_ctl is.
        candidates += [Path(initdb).parent, Path(initdb).resolve().parent]
    for bindir in candidates:
        if all((bindir / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return bindir
    looked = ", ".join(str(c) for c in dict.fromkeys(candidates)) or "pg_config, initdb on PATH"
    raise PostgresUnavailable(
        f"no PostgreSQL server binaries (initdb, pg_ctl, postgres) found (looked in: {looked}); "
        f"{INSTALL_HINT}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reachable_by_others(path: Path) -> bool:
    """Whether every folder above ``path`` lets another user through (o+x)."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in path.resolve().parents)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class _Admin:
    """One asyncpg connection to the cluster's ``postgres`` database, in a thread of its own
    with its own event loop; ``run(coro)`` waits for the result."""

    def __init__(self, port: int) -> None:
        try:
            import asyncpg
        except ImportError as missing:
            raise PostgresUnavailable(
                "asyncpg is not installed: pip install -e '.[dev]' (or '.[postgres]')"
            ) from missing
        self._asyncpg = asyncpg
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="postgres-admin", daemon=True
        )
        self._thread.start()
        self._connection: Any = None

    def run(self, make: Any) -> Any:
        """``await make(connection)`` in the admin thread (connecting first if need be)."""

        async def work() -> Any:
            if self._connection is None or self._connection.is_closed():
                self._connection = await self._asyncpg.connect(
                    host="127.0.0.1", port=self._port, user=USER, database="postgres", timeout=10
                )
            return await make(self._connection)

        return self._wait(work())

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=SQL_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        async def close() -> None:
            if self._connection is not None and not self._connection.is_closed():
                await self._connection.close(timeout=5)
            self._connection = None

        with contextlib.suppress(Exception):
            self._wait(close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()


class PostgresCluster:
    """A PostgreSQL cluster in a temporary folder, listening on 127.0.0.1:``port``."""

    def __init__(
        self,
        bindir: Path,
        root: Path,
        port: int,
        run_as: str | None,
        settings: dict[str, str] | None = None,
    ) -> None:
        self.bindir, self.root, self.port, self.run_as = bindir, root, port, run_as
        #: postgresql.conf settings over SETTINGS (the benchmarks restore durability with them).
        self.settings = settings or {}
        self.data, self.socket_dir, self.log = root / "data", root / "socket", root / "postgres.log"
        self._names = itertools.count(1)
        self._admin: _Admin | None = None
        self._running = False
        self._lock = threading.Lock()
        self.version = ""

    # --- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def start(
        cls, bindir: Path | None = None, *, settings: dict[str, str] | None = None
    ) -> PostgresCluster:
        """initdb into a new temporary folder, then start the server; returns once it accepts.
        ``settings`` override :data:`SETTINGS` (e.g. ``{"fsync": "on"}``)."""
        bindir = bindir or find_bindir()
        run_as = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(OS_USER)
            except KeyError:
                raise PostgresUnavailable(
                    f"PostgreSQL refuses to run as root and there is no {OS_USER!r} user to run "
                    f"it as ({INSTALL_HINT} creates it), or run the tests as another user"
                ) from None
            run_as = OS_USER
        parent = None
        if run_as is not None and not _reachable_by_others(Path(tempfile.gettempdir())):
            parent = "/tmp"  # the postgres user must reach its folder
        root = Path(tempfile.mkdtemp(prefix="arena-pg-", dir=parent))
        cluster = cls(bindir, root, free_port(), run_as, settings)
        atexit.register(cluster.stop)  # should the session end without its teardown
        try:
            cluster._initdb()
            cluster._start()
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _command(self, argv: Sequence[str]) -> list[str]:
        if self.run_as is None:
            return list(argv)
        if shutil.which("runuser"):
            return ["runuser", "-u", self.run_as, "--", *argv]
        import shlex

        return ["su", self.run_as, "-s", "/bin/sh", "-c", shlex.join(argv)]

    def _run(self, argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                self._command(argv),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=self.root,
                env={**os.environ, "LC_ALL": "C.UTF-8" if _has_c_utf8() else "C"},
            )
        except subprocess.TimeoutExpired as expired:
            raise PostgresUnavailable(
                f"{Path(argv[0]).name} did not finish within {timeout} s: {' '.join(argv)}\n"
                f"{_tail(self.log)}"
            ) from expired

    def _initdb(self) -> None:
        if self.run_as is not None:
            record = pwd.getpwnam(self.run_as)
            os.chown(self.root, record.pw_uid, record.pw_gid)
        self.root.chmod(0o700)
        locale_args = ["--locale=C.UTF-8"] if _has_c_utf8() else ["--no-locale"]
        done = self._run(
            [
                str(self.bindir / "initdb"),
                "-D", str(self.data),
                "-U", USER,
                "--auth=trust",
                "--encoding=UTF8",
                *locale_args,
                "--no-sync",
            ],
            INITDB_TIMEOUT_S,
        )  # fmt: skip
        if done.returncode != 0:
            raise PostgresUnavailable(f"initdb failed ({done.returncode}):\n{done.stderr}")
        self.socket_dir.mkdir()
        if self.run_as is not None:
            record = pwd.getpwnam(self.run_as)
            os.chown(self.socket_dir, record.pw_uid, record.pw_gid)

    def _configure(self) -> None:
        settings = {**SETTINGS, **self.settings, "port": str(self.port)}
        settings["unix_socket_directories"] = "'" + str(self.socket_dir).replace("'", "''") + "'"
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# tests/_postgres.py\n")
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())

    def _start(self) -> None:
        for attempt in range(3):
            self._configure()
            done = self._run(
                [
                    str(self.bindir / "pg_ctl"),
                    "-D", str(self.data),
                    "-l", str(self.log),
                    "-w", "-t", str(START_TIMEOUT_S),
                    "start",
                ],
                START_TIMEOUT_S + 10,
            )  # fmt: skip
            self._running = True  # whatever pg_ctl says, stop() must look
            if done.returncode == 0:
                break
            log = _tail(self.log)
            if attempt < 2 and "could not bind" in log:  # the port was taken meanwhile
                self._pg_ctl_stop()
                self.port = free_port()
                continue
            raise PostgresUnavailable(
                f"pg_ctl start failed ({done.returncode}): {done.stdout}{done.stderr}\n"
                f"server log {self.log}:\n{log}"
            )
        self._admin = _Admin(self.port)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # pg_ctl -w waited for it; this is the first real connection
            try:
                self.version = self._admin.run(lambda c: c.fetchval("SHOW server_version"))
                return
            except (OSError, PostgresUnavailable) as error:
                if time.monotonic() > deadline:
                    raise PostgresUnavailable(
                        f"the test cluster does not accept connections on 127.0.0.1:{self.port}"
                        f": {error}\n{_tail(self.log)}"
                    ) from error
                time.sleep(0.1)
            except Exception as error:
                if "starting up" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def postmaster_pid(self) -> int:
        """The server's main process (its backends are its children)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def _pg_ctl_stop(self) -> None:
        with contextlib.suppress(PostgresUnavailable):
            self._run(
                [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                 "-w", "-t", str(STOP_TIMEOUT_S), "stop"],
                STOP_TIMEOUT_S + 10,
            )  # fmt: skip

    def stop(self) -> None:
        """Stop the server at once (-m immediate) and remove the folder; safe to call again."""
        with self._lock:
            if self._admin is not None:
                self._admin.close()
                self._admin = None
            if self._running and (self.data / "postmaster.pid").exists():
                self._pg_ctl_stop()
            self._running = False
            shutil.rmtree(self.root, ignore_errors=True)
        atexit.unregister(self.stop)

    # --- databases ------------------------------------------------------------------------------

    def url(self, name: str) -> str:
        return f"postgresql+asyncpg://{USER}@127.0.0.1:{self.port}/{name}"

    def create_database(self, hint: str = "") -> str:
        """A new empty database (UTF8, from template0); its SQLAlchemy URL. ``hint`` (a test's
        name, say) goes into the database's name, to tell them apart in the server's log."""
        if self._admin is None:
            raise PostgresUnavailable("the test cluster is stopped")
        slug = re.sub(r"[^a-z0-9]+", "_", hint.lower()).strip("_")
        name = f"t{next(self._names)}_{slug}"[:63].rstrip("_")
        self._admin.run(lambda c: c.execute(f'CREATE DATABASE "{name}" TEMPLATE template0'))
        return self.url(name)

    def drop_database(self, url_or_name: str) -> None:
        """Drop a database, closing whatever connections are still open on it."""
        if self._admin is None:
            return
        name = url_or_name.rsplit("/", 1)[-1]
        self._admin.run(lambda c: c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@functools.cache
def _has_c_utf8() -> bool:
    """Whether the C.UTF-8 locale exists here (glibc has it built in since 2.35); asked once,
    before any test starts a thread."""
    saved = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
    except locale.Error:
        return False
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    return True
