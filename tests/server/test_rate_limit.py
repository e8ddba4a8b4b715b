"""The rate limit stops floods, never honest play: what a bot sends to play costs nothing, a
dropped message is named and carries when to send it again, and per-bot limits are coded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from _ws_client import Message, WsBot
from conftest import LiveServer


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def test_fast_honest_bots_play_hundreds_of_matches_unlimited(live_server: LiveServer) -> None:
    """One join per match, moves, pongs: far past the burst of 60 and the rate of 20/s, and no
    message is ever dropped (before the fix, such bots stalled after about 100 matches)."""
    assert (live_server.settings.rate_limit_per_s, live_server.settings.rate_limit_burst) == (
        20.0,
        60,
    )
    _, ta = live_server.create_bot()
    _, tb = live_server.create_bot()
    a = await WsBot.connect(live_server.ws_url, ta)
    b = await WsBot.connect(live_server.ws_url, tb)
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 2000}}
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    ends: list[Message] = []
    for _ in range(300):
        await a.send(join)
        await b.send(join)
        start = await a.expect("match_start", timeout=10)
        end, _ = await asyncio.gather(
            a.play(start["match_id"], timeout=10), b.play(start["match_id"], timeout=10)
        )
        ends.append(end)
    rate = len(ends) / (loop.time() - t0)
    assert all(e["termination"] == "normal" for e in ends)
    assert [m for m in a.log + b.log if m["type"] == "error"] == []
    # Each bot sent over 5 messages per match: well beyond 20/s unless the machine is very slow.
    assert rate * 5 > 20 or len(ends) * 5 > 60, rate


async def test_a_dropped_message_is_named_with_when_to_send_it_again(
    live_server: LiveServer,
) -> None:
    _, token = live_server.create_bot()
    bot = await WsBot.connect(live_server.ws_url, token)
    burst = live_server.settings.rate_limit_burst
    for i in range(burst):  # pings cost a token each (they are not part of playing)
        await bot.send({"type": "ping", "id": i})
    await bot.send({"type": "join", "game": "tic_tac_toe"})
    # The bucket is empty by now (the hello took a token too): every dropped message is
    # answered, the join last.
    error = await bot.expect_error("rate_limited")
    while "'join'" not in error["message"]:
        assert "'ping' was dropped" in error["message"]
        error = await bot.expect_error("rate_limited")
    assert error["fatal"] is False
    assert "'join' was dropped" in error["message"]
    assert 0 < error["retry_after_ms"] <= 1000 / live_server.settings.rate_limit_per_s + 1
    # It was not acted on: not in the queue. Sent again after retry_after_ms, it is.
    await asyncio.sleep(error["retry_after_ms"] / 1000)
    await bot.send({"type": "join", "game": "tic_tac_toe"})
    joined = await bot.expect("joined")
    assert joined["waiting"] == 1
    assert not [m for m in bot.log if m["type"] == "error" and m["code"] != "rate_limited"]


async def test_answered_pongs_and_joins_cost_nothing(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(heartbeat_s=0.01, heartbeat_misses=1000)
    _, token = srv.create_bot()
    bot = await WsBot.connect(srv.ws_url, token)  # answers every ping (100 per second)
    burst = srv.settings.rate_limit_burst
    # Joining and leaving many queues: the joins are free, the leaves are not.
    for move_ms in range(1000, 1000 + burst // 2):
        await bot.send(
            {"type": "join", "game": "connect_four", "time_control": {"move_ms": move_ms}}
        )
        await bot.expect("joined")
        await bot.send({"type": "leave", "game": "connect_four"})
        await bot.expect("left")
    await asyncio.sleep(1.5)  # ~150 pings answered meanwhile, more than twice the burst
    assert not [m for m in bot.log if m["type"] == "error"]


async def test_per_bot_limits_are_coded(live_server: LiveServer) -> None:
    settings = live_server.settings
    _, token = live_server.create_bot()
    target, target_token = live_server.create_bot()
    bot = await WsBot.connect(live_server.ws_url, token)
    await WsBot.connect(live_server.ws_url, target_token)
    for i in range(settings.max_queues_per_bot):
        await bot.send({"type": "join", "game": "othello", "time_control": {"move_ms": 1000 + i}})
        await bot.expect("joined")
    await bot.send({"type": "join", "game": "othello", "time_control": {"move_ms": 999}})
    error = await bot.expect_error("limit_reached")
    assert f"{settings.max_queues_per_bot} queues" in error["message"] and not error["fatal"]
    # Joining a queue it already waits in is still fine.
    await bot.send({"type": "join", "game": "othello", "time_control": {"move_ms": 1000}})
    await bot.expect("joined")

    challenge = {"type": "challenge", "game": "connect_four", "opponents": [target]}
    for _ in range(settings.max_challenges_per_bot):
        await bot.send(challenge)
        await bot.expect("challenge_sent")
    await bot.send(challenge)
    error = await bot.expect_error("limit_reached")
    assert f"{settings.max_challenges_per_bot} challenges" in error["message"]


async def test_the_pong_to_the_servers_ping_is_never_dropped(
    start_server: Callable[..., LiveServer],
) -> None:
    """With the allowance spent, the answers to the server's pings still count (they measure
    the latency grace) and are never answered with rate_limited."""
    srv = start_server(
        heartbeat_s=0.1, heartbeat_misses=100, rate_limit_per_s=0.5, rate_limit_burst=5
    )
    name, token = srv.create_bot()
    bot = await WsBot.connect(srv.ws_url, token)  # answers every server ping with a pong
    for i in range(4):  # with the hello: the whole burst
        await bot.send({"type": "ping", "id": 100 + i})
    session = srv.app.state.referee.connections.by_name(name)
    await asyncio.sleep(1.0)  # about ten server pings, answered, while no token is left
    dropped = [m for m in bot.log if m["type"] == "error"]
    assert dropped == [], dropped
    assert session is not None and session.rtt_ms() is not None
    assert session._bucket.tokens < 1.0  # the allowance really was spent meanwhile
