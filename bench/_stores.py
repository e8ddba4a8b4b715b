"""The store a benchmark runs on: an SQLite file, or a database in a throwaway PostgreSQL cluster.

The cluster is the test suite's (tests/_postgres.py: Debian's binaries, a free port of
127.0.0.1, a temporary folder removed afterwards), but with PostgreSQL's durable defaults back
(fsync, synchronous commits, full-page writes, autovacuum): the figures are those of a real
deployment, not of the tests' throwaway one. A PostgreSQL server's CPU is spent in the cluster's
own processes, not in the arena's; :meth:`Store.cpu_seconds` reads it (every backend, live or
ended), so that CPU per move compares with SQLite's, which runs inside the arena's process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

STORES = ("sqlite", "postgresql")
#: postgresql.conf as shipped, where the test cluster trades durability for speed.
DURABLE = {
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "wal_level": "replica",
    "max_wal_senders": "10",
    "autovacuum": "on",
}


def add_store_argument(group: Any, what: str) -> None:
    """``--store sqlite|postgresql|both``; ``stores(args)`` reads it back as a list."""
    group.add_argument(
        "--store",
        choices=[*STORES, "both"],
        default="sqlite",
        help=f"{what}: an SQLite file (default), a throwaway PostgreSQL cluster with durable "
        "settings (Debian's postgresql package), or both in the same run",
    )


def stores(args: Any) -> list[str]:
    return list(STORES) if args.store == "both" else [args.store]


class Store:
    def __init__(self, kind: str, workdir: Path, cluster: object | None = None) -> None:
        self.kind, self.workdir, self._cluster = kind, workdir, cluster

    def url(self, name: str) -> str:
        """A new, empty database."""
        if self._cluster is None:
            return f"sqlite+aiosqlite:///{self.workdir / (name + '.db')}"
        return str(self._cluster.create_database(name))  # type: ignore[attr-defined]

    def cpu_seconds(self) -> float:
        """CPU the database server has used so far (0 for SQLite: it is the arena's own)."""
        if self._cluster is None:
            return 0.0
        main = psutil.Process(self._cluster.postmaster_pid())  # type: ignore[attr-defined]
        times = main.cpu_times()
        # Ended backends are counted in the postmaster's children_* times once reaped.
        total = times.user + times.system + times.children_user + times.children_system
        for child in main.children(recursive=True):
            try:
                child_times = child.cpu_times()
            except psutil.Error:
                continue
            total += child_times.user + child_times.system
        return total

    def server_pid(self) -> int | None:
        """The postmaster's process id (None for SQLite)."""
        if self._cluster is None:
            return None
        return int(self._cluster.postmaster_pid())  # type: ignore[attr-defined]

    @property
    def version(self) -> str:
        return "" if self._cluster is None else str(self._cluster.version)  # type: ignore[attr-defined]


@contextmanager
def open_store(kind: str, workdir: Path) -> Iterator[Store]:
    if kind == "sqlite":
        yield Store(kind, workdir)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from _postgres import PostgresCluster

    cluster = PostgresCluster.start(settings=DURABLE)
    try:
        yield Store(kind, workdir, cluster)
    finally:
        cluster.stop()
