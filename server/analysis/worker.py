"""What runs in an analysis process: one ``analyze_position``, its outcome sent back by pipe.

One process per analysis, forked from the fork server (``ply_arena.server.subprocesses``), so that
the server can stop a search that runs past its time by killing it: a thread could not be stopped,
and a search on the event loop would hold up every match.
"""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import Any

from ply_arena.reference_agents.trace import TraceTooLarge
from ply_arena.server.analysis.report import analyze_position
from ply_arena.server.subprocesses import init_helper


def run(conn: Connection, server_pid: int, request: dict[str, Any]) -> None:
    """Analyse ``request`` (``analyze_position``'s keyword arguments) and send back
    ``("ok", report)``, ``("too_large", message)`` or ``("bad_request", message)``."""
    init_helper(server_pid)
    try:
        outcome: tuple[str, Any] = ("ok", analyze_position(**request))
    except TraceTooLarge as exc:
        outcome = ("too_large", str(exc))
    except ValueError as exc:
        outcome = ("bad_request", str(exc))
    try:
        conn.send(outcome)
    finally:
        conn.close()
