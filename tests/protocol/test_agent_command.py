"""`arena agent GAME AGENT`: a reference agent plays as a remote bot through the kit."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from typing import Any

import pytest

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock

ARENA = [sys.executable, "-m", "ply_arena"]


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def test_arena_agent_plays_matches(live_server: Any) -> None:
    name, token = live_server.create_bot()
    _, kit_token = live_server.create_bot()
    kit = BotClient(live_server.ws_url, kit_token, random_choose, game="connect_four", games=2)
    proc = await asyncio.create_subprocess_exec(
        *ARENA, "agent", "connect_four", "alphabeta:depth=2",
        "--url", live_server.ws_url, "--token", token, "--games", "2", "--option", "seed=1",
        "--quiet",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    results, (out, err) = await asyncio.wait_for(asyncio.gather(kit.run(), proc.communicate()), 90)
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert len(lines) == 2 and all(" normal payoffs=" in line for line in lines)
    printed = {line.split()[0]: line for line in lines}
    for end in results:
        stored = live_server.api("GET", f"/api/matches/{end.match_id}").json()
        agent_seat = next(s["seat"] for s in stored["seats"] if s["bot"] == name)
        opponent = next(s["bot"] for s in stored["seats"] if s["bot"] != name)
        # Each line says which seat was the agent's (they swap), and what its payoff meant.
        mine, theirs = end.payoffs[agent_seat], end.payoffs[1 - agent_seat]
        outcome = "won" if mine > theirs else "drew" if mine == theirs else "lost"
        assert printed[end.match_id] == (
            f"{end.match_id} normal payoffs={end.payoffs} {outcome} as "
            f"{'XO'[agent_seat]} (seat {agent_seat}) against {opponent}"
        )
        agent_moves = [m for m in stored["moves"] if m["seat"] == agent_seat]
        # The agent's SearchInfo travels as MoveInfo and is kept in the record.
        assert agent_moves and all(m["info"] and m["info"]["depth"] >= 1 for m in agent_moves)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["tic_tac_toe", "nosuchagent"], "unknown agent"),
        (["chess", "random"], "unknown game"),
        (["tic_tac_toe", "alphabeta:depth"], "expected key=value"),
        (
            ["tic_tac_toe", "alphabeta:depth=abc"],
            "error: alphabeta option depth=abc: expected an integer; options: depth (int), "
            "move_time (float), seed (int), order (bool), tt (bool), solver (bool)",
        ),
        (
            ["tic_tac_toe", "alphabeta:depht=3"],
            "alphabeta does not take depht=3 (did you mean depth?)",
        ),
        (["tic_tac_toe", "alphabeta:order=maybe"], "order=maybe: expected true or false"),
        (["tic_tac_toe", "mcts", "-o", "c=high"], "mcts option c=high: expected a number"),
        (["tic_tac_toe", "random", "--url", "http://127.0.0.1:8000/ws"], "use ws://HOST:PORT/ws"),
        # The old order (`arena agent AGENT --game GAME`) and a swapped one say what to type.
        (
            ["alphabeta", "--game", "connect_four"],
            "error: --game is gone: the game is the first argument, as in `arena play`: "
            "arena agent connect_four AGENT [OPTIONS]",
        ),
        (["alphabeta:depth=3", "connect_four"], "arena agent connect_four alphabeta:depth=3"),
    ],
)
def test_arena_agent_refuses_bad_arguments_in_one_line(args: list[str], needle: str) -> None:
    done = subprocess.run(
        [*ARENA, "agent", *args, "--token", "t"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_arena_agent_reports_a_bad_token(live_server: Any) -> None:
    done = subprocess.run(
        [*ARENA, "agent", "tic_tac_toe", "random", "--url", live_server.ws_url,
         "--token", "wrong", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "bad_token" in done.stderr


def test_arena_agent_gives_up_at_once_on_an_unreachable_server() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run(
        [*ARENA, "agent", "tic_tac_toe", "random", "--url", f"ws://127.0.0.1:{port}/ws",
         "--token", "t", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: could not log in at ws://127.0.0.1:{port}/ws")
    assert "1 attempt)" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_arena_agent_fails_at_once_when_the_url_is_no_websocket(live_server: Any) -> None:
    done = subprocess.run(
        [*ARENA, "agent", "tic_tac_toe", "random", "--url", f"{live_server.ws_url}/nope",
         "--token", "t", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "did not answer the WebSocket handshake" in done.stderr
    assert "ws://HOST:PORT/ws" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_arena_agent_splits_comma_separated_names_and_stops_waiting(live_server: Any) -> None:
    # `--challenge ghost1,ghost2` is two bots (the help says so), and bots that never connect
    # stop the challenger after --challenge-wait seconds instead of for ever.
    _, token = live_server.create_bot()
    done = subprocess.run(
        [*ARENA, "agent", "chinese_checkers", "random", "--url", live_server.ws_url,
         "--token", token, "--challenge", "ghost1,ghost2", "--challenge-wait", "0.5", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(
        "error: unknown_bot: no bot named 'ghost1' is connected right now, and was not during "
        "0.5 s of challenging"
    )
    assert done.stderr.count("\n") == 1, done.stderr


def test_arena_agent_help_shows_comma_separated_lists() -> None:
    done = subprocess.run(
        [*ARENA, "agent", "--help"], capture_output=True, text=True, timeout=60,
        env={**os.environ, "COLUMNS": "160"},
    )  # fmt: skip
    assert done.returncode == 0
    assert "list[str]" not in done.stdout
    for option, metavar in [
        ("--challenge", "BOT[,BOT]"),
        ("--accept-from", "BOT[,BOT...]"),
        ("--option", "KEY=VALUE[,...]"),
        ("--challenge-wait", "SECONDS"),
    ]:
        assert any(
            option in line.split() and metavar in line.split() for line in done.stdout.splitlines()
        ), (option, done.stdout)
