"""Rules of the games Ply Arena referees, behind one API (see ``ply_arena.games._api``).

>>> from ply_arena import games
>>> games.names()
['backgammon', 'chinese_checkers', 'connect_four', 'othello', 'tic_tac_toe']
>>> games.get("connect_four").num_players
2
"""

from __future__ import annotations

import importlib

from ply_arena.games._api import (
    CHANCE,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    State,
)

__all__ = [
    "CHANCE",
    "Game",
    "IllegalMoveError",
    "InvalidMoveError",
    "Move",
    "State",
    "get",
    "names",
]

# An explicit registry, as python-chess lists its variants: name -> "module:Class".
# Modules are imported on first use so that `import games` stays cheap.
_REGISTRY: dict[str, str] = {
    "backgammon": "ply_arena.games.backgammon:Backgammon",
    "chinese_checkers": "ply_arena.games.chinese_checkers:ChineseCheckers",
    "connect_four": "ply_arena.games.connect_four:ConnectFour",
    "othello": "ply_arena.games.othello:Othello",
    "tic_tac_toe": "ply_arena.games.tic_tac_toe:TicTacToe",
}
_loaded: dict[str, Game] = {}


def names() -> list[str]:
    """The registered game names, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> Game:
    """The game called ``name``; ValueError listing the known names if there is none."""
    game = _loaded.get(name)
    if game is not None:
        return game
    target = _REGISTRY.get(name)
    if target is None:
        raise ValueError(f"unknown game {name!r}: known games are {', '.join(names())}")
    module_name, class_name = target.split(":")
    game = getattr(importlib.import_module(module_name), class_name)()
    _loaded[name] = game
    return game
