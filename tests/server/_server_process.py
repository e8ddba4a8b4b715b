"""``arena serve`` in a subprocess, as an instructor runs it: its log, its memory, its signals.

The in-process live server (tests/conftest.py) shares the test's memory and logging; tests about
what the server process holds (RSS) or prints (tracebacks) need a process of its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy.engine import make_url

ADMIN_TOKEN = "hostile-test-admin-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    port: int
    lines: list[str] = field(default_factory=list)
    pump: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def rss_kib(self) -> int:
        """The server's resident memory now (Linux /proc)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
        return int(line.split()[1])

    def create_bot(self, name: str) -> str:
        response = httpx.post(
            f"{self.url}/api/bots",
            json={"name": name},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=10,
        )
        assert response.status_code == 201, response.text
        return str(response.json()["token"])

    def stop(self) -> int:
        """SIGTERM, as `docker stop` sends; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        # Whatever the server started and left behind (its session's processes) goes too: a
        # leftover holding the log pipe would keep the log reader (and this test) waiting.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        for pid in self.leftovers():  # in process groups of their own (--workers)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if self.pump is not None:
            self.pump.join(timeout=10)  # the whole log is read
        if self.proc.stdout is not None and (self.pump is None or not self.pump.is_alive()):
            self.proc.stdout.close()
        return int(self.proc.returncode)

    def leftovers(self) -> list[int]:
        """Processes of the server's session still alive (after it exited)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if os.getsid(int(entry.name)) == self.proc.pid:
                    found.append(int(entry.name))
        return found


#: The ``arena`` command of the installation under test (``python -m ply_arena``: the same
#: entry point as the ``arena`` script, found whether or not that script is on the PATH).
ARENA = [sys.executable, "-m", "ply_arena"]


def start_server_process(
    db: Path | str, *, port: int | None = None, arena: list[str] = ARENA, **settings: str
) -> ServerProcess:
    """Run `arena serve` on ``port`` (default: a free one) with ``ARENA_<NAME>`` settings;
    returns once it serves. ``db`` is an SQLite file or a database URL (the ``db_url`` fixture's:
    the store under test); the server runs in the file's folder (a URL's: the temporary
    folder). ``arena`` is the command (another installation's, say)."""
    return wait_serving(launch_server_process(db, port=port, arena=arena, **settings))


def launch_server_process(
    db: Path | str,
    *,
    port: int | None = None,
    arena: list[str] = ARENA,
    admin_token: str | None = ADMIN_TOKEN,
    options: tuple[str, ...] = (),
    **settings: str,
) -> ServerProcess:
    """Start `arena serve` as ``start_server_process`` does, without waiting for it to serve
    (``wait_serving``): several can start at the same moment. ``admin_token`` None: none is
    set (the server finds the stored one or makes one); ``options``: more of its options
    (``--workers 2``)."""
    port = port or free_port()
    if isinstance(db, str):
        url = make_url(db)
        sqlite = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
        cwd = Path(str(url.database)).parent if sqlite else Path(tempfile.gettempdir())
    else:
        cwd = db.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update({f"ARENA_{k.upper()}": v for k, v in settings.items()})
    if admin_token is not None:
        env["ARENA_ADMIN_TOKEN"] = admin_token
    proc = subprocess.Popen(
        [
            *arena,
            "serve",
            *("--host", "127.0.0.1", "--port", str(port), "--db", str(db)),
            *options,
        ],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: stop() can clean up after it
    )
    server = ServerProcess(proc, port)
    assert proc.stdout is not None
    stdout = proc.stdout

    def pump() -> None:  # keep the pipe drained, and the log for the test
        for line in stdout:
            server.lines.append(line)

    server.pump = threading.Thread(target=pump, daemon=True, name=f"arena-serve-{port}-log")
    server.pump.start()
    return server


def wait_serving(server: ServerProcess, timeout_s: float = 30) -> ServerProcess:
    """``server`` once it answers /api/health (it fails the test if it exits or takes longer
    than ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert server.proc.poll() is None, f"arena serve exited:\n{server.log}"
        try:
            if httpx.get(f"{server.url}/api/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"arena serve did not come up:\n{server.log}"
        time.sleep(0.05)
