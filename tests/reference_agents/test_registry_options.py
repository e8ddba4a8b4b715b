"""Agent options are checked against each agent's declared options (its ``__init__``'s
keyword-only parameters), so a typo or a wrong type is one line naming the valid options."""

from __future__ import annotations

import doctest
import subprocess
import sys

import pytest

import ply_arena.reference_agents.registry as registry
from ply_arena import games
from ply_arena.reference_agents.registry import (
    AgentOption,
    agent_names,
    agent_options,
    make,
    parse_spec,
)

ARENA = [sys.executable, "-m", "ply_arena"]
ALPHABETA_OPTIONS = (
    "options: depth (int), move_time (float), seed (int), order (bool), tt (bool), solver (bool)"
)


def test_options_are_read_from_the_agent_classes() -> None:
    options = {o.name: o for o in agent_options("alphabeta")}
    assert options["depth"] == AgentOption("depth", int, None, True)
    assert options["order"] == AgentOption("order", bool, True, False)
    assert options["evaluate"].kind is None  # a callable: only from Python
    mcts = {o.name: o for o in agent_options("mcts")}
    assert mcts["c"].kind is float and mcts["simulation"].kind is str
    assert [o.name for o in agent_options("random")] == ["seed"]
    for name in agent_names():
        assert all(o.kind in (int, float, bool, str, None) for o in agent_options(name))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alphabeta:depth=abc", f"option depth=abc: expected an integer; {ALPHABETA_OPTIONS}"),
        ("alphabeta:depth=2.5", "alphabeta option depth=2.5: expected an integer"),
        (
            "alphabeta:depht=3",
            f"alphabeta does not take depht=3 (did you mean depth?); {ALPHABETA_OPTIONS}",
        ),
        ("alphabeta:order=maybe", "alphabeta option order=maybe: expected true or false"),
        ("alphabeta:order=none", "alphabeta option order=none: expected true or false, not none"),
        ("alphabeta:evaluate=mine", "evaluate=mine: cannot be given as text"),
        ("mcts:c=wide", "mcts option c=wide: expected a number; options: c (float), simulations"),
        ("random:depth=2", "random does not take depth=2; options: seed (int)"),
    ],
)
def test_a_bad_option_is_one_line_naming_the_valid_ones(spec: str, message: str) -> None:
    name, options = parse_spec(spec)
    with pytest.raises(ValueError) as caught:
        make(name, games.get("tic_tac_toe"), **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_good_options_are_converted_and_pass() -> None:
    name, options = parse_spec("mcts:c=1,simulations=20,seed=none,solve=false")
    agent = make(name, games.get("tic_tac_toe"), **options)
    assert agent.c == 1.0 and isinstance(agent.c, float)  # type: ignore[attr-defined]
    assert registry.check_options("alphabeta", {"move_time": 2}) == {"move_time": 2.0}
    assert registry.check_options("alphabeta", {"evaluate": len}) == {"evaluate": len}


def test_the_registry_docstring_examples_run() -> None:
    result = doctest.testmod(registry, optionflags=doctest.ELLIPSIS)
    assert result.attempted and result.failed == 0


@pytest.mark.parametrize(
    "command",
    [
        ["play", "tic_tac_toe", "alphabeta:depth=abc", "random"],
        ["analyze", "tic_tac_toe", "--agent", "alphabeta:depth=abc"],
        ["agent", "tic_tac_toe", "alphabeta:depth=abc", "--token", "t"],
    ],
)
def test_every_command_reports_a_bad_option_in_one_line(command: list[str]) -> None:
    done = subprocess.run([*ARENA, *command], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: alphabeta option depth=abc: expected an integer; {ALPHABETA_OPTIONS}\n"
    )
