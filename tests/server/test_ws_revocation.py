"""Disabling a bot or rotating its token over REST closes its live connection at once; its
matches then follow the disconnect rules."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _ws_client import WsBot, rederive
from conftest import LiveServer

Message = dict[str, Any]


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def pair(a: WsBot, b: WsBot, move_ms: int) -> tuple[str, int]:
    """a and b start a tic-tac-toe match: (match id, a's seat)."""
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": move_ms}}
    await a.send(join)
    await a.expect("joined")
    await b.send(join)
    start = await a.expect("match_start")
    await b.expect("match_start")
    return start["match_id"], start["your_seat"]


def connected(srv: LiveServer, name: str) -> bool:
    return srv.app.state.referee.connections.by_name(name) is not None


def record(srv: LiveServer, match_id: str) -> Message:
    return dict(srv.api("GET", f"/api/matches/{match_id}").json())


async def test_rotating_the_token_closes_the_connection_and_the_new_token_resumes(
    live_server: LiveServer,
) -> None:
    name_a, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    a = await WsBot.connect(live_server.ws_url, token_a)
    b = await WsBot.connect(live_server.ws_url, token_b)
    mid, _ = await pair(a, b, move_ms=5000)
    b_plays = asyncio.create_task(b.play(mid, timeout=10))

    rotated = live_server.api("POST", f"/api/bots/{name_a}/rotate", admin=True)
    assert rotated.status_code == 200
    # Done by the time the REST call returns, not at the bot's next message.
    assert not connected(live_server, name_a)
    error = await a.expect_error("bad_token")
    assert error["fatal"] is True and "reconnect with the new one" in error["message"]
    assert await a.expect_closed() == 1008

    old = await WsBot.connect(live_server.ws_url)
    await old.send({"type": "hello", "protocol": 1, "token": token_a})
    assert (await old.expect_error("bad_token"))["fatal"] is True

    # The new token picks the running match up where it was.
    a2 = await WsBot.connect(live_server.ws_url, rotated.json()["token"])
    assert a2.welcome is not None and a2.welcome["matches"] == [mid]
    end = await a2.play(mid, timeout=10)
    assert end["termination"] == "normal" and await b_plays == end
    rederive(record(live_server, mid))


async def test_disabling_a_connected_bot_closes_it_and_it_loses_on_disconnect(
    live_server: LiveServer,
) -> None:
    name_a, token_a = live_server.create_bot()
    _, token_b = live_server.create_bot()
    _, token_c = live_server.create_bot()
    a = await WsBot.connect(live_server.ws_url, token_a)
    b = await WsBot.connect(live_server.ws_url, token_b)
    c = await WsBot.connect(live_server.ws_url, token_c)
    mid, seat_a = await pair(a, b, move_ms=600)
    b_plays = asyncio.create_task(b.play(mid, timeout=10))
    # a also waits in another queue and has a pending challenge from c.
    await a.send({"type": "join", "game": "connect_four"})
    assert (await a.expect("joined"))["waiting"] == 1
    await c.send({"type": "challenge", "game": "othello", "opponents": [name_a]})
    challenge_id = (await c.expect("challenge_sent"))["challenge_id"]
    await a.expect("challenge_received")

    disabled = live_server.api("POST", f"/api/bots/{name_a}/disable", admin=True)
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    assert not connected(live_server, name_a)
    error = await a.expect_error("bot_disabled")
    assert error["fatal"] is True and "disabled by an administrator" in error["message"]
    assert await a.expect_closed() == 1008

    # Its queue place and challenges are gone with it...
    assert (await c.expect("challenge_declined"))["challenge_id"] == challenge_id
    await c.send({"type": "join", "game": "connect_four"})
    assert (await c.expect("joined"))["waiting"] == 1
    # ...it cannot come back, and its running match ends when its clock runs out.
    again = await WsBot.connect(live_server.ws_url)
    await again.send({"type": "hello", "protocol": 1, "token": token_a})
    assert (await again.expect_error("bot_disabled"))["fatal"] is True
    end = await b_plays
    assert (end["termination"], end["at_fault"]) == ("disconnect", seat_a)
    rederive(record(live_server, mid))

    # Enabling does not need a new token; disabling a bot that is not connected is fine too.
    assert live_server.api("POST", f"/api/bots/{name_a}/enable", admin=True).status_code == 200
    back = await WsBot.connect(live_server.ws_url, token_a)
    assert back.welcome is not None and back.welcome["matches"] == []
    await back.close()
    assert live_server.api("POST", f"/api/bots/{name_a}/disable", admin=True).status_code == 200
    assert not connected(live_server, name_a)
