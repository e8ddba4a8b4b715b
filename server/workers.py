"""``arena serve --workers N``: N server processes behind one port, on one PostgreSQL database.

The parent binds the port once and starts N ``arena serve`` processes that accept on that one
listening socket (inherited, ``--listen-fd``); the kernel hands each new connection to whichever
worker accepts first, so a busy worker takes fewer. Each worker is a whole arena process: its
own lifespan, lease, referee, house bots and matches (server/cluster); the database joins them.

Why one shared socket rather than SO_REUSEPORT (one socket per worker, connections spread by a
hash of their addresses): the queue of connections not yet accepted belongs to the socket, so
a worker that dies (kill -9, a crash) loses none of them, and the port keeps answering while it
is restarted; with SO_REUSEPORT the connections queued on the dead worker's socket are reset,
and any process of the same user could join the port. A bot's connection lasts for hours, so
the spread of new connections only has to be rough (docs/server.md has the measured spread).

Signals: SIGINT (Ctrl-C) or SIGTERM to the parent sends SIGTERM to every worker once; each
stops as a single ``arena serve`` does (its matches stay stored as running, its lease is given
up, so another worker or the next start resumes them at once) and the parent exits when all
have. A second Ctrl-C forces them (uvicorn's second SIGINT). Each worker runs in a process group
of its own, so that the terminal's Ctrl-C reaches the parent only and each worker hears one
signal, and a worker whose parent is gone (kill -9) stops by itself.

A worker that is killed (by a signal), or that dies after ``MIN_UPTIME_S``, is started again (a
new process: the lease of the dead one, on this host, ends at once and its matches are resumed
there). One that exits by itself sooner (a database that refuses it, a setting it cannot read)
stops them all: starting it again would fail the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType

#: A worker that exits by itself sooner than this after its start failed to start: all stop.
MIN_UPTIME_S = 10.0
#: How long a worker may take to stop cleanly after SIGTERM before it is killed: its bots get
#: CLOSE_GRACE_S to read ``shutting_down``, then the last moves are stored and the lease given
#: up (server/app.py, ArenaServer.shutdown).
STOP_TIMEOUT_S = 30.0
#: How often the parent looks at its workers, and a worker at its parent.
POLL_S = 0.2


class WorkersError(RuntimeError):
    """The workers cannot be started (the port is taken) or one failed at its start."""


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """The one listening socket every worker accepts on (IPv6 when the host has a ``:``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise WorkersError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; is another server there? "
            "give another --port"
        ) from None
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


@dataclass
class _Worker:
    index: int
    proc: subprocess.Popen[bytes]
    started: float


class Workers:
    """The parent: starts the workers on ``sock``, keeps them running, stops them on a signal.

    ``command`` is the worker's command line without ``--listen-fd``, ``--parent-pid`` and
    ``--worker-index``;
    ``env`` its environment (the settings, as ``ARENA_*`` variables: a database URL's password
    stays out of ``ps``).
    """

    def __init__(
        self, count: int, sock: socket.socket, command: list[str], env: dict[str, str]
    ) -> None:
        self.count = count
        self.sock = sock
        self.command = command
        self.env = env
        self.workers: list[_Worker] = []
        self._signals: list[int] = []

    def run(self) -> int:
        """Run until a signal (0 when every worker stopped cleanly) or a failed start (1)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)
        failed = False
        try:
            self.workers = [self._start(i) for i in range(self.count)]
            while not self._signals:
                time.sleep(POLL_S)
                if not self._keep_running():
                    failed = True
                    break
        finally:
            status = self._stop_all()
            self.sock.close()
        return 1 if failed else status

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        first = not self._signals
        self._signals.append(sig)
        if not first and sig == signal.SIGINT:
            # Ctrl-C again: the workers' uvicorn, on a second signal, stops without waiting.
            for worker in self.workers:
                _send(worker.proc, signal.SIGINT)

    def _start(self, index: int) -> _Worker:
        fd = self.sock.fileno()
        proc = subprocess.Popen(
            [
                *self.command,
                *("--listen-fd", str(fd), "--parent-pid", str(os.getpid())),
                *("--worker-index", str(index)),
            ],
            env=self.env,
            pass_fds=[fd],
            # Its own process group: the terminal's Ctrl-C goes to the parent only, which
            # sends each worker one SIGTERM (two signals would make uvicorn force its exit).
            process_group=0,
        )
        _say(f"worker {index}: pid {proc.pid}")
        return _Worker(index, proc, time.monotonic())

    def _keep_running(self) -> bool:
        """Start again a worker that died while serving; False when one failed at its start."""
        for i, worker in enumerate(self.workers):
            code = worker.proc.poll()
            if code is None:
                continue
            killed = code < 0  # by a signal (kill -9, the OOM killer), not by itself
            if not killed and time.monotonic() - worker.started < MIN_UPTIME_S:
                _say(
                    f"error: worker {worker.index} (pid {worker.proc.pid}) exited with status "
                    f"{code} at its start: stopping all (its log above says why)"
                )
                return False
            _say(
                f"worker {worker.index} (pid {worker.proc.pid}) died (status {code}): starting "
                "another; the matches it played go on there or on another worker"
            )
            self.workers[i] = self._start(worker.index)
        return True

    def _stop_all(self) -> int:
        """SIGTERM to every live worker, wait for them (kill those that take too long); 0 when
        all exited cleanly."""
        for worker in self.workers:
            _send(worker.proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        status = 0
        for worker in self.workers:
            try:
                code = worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _say(f"worker {worker.index} (pid {worker.proc.pid}) did not stop in time: killed")
                worker.proc.kill()
                code = worker.proc.wait()
            if code not in _CLEAN_EXITS:
                _say(f"worker {worker.index} (pid {worker.proc.pid}) exited with status {code}")
                status = 1
        return status


#: A worker's exit statuses after a clean stop: uvicorn, once shut down, raises the signal it
#: caught again, with the default handler (so a stopped server dies of SIGTERM, as is usual).
_CLEAN_EXITS = (0, -signal.SIGTERM, -signal.SIGINT)


def _say(line: str) -> None:
    # The parent configures no logging: its few lines go to stderr, among the workers' logs.
    print(f"arena serve: {line}", file=sys.stderr, flush=True)


def _send(proc: subprocess.Popen[bytes], sig: int) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)


def inherited_socket(fd: int) -> socket.socket:
    """In a worker: the listening socket its parent passed down."""
    return socket.socket(fileno=fd)


def stop_when_orphaned(parent: int) -> None:
    """In a worker: stop as on SIGTERM once the parent (its pid) is gone (killed with kill -9),
    rather than serve on unsupervised; checked from a thread, every ``POLL_S`` (also when it
    was gone before this worker got here)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        print(
            f"arena serve worker {os.getpid()}: its parent {parent} is gone; stopping",
            file=sys.stderr,
            flush=True,
        )
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()
