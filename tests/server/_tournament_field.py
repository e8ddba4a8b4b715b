"""Two small tournaments of tic-tac-toe played to the end on a live server, in two classes: a
gauntlet of class one's bots against a pool bot, and a round robin of class two. The tests of
tournaments in context (match records, match filters, the crosstable) read them."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from _api import get, post
from _waiting import until
from conftest import LiveServer

from ply_arena.protocol.client import BotClient
from ply_arena.reference_agents.registry import make


@dataclass
class Field:
    gauntlet: dict[str, Any]
    round_robin: dict[str, Any]
    #: The round robin as it stood before its start.
    round_robin_before: dict[str, Any]


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    found: dict[str, Any] = response.json()
    return found


async def _finished(srv: LiveServer, name: str) -> dict[str, Any]:
    def read() -> dict[str, Any] | None:
        doc = _ok(get(srv, f"/api/tournaments/{name}"))
        return doc if doc["status"] == "finished" else None

    found: dict[str, Any] = await until(read, 90, f"tournament {name} to finish")
    return found


async def play_two_tournaments(srv: LiveServer) -> Field:
    one = _ok(post(srv, "/api/classes", srv.admin_token, name="class-one"))
    two = _ok(post(srv, "/api/classes", srv.admin_token, name="class-two"))
    tokens = []
    for code, name in [(one, "one0"), (one, "one1"), (two, "two0"), (two, "two1")]:
        registered = post(srv, "/api/register", None, code=code["join_code"], name=name,
                          owner=f"{name}@x.es")  # fmt: skip
        tokens.append(_ok(registered)["token"])
    pool_name, pool_token = srv.create_bot("pool0")
    tokens.append(pool_token)
    _ok(post(srv, "/api/tournaments", srv.admin_token, name="gaunt", game="tic_tac_toe",
             format="gauntlet", bots=["one0", "one1"], pool=[pool_name]))  # fmt: skip
    _ok(post(srv, "/api/tournaments", two["instructor_token"], name="rr", game="tic_tac_toe",
             format="round_robin"))  # fmt: skip
    before = _ok(get(srv, "/api/tournaments/rr"))
    async with tournament_bots(srv, tokens):
        _ok(post(srv, "/api/tournaments/gaunt/start", srv.admin_token))
        _ok(post(srv, "/api/tournaments/rr/start", two["instructor_token"]))
        gauntlet = await _finished(srv, "gaunt")
        round_robin = await _finished(srv, "rr")
    return Field(gauntlet, round_robin, before)


def games_of(doc: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(round, game) of every game of a tournament document."""
    return [(r["round"], g) for r in doc["schedule"] for g in r["games"]]


@contextlib.asynccontextmanager
async def held_tournament(
    srv: LiveServer, name: str, bots: tuple[str, str]
) -> AsyncIterator[threading.Event]:
    """A tic-tac-toe round robin of two new bots, started, whose bots hold every move until the
    event given is set (set, and the bots stopped, on leaving)."""
    tokens = [srv.create_bot(bot)[1] for bot in bots]
    created = post(srv, "/api/tournaments", srv.admin_token, name=name, game="tic_tac_toe",
                   bots=list(bots), time_control={"move_ms": 30000, "bank_ms": 0})  # fmt: skip
    assert created.status_code == 201, created.text
    release = threading.Event()

    def choose(state: Any, legal: list[str], clock: Any) -> str:
        release.wait(timeout=60)
        return random.choice(legal)

    try:
        async with tournament_bots(srv, tokens, choose):
            assert post(srv, f"/api/tournaments/{name}/start", srv.admin_token).status_code == 200
            yield release
    finally:
        release.set()  # before the bots stop: none is left holding a move


@contextlib.asynccontextmanager
async def tournament_bots(
    srv: LiveServer, tokens: list[str], choose: Any = None
) -> AsyncIterator[list[BotClient]]:
    """Tic-tac-toe bots for tournaments only (no lobby), logged in; stopped on leaving. They
    play ``choose`` (the kit's choose function), else random moves."""
    how: dict[str, Any] = (
        {"agent": lambda g: make("random", g)} if choose is None else {"choose": choose}
    )
    clients = [
        BotClient(srv.ws_url, t, game="tic_tac_toe", lobby=False, games=0, **how) for t in tokens
    ]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until(lambda: all(c.bot_name for c in clients), 20, "the bots logged in")
        yield clients
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
