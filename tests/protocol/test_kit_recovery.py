"""The kit never idles while it wants matches: dropped or refused requests are sent again.

Against a real server (uvicorn on a free port, real SQLite, real WebSockets), and, where the exact
sequence of server messages matters (an error the real server sends only under load, or a
``retry_after_ms``), against a scripted WebSocket server speaking the protocol message by message.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from ply_arena import games
from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock
from ply_arena.protocol.messages import ErrorMessage, JoinLobby, Ping, Welcome

GAME = "tic_tac_toe"


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


@pytest.mark.slow
async def test_two_kit_bots_play_a_thousand_fast_matches_to_the_end(live_server: Any) -> None:
    # The server's default rate limit (20 messages/s, bursts of 60) and the kit's defaults
    # (concurrent=1): one join per match, far more than 20 matches a second. Before the kit
    # resent dropped joins, both bots idled for ever after about 100 matches.
    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    n = 1000
    a = BotClient(live_server.ws_url, token_a, random_choose, game=GAME, games=n)
    b = BotClient(live_server.ws_url, token_b, random_choose, game=GAME, games=n)
    results_a, results_b = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 600)
    assert len(results_a) == len(results_b) == n
    assert {r.match_id for r in results_a} == {r.match_id for r in results_b}
    assert all(r.termination.value == "normal" for r in results_a)
    assert a.lost_track == b.lost_track == []
    listing = live_server.api("GET", "/api/matches", params={"limit": 1}).json()
    assert listing["total"] == n


async def test_a_bot_whose_join_is_dropped_by_the_rate_limit_recovers(start_server: Any) -> None:
    # A burst of 20 and 4 tokens a second: the bot spends its burst on pings right after the
    # welcome, so its join is dropped (and answered with a non-fatal rate_limited naming it).
    server = start_server(rate_limit_burst=20, rate_limit_per_s=4.0)
    _, token_a = server.create_bot()
    _, token_b = server.create_bot()
    errors: list[ErrorMessage] = []
    joins: list[float] = []

    class Flooding(BotClient):
        async def on_welcome(self, message: Welcome) -> None:
            for i in range(24):
                await self.send(Ping(id=1000 + i))
            await super().on_welcome(message)

        async def on_error(self, message: ErrorMessage) -> None:
            errors.append(message)
            await super().on_error(message)

        async def send(self, message: Any) -> None:
            if isinstance(message, JoinLobby):
                joins.append(time.monotonic())
            await super().send(message)

    a = Flooding(server.ws_url, token_a, random_choose, game=GAME, games=2)
    b = BotClient(server.ws_url, token_b, random_choose, game=GAME, games=2)
    results, _ = await asyncio.wait_for(asyncio.gather(a.run(), b.run()), 30)
    assert [r.termination.value for r in results] == ["normal", "normal"]
    # Every dropped message is answered (non-fatal), the join among them.
    assert errors and all(e.code == "rate_limited" and not e.fatal for e in errors)
    assert any("'join' was dropped" in e.message and e.retry_after_ms for e in errors)
    # The first join went out with the flood and was dropped: the kit sent it again.
    assert len(joins) >= 3


# --- a scripted server: the exact messages a bot gets ---------------------------------------

Script = Callable[[ServerConnection], Awaitable[None]]


@asynccontextmanager
async def scripted(script: Script) -> AsyncIterator[str]:
    """A WebSocket server on a free port running ``script`` for each connection; its URL."""
    async with serve(script, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws"


async def receive(ws: ServerConnection, kind: str) -> dict[str, Any]:
    """The next message of type ``kind`` from the bot (pongs and pings are skipped)."""
    while True:
        message = json.loads(await ws.recv())
        if message["type"] == kind:
            return message  # type: ignore[no-any-return]
        assert message["type"] in ("ping", "pong"), message


async def send(ws: ServerConnection, **message: Any) -> None:
    await ws.send(json.dumps(message))


WELCOME = {
    "type": "welcome", "protocol": 1, "bot": "kit", "server": "script/1", "heartbeat_ms": 15000,
    "matches": [],
}  # fmt: skip


async def play_one_match(ws: ServerConnection, match_id: str, termination: str = "normal") -> None:
    """Answer a join with joined, a match_start and its match_end (no turns: 0 plies)."""
    rules = games.get(GAME)
    position = rules.state_to_json(rules.initial_state())
    tc = {"move_ms": 1000, "bank_ms": 0}
    await send(ws, type="joined", game=GAME, time_control=tc, policy="forfeit", waiting=2)
    seats = [{"seat": 0, "bot": "kit"}, {"seat": 1, "bot": "other"}]
    await send(
        ws, type="match_start", match_id=match_id, game=GAME, seats=seats, your_seat=0,
        time_control=tc, policy="forfeit", position=position,
    )  # fmt: skip
    await send(
        ws, type="match_end", match_id=match_id, payoffs=[0.0, 0.0], termination=termination,
        at_fault=None, position=position, plies=0,
    )  # fmt: skip


async def test_a_rate_limited_join_is_sent_again_after_retry_after_ms() -> None:
    gaps: list[float] = []

    async def script(ws: ServerConnection) -> None:
        await receive(ws, "hello")
        await ws.send(json.dumps(WELCOME))
        await receive(ws, "join")
        await send(
            ws, type="error", code="rate_limited", message="dropped", fatal=False,
            retry_after_ms=300,
        )  # fmt: skip
        refused = time.monotonic()
        await receive(ws, "join")
        gaps.append(time.monotonic() - refused)
        await play_one_match(ws, "m1")
        await ws.wait_closed()

    async with scripted(script) as url:
        # A request timeout far longer than the test: only retry_after_ms can explain a resend.
        bot = BotClient(url, "t", random_choose, game=GAME, games=1, request_timeout_s=60)
        (end,) = await asyncio.wait_for(bot.run(), 10)
    assert end.match_id == "m1"
    (gap,) = gaps
    assert 0.29 <= gap < 2.0


async def test_a_join_that_gets_no_answer_is_sent_again() -> None:
    # A rate limiter that drops silently (the server reports only the first drop of a burst).
    joins = 0

    async def script(ws: ServerConnection) -> None:
        nonlocal joins
        await receive(ws, "hello")
        await ws.send(json.dumps(WELCOME))
        await receive(ws, "join")  # dropped: no answer at all
        joins += 1
        await receive(ws, "join")
        joins += 1
        await play_one_match(ws, "m1")
        await ws.wait_closed()

    async with scripted(script) as url:
        bot = BotClient(url, "t", random_choose, game=GAME, games=1, request_timeout_s=0.3)
        (end,) = await asyncio.wait_for(bot.run(), 10)
    assert end.match_id == "m1" and joins == 2


async def test_unknown_match_for_a_tracked_match_drops_it_and_the_bot_plays_on() -> None:
    # The server no longer knows a match the kit plays (its match_end never arrived): the kit
    # must forget it and join again, not wait for turns that will never come.
    async def script(ws: ServerConnection) -> None:
        rules = games.get(GAME)
        position = rules.state_to_json(rules.initial_state())
        tc = {"move_ms": 1000, "bank_ms": 0}
        await receive(ws, "hello")
        await ws.send(json.dumps(WELCOME))
        await receive(ws, "join")
        await send(ws, type="joined", game=GAME, time_control=tc, policy="forfeit", waiting=2)
        seats = [{"seat": 0, "bot": "kit"}, {"seat": 1, "bot": "other"}]
        await send(
            ws, type="match_start", match_id="gone", game=GAME, seats=seats, your_seat=0,
            time_control=tc, policy="forfeit", position=position,
        )  # fmt: skip
        start = rules.initial_state()
        legal = [rules.format_move(start, m) for m in start.actions()]
        await send(
            ws, type="turn", match_id="gone", ply=0, position=position, legal_moves=legal,
            since_last=[], clocks_ms=[0, 0], move_ms=1000, deadline_ms=1000,
        )  # fmt: skip
        move = await receive(ws, "move")
        await send(
            ws, type="error", code="unknown_match", message="no running match has id 'gone'",
            fatal=False, match_id=move["match_id"],
        )  # fmt: skip
        await receive(ws, "join")
        await play_one_match(ws, "m2")
        await ws.wait_closed()

    async with scripted(script) as url:
        bot = BotClient(url, "t", random_choose, game=GAME, games=2, request_timeout_s=60)
        results = await asyncio.wait_for(bot.run(), 10)
    assert [r.match_id for r in results] == ["m2"]
    assert bot.lost_track == ["gone"] and bot.matches == {}


async def test_an_aborted_match_does_not_count_towards_games() -> None:
    # A server restart aborts the running match: a student asking for 2 games gets 2 real ones.
    async def script(ws: ServerConnection) -> None:
        await receive(ws, "hello")
        await ws.send(json.dumps(WELCOME))
        for match_id, termination in [("m1", "normal"), ("m2", "aborted"), ("m3", "normal")]:
            await receive(ws, "join")
            await play_one_match(ws, match_id, termination)
        await ws.wait_closed()

    async with scripted(script) as url:
        bot = BotClient(url, "t", random_choose, game=GAME, games=2, request_timeout_s=60)
        results = await asyncio.wait_for(bot.run(), 10)
    # The aborted match is returned too, in its place.
    assert [(r.match_id, r.termination.value) for r in results] == [
        ("m1", "normal"), ("m2", "aborted"), ("m3", "normal"),
    ]  # fmt: skip
    assert bot.aborted == 1
