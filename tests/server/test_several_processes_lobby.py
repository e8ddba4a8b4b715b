"""One lobby for every process of one PostgreSQL database (issue 22,
server/cluster/shared_lobby.py): bots waiting on different processes meet, with the lobby's
rules across processes (seat rotation, each match stored once), and the lobby goes on when the
process that leads it is killed."""

from __future__ import annotations

import asyncio
import random
import signal
import time
from typing import Any

import httpx
import pytest
from _playing import to_the_end
from _rebuild import assert_ratings_equal_a_rebuild
from _server_process import ServerProcess, start_server_process

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock

pytestmark = pytest.mark.postgresql_only


def quick(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


def slow(state: State, legal_moves: list[str], clock: Clock) -> str:
    time.sleep(0.02)
    return random.choice(legal_moves)


def _records(srv: ServerProcess) -> list[dict[str, Any]]:
    with httpx.Client(base_url=srv.url, timeout=10) as http:
        listed = http.get("/api/matches?limit=100").json()["matches"]
        return [http.get(f"/api/matches/{m['id']}/record").json() for m in listed]


async def test_bots_waiting_on_two_processes_meet(db_url: str) -> None:
    first = start_server_process(db_url, house_bots="none", lease_s="1.5")
    second = start_server_process(db_url, house_bots="none", lease_s="1.5")
    try:
        here = BotClient(first.ws_url, first.create_bot("here"), quick, game="tic_tac_toe", games=4)
        there = BotClient(
            second.ws_url, first.create_bot("there"), quick, game="tic_tac_toe", games=4
        )
        ends = await to_the_end([asyncio.create_task(b.run()) for b in (here, there)])
        assert all(e.termination.value == "normal" for bot_ends in ends for e in bot_ends)
        # Alone in their processes, they could only meet each other: the same four matches.
        assert {e.match_id for e in ends[0]} == {e.match_id for e in ends[1]}
        records = sorted(_records(second), key=lambda r: r["created_at"])
        assert len(records) == 4  # each stored once
        # Seats alternate from one match to the next, whichever process played it.
        assert [r["seats"][0]["bot"] for r in records] == ["here", "there"] * 2
        assert "leads the lobby" in first.log + second.log
    finally:
        first.stop()
        second.stop()
    await assert_ratings_equal_a_rebuild(db_url)


async def test_the_lobby_goes_on_when_the_process_that_leads_it_is_killed(db_url: str) -> None:
    leader = start_server_process(db_url, house_bots="none", lease_s="1.5")
    other = start_server_process(db_url, house_bots="none", lease_s="1.5")
    try:
        assert "leads the lobby" in leader.log  # the first to start
        bots = [
            BotClient(other.ws_url, leader.create_bot(f"stays{i}"), slow, game="tic_tac_toe",
                      games=4)
            for i in range(2)
        ]  # fmt: skip
        tasks = [asyncio.create_task(bot.run()) for bot in bots]
        async with httpx.AsyncClient(base_url=other.url, timeout=5) as http, asyncio.timeout(30):
            while not (await http.get("/api/matches?status=finished")).json()["total"]:
                await asyncio.sleep(0.05)
        leader.proc.send_signal(signal.SIGKILL)
        leader.proc.wait(timeout=10)
        ends = await to_the_end(tasks)
        assert [len(bot_ends) for bot_ends in ends] == [4, 4]
        assert all(e.termination.value == "normal" for bot_ends in ends for e in bot_ends)
        assert "leads the lobby" in other.log, other.log
    finally:
        leader.stop()
        other.stop()
