"""The examples in the public docstrings of `games` and `reference_agents` run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "games",
    "games._api",
    "games.tic_tac_toe",
    "games.connect_four",
    "games.othello",
    "games.backgammon",
    "games.chinese_checkers",
    "games.tree",
    "reference_agents",
    "reference_agents.evaluation",
    "reference_agents.evaluation.tic_tac_toe",
    "reference_agents.trace",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
