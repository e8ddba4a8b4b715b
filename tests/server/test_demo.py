"""`arena demo`: a first minute that works. Started as a user starts it, its leaderboards fill
with rated matches of every game within a minute, and Ctrl+C stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from _server_process import free_port

from ply_arena import games

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.sqlite_only("arena demo keeps its database in an SQLite file of its own"),
]


def test_arena_demo_fills_every_leaderboard_within_a_minute(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ply_arena", "demo", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    started = time.monotonic()
    filled: dict[str, int] = {}
    try:
        while len(filled) < len(games.names()):
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() - started < 60, f"after a minute, only {filled}"
            for name in games.names():
                try:
                    board = httpx.get(
                        f"http://127.0.0.1:{port}/api/leaderboard/{name}", timeout=5
                    ).json()
                except httpx.HTTPError:
                    break  # not serving yet
                rated = sum(row["matches"] for row in board["ranking"])
                if rated:
                    filled[name] = rated
            time.sleep(0.5)
        bots = httpx.get(f"http://127.0.0.1:{port}/api/bots", timeout=5).json()["bots"]
        assert any(b["house"] for b in bots) and any(not b["house"] for b in bots)
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl+C
        output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, output
    assert f"Ply Arena demo on http://127.0.0.1:{port}" in output
    assert "/api/leaderboard/connect_four" in output and "arena bots create mybot" in output
    assert "ranked by mu - 3 sigma" in output  # the standings printed at the end
    assert "Traceback" not in output and "reads it as" not in output, output
