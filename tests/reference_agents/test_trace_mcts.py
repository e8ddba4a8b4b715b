"""Traces of MCTS: the tree after the search, visits that add up, UCB1 as the notes write it, the
four phases of the first simulations, and the same trace for the same seed."""

from __future__ import annotations

import json
import math

import pytest

from ply_arena import games, reference_agents
from ply_arena.games import State
from ply_arena.reference_agents.trace import Trace, TraceNode, View, record, render_text


def position(game_name: str, moves: str) -> State:
    g = games.get(game_name)
    s = g.initial_state()
    for text in moves.split():
        s = s.result(g.parse_move(s, text))
    return s


def traced(game_name: str, s: State, sims: int, shown: int = 0, seed: int = 1) -> Trace:
    agent = reference_agents.make("mcts", games.get(game_name), simulations=sims, seed=seed)
    _, info, t = record(agent, s, view=View(limit=None, simulations=shown))
    assert t.agrees and info.nodes == sims
    return t


def check_visits_add_up(node: TraceNode) -> int:
    """N = the children's N + the simulations whose selection ended here; returns the nodes."""
    d = node.data
    assert d["visits"] == sum(ch.data["visits"] for ch in node.children) + d["stopped_here"], node
    if node.level == 0:
        assert d["stopped_here"] == 0  # every simulation goes on below the root
    elif node.kind != "terminal" and d.get("proven") is None:
        assert d["stopped_here"] == 1  # its own expansion, and nothing else
    elif node.kind == "terminal":
        assert node.children == [] and d["stopped_here"] == d["visits"]
    return 1 + sum(check_visits_add_up(ch) for ch in node.children)


def test_visits_add_up_at_every_node_and_the_tree_is_the_seeds() -> None:
    s = position("tic_tac_toe", "b2 a1")
    t = traced("tic_tac_toe", s, 40)
    assert t.root is not None and t.root.data["visits"] == 40
    assert check_visits_add_up(t.root) == t.root.size == 41  # one new node per simulation
    visits = {n.move: n.data["visits"] for n in t.root.children}
    assert visits == {"a3": 7, "c3": 6, "c2": 5, "b1": 6, "c1": 8, "a2": 6, "b3": 2}
    best = next(n for n in t.root.children if n.move == "c1")
    assert (best.data["total"], best.data["mean"]) == (7.5, 7.5 / 8)
    assert t.answer["move"] == "c1" and best.value == t.answer["value"] == -1 + 2 * 7.5 / 8
    again = traced("tic_tac_toe", s, 40)
    assert json.dumps(again.as_json()) == json.dumps(t.as_json())  # same seed, same trace


def test_proofs_and_chance_nodes_keep_the_count() -> None:
    # a fork: proofs rise through the tree (visits to proven nodes stop there)
    t = traced("tic_tac_toe", position("tic_tac_toe", "a1 b2 c3 a3"), 400, seed=2)
    assert t.root is not None and check_visits_add_up(t.root) == t.root.size
    assert any(n.data.get("proven") for n in t.root.walk())
    # backgammon: rolls are chance nodes, each outcome with its probability
    g = games.get("backgammon")
    s = g.initial_state().result((3, 1))
    s = s.result(s.actions()[0]).result((6, 5))
    t = traced("backgammon", s, 30)
    assert t.root is not None and check_visits_add_up(t.root) == t.root.size
    rolls = [n for n in t.root.walk() if n.kind == "chance"]
    assert rolls and all(0 < ch.data["probability"] <= 1 / 18 for n in rolls for ch in n.children)
    assert "p=1/18 N=" in render_text(t) or "p=1/36 N=" in render_text(t)


def test_ucb_is_the_notes_formula_and_chose_the_child() -> None:
    s = position("tic_tac_toe", "b2 a1")
    t = traced("tic_tac_toe", s, 40, shown=40)
    assert len(t.simulations) == 40
    c = math.sqrt(2)
    for sim in t.simulations:
        step = sim["selection"][0] if sim["selection"] else None
        if step is None or step["how"] != "ucb":
            continue
        before = sim["simulation"] - 1  # the root's N when this selection looked at it
        expected = step["mean"] + c * math.sqrt(math.log(before) / step["visits"])
        assert step["ucb"] == pytest.approx(expected)
    # the values shown in the tree are those of the root's last choice: the largest was taken
    assert t.root is not None
    last = t.simulations[-1]["selection"][0]
    assert last["how"] == "ucb"
    best = max(t.root.children, key=lambda n: n.data["ucb"])
    assert best.move == last["move"] and best.data["ucb"] == pytest.approx(last["ucb"])


def test_the_four_phases_of_the_first_simulations() -> None:
    s = position("tic_tac_toe", "b2 a1")
    t = traced("tic_tac_toe", s, 40, shown=9)
    assert [sim["simulation"] for sim in t.simulations] == list(range(1, 10))
    first = t.simulations[0]
    assert first["selection"] == [{"move": "a3", "how": "expansion"}]
    assert first["expansion"] == "a3" and first["rollout"]["kind"] == "random"
    assert first["rollout"]["scaled"] in ([1.0, 0.0], [0.5, 0.5], [0.0, 1.0])
    assert first["backpropagation"][-1] == {"move": None, "visits": 1, "total": None}
    eighth = t.simulations[7]  # the root is fully expanded after seven: UCB1 chooses
    assert eighth["selection"][0]["how"] == "ucb"
    # Backpropagation runs from the new leaf up to the root: the deepest move first.
    path = [s["move"] for s in eighth["selection"]]
    assert [b["move"] for b in eighth["backpropagation"]] == [*reversed(path), None]
    assert eighth["backpropagation"][0]["visits"] == 1
    text = render_text(t)
    for phase in ("selection", "expansion", "simulation", "backpropagation"):
        assert f"  {phase} " in text
    assert "simulation 8\n  selection        root → " in text
