"""What runs in the house bots' search processes: a reference agent's ``choose``.

Only plain data crosses the process boundary: the game's name, the agent's spec, the position in
the game's JSON form and the deadline in, the move in notation and the search info out. Agents
are made once per process and spec and kept (a search starts from scratch each time, so one
agent serves every match), except for a bot of fixed strength: its agent is made afresh for
every search, so that its seeded choices depend on the position and the seed only, not on which
searches the process ran before.

Worker processes run at the server's own CPU priority, not at the lowest (Linux's SCHED_IDLE,
as the analysis helpers do): next to busy processes at normal priority (a loaded server) an
idle-priority search gets almost no CPU (a niced one a tenth of a core), and a fixed-depth house
bot would be cut short by its move's limit, playing weaker exactly when the server is busy. The
pool keeps one core for the event loop (``house_workers``), and a fixed-strength search is a few
milliseconds of work. They ignore Ctrl+C (the server stops them when it stops).
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

from ply_arena import games
from ply_arena.reference_agents import Agent, make
from ply_arena.server.subprocesses import init_helper

#: The shortest time limit a search is given, even when its deadline has passed.
MIN_LIMIT_S = 0.005

_agents: dict[tuple[str, str], Agent] = {}


def init(server_pid: int | None = None) -> None:
    """Run once in every worker process (see ``ply_arena.server.subprocesses.init_helper``)."""
    init_helper(server_pid, idle=False)


def warm(specs: list[tuple[str, str, dict[str, Any]]]) -> int:
    """Make the agents ahead of the first search; the worker's pid."""
    for game_name, agent, options in specs:
        _agent(game_name, agent, options)
    return os.getpid()


def search(
    game_name: str,
    agent: str,
    options: dict[str, Any],
    position: dict[str, Any],
    deadline: float,
    fresh: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The agent's move in ``position`` (notation) and its search info as MoveInfo fields.

    ``deadline`` is on ``time.monotonic()``, one clock for every process on the machine: the
    time spent waiting for a free worker comes out of the search, not out of the bot's clock.
    """
    game = games.get(game_name)
    state = game.state_from_json(position)
    chooser = make(agent, game, **options) if fresh else _agent(game_name, agent, options)
    limit = max(MIN_LIMIT_S, deadline - time.monotonic())
    move, info = chooser.choose(state, limit)
    return game.format_move(state, move), move_info(info.as_json(game, state))


def _agent(game_name: str, agent: str, options: dict[str, Any]) -> Agent:
    key = (game_name, f"{agent}:{sorted(options.items())!r}")
    found = _agents.get(key)
    if found is None:
        found = _agents[key] = make(agent, games.get(game_name), **options)
    return found


def move_info(info: dict[str, Any]) -> dict[str, Any]:
    """A SearchInfo's JSON cut to what a move's ``info`` holds
    (ply_arena.protocol.messages.MoveInfo)."""
    out: dict[str, Any] = {}
    for key in ("depth", "nodes"):
        value = info.get(key)
        if isinstance(value, int) and value >= 0:
            out[key] = value
    score = info.get("score")
    comment = str(info.get("comment") or "")
    if isinstance(score, int | float):
        if math.isfinite(score):
            out["score"] = float(score)
        else:  # JSON has no infinities: a proven win or loss in words
            comment = f"{comment} score={score}".strip()
    pv = [str(m) for m in info.get("pv") or [] if len(str(m)) <= 64]
    if pv:
        out["pv"] = pv[:64]
    if comment:
        out["comment"] = comment[:280]
    return out
