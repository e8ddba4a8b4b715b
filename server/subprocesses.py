"""The server's helper processes (house bots' searches, analyses): how they start and behave.

They start from one fork server (``spawn`` where there is none) that has imported the games and
the agents once, so a helper comes up in milliseconds. Each helper runs at the lowest CPU
priority and goes when the server goes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from typing import Any

#: Modules the fork server imports once; every helper forked from it has them.
PRELOAD = ["ply_arena.server.house.worker", "ply_arena.server.analysis.worker"]
#: Niceness added to a helper where SCHED_IDLE is not available.
NICENESS = 10
#: How often a helper looks whether the server that started it is still there.
PARENT_CHECK_S = 0.5


def context() -> Any:
    """The multiprocessing context every helper process is started from."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        forkserver = multiprocessing.get_context("forkserver")
        forkserver.set_forkserver_preload(PRELOAD)
        return forkserver
    return multiprocessing.get_context("spawn")


def init_helper(server_pid: int | None = None, *, idle: bool = True) -> None:
    """Run first in every helper process: lowest CPU priority (unless not ``idle``: then the
    server's own), Ctrl+C ignored, and gone when the server is (``server_pid``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SIGTERM (the server stopping its helpers) ends a helper at once, in the middle of a search
    # or waiting for one, whatever handler the fork server passed down (a measuring tool's, such
    # as coverage's, would run Python in the dying helper and print a traceback into the log).
    # It ends as an exit, not a kill: the process's own ending runs (multiprocessing's, and
    # coverage's, which saves what the helper ran), and a SystemExit prints nothing.
    signal.signal(signal.SIGTERM, _exit_now)
    if server_pid is not None:
        # A helper forked by the fork server is not the server's child, and a server killed
        # outright (kill -9, out of memory) shuts nothing down: without this, its helpers, and
        # the fork server they keep alive, would wait for work for ever.
        threading.Thread(
            target=_exit_with, args=(server_pid,), name="server-watch", daemon=True
        ).start()
    # SCHED_IDLE (Linux): the helper runs only when nothing at normal priority wants the CPU,
    # so a search never delays the event loop, or the bots on the same machine. Elsewhere (or
    # if refused), a plain nice.
    if not idle:
        return
    if hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return
    with contextlib.suppress(OSError):
        os.nice(NICENESS)


def _exit_now(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _exit_with(server_pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # another user's process has that pid now: the server is gone
            os._exit(0)
