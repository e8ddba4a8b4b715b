"""The agent registry: names, applicability per game, refusals that name the agents that apply."""

from __future__ import annotations

import pytest

from ply_arena import games, reference_agents
from ply_arena.reference_agents.registry import agent_class, applicable_agents, make, parse_spec


def test_every_registered_agent_imports_and_has_its_name() -> None:
    for name in reference_agents.agent_names():
        assert agent_class(name).name == name


def test_applicable_agents_per_game() -> None:
    assert set(applicable_agents(games.get("backgammon"))) >= {"expectiminimax", "mcts", "random"}
    assert "maxn" not in applicable_agents(games.get("backgammon"))
    cc = set(applicable_agents(games.get("chinese_checkers")))
    assert {"maxn", "mcts", "random"} <= cc and "expectiminimax" not in cc
    for name in ("tic_tac_toe", "connect_four", "othello"):
        assert {"expectiminimax", "maxn", "mcts", "random"} <= set(
            applicable_agents(games.get(name))
        )
    for name in games.names():  # MCTS and random play everything
        assert {"mcts", "random"} <= set(applicable_agents(games.get(name)))


def test_refusals_explain_and_name_the_agents_that_apply() -> None:
    with pytest.raises(ValueError) as err:
        make("expectiminimax", games.get("chinese_checkers"))
    text = str(err.value)
    assert "expectiminimax" in text and "3 players" in text
    assert "agents that do: " in text and "maxn" in text and "mcts" in text
    with pytest.raises(ValueError) as err:
        make("maxn", games.get("backgammon"))
    text = str(err.value)
    assert "chance" in text and "expectiminimax" in text.split("agents that do: ")[1]


def test_unknown_agent_and_bad_options() -> None:
    with pytest.raises(ValueError, match="known agents are"):
        make("alphazero", games.get("tic_tac_toe"))
    with pytest.raises(ValueError, match="does not take"):
        make("mcts", games.get("tic_tac_toe"), depth=3)
    with pytest.raises(ValueError, match="does not take"):
        make("maxn", games.get("tic_tac_toe"), c=1.0)


def test_specs_with_options_make_configured_agents() -> None:
    name, options = parse_spec("mcts:c=1.4,simulations=50,simulation=random")
    agent = make(name, games.get("connect_four"), **options)
    assert agent.c == 1.4 and agent.simulations == 50  # type: ignore[attr-defined]
    name, options = parse_spec("maxn:depth=2,paranoid=true")
    agent = make(name, games.get("chinese_checkers"), **options)
    assert agent.paranoid is True and agent.depth == 2  # type: ignore[attr-defined]
    name, options = parse_spec("expectiminimax:depth=1,pruning=false")
    agent = make(name, games.get("backgammon"), **options)
    assert agent.pruning is False  # type: ignore[attr-defined]
