"""Rated only what was played (as lichess aborts a game a player never moved in): a match that
ends before every seat has made a move of its own keeps its termination and payoffs (its record
verifies) but is stored unrated and moves no rating; one that ends by a forfeit after both have
moved is rated as before; cancelling a tournament ends its matches under way aborted, unrated,
and its games ``cancelled``. On a real server, with raw WebSocket bots and the bot kit."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from _api import get as _get
from _api import post as _post
from _waiting import until
from _ws_client import Message, WsBot, start_pair
from conftest import LiveServer

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock
from ply_arena.protocol.verify import verify_record

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


async def move(bot: WsBot, match_id: str) -> None:
    """Answer this bot's next turn in the match with its first legal move."""
    turn = await bot.expect("turn", match_id=match_id, timeout=10)
    await bot.send(
        {"type": "move", "match_id": match_id, "ply": turn["ply"], "move": turn["legal_moves"][0]}
    )


def record(srv: LiveServer, match_id: str) -> dict[str, Any]:
    found: dict[str, Any] = srv.api("GET", f"/api/matches/{match_id}").json()
    return found


async def test_a_match_not_every_seat_moved_in_is_kept_but_not_rated(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server()
    _, ta = srv.create_bot()
    _, tb = srv.create_bot()
    unrated: list[tuple[str, str, int]] = []

    async def pair(move_ms: int) -> tuple[WsBot, WsBot, str]:
        a, b, start_a, _ = await start_pair(srv.ws_url, ta, tb, move_ms=move_ms)
        first, second = (a, b) if start_a["your_seat"] == 0 else (b, a)
        return first, second, str(start_a["match_id"])

    # 1. Seat 0 resigns at once (its process plays another game, say).
    first, second, mid = await pair(5000)
    await first.expect("turn", match_id=mid)
    await first.send({"type": "resign", "match_id": mid})
    end = await second.expect("match_end", match_id=mid, timeout=10)
    unrated.append((mid, "resign", 0))
    await first.close()
    await second.close()
    # 2. Seat 0 times out on its first move.
    first, second, mid = await pair(200)
    end = await second.expect("match_end", match_id=mid, timeout=10)
    unrated.append((mid, "timeout", 0))
    await first.close()
    await second.close()
    # 3. Seat 0 moves, seat 1 leaves before its first move (and stays away: its clock runs out).
    first, second, mid = await pair(300)
    await move(first, mid)
    await second.expect("turn", match_id=mid)
    await second.close()
    end = await first.expect("match_end", match_id=mid, timeout=10)
    unrated.append((mid, "disconnect", 1))
    await first.close()
    for mid, termination, at_fault in unrated:
        stored = record(srv, mid)
        result = stored["result"]
        # How it ended is kept, payoffs and fault included: the record verifies as before.
        assert (result["termination"], result["at_fault"]) == (termination, at_fault), stored
        assert [s["payoff"] for s in stored["seats"]] in ([-1.0, 1.0], [1.0, -1.0])
        assert stored["rated"] is False, stored
        assert verify_record(stored).ok, verify_record(stored).problems
    # Nobody was rated: no row on the leaderboard, no fault counted.
    assert srv.api("GET", "/api/leaderboard/tic_tac_toe").json()["total"] == 0
    # 4. Both move, then seat 0 resigns: a forfeit after real play is rated, as before.
    first, second, mid = await pair(5000)
    await move(first, mid)
    await move(second, mid)
    await first.expect("turn", match_id=mid)
    await first.send({"type": "resign", "match_id": mid})
    end = await second.expect("match_end", match_id=mid, timeout=10)
    assert (end["termination"], end["at_fault"]) == ("resign", 0)
    assert record(srv, mid)["rated"] is True
    ranking = srv.api("GET", "/api/leaderboard/tic_tac_toe").json()["ranking"]
    assert sorted((row["wins"], row["losses"], row["matches"]) for row in ranking) == [
        (0, 1, 1),
        (1, 0, 1),
    ]


class Held:
    """A ``choose`` that plays its first move at once and holds the next one until released:
    its match stays under way as long as the test needs (no guessed sleep)."""

    def __init__(self) -> None:
        self.calls = 0
        self.holding = threading.Event()
        self.release = threading.Event()

    def __call__(self, state: State, legal_moves: list[str], clock: Clock) -> str:
        self.calls += 1
        if self.calls > 1:
            self.holding.set()
            self.release.wait(60)
        return legal_moves[0]


async def test_cancelling_a_tournament_ends_its_games_under_way_unrated(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server()
    bots = [srv.create_bot(f"cx{i}") for i in range(2)]
    created = _post(srv, "/api/tournaments", srv.admin_token, name="cx", game="connect_four",
                    format="round_robin", bots=[n for n, _ in bots], concurrency=1,
                    time_control={"move_ms": 30000, "bank_ms": 0})  # fmt: skip
    assert created.status_code == 201, created.text
    held = [Held(), Held()]
    ends: list[Message] = []
    clients = [
        BotClient(
            srv.ws_url,
            t,
            h,
            game="connect_four",
            lobby=False,
            games=0,
            on_match_end=lambda e: ends.append(e.model_dump(mode="json")),
        )
        for (_, t), h in zip(bots, held, strict=True)
    ]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "both bots logged in")
        assert _post(srv, "/api/tournaments/cx/start", srv.admin_token).status_code == 200
        # Both seats have moved once: the game is well under way, its next move held.
        await until(lambda: any(h.holding.is_set() for h in held), 30, "a second move asked")
        cancelled = _post(srv, "/api/tournaments/cx/cancel", srv.admin_token)
        assert cancelled.status_code == 200, cancelled.text
        await until(lambda: len(ends) == 2, 20, "both bots told the match ended")
        assert {e["termination"] for e in ends} == {"aborted"}
        stored = record(srv, ends[0]["match_id"])
        assert (stored["status"], stored["rated"]) == ("aborted", False), stored
        assert len(stored["moves"]) >= 2
        doc = _get(srv, "/api/tournaments/cx").json()
        games = [g for r in doc["schedule"] for g in r["games"]]
        assert doc["status"] == "cancelled"
        assert {g["status"] for g in games} == {"cancelled"}, games
        # No game counted, no rating moved, and the cancelled game is not played again.
        assert all(row["points"] == 0 for row in doc["standings"]), doc["standings"]
        assert srv.api("GET", "/api/leaderboard/connect_four").json()["total"] == 0
        listed = srv.api("GET", "/api/matches?tournament=cx").json()["matches"]
        assert [m["id"] for m in listed] == [stored["id"]], listed
    finally:
        for h in held:
            h.release.set()
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
