"""The mark a server leaves beside its SQLite file while it runs: who holds it, and when a mark is
stale (its process is gone, or its pid now belongs to another process)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ply_arena.server.db import server_mark

pytestmark = pytest.mark.sqlite_only("the server mark is a file beside an SQLite database")


def write_mark(db: Path, pid: int, **extra: object) -> None:
    body = {"pid": pid, "host": socket.gethostname(), "started_at": 0.0, **extra}
    Path(f"{db}.server").write_text(json.dumps(body))


def test_a_live_process_holds_the_database_and_a_dead_or_reused_pid_does_not(
    tmp_path: Path,
) -> None:
    db = tmp_path / "arena.db"
    url = f"sqlite+aiosqlite:///{db}"
    assert server_mark.running_server(url) is None  # no mark
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        write_mark(db, other.pid, process_start=server_mark.process_start(other.pid))
        held = server_mark.running_server(url)
        assert held is not None and held.pid == other.pid
        with pytest.raises(server_mark.DatabaseInUse, match=f"pid {other.pid}"):
            server_mark.claim(url)
        # The same pid, started at another time: a reused pid, not the server.
        write_mark(db, other.pid, process_start="1")
        assert server_mark.running_server(url) is None
        # Killed but not yet reaped (a zombie, as right after kill -9): it holds nothing.
        other.kill()
        deadline = time.monotonic() + 10
        while server_mark._state(other.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        write_mark(db, other.pid, process_start=server_mark.process_start(other.pid))
        assert server_mark.running_server(url) is None
    finally:
        other.kill()
        other.wait(timeout=10)
    write_mark(db, other.pid)  # its process is gone
    assert server_mark.running_server(url) is None
    Path(f"{db}.server").write_text("{not json")  # garbage is not a server
    assert server_mark.running_server(url) is None

    path = server_mark.claim(url)
    assert path == Path(f"{db}.server")
    assert server_mark.claim(url) == path  # this very process may take it again
    server_mark.release(path)
    assert not path.exists()


def test_only_sqlite_files_get_a_mark() -> None:
    assert server_mark.mark_path("sqlite+aiosqlite:///:memory:") is None
    assert server_mark.mark_path("postgresql+asyncpg://u@h/db") is None
    assert server_mark.mark_path("sqlite+aiosqlite:///data/x.db") == Path("data/x.db.server")
