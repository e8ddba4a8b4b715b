"""`arena agent`: a reference agent plays as a remote bot through the kit."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from typing import Any

from games import State
from protocol.client import BotClient, Clock

ARENA = [sys.executable, "-c", "from server.cli import main; main()"]


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def test_arena_agent_plays_matches(live_server: Any) -> None:
    name, token = live_server.create_bot()
    _, kit_token = live_server.create_bot()
    kit = BotClient(live_server.ws_url, kit_token, random_choose, game="connect_four", games=2)
    proc = await asyncio.create_subprocess_exec(
        *ARENA, "agent", "alphabeta:depth=2", "--game", "connect_four",
        "--url", live_server.ws_url, "--token", token, "--games", "2", "--option", "seed=1",
        "--quiet",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    results, (out, err) = await asyncio.wait_for(asyncio.gather(kit.run(), proc.communicate()), 90)
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert len(lines) == 2 and all(" normal payoffs=" in line for line in lines)
    for end in results:
        stored = live_server.api("GET", f"/api/matches/{end.match_id}").json()
        agent_seat = next(s["seat"] for s in stored["seats"] if s["bot"] == name)
        agent_moves = [m for m in stored["moves"] if m["seat"] == agent_seat]
        # The agent's SearchInfo travels as MoveInfo and is kept in the record.
        assert agent_moves and all(m["info"] and m["info"]["depth"] >= 1 for m in agent_moves)


def test_arena_agent_refuses_bad_specs() -> None:
    for args, needle in [
        (["nosuchagent", "--game", "tic_tac_toe"], "unknown agent"),
        (["random", "--game", "chess"], "unknown game"),
        (["alphabeta:depth", "--game", "tic_tac_toe"], "expected key=value"),
    ]:
        done = subprocess.run(
            [*ARENA, "agent", *args, "--token", "t", "--url", "ws://127.0.0.1:9/ws"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert needle in done.stderr


def test_arena_agent_reports_a_bad_token(live_server: Any) -> None:
    done = subprocess.run(
        [*ARENA, "agent", "random", "--game", "tic_tac_toe", "--url", live_server.ws_url,
         "--token", "wrong", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "bad_token" in done.stderr


def test_arena_agent_gives_up_on_an_unreachable_server() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run(
        [*ARENA, "agent", "random", "--game", "tic_tac_toe", "--url", f"ws://127.0.0.1:{port}/ws",
         "--token", "t", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "could not log in" in done.stderr
