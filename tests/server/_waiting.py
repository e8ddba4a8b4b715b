"""Helpers for tests that wait on the live server's own state (it runs in a thread of the test
process): a condition polled until it holds, ratings written into the referee's book."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from conftest import LiveServer


async def until(condition: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Wait until ``condition()`` is truthy (checked every 10 ms); its value."""

    async def check() -> Any:
        return condition()

    return await until_read(check, timeout, what or str(condition), every=0.01)


async def until_read(
    check: Callable[[], Awaitable[Any]], timeout: float, what: str, every: float = 0.02
) -> Any:
    """Wait until ``await check()`` is truthy (a read of the database or the API, every
    ``every`` seconds); its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(every)


async def ticks(srv: LiveServer, n: int = 3) -> None:
    """Wait until the referee's pairing tick has run ``n`` more times."""
    referee = srv.app.state.referee
    target = referee.ticks + n
    await until(lambda: referee.ticks >= target, 30, f"{n} pairing ticks")


def bot_id(srv: LiveServer, name: str) -> int:
    """The id of a connected bot (house bots included)."""
    conn = srv.app.state.referee.connections.by_name(name)
    assert conn is not None, f"{name} is not connected"
    return int(conn.bot_id)


def set_mu(srv: LiveServer, name: str, game: str, mu: float) -> None:
    """Give a connected bot a rating in the referee's book (the lobby pairs by it)."""
    srv.app.state.referee.ratings.set(bot_id(srv, name), game, (mu, 25 / 3))
