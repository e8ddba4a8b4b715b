"""Bots on different ``arena serve`` processes of one PostgreSQL database (issue 22,
server/cluster/directory.py): one connection per bot across processes, a revocation on one
process closes the bot on another, a challenge between bots on two processes is played with the
challenged bot's frames relayed over the bus, and a bot that reconnects to another process than
its match's goes on playing it there."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time
from typing import Any

import httpx
import pytest
import websockets
from _playing import to_the_end
from _server_process import ADMIN_TOKEN, ServerProcess, start_server_process
from _sql import rows as stored_rows
from _waiting import until_read
from _ws_client import WsBot

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock
from ply_arena.protocol.verify import verify_record

pytestmark = pytest.mark.postgresql_only


def _two(db_url: str) -> tuple[ServerProcess, ServerProcess]:
    first = start_server_process(db_url, house_bots="none", lease_s="1.5")
    try:
        return first, start_server_process(db_url, house_bots="none", lease_s="1.5")
    except BaseException:
        first.stop()
        raise


async def _hello(url: str, token: str) -> Any:
    ws = await websockets.connect(url, open_timeout=5)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token}))
    welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert welcome["type"] == "welcome", welcome
    return ws


async def _fatal(ws: Any) -> dict[str, Any]:
    """The fatal error that ends the connection (pings answered meanwhile)."""
    async with asyncio.timeout(15):
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] == "error" and message.get("fatal"):
                return dict(message)
            if message["type"] == "ping":
                await ws.send(json.dumps({"type": "pong", "id": message["id"]}))
    raise AssertionError("closed without a fatal error")


async def test_a_login_on_another_process_replaces_the_first_connection(db_url: str) -> None:
    first, second = _two(db_url)
    try:
        token = first.create_bot("twice")
        old = await _hello(first.ws_url, token)
        new = await _hello(second.ws_url, token)
        error = await _fatal(old)
        assert error["code"] == "replaced" and "another server process" in error["message"]
        # The new one stays: it answers a ping of its own.
        await new.send(json.dumps({"type": "ping", "id": 4242}))
        async with asyncio.timeout(10):
            while (reply := json.loads(await new.recv()))["type"] != "pong":
                pass
        assert reply["id"] == 4242
        await new.close()
    finally:
        first.stop()
        second.stop()


async def test_a_bot_disabled_through_one_process_is_closed_on_another(db_url: str) -> None:
    first, second = _two(db_url)
    try:
        token = first.create_bot("revoked")
        ws = await _hello(second.ws_url, token)
        await _connected(first, "revoked")
        response = httpx.post(
            f"{first.url}/api/bots/revoked/disable",
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=10,
        )
        assert response.status_code == 200, response.text
        error = await _fatal(ws)
        assert error["code"] == "bot_disabled", error
    finally:
        first.stop()
        second.stop()


def slow_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    time.sleep(0.02)
    return random.choice(legal_moves)


async def test_a_challenge_between_bots_on_two_processes_is_played_across(db_url: str) -> None:
    first, second = _two(db_url)
    try:
        challenger = BotClient(
            first.ws_url, first.create_bot("across-a"), slow_random, game="connect_four",
            challenge=["across-b"], games=1,
        )  # fmt: skip
        challenged = BotClient(
            second.ws_url, first.create_bot("across-b"), slow_random, lobby=False,
            accept_challenges=True, games=1,
        )  # fmt: skip
        answering = asyncio.create_task(challenged.run())
        await _connected(first, "across-b")  # connected to the second: the first knows
        playing = asyncio.create_task(challenger.run())
        ends = await to_the_end([playing, answering], 60)
        assert [[e.termination.value for e in bot_ends] for bot_ends in ends] == [["normal"]] * 2
        (match_id,) = {e.match_id for bot_ends in ends for e in bot_ends}
        record = httpx.get(f"{second.url}/api/matches/{match_id}/record", timeout=10).json()
        assert record["status"] == "finished" and verify_record(record).ok
        assert [s["bot"] for s in record["seats"]] and record["resumed"] == []
    finally:
        first.stop()
        second.stop()


async def _connected(srv: ServerProcess, name: str) -> None:
    """Once ``srv`` (any process) says the bot is connected: its page says so."""
    async with httpx.AsyncClient(base_url=srv.url, timeout=5) as http, asyncio.timeout(20):
        while "Connected now" not in (await http.get(f"/bots/{name}")).text:
            await asyncio.sleep(0.05)


async def test_a_bot_that_reconnects_to_another_process_plays_its_match_on(db_url: str) -> None:
    """Two bots play on the first process; one of them is cut and comes back through the second
    one (as a load balancer may send it): its match goes on where it is played, relayed."""
    first, second = _two(db_url)
    try:
        a = BotClient(first.ws_url, first.create_bot("stay"), slow_random, game="othello")
        b = BotClient(first.ws_url, first.create_bot("move"), slow_random, game="othello",
                      max_retries=50)  # fmt: skip
        tasks = [asyncio.create_task(a.run()), asyncio.create_task(b.run())]
        async with httpx.AsyncClient(base_url=first.url, timeout=5) as http, asyncio.timeout(30):
            while not (page := (await http.get("/api/matches?status=running")).json())["total"]:
                await asyncio.sleep(0.05)
            match_id = page["matches"][0]["id"]
            while (await http.get("/api/matches?status=running")).json()["matches"][0]["plies"] < 6:
                await asyncio.sleep(0.05)
        # Cut b's connection; the kit reconnects, to the second process this time.
        b.url = second.ws_url
        assert b._ws is not None
        await b._ws.close()
        ends = await to_the_end(tasks)
        assert [[(e.match_id, e.termination.value) for e in bot_ends] for bot_ends in ends] == [
            [(match_id, "normal")]
        ] * 2
        assert b.lost_track == []
        record = httpx.get(f"{first.url}/api/matches/{match_id}/record", timeout=10).json()
        assert record["resumed"] == [] and verify_record(record).ok  # played through, relayed
        assert "login move" in second.log, second.log
    finally:
        first.stop()
        second.stop()


async def _spectate(url: str) -> list[dict[str, Any]]:
    """Every message a spectator gets until the stream ends."""
    got: list[dict[str, Any]] = []
    async with websockets.connect(url, open_timeout=5) as ws, asyncio.timeout(60):
        async for raw in ws:
            got.append(json.loads(raw))
    return got


async def test_a_match_played_on_one_process_is_watched_live_on_another(db_url: str) -> None:
    first, second = _two(db_url)
    try:
        bots = [
            BotClient(first.ws_url, first.create_bot(f"watched{i}"), slow_random,
                      game="connect_four")
            for i in range(2)
        ]  # fmt: skip
        tasks = [asyncio.create_task(bot.run()) for bot in bots]
        async with httpx.AsyncClient(base_url=first.url, timeout=5) as http, asyncio.timeout(30):
            while not (page := (await http.get("/api/matches?status=running")).json())["total"]:
                await asyncio.sleep(0.05)
        match_id = page["matches"][0]["id"]
        # The other process's home page lists it among the matches being played now.
        assert match_id in httpx.get(f"{second.url}/", timeout=10).text
        path = f"/ws/watch/{match_id}"
        there, here = await asyncio.gather(
            _spectate(second.ws_url.replace("/ws", path)),
            _spectate(first.ws_url.replace("/ws", path)),
        )
        await to_the_end(tasks, 60)
        for got in (there, here):
            assert got[0]["type"] == "watch_start", got[0]
            assert got[-1]["type"] == "match_end", got[-1]
            # Every move after the snapshot, once each, in order: none lost, none twice.
            start = len(got[0]["moves"])
            plies = [m["ply"] for m in got if m["type"] == "move"]
            assert plies == list(range(start, got[-1]["plies"])), (start, plies)
        assert there[-1] == here[-1]  # the same end, relayed from the process that plays it
        assert first.log.count("resumed") == 0
    finally:
        first.stop()
        second.stop()


async def test_a_match_taken_over_waits_for_a_bot_whose_process_died(db_url: str) -> None:
    """bob on the second process challenges dave on the first (the match is played on the
    second); the second is killed while bob holds his turn. The first takes the match over and,
    since bob's process is gone, counts him absent: the match waits for him
    (ARENA_RESUME_WAIT_S) instead of running his clock, and he comes back through the first
    later than his move time would allow, and plays on to a normal end."""
    first, second = _two(db_url)
    try:
        dave_token = first.create_bot("dave")
        bob_token = first.create_bot("bob")
        dave = await WsBot.connect(first.ws_url, dave_token)
        bob = await WsBot.connect(second.ws_url, bob_token)
        await _connected(second, "dave")
        await bob.send({"type": "challenge", "game": "tic_tac_toe", "opponents": ["dave"],
                        "time_control": {"move_ms": 2000, "bank_ms": 0}})  # fmt: skip
        received = await dave.expect("challenge_received", timeout=10)
        await dave.send({"type": "accept", "challenge_id": received["challenge_id"]})
        match_id = (await dave.expect("match_start", timeout=10))["match_id"]
        daves_play = asyncio.create_task(dave.play(match_id, timeout=60))
        await bob.expect("turn", timeout=20, match_id=match_id)  # held: bob never answers it
        second.proc.send_signal(signal.SIGKILL)
        second.proc.wait(timeout=10)
        (first_id,) = await stored_rows(
            db_url, "SELECT id FROM instances WHERE pid = :p AND stopped_at IS NULL",
            p=first.proc.pid,
        )  # fmt: skip

        async def taken_over() -> bool:
            found = await stored_rows(db_url, "SELECT owner FROM matches WHERE id = :m", m=match_id)
            return found == [first_id]

        await until_read(taken_over, 30, "the match taken over by the first process")
        # The scenario: bob is slower to come back than his move time (2 s, no bank).
        await asyncio.sleep(3.0)
        bob_again = await WsBot.connect(first.ws_url, bob_token)
        assert bob_again.welcome is not None
        assert match_id in bob_again.welcome["matches"]
        end = await bob_again.play(match_id, timeout=60)
        assert end["termination"] == "normal", end
        assert (await daves_play)["termination"] == "normal"
        assert "no longer count as connected" in first.log, first.log
        await dave.close()
        await bob_again.close()
    finally:
        first.stop()
        second.stop()
