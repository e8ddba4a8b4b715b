"""A mark beside an SQLite database while a server runs on it: ``arena.db.server``.

The server keeps state that is derived from the database in memory (the ratings it pairs by,
the rating sequence, the latest opponents), so a second process that rewrites the same tables
behind its back would corrupt them: ``arena ratings rebuild`` on a database a server is using
would have its ratings overwritten by the server's next result, and a second ``arena serve`` on
the same file would close the first one's running matches as aborted. Both look for the mark
first and refuse, naming the process.

The mark is a small JSON file (pid, host, start time) written when the server starts and
removed when it stops. A mark left by a server that was killed (kill -9, a power cut) is
recognised as stale when no process with its pid runs on this host, and ignored. Only SQLite
files get a mark: another database is shared by design and needs a lock of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

SUFFIX = ".server"


@dataclass(frozen=True, slots=True)
class ServerMark:
    """Who runs on the database: the server's pid and host, and since when (Unix time)."""

    path: Path
    pid: int
    host: str
    started_at: float
    #: The kernel's start time of that pid (Linux), to tell a reused pid from the server.
    process_start: str | None = None

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started_at))
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return f"a server (pid {self.pid}{where}, started {since})"


class DatabaseInUse(RuntimeError):
    """Another live process runs a server on this database."""


def mark_path(db_url: str) -> Path | None:
    """``<file>.server`` for an SQLite file URL; None for any other database."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(f"{url.database}{SUFFIX}")


def running_server(db_url: str) -> ServerMark | None:
    """The server another process runs on this database, or None (no mark, a stale one, or
    this very process's: an app started again in one process, as tests do)."""
    path = mark_path(db_url)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text())
        mark = ServerMark(
            path,
            int(data["pid"]),
            str(data["host"]),
            float(data["started_at"]),
            data.get("process_start"),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None  # half-written or garbage: not a live server's (it writes it whole)
    if mark.host == socket.gethostname() and (
        mark.pid == os.getpid() or not process_alive(mark.pid, mark.process_start)
    ):
        return None
    return mark


def claim(db_url: str) -> Path | None:
    """Write the mark for this process; DatabaseInUse when another live server holds it."""
    path = mark_path(db_url)
    if path is None:
        return None
    other = running_server(db_url)
    if other is not None:
        raise DatabaseInUse(
            f"{other.describe()} is already running on {path.with_suffix('')}; stop it "
            f"first, or use another database (if no server runs, delete {path})"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
        "process_start": process_start(os.getpid()),
    }
    temporary = path.with_name(path.name + f".{os.getpid()}")
    temporary.write_text(json.dumps(body))
    os.replace(temporary, path)  # whole or not at all: a reader never sees half a mark
    return path


def release(path: Path | None) -> None:
    """Remove the mark if it is still this process's."""
    if path is None:
        return
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if int(json.loads(path.read_text())["pid"]) == os.getpid():
            path.unlink()


def process_alive(pid: int, started: str | None) -> bool:
    """Whether the process ``pid`` that started at ``started`` (``process_start``) still runs:
    its pid exists and, where the kernel says when it started, started then (a restarted
    container reuses small pids)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    if _state(pid) == "Z":
        return False  # killed, not yet reaped by its parent: it holds nothing any more
    if started is None:
        return True
    now = process_start(pid)
    return now is None or now == started


def _state(pid: int) -> str | None:
    """Field 3 of /proc/PID/stat (R, S, Z, ...), or None off Linux."""
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from field 3 on (after "pid (comm) "), or None off Linux."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def process_start(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks since boot), or None off Linux."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None
