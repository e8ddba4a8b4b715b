"""One connection, several games: the kit (``choose`` or ``agent`` as a mapping game -> player)
and ``arena agent GAME AGENT --play GAME=AGENT`` play two tournaments of different games at once
with one token, on a real server, instead of resigning the matches of the other game."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Callable
from typing import Any

import pytest
from _api import get as _get
from _api import post as _post
from _waiting import until
from conftest import LiveServer

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock

pytestmark = pytest.mark.timeout(180)

ARENA = [sys.executable, "-m", "ply_arena"]


def first_legal(state: State, legal_moves: list[str], clock: Clock) -> str:
    return legal_moves[0]


def random_legal(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


def two_tournaments(srv: LiveServer, student: str) -> list[str]:
    """A tic-tac-toe and a Connect Four round robin, each of ``student`` and a bot of its own;
    started. Their opponents' tokens."""
    tokens = []
    for name, game in (("ttt", "tic_tac_toe"), ("c4", "connect_four")):
        opponent, token = srv.create_bot(f"{name}-opponent")
        tokens.append(token)
        created = _post(srv, "/api/tournaments", srv.admin_token, name=name, game=game,
                        format="round_robin", bots=[student, opponent])  # fmt: skip
        assert created.status_code == 201, created.text
    return tokens


async def run_both(srv: LiveServer, student: Any, tokens: list[str]) -> list[dict[str, Any]]:
    """Connect the opponents, start both tournaments, wait until both are over; their games."""
    opponents = [
        BotClient(srv.ws_url, tokens[0], random_legal, game="tic_tac_toe", lobby=False, games=0),
        BotClient(srv.ws_url, tokens[1], random_legal, game="connect_four", lobby=False, games=0),
    ]
    tasks = [asyncio.create_task(c.run()) for c in opponents]
    try:
        await until(lambda: all(c.bot_name for c in opponents), 20, "the opponents logged in")
        await student()
        for name in ("ttt", "c4"):
            assert _post(srv, f"/api/tournaments/{name}/start", srv.admin_token).status_code == 200

        def over() -> bool:
            return all(
                _get(srv, f"/api/tournaments/{n}").json()["status"] == "finished"
                for n in ("ttt", "c4")
            )

        await until(over, 120, "both tournaments finished")
        return [
            g
            for n in ("ttt", "c4")
            for r in _get(srv, f"/api/tournaments/{n}").json()["schedule"]
            for g in r["games"]
        ]
    finally:
        for c in opponents:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


def assert_played(games: list[dict[str, Any]], student: str) -> None:
    assert len(games) == 4
    for g in games:
        assert student in g["bots"] and g["status"] == "finished", g
        # Played to the end, not resigned at once as a match of another game.
        assert g["termination"] == "normal", g


async def test_the_kit_plays_two_games_on_one_connection(live_server: LiveServer) -> None:
    srv = live_server
    name, token = srv.create_bot("student")
    tokens = two_tournaments(srv, name)
    client = BotClient(srv.ws_url, token,
                       {"tic_tac_toe": first_legal, "connect_four": random_legal},
                       lobby=False, games=0)  # fmt: skip
    task = asyncio.create_task(client.run())

    async def connected() -> None:
        await until(lambda: client.bot_name, 20, "the student logged in")

    try:
        assert_played(await run_both(srv, connected, tokens), name)
        assert {end.game for end in client.results} == {"tic_tac_toe", "connect_four"}
    finally:
        client.stop()
        await asyncio.gather(task, return_exceptions=True)


async def test_the_kit_refuses_what_its_mapping_does_not_name(live_server: LiveServer) -> None:
    srv = live_server
    _, token = live_server.create_bot()
    players: dict[str, Callable[..., str]] = {"tic_tac_toe": first_legal}
    with pytest.raises(ValueError, match="not one of the games it plays"):
        BotClient(srv.ws_url, token, players, game="connect_four")
    with pytest.raises(ValueError, match="unknown game"):
        BotClient(srv.ws_url, token, {"chess": first_legal}, lobby=False)
    # A challenge to a game it does not play is declined, saying which it plays.
    _, challenger = live_server.create_bot()
    client = BotClient(srv.ws_url, token, players, lobby=False, games=0, accept_challenges=True)
    task = asyncio.create_task(client.run())
    try:
        await until(lambda: client.bot_name, 20, "logged in")
        asker = BotClient(srv.ws_url, challenger, first_legal, game="connect_four",
                          challenge=[str(client.bot_name)])  # fmt: skip
        with pytest.raises(Exception, match="it plays only tic_tac_toe"):
            await asyncio.wait_for(asker.run(), 30)
    finally:
        client.stop()
        await asyncio.gather(task, return_exceptions=True)


async def test_arena_agent_plays_two_games_on_one_connection(live_server: LiveServer) -> None:
    srv = live_server
    name, token = srv.create_bot("agent-student")
    tokens = two_tournaments(srv, name)
    proc: asyncio.subprocess.Process | None = None

    async def start_agent() -> None:
        nonlocal proc
        proc = await asyncio.create_subprocess_exec(
            *ARENA, "agent", "tic_tac_toe", "random", "--play", "connect_four=random",
            "--no-lobby", "--games", "4", "--url", srv.ws_url, "--token", token, "--quiet",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip

        def in_session() -> bool:
            return srv.app.state.referee.connections.by_name(name) is not None

        await until(in_session, 30, "arena agent connected")

    try:
        games = await run_both(srv, start_agent, tokens)
        assert proc is not None
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert_played(games, name)
        lines = out.decode().splitlines()
        assert len(lines) == 4 and all(" normal payoffs=" in line for line in lines), lines
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
