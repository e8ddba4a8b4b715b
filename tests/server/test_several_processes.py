"""Two ``arena serve`` processes on one PostgreSQL database (issue 22, server/cluster): a process
that starts leaves the running matches of a live one alone, and the matches of a process killed
with kill -9 are taken over by the other one, whose bots (the kit, reconnecting through a
forwarder as through a load balancer) play them to a ``normal`` end, each stored once."""

from __future__ import annotations

import asyncio
import random
import signal
import time

import httpx
import pytest
from _forwarder import Forwarder
from _playing import to_the_end
from _rebuild import assert_ratings_equal_a_rebuild
from _server_process import ServerProcess, start_server_process
from sqlalchemy import text

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock
from ply_arena.protocol.messages import TimeControl
from ply_arena.protocol.verify import verify_record
from ply_arena.server.db.database import Database

pytestmark = pytest.mark.postgresql_only

#: Short leases, so that a take-over comes within a few seconds.
LEASE_S = "1.5"


def slow_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    time.sleep(0.03)  # matches last long enough to be cut
    return random.choice(legal_moves)


async def _owners(db_url: str) -> dict[str, tuple[str, str | None]]:
    """match id -> (status, owner), as stored."""
    database = Database(db_url)
    try:
        async with database.session() as session:
            rows = await session.execute(text("SELECT id, status, owner FROM matches"))
            return {match_id: (status, owner) for match_id, status, owner in rows}
    finally:
        await database.dispose()


async def _instance_of(db_url: str, srv: ServerProcess) -> str:
    database = Database(db_url)
    try:
        async with database.session() as session:
            found = await session.scalar(
                text("SELECT id FROM instances WHERE pid = :pid AND stopped_at IS NULL"),
                {"pid": srv.proc.pid},
            )
    finally:
        await database.dispose()
    assert found is not None
    return str(found)


async def _running(srv: ServerProcess, n: int, plies: int) -> list[str]:
    """Once ``n`` matches run with at least ``plies`` each: their ids."""
    async with httpx.AsyncClient(base_url=srv.url, timeout=5) as http, asyncio.timeout(60):
        while True:
            page = (await http.get("/api/matches?status=running")).json()
            if page["total"] == n and all(m["plies"] >= plies for m in page["matches"]):
                return [m["id"] for m in page["matches"]]
            await asyncio.sleep(0.05)


def _bots(srv: ServerProcess, url: str, n: int, prefix: str) -> list[BotClient]:
    return [
        BotClient(
            url, srv.create_bot(f"{prefix}{i}"), slow_random, game="othello", games=1,
            max_retries=50,
        )
        for i in range(n)
    ]  # fmt: skip


async def test_a_second_process_leaves_the_running_matches_of_the_first_alone(db_url: str) -> None:
    first = start_server_process(db_url, house_bots="none", lease_s=LEASE_S)
    second: ServerProcess | None = None
    try:
        bots = _bots(first, first.ws_url, 2, "alone")
        playing = [asyncio.create_task(bot.run()) for bot in bots]
        (match_id,) = await _running(first, 1, 4)
        second = start_server_process(db_url, house_bots="none", lease_s=LEASE_S)
        owner = await _instance_of(db_url, first)
        # Two of the second one's looks for matches to take over, at least.
        await asyncio.sleep(2 * float(LEASE_S) / 6 + 0.5)
        assert (await _owners(db_url))[match_id] == ("running", owner)
        ends = await to_the_end(playing)
        assert [[(e.match_id, e.termination.value) for e in bot_ends] for bot_ends in ends] == [
            [(match_id, "normal")]
        ] * 2
        record = httpx.get(f"{first.url}/api/matches/{match_id}/record", timeout=10).json()
        assert record["resumed"] == [], record["resumed"]  # played through by its process
        assert "resuming" not in second.log, second.log
    finally:
        first.stop()
        if second is not None:
            second.stop()


async def test_the_matches_of_a_killed_process_go_on_on_another_one(db_url: str) -> None:
    first = start_server_process(db_url, house_bots="none", lease_s=LEASE_S)
    second = start_server_process(db_url, house_bots="none", lease_s=LEASE_S)
    try:
        async with Forwarder([first.port, second.port]) as front:
            bots = _bots(first, front.ws_url, 16, "failover")
            playing = [asyncio.create_task(bot.run()) for bot in bots]
            cut = await _running(first, 8, 6)
            owner = await _instance_of(db_url, first)
            assert {(await _owners(db_url))[m] for m in cut} == {("running", owner)}
            first.proc.send_signal(signal.SIGKILL)
            first.proc.wait(timeout=10)
            ends = await to_the_end(playing)
        taken_by = await _instance_of(db_url, second)
        for bot, bot_ends in zip(bots, ends, strict=True):
            # Its match, played to its end on the other process: nothing lost or replayed.
            assert bot.lost_track == [], bot.lost_track
            assert len(bot_ends) == 1 and bot_ends[0].match_id in cut, bot_ends
            assert bot_ends[0].termination.value == "normal", bot_ends
        assert await _owners(db_url) == dict.fromkeys(cut, ("finished", taken_by))
        with httpx.Client(base_url=second.url, timeout=10) as http:
            assert http.get("/api/matches").json()["total"] == 8  # each stored once
            for match_id in cut:
                record = http.get(f"/api/matches/{match_id}/record").json()
                assert len(record["resumed"]) == 1, record["resumed"]
                assert [e["ply"] for e in record["moves"]] == list(range(record["plies"]))
                assert verify_record(record).ok
        assert second.log.count("resumed at ply") == 8, second.log
    finally:
        first.stop()
        second.stop()
    await assert_ratings_equal_a_rebuild(db_url)


def quick_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def test_ratings_rated_by_two_processes_at_once_equal_a_rebuild(db_url: str) -> None:
    """A bot alone in its queue on each process: the same house bot plays both, at the same
    time, on both processes. Each result's ratings start from the stored ones (the database,
    not a process's memory, is the truth), numbered in one order across processes, so the
    incremental ratings are exactly what a rebuild makes."""
    house = {"house_bots": "tic_tac_toe=random", "house_wait_s": "0.05", "lease_s": LEASE_S}
    first = start_server_process(db_url, **house)
    second = start_server_process(db_url, **house)
    try:
        # Queues of their own (two time controls): each waits alone, and the house bot, which
        # plays on the process of the bot it meets, plays on both at once.
        bots = [
            BotClient(srv.ws_url, srv.create_bot(f"rated{i}"), quick_random,
                      game="tic_tac_toe", games=15,
                      time_control=TimeControl(move_ms=1000 + 500 * i, bank_ms=0))
            for i, srv in enumerate([first, second])
        ]  # fmt: skip
        ends = await to_the_end([asyncio.create_task(bot.run()) for bot in bots])
        assert all(e.termination.value == "normal" for bot_ends in ends for e in bot_ends)
        database = Database(db_url)
        try:
            async with database.session() as session:
                seqs = (await session.execute(text(
                    "SELECT r.rated_seq FROM results r JOIN matches m ON m.id = r.match_id "
                    "WHERE m.rated ORDER BY r.rated_seq"
                ))).scalars().all()  # fmt: skip
                by_process = (await session.execute(text(
                    "SELECT count(DISTINCT m.owner) FROM matches m JOIN seats s "
                    "ON s.match_id = m.id JOIN bots b ON b.id = s.bot_id WHERE b.house"
                ))).scalar()  # fmt: skip
                house_record = (await session.execute(text(
                    "SELECT r.matches FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE b.house"
                ))).scalar()  # fmt: skip
                house_played = (await session.execute(text(
                    "SELECT count(*) FROM seats s JOIN bots b ON b.id = s.bot_id "
                    "JOIN matches m ON m.id = s.match_id WHERE b.house AND m.rated"
                ))).scalar()  # fmt: skip
        finally:
            await database.dispose()
        assert len(seqs) >= 30 and len(set(seqs)) == len(seqs), seqs  # one order, no gap needed
        assert by_process == 2  # the house bot played on both
        assert house_record == house_played > 0
    finally:
        first.stop()
        second.stop()
    await assert_ratings_equal_a_rebuild(db_url)
