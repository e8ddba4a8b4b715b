"""``arena serve --workers N`` (server/workers.py): N arena processes accept on one port, on one
PostgreSQL database; bots connect to that port and each worker plays matches; SIGTERM stops every
worker cleanly (each gives up its lease). On SQLite, more than one worker is refused in one line."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _server_process import ServerProcess, launch_server_process, wait_serving
from _sql import rows as stored_rows

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock

HOUSE = {"house_bots": "tic_tac_toe=random", "house_wait_s": "0.05"}


def quick_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


@pytest.mark.timeout(60)
def test_workers_on_sqlite_are_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena", "serve", "--workers", "2", "--db", "arena.db"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("ARENA_")},
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--workers 2 needs PostgreSQL" in lines[0]
    assert "--db postgresql://" in lines[0] and "or run one (--workers 1)" in lines[0]
    assert not (tmp_path / "arena.db").exists()  # refused before anything was made


#: The processes holding a lease now (a process that lost its lease at a start slowed down by
#: a busy machine has registered again: its old row stays, run out).
LIVE = (
    "SELECT DISTINCT pid FROM instances WHERE stopped_at IS NULL "
    "AND lease_until > extract(epoch FROM clock_timestamp())"
)


async def _live_workers(db_url: str, n: int) -> set[int]:
    """Once ``n`` processes hold a lease: their pids."""
    async with asyncio.timeout(60):
        while True:
            pids = {int(str(pid)) for (pid,) in await stored_rows(db_url, LIVE)}
            if len(pids) == n:
                return pids
            await asyncio.sleep(0.1)


async def _stopped_cleanly(db_url: str, pids: set[int]) -> None:
    """Every one of ``pids`` gave its lease up (none is held any more, each has a stopped row)."""
    assert await stored_rows(db_url, LIVE) == []
    stopped = await stored_rows(
        db_url, "SELECT DISTINCT pid FROM instances WHERE stopped_at IS NOT NULL"
    )
    assert pids <= {int(str(pid)) for (pid,) in stopped}


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


async def _play_until_both_serve(srv: ServerProcess, db_url: str, pids: set[int]) -> int:
    """Rounds of new bots on the one port, each playing house bots, until matches have been
    played by every worker (the kernel gives each new connection to one of them); how many
    bots it took."""
    bots = 0
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, f"not every worker played:\n{srv.log}"
        async with asyncio.timeout(60):
            round_ = [
                BotClient(srv.ws_url, srv.create_bot(f"w{bots + i}"), quick_random,
                          game="tic_tac_toe", games=2)
                for i in range(4)
            ]  # fmt: skip
            bots += len(round_)
            ends = await asyncio.gather(*(bot.run() for bot in round_))
            assert all(e.termination.value == "normal" for bot_ends in ends for e in bot_ends)
        played = await stored_rows(
            db_url, "SELECT DISTINCT i.pid FROM matches m JOIN instances i ON i.id = m.owner"
        )
        if {int(str(pid)) for (pid,) in played} == pids:
            return bots


def slow_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    time.sleep(0.2)  # matches long enough to be running when the server stops
    return random.choice(legal_moves)


async def _running(db_url: str) -> set[str]:
    """Once some match has been running for a few plies: the running ones."""
    async with asyncio.timeout(60):
        while True:
            rows = await stored_rows(
                db_url,
                "SELECT m.id FROM matches m WHERE m.status = 'running' "
                "AND (SELECT count(*) FROM moves v WHERE v.match_id = m.id) >= 2",
            )
            if rows:
                return {str(i) for (i,) in rows}
            await asyncio.sleep(0.05)


@pytest.mark.postgresql_only
@pytest.mark.timeout(240)
async def test_two_workers_serve_one_port_and_stop_together(db_url: str) -> None:
    srv = launch_server_process(db_url, options=("--workers", "2"), **HOUSE)
    try:
        wait_serving(srv, timeout_s=90)
        workers = await _live_workers(db_url, 2)
        assert all(_parent(pid) == srv.proc.pid for pid in workers), workers
        await _play_until_both_serve(srv, db_url, workers)
        # Stopped mid-match: each worker leaves its matches stored as running, to be resumed.
        slow = [
            BotClient(srv.ws_url, srv.create_bot(f"slow{i}"), slow_random, game="tic_tac_toe",
                      games=1, reconnect=False)
            for i in range(4)
        ]  # fmt: skip
        playing = [asyncio.create_task(bot.run()) for bot in slow]
        try:
            running = await _running(db_url)
            srv.proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(srv.proc.wait, 60) == 0, srv.log
        finally:
            for task in playing:
                task.cancel()
            await asyncio.gather(*playing, return_exceptions=True)
        left = await stored_rows(db_url, "SELECT id FROM matches WHERE status = 'running'")
        assert running <= {str(i) for (i,) in left}
        await _stopped_cleanly(db_url, workers)  # each gave its lease up
        deadline = time.monotonic() + 10
        while srv.leftovers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert srv.leftovers() == []
        assert "Traceback" not in srv.log, srv.log
        # Each worker's lines say which worker wrote them (the parent numbers them 0, 1).
        for index in (0, 1):
            assert f"INFO:     [worker {index}] Application startup complete." in srv.log, srv.log
    finally:
        srv.stop()


@pytest.mark.postgresql_only
@pytest.mark.timeout(120)
async def test_a_killed_worker_is_replaced_and_ctrl_c_stops_them_all(db_url: str) -> None:
    srv = launch_server_process(db_url, options=("--workers", "2"), house_bots="none")
    try:
        wait_serving(srv, timeout_s=90)
        workers = await _live_workers(db_url, 2)
        killed = min(workers)
        os.kill(killed, signal.SIGKILL)
        async with asyncio.timeout(60):
            while True:  # a new worker, and the killed one's lease ended by it
                live = {int(str(pid)) for (pid,) in await stored_rows(db_url, LIVE)}
                if killed not in live and len(live) == 2:
                    break
                await asyncio.sleep(0.1)
        (replacement,) = live - workers
        assert _parent(replacement) == srv.proc.pid
        assert "died (status -9): starting another" in srv.log
        srv.proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert await asyncio.to_thread(srv.proc.wait, 60) == 0, srv.log
        await _stopped_cleanly(db_url, live)
        assert "Traceback" not in srv.log, srv.log
    finally:
        srv.stop()


@pytest.mark.postgresql_only
@pytest.mark.timeout(120)
async def test_workers_whose_parent_is_killed_stop_by_themselves(db_url: str) -> None:
    srv = launch_server_process(db_url, options=("--workers", "2"), house_bots="none")
    try:
        wait_serving(srv, timeout_s=90)
        workers = await _live_workers(db_url, 2)
        srv.proc.send_signal(signal.SIGKILL)
        await asyncio.to_thread(srv.proc.wait, 10)
        async with asyncio.timeout(60):
            while any(Path(f"/proc/{pid}").exists() for pid in workers):
                await asyncio.sleep(0.1)
        await _stopped_cleanly(db_url, workers)
        assert "its parent" in srv.log and "is gone; stopping" in srv.log, srv.log
    finally:
        srv.stop()
