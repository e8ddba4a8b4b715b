"""A real server (uvicorn, configured as ``arena serve``) on an SQLite file, in a thread of the
benchmark's own process: for benchmarks that time requests against a database they filled."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import uvicorn

from ply_arena.server.app import create_app, make_server
from ply_arena.server.settings import Settings


def serve(db_path: Path) -> tuple[str, uvicorn.Server, threading.Thread]:
    """Start it on a free port; (base URL, server, thread). Stop with ``server.should_exit =
    True`` and ``thread.join()``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    settings = Settings(
        db_url=f"sqlite+aiosqlite:///{db_path}", admin_token="bench-admin-token",
        print_admin_token=False, host="127.0.0.1", port=port, house_bots="",
    )  # fmt: skip
    server = make_server(create_app(settings), settings, log_level="warning")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread
