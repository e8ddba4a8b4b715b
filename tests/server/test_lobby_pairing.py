"""The lobby pairs by rating on a live server: raw WebSocket bots, ratings in the referee's book,
the pairing tick, seats balanced per pair, and the decisions in ``referee.pairing_log``."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable

import pytest
from _waiting import bot_id, set_mu, ticks, until
from _ws_client import Message, WsBot, rederive, stored_records
from conftest import LiveServer

GAME = "tic_tac_toe"
JOIN = {"type": "join", "game": GAME}


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def connect(srv: LiveServer, name: str, token: str, mu: float | None = None) -> WsBot:
    bot = await WsBot.connect(srv.ws_url, token)
    if mu is not None:
        set_mu(srv, name, GAME, mu)
    return bot


def opponents(start: Message, me: str) -> set[str]:
    return {s["bot"] for s in start["seats"]} - {me}


def pending(bot: WsBot, kind: str) -> list[Message]:
    """Messages of ``kind`` already received and not yet read (without waiting)."""
    return [m for m in list(bot.inbox._queue) if isinstance(m, dict) and m["type"] == kind]  # type: ignore[attr-defined]


async def test_two_bots_meet_at_once_whatever_their_ratings(
    start_server: Callable[..., LiveServer],
) -> None:
    # A tick too slow to matter: the join itself pairs them.
    srv = start_server(pairing_tick_s=60.0)
    (a_name, a_token), (b_name, b_token) = srv.create_bot(), srv.create_bot()
    a = await connect(srv, a_name, a_token, mu=5.0)
    b = await connect(srv, b_name, b_token, mu=45.0)
    await a.send(JOIN)
    await a.expect("joined")
    await b.send(JOIN)
    start = await b.expect("match_start", timeout=2)
    assert opponents(start, b_name) == {a_name}
    (record,) = srv.app.state.referee.pairing_log
    assert record.reason == "no_better" and record.others_waiting == ()


#: Two far apart (ann, bea), each with a close bot (cid, dot) that will be playing meanwhile.
RATINGS = {"ann": 10.0, "bea": 30.0, "cid": 12.0, "dot": 32.0}


async def cid_and_dot_playing(srv: LiveServer) -> tuple[dict[str, WsBot], Message]:
    """The four bots of RATINGS connected with those ratings; cid and dot meet first (nobody
    else is there) and keep their match going. (The bots, cid's match_start.)"""
    bots = {}
    for name, mu in RATINGS.items():
        _, token = srv.create_bot(name)
        bots[name] = await connect(srv, name, token, mu)
    await bots["cid"].send(JOIN)
    await bots["cid"].expect("joined")
    await bots["dot"].send(JOIN)
    first = await bots["cid"].expect("match_start")
    await bots["dot"].expect("match_start")
    return bots, first


async def test_bots_wait_for_a_closer_opponent_coming_back_then_meet_by_rating(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(pairing_window=3.0, pairing_widen_per_s=0.1, pairing_max_wait_s=60.0,
                       pairing_tick_s=0.1)  # fmt: skip
    ratings = RATINGS
    bots, first = await cid_and_dot_playing(srv)
    # ann (10) and bea (30) are 20 apart, and each has a closer bot coming back to the queue
    # (cid 12, dot 32): they wait, tick after tick.
    await bots["ann"].send(JOIN)
    await bots["ann"].expect("joined")
    await bots["bea"].send(JOIN)
    await bots["bea"].expect("joined")
    await ticks(srv, 5)
    assert not pending(bots["ann"], "match_start") and not pending(bots["bea"], "match_start")
    # cid and dot finish; back in the queue, each meets the bot closest to it. (Their match
    # moved their ratings, once committed: put them back, this test is about the pairing.)
    await asyncio.gather(bots["cid"].play(first["match_id"]), bots["dot"].play(first["match_id"]))
    for name in ("cid", "dot"):
        set_mu(srv, name, GAME, ratings[name])
    await bots["cid"].send(JOIN)
    start_ann = await bots["ann"].expect("match_start")
    assert opponents(start_ann, "ann") == {"cid"}
    await bots["dot"].send(JOIN)
    start_bea = await bots["bea"].expect("match_start")
    assert opponents(start_bea, "bea") == {"dot"}
    log = list(srv.app.state.referee.pairing_log)
    assert [r.reason for r in log] == ["no_better", "rating", "rating"]


async def test_a_bot_that_waited_max_wait_meets_whoever_is_there(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(pairing_window=3.0, pairing_widen_per_s=0.0, pairing_max_wait_s=1.0,
                       pairing_tick_s=0.1)  # fmt: skip
    bots, _ = await cid_and_dot_playing(srv)  # they play slowly: they never move
    await bots["ann"].send(JOIN)
    await bots["ann"].expect("joined")
    joined = time.monotonic()
    await bots["bea"].send(JOIN)
    start = await bots["ann"].expect("match_start", timeout=5)
    waited = time.monotonic() - joined
    assert opponents(start, "ann") == {"bea"}
    assert 0.9 <= waited < 3.0, waited  # max wait 1 s, then the next tick (0.1 s)
    assert srv.app.state.referee.pairing_log[-1].reason == "overdue"


async def test_three_bots_take_turns_and_seats_alternate_per_pair(
    start_server: Callable[..., LiveServer],
) -> None:
    # Three bots of the same rating in a two-player queue, each joining again after every
    # match: the one that waited meets the one that did not just play it, every time.
    srv = start_server(pairing_tick_s=0.05)
    names = ["ann", "bea", "cid"]
    bots = {}
    for name in names:
        _, token = srv.create_bot(name)
        bots[name] = await connect(srv, name, token)
    target = 30
    played: list[str] = []

    async def loop(name: str) -> None:
        bot = bots[name]
        while len(set(played)) < target:
            await bot.send(JOIN)
            while True:
                message = await bot.recv(30)
                if message["type"] == "match_start":
                    break
            played.append(message["match_id"])
            await bot.play(message["match_id"])

    tasks = [asyncio.create_task(loop(n)) for n in names]
    await until(lambda: len(set(played)) >= target, 60, f"{target} matches")
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for bot in bots.values():
        await bot.close()
    srv.stop()

    records = [r for r in await stored_records(srv.db_url) if r["status"] == "finished"]
    records.sort(key=lambda r: r["created_at"])
    assert len(records) >= target - 2
    last: dict[str, str] = {}
    seats: Counter[tuple[frozenset[str], str]] = Counter()
    for record in records:
        rederive(record)
        a, b = (s["bot"] for s in record["seats"])
        assert last.get(a) != b and last.get(b) != a, f"{a} and {b} met twice in a row"
        last[a], last[b] = b, a
        seats[(frozenset((a, b)), a)] += 1  # who had seat 0
    for pair in {p for p, _ in seats}:
        x, y = sorted(pair)
        assert abs(seats[(pair, x)] - seats[(pair, y)]) <= 1, dict(seats)
    # Each pair met about a third of the time.
    assert len({p for p, _ in seats}) == 3


async def test_three_player_queue_fills_three_seats(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(pairing_tick_s=60.0)
    bots = {}
    for mu, name in zip((10.0, 30.0, 50.0), ("ann", "bea", "cid"), strict=True):
        _, token = srv.create_bot(name)
        bots[name] = await WsBot.connect(srv.ws_url, token)
        set_mu(srv, name, "chinese_checkers", mu)
    join = {"type": "join", "game": "chinese_checkers"}
    await bots["ann"].send(join)
    await bots["ann"].expect("joined")
    await bots["bea"].send(join)
    await bots["bea"].expect("joined")
    assert not pending(bots["ann"], "match_start")
    await bots["cid"].send(join)
    start = await bots["cid"].expect("match_start")
    assert {s["bot"] for s in start["seats"]} == {"ann", "bea", "cid"}
    assert [r.reason for r in srv.app.state.referee.pairing_log] == ["no_better"]
    ids = {bot_id(srv, n) for n in bots}
    assert set(srv.app.state.referee.pairing_log[0].bot_ids) == ids


async def test_a_bot_that_left_the_queue_is_not_paired_by_the_tick(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(pairing_tick_s=0.05, pairing_max_wait_s=0.0)
    (_, a_token), (b_name, b_token) = srv.create_bot(), srv.create_bot()
    a = await WsBot.connect(srv.ws_url, a_token)
    await a.send(JOIN)
    await a.expect("joined")
    await a.send({"type": "leave", "game": None})
    await a.expect("left")
    b = await WsBot.connect(srv.ws_url, b_token)
    await b.send(JOIN)
    await b.expect("joined")
    await ticks(srv, 3)
    assert not pending(b, "match_start") and not pending(a, "match_start")
    lobby = srv.app.state.referee.lobby
    (key,) = lobby.queues()
    assert [w.name for w in lobby.waiting(key)] == [b_name]
