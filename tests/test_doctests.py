"""The examples in the public docstrings of `games` and `reference_agents` run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "games",
    "ply_arena.games._api",
    "ply_arena.games.tic_tac_toe",
    "ply_arena.games.connect_four",
    "ply_arena.games.othello",
    "ply_arena.games.backgammon",
    "ply_arena.games.chinese_checkers",
    "ply_arena.games.tree",
    "reference_agents",
    "ply_arena.reference_agents.evaluation",
    "ply_arena.reference_agents.evaluation.tic_tac_toe",
    "ply_arena.reference_agents.trace",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
