"""The handshake, the lobby, challenges and the one-connection-per-bot rule, over real sockets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import pytest
from _waiting import until
from _ws_client import WsBot, rederive, start_pair
from conftest import LiveServer


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def test_hello_gets_welcome_and_ping(live_server: LiveServer) -> None:
    name, token = live_server.create_bot()
    bot = await WsBot.connect(live_server.ws_url, token, answer_pings=False)
    assert bot.welcome is not None
    assert bot.welcome["bot"] == name
    assert bot.welcome["protocol"] == 1
    assert bot.welcome["matches"] == []
    assert bot.welcome["heartbeat_ms"] == round(live_server.settings.heartbeat_s * 1000)
    # The server measures the round trip at once; answering feeds the latency grace.
    ping = await bot.expect("ping")
    await bot.send({"type": "pong", "id": ping["id"]})
    await bot.send({"type": "ping", "id": 77})
    assert (await bot.expect("pong"))["id"] == 77
    referee = live_server.app.state.referee
    conn = referee.connections.by_name(name)
    assert conn is not None and conn.rtt_ms() is not None and conn.rtt_ms() >= 0
    await bot.close()


async def test_heartbeat_pings_repeat(start_server: Callable[..., LiveServer]) -> None:
    srv = start_server(heartbeat_s=0.1)
    _, token = srv.create_bot()
    bot = await WsBot.connect(srv.ws_url, token, answer_pings=False)
    ids = [(await bot.expect("ping"))["id"] for _ in range(3)]
    assert ids == sorted(set(ids))
    await bot.close()


async def test_messages_are_answered_in_the_order_sent(
    start_server: Callable[..., LiveServer],
) -> None:
    """A logged-in bot's text messages go straight to its session as the connection parses them,
    unless something waits in ASGI's queue before them; a binary frame always goes through that
    queue. Sent interleaved and at once, every message is answered, in the order sent."""
    srv = start_server(rate_limit_per_s=10_000, rate_limit_burst=10_000)
    _, token = srv.create_bot()
    bot = await WsBot.connect(srv.ws_url, token, answer_pings=False)
    frames: list[str | bytes] = [
        b"\x00" if i % 3 == 0 else json.dumps({"type": "ping", "id": 1000 + i}) for i in range(90)
    ]
    expected = [
        "binary_frame" if isinstance(frame, bytes) else f"pong {1000 + i}"
        for i, frame in enumerate(frames)
    ]
    for frame in frames:
        await bot.ws.send(frame)
    answers: list[str] = []
    while len(answers) < len(frames):
        message = await bot.recv()
        if message["type"] == "error":
            answers.append(message["code"])
        elif message["type"] == "pong":
            answers.append(f"pong {message['id']}")
    assert answers == expected
    await bot.close()


async def test_lobby_pairs_first_come_and_alternates_seats(live_server: LiveServer) -> None:
    name_a, token_a = live_server.create_bot()
    name_b, token_b = live_server.create_bot()
    a, b, start_a, start_b = await start_pair(live_server.ws_url, token_a, token_b)
    seats = {s["bot"]: s["seat"] for s in start_a["seats"]}
    assert start_a["your_seat"] == seats[name_a] and start_b["your_seat"] == seats[name_b]
    assert start_a["game"] == "tic_tac_toe" and start_a["policy"] == "forfeit"
    assert start_a["time_control"] == {"move_ms": 500, "bank_ms": 0}
    match_id = start_a["match_id"]
    end_a, end_b = await asyncio.gather(a.play(match_id), b.play(match_id))
    assert end_a == end_b and end_a["termination"] == "normal"

    # The same two bots again: the seats swap.
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 500}}
    await b.send(join)
    joined = await b.expect("joined")
    assert joined["waiting"] == 1 and joined["time_control"] == {"move_ms": 500, "bank_ms": 0}
    await a.send(join)
    second = await a.expect("match_start")
    seats2 = {s["bot"]: s["seat"] for s in second["seats"]}
    assert seats2[name_a] == 1 - seats[name_a] and seats2[name_b] == 1 - seats[name_b]
    await asyncio.gather(a.play(second["match_id"]), b.play(second["match_id"]))

    for mid in (match_id, second["match_id"]):
        record = live_server.api("GET", f"/api/matches/{mid}").json()
        rederive(record)
    await a.close()
    await b.close()


async def test_queues_are_per_time_control_and_leave_works(live_server: LiveServer) -> None:
    _, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    a = await WsBot.connect(live_server.ws_url, token_a)
    b = await WsBot.connect(live_server.ws_url, token_b)
    await a.send({"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 300}})
    await a.expect("joined")
    await b.send({"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 400}})
    assert (await b.expect("joined"))["waiting"] == 1  # another queue: not paired
    await a.send({"type": "leave", "game": "tic_tac_toe"})
    assert (await a.expect("left"))["game"] == "tic_tac_toe"
    await b.send({"type": "leave"})
    assert (await b.expect("left"))["game"] is None
    await a.send({"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 300}})
    assert (await a.expect("joined"))["waiting"] == 1  # the old entry was gone
    await a.send({"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 300}})
    assert (await a.expect("joined"))["waiting"] == 1  # joining twice is a no-op
    await a.send({"type": "join", "game": "go"})
    assert "tic_tac_toe" in (await a.expect_error("unknown_game"))["message"]
    await a.send({"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 1}})
    await a.expect_error("bad_time_control")
    assert live_server.app.state.referee.matches == {}
    await a.close()
    await b.close()


async def test_challenge_accept_decline_and_unknowns(live_server: LiveServer) -> None:
    name_a, token_a = live_server.create_bot()
    name_b, token_b = live_server.create_bot()
    name_c, _ = live_server.create_bot()  # exists but is not connected
    a = await WsBot.connect(live_server.ws_url, token_a)
    b = await WsBot.connect(live_server.ws_url, token_b)

    challenge = {"type": "challenge", "game": "tic_tac_toe", "opponents": [name_b]}
    await a.send({**challenge, "time_control": {"move_ms": 400, "bank_ms": 100}})
    sent = await a.expect("challenge_sent")
    received = await b.expect("challenge_received")
    assert received["challenge_id"] == sent["challenge_id"]
    assert received["challenger"] == name_a and received["opponents"] == [name_b]
    assert received["time_control"] == {"move_ms": 400, "bank_ms": 100}
    await b.send({"type": "decline", "challenge_id": sent["challenge_id"]})
    declined = await a.expect("challenge_declined")
    assert declined == {**declined, "challenge_id": sent["challenge_id"], "by": name_b}
    # Gone once declined.
    await b.send({"type": "accept", "challenge_id": sent["challenge_id"]})
    await b.expect_error("unknown_challenge")

    await a.send({**challenge, "opponents": [name_c]})
    assert "connected" in (await a.expect_error("unknown_bot"))["message"]
    await a.send({**challenge, "opponents": ["nobody"]})
    await a.expect_error("unknown_bot")
    await a.send({**challenge, "opponents": [name_a]})
    await a.expect_error("unknown_bot")
    await a.send({**challenge, "opponents": [name_b, name_c]})
    await a.expect_error("invalid_message")

    await a.send(challenge)
    sent = await a.expect("challenge_sent")
    # Only a named opponent may answer.
    await a.send({"type": "accept", "challenge_id": sent["challenge_id"]})
    await a.expect_error("unknown_challenge")
    await b.expect("challenge_received")
    await b.send({"type": "accept", "challenge_id": sent["challenge_id"]})
    start_a = await a.expect("match_start")
    start_b = await b.expect("match_start")
    assert start_a["match_id"] == start_b["match_id"]
    mid = start_a["match_id"]
    end, _ = await asyncio.gather(a.play(mid), b.play(mid))
    assert end["termination"] == "normal"
    await a.close()
    await b.close()


async def test_challenge_lapses_when_the_challenger_leaves(live_server: LiveServer) -> None:
    name_a, token_a = live_server.create_bot()
    name_b, token_b = live_server.create_bot()
    a = await WsBot.connect(live_server.ws_url, token_a)
    b = await WsBot.connect(live_server.ws_url, token_b)
    await a.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [name_b]})
    received = await b.expect("challenge_received")
    await a.close()
    connections = live_server.app.state.referee.connections
    await until(lambda: connections.by_name(name_a) is None, 10, "the challenger gone")
    await b.send({"type": "accept", "challenge_id": received["challenge_id"]})
    await b.expect_error("unknown_challenge")
    await b.close()


async def test_a_challenge_nobody_answers_lapses_for_everyone(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(challenge_expiry_s=0.5)
    _, token_a = srv.create_bot()
    name_b, token_b = srv.create_bot()
    a = await WsBot.connect(srv.ws_url, token_a)
    b = await WsBot.connect(srv.ws_url, token_b)
    await a.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [name_b]})
    sent = await a.expect("challenge_sent")
    await b.expect("challenge_received")  # and never answered
    for bot in (a, b):
        lapsed = await bot.expect("challenge_declined", timeout=10)
        assert lapsed == {
            "type": "challenge_declined", "challenge_id": sent["challenge_id"], "by": name_b,
            "reason": "no answer within 0.5 s",
        }  # fmt: skip
    await b.send({"type": "accept", "challenge_id": sent["challenge_id"]})
    await b.expect_error("unknown_challenge")
    await a.close()
    await b.close()


async def test_second_login_replaces_the_first(live_server: LiveServer) -> None:
    name, token = live_server.create_bot()
    first = await WsBot.connect(live_server.ws_url, token)
    await first.send({"type": "join", "game": "tic_tac_toe"})
    await first.expect("joined")
    second = await WsBot.connect(live_server.ws_url, token)
    error = await first.expect_error("replaced")
    assert error["fatal"] is True
    assert await first.expect_closed() == 1008
    # The new connection works; the old queue place was dropped with the old connection.
    await second.send({"type": "join", "game": "tic_tac_toe"})
    assert (await second.expect("joined"))["waiting"] == 1
    referee = live_server.app.state.referee
    assert referee.connections.by_name(name) is not None
    await second.close()


async def test_three_player_challenge(live_server: LiveServer) -> None:
    names, bots = [], []
    for _ in range(3):
        name, token = live_server.create_bot()
        names.append(name)
        bots.append(await WsBot.connect(live_server.ws_url, token))
    host, *guests = bots
    challenge = {"type": "challenge", "game": "chinese_checkers", "opponents": names[1:]}

    # One decline cancels it for everybody.
    await host.send(challenge)
    cid = (await host.expect("challenge_sent"))["challenge_id"]
    for guest in guests:
        received = await guest.expect("challenge_received", challenge_id=cid)
        assert received["opponents"] == names[1:]
    await guests[0].send({"type": "accept", "challenge_id": cid})
    await guests[1].send({"type": "decline", "challenge_id": cid})
    for bot in (host, guests[0]):
        assert (await bot.expect("challenge_declined", challenge_id=cid))["by"] == names[2]

    # All accept: the match starts with three seats.
    await host.send(challenge)
    cid = (await host.expect("challenge_sent"))["challenge_id"]
    for guest in guests:
        await guest.expect("challenge_received", challenge_id=cid)
        await guest.send({"type": "accept", "challenge_id": cid})
    starts = [await bot.expect("match_start") for bot in bots]
    assert sorted(s["your_seat"] for s in starts) == [0, 1, 2]
    mid = starts[0]["match_id"]
    await guests[1].send({"type": "resign", "match_id": mid})
    ends = [await bot.expect("match_end", match_id=mid) for bot in bots]
    seat = next(s["your_seat"] for s, b in zip(starts, bots, strict=True) if b is guests[1])
    assert ends[0]["termination"] == "resign" and ends[0]["at_fault"] == seat
    assert ends[0]["payoffs"][seat] == -1.0 and sum(ends[0]["payoffs"]) == 0.0
    rederive(live_server.api("GET", f"/api/matches/{mid}").json())
