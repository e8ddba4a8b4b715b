"""``arena check-bot`` against bots with one bug each: each fails exactly the item it breaks.

A real server, the real checker (relay and checker bot) and real bots over WebSocket, all in
this test's event loop but the server (tests/conftest.py); tests/checkbot/test_examples_pass.py
runs the example bots and the command itself as processes.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from broken_bot import BrokenBot

from server.checkbot.checklist import TITLES, Item, judge, report
from server.checkbot.session import CheckConfig, Observations, run_check

#: The items each bot fails; every other item passes or is not checked.
EXPECTED = {
    "good": set(),
    "no_pong": {"ping"},
    "stale_ply": {"ply"},
    "illegal": {"legal"},
    "sleeper": {"time"},
    "deaf_after_forced": {"forced"},
    "one_at_a_time": {"two"},
    "no_reconnect": {"reconnect"},
    "quits": {"connected"},
    "bad_version": {"handshake"},
}

#: What the failure says, in the bot's case.
SAYS = {
    "no_pong": "pings unanswered",
    "stale_ply": "while its turn was ply",
    "illegal": "illegal or unreadable move",
    "sleeper": "timeout(s)",
    "deaf_after_forced": "it answered none of its",
    "one_at_a_time": "it answered none of the",
    "no_reconnect": "did not log in again",
    "quits": "s after a match ended",
    "bad_version": "protocol 2",
}


async def check(
    server: Any, mode: str, *, game: str = "tic_tac_toe", **options: Any
) -> tuple[list[Item], Observations, list[str]]:
    """Run the check on a BrokenBot in ``mode``, started as soon as the relay listens."""
    _, checker_token = server.create_bot()
    name, token = server.create_bot()
    lines: list[str] = []
    tasks: list[asyncio.Task[None]] = []

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith("waiting for your bot at "):
            bot = BrokenBot(line.split()[-1], token, mode, seed=7)
            tasks.append(asyncio.create_task(bot.run()))

    values: dict[str, Any] = {
        "url": server.ws_url,
        "token": checker_token,
        "game": game,
        "bot": name,
        "listen_port": 0,
        "wait_s": 20,
        "move_ms": 400,
        "bank_ms": 400,
        "absent_s": 2,
        "seed": 1,
    }
    values.update(options)
    try:
        obs = await asyncio.wait_for(run_check(CheckConfig(**values), say), 55)
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return judge(obs), obs, lines


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_a_broken_bot_fails_exactly_what_it_breaks(live_server: Any, mode: str) -> None:
    items, obs, lines = await check(live_server, mode)
    text = "\n".join(lines + report(obs, items))
    assert [item.key for item in items] == list(TITLES)
    failed = {item.key for item in items if item.status == "fail"}
    assert failed == EXPECTED[mode], text
    for item in items:
        if item.status == "fail":
            assert item.should, text  # every failure says what to do instead
            assert SAYS[mode] in item.did, text
    if mode == "good":
        skipped = {item.key for item in items if item.status == "skip"}
        assert skipped == {"chance"}, text  # not asked for
    if mode == "bad_version":
        assert all(i.status == "skip" for i in items if i.key != "handshake"), text
