"""The rate limit stops floods, never honest play: what a bot sends to play costs nothing, a
dropped message is named and carries when to send it again, and per-bot limits are coded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from _waiting import until
from _ws_client import Message, WsBot
from conftest import LiveServer


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def test_fast_honest_bots_play_hundreds_of_matches_unlimited(
    start_server: Callable[..., LiveServer],
) -> None:
    """One join per match, moves, pongs: far more than the bucket holds, and no message is
    ever dropped (before the fix, such bots stalled after about 100 matches). A small bucket
    (2 a second, 10 at most) makes "far more" hold on any machine."""
    srv = start_server(rate_limit_per_s=2.0, rate_limit_burst=10, heartbeat_s=0.2)
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    a = await WsBot.connect(srv.ws_url, ta)
    b = await WsBot.connect(srv.ws_url, tb)
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 2000}}
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    ends: list[Message] = []
    for _ in range(100):
        await a.send(join)
        await b.send(join)
        start = await a.expect("match_start", timeout=10)
        end, _ = await asyncio.gather(
            a.play(start["match_id"], timeout=10), b.play(start["match_id"], timeout=10)
        )
        ends.append(end)
    elapsed = loop.time() - t0
    assert all(e["termination"] == "normal" for e in ends)
    assert [m for m in a.log + b.log if m["type"] == "error"] == []
    # What the bucket could have allowed in that time, had these messages cost a token.
    allowance = 10 + 2.0 * elapsed
    assert min(a.sent, b.sent) > allowance, (a.sent, b.sent, allowance)


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
    # The server pings 100 times a second: wait for 150 answers, more than twice the burst.
    answered = bot.sent + 150
    await until(lambda: bot.sent >= answered, 30, "150 pings answered")
    # A round trip behind them: any refusal of those pongs would have arrived before this.
    await bot.send({"type": "ping", "id": 7})
    await bot.expect("pong", id=7)
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


async def flood(bot: WsBot, pings: int, first_id: int = 0) -> list[Message]:
    """Send ``pings`` pings at once; the answer to each (``pong``, or an ``error``: the
    rate_limited strikes), once every one has come."""
    ids = range(first_id, first_id + pings)
    for i in ids:
        await bot.send({"type": "ping", "id": i})
    answers = []
    while len(answers) < pings:
        message = await bot.recv(timeout=10)
        if message["type"] in ("pong", "error"):
            answers.append(message)
    return answers


def strikes(answers: list[Message]) -> list[Message]:
    return [m for m in answers if m["type"] == "error" and m["code"] == "rate_limited"]


async def test_strikes_are_forgiven_only_once_the_bucket_is_full_again(
    start_server: Callable[..., LiveServer],
) -> None:
    """More than a burst of strikes closes the connection, counted since the bucket was last
    full: a pause that refills a token or two forgives nothing; a pause long enough to fill the
    bucket forgives them all. The counts below hold however slowly the frames arrive (a busy
    machine only refills more tokens): what is asserted is counted from the answers."""
    # Half a token a second, 4 at most: full again 8 s after it was empty, so within this test
    # the bucket is never full again.
    srv = start_server(rate_limit_per_s=0.5, rate_limit_burst=4)
    _, token = srv.create_bot()
    bot = await WsBot.connect(srv.ws_url, token)  # the hello took one token
    first = strikes(await flood(bot, 6))  # 3 tokens left (and what refilled meanwhile)
    assert 1 <= len(first) <= 3 and all(not e["fatal"] for e in first), first
    # One more ping at a time until the connection closes: it closes on the 5th strike in all,
    # the pongs in between (tokens refilled meanwhile) forgiving nothing.
    count = len(first)
    for i in range(100, 200):
        await bot.send({"type": "ping", "id": i})
        answer = await bot.recv(timeout=10)
        if answer["type"] == "error":
            assert answer["code"] == "rate_limited", answer
            count += 1
            if answer["fatal"]:
                break
            assert count <= 4, "a strike beyond the burst must close the connection"
    assert count == 5 and "closing" in answer["message"], (count, answer)
    assert await bot.expect_closed() == 1008

    # Quiet until the bucket is full again: the strikes so far are forgiven. Two tokens a
    # second, 4 at most: full 2 s after it was empty.
    srv2 = start_server(rate_limit_per_s=2.0, rate_limit_burst=4)
    _, token2 = srv2.create_bot()
    bot2 = await WsBot.connect(srv2.ws_url, token2)
    earlier = strikes(await flood(bot2, 7))
    await asyncio.sleep(3.0)  # the quiet itself is what is tested: at least the 2 s it takes
    later = strikes(await flood(bot2, 8, first_id=100))
    # Together more than a burst (had nothing been forgiven, the connection would be closed)...
    assert len(earlier) + len(later) > 4 and earlier and later, (earlier, later)
    assert all(not e["fatal"] for e in earlier + later)
    await asyncio.sleep(1.0)  # two tokens again
    await bot2.send({"type": "ping", "id": 999})
    await bot2.expect("pong", id=999)  # ... yet it is still connected
