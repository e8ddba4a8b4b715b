"""Seat rotation is counted from the stored matches, so it survives a server restart."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from _ws_client import WsBot, start_pair
from conftest import LiveServer

from ply_arena.server.db.database import Database
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import matches as match_repo


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def test_pairing_counts_group_stored_matches_by_game_and_set_of_bots(
    database: Database, store_match: Any
) -> None:
    for seed in range(3):
        await store_match(database, game="tic_tac_toe", seed=seed, bots=["ann", "bob"])
    # Seat order does not matter, unfinished (later aborted) matches count too.
    await store_match(database, game="tic_tac_toe", seed=3, bots=["bob", "ann"], finish=False)
    await store_match(database, game="connect_four", seed=4, bots=["ann", "bob"])
    await store_match(
        database, game="chinese_checkers", seed=5, bots=["ann", "bob", "cid"], max_plies=2
    )
    async with database.session() as session:
        assert len(await match_repo.abort_running(session)) == 1
        ids = {}
        for name in ("ann", "bob", "cid"):
            bot = await bot_repo.bot_by_name(session, name)
            assert bot is not None
            ids[name] = bot.id
        counts = await match_repo.pairing_counts(session)
    ann_bob = frozenset((ids["ann"], ids["bob"]))
    assert counts == Counter(
        {
            ("tic_tac_toe", ann_bob): 4,
            ("connect_four", ann_bob): 1,
            ("chinese_checkers", frozenset(ids.values())): 1,
        }
    )


async def play_one(srv: LiveServer, token_a: str, token_b: str) -> dict[str, int]:
    """One lobby match between the two bots: bot name -> seat."""
    a, b, start, _ = await start_pair(srv.ws_url, token_a, token_b)
    await asyncio.gather(a.play(start["match_id"]), b.play(start["match_id"]))
    await a.close()
    await b.close()
    return {s["bot"]: s["seat"] for s in start["seats"]}


async def test_seats_keep_rotating_across_a_restart(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server()
    name_a, token_a = srv.create_bot()
    name_b, token_b = srv.create_bot()
    first = await play_one(srv, token_a, token_b)
    assert first == {name_a: 0, name_b: 1}  # the older bot has seat 0 the first time
    srv.stop()

    srv = start_server()  # same SQLite file
    second = await play_one(srv, token_a, token_b)
    assert second == {name_a: 1, name_b: 0}
    # A challenge between the same bots in the same game continues the same rotation, whoever
    # challenges whom.
    srv.stop()
    srv = start_server()
    a = await WsBot.connect(srv.ws_url, token_a)
    b = await WsBot.connect(srv.ws_url, token_b)
    await b.send({"type": "challenge", "game": "tic_tac_toe", "opponents": [name_a]})
    received = await a.expect("challenge_received")
    await a.send({"type": "accept", "challenge_id": received["challenge_id"]})
    start = await b.expect("match_start")
    assert {s["bot"]: s["seat"] for s in start["seats"]} == first
