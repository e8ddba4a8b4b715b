"""Ply Arena: a competition server for game-playing bots, built for AI courses.

The names a bot author needs, in one place::

    from ply_arena import run_bot          # the bot kit (ply_arena.protocol.client)
    from ply_arena import get, names       # the game API (ply_arena.games)

    game = get("connect_four")
    state = game.initial_state()

The rest lives in the subpackages: ``ply_arena.games`` (rules), ``ply_arena.protocol`` (the wire
protocol and the bot kit), ``ply_arena.reference_agents`` (the search algorithms of the course)
and ``ply_arena.server`` (the arena itself).

Each name is imported on first use (PEP 562), so ``import ply_arena.games`` stays as light as the
rules alone: the kit's WebSocket and pydantic imports come only with ``run_bot``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ply_arena.games import (
        Game,
        IllegalMoveError,
        InvalidMoveError,
        Move,
        State,
        get,
        names,
    )
    from ply_arena.protocol.client import BotError, ChooseError, Clock, run_bot

__all__ = [
    "BotError",
    "ChooseError",
    "Clock",
    "Game",
    "IllegalMoveError",
    "InvalidMoveError",
    "Move",
    "State",
    "__version__",
    "get",
    "names",
    "run_bot",
]

__version__ = "0.1.0"

#: Where each public name is defined: name -> module.
_HOMES = {
    "BotError": "ply_arena.protocol.client",
    "ChooseError": "ply_arena.protocol.client",
    "Clock": "ply_arena.protocol.client",
    "run_bot": "ply_arena.protocol.client",
    "Game": "ply_arena.games",
    "IllegalMoveError": "ply_arena.games",
    "InvalidMoveError": "ply_arena.games",
    "Move": "ply_arena.games",
    "State": "ply_arena.games",
    "get": "ply_arena.games",
    "names": "ply_arena.games",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ply_arena' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
