"""Traces of expectiminimax: RAND nodes with their probabilities and weighted sums, Star1."""

from __future__ import annotations

import math
from typing import ClassVar

import pytest

from ply_arena import games, reference_agents
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.trace import TraceNode, View, record, render_text


class BoundedTree(TreeGame):
    """Leaves between 0 and 10: the utility range Star1 reasons with."""

    min_utility: ClassVar[float] = 0.0
    max_utility: ClassVar[float] = 10.0


def MIN(*leaves: float) -> dict[str, object]:  # named as the notes draw the node
    return {"player": 1, "children": list(leaves)}


# MAX over three RAND nodes over MIN nodes (the tree of test_expectiminimax.py):
#   c: 0.5 min(1, 2) + 0.5 min(4, 4) = 2.5, a: 0.5 min(3, 5) + 0.5 min(1, 8) = 2,
#   d: 0.8 min(0, 7) + 0.2 min(5, 6) = 1, where Star1 stops after the 0.8 outcome.
CHANCE_TREE = {
    "player": 0,
    "children": [
        {"label": "c", "chance": [(0.5, MIN(1, 2)), (0.5, MIN(4, 4))]},
        {"label": "a", "chance": [(0.5, MIN(3, 5)), (0.5, MIN(1, 8))]},
        {"label": "d", "chance": [(0.8, MIN(0, 7)), (0.2, MIN(5, 6))]},
    ],
}


def rand_nodes(pruning: bool) -> tuple[BoundedTree, list[TraceNode], str]:
    tree = BoundedTree(CHANCE_TREE)
    agent = reference_agents.make("expectiminimax", tree, depth=2, pruning=pruning)
    move, info, t = record(agent, tree.initial_state())
    assert (move, info.score, t.agrees) == (0, 2.5, True)
    assert t.root is not None and t.root.kind == "max" and t.root.value == 2.5
    return tree, t.root.children, render_text(t)


def test_without_pruning_every_rand_node_is_the_notes_weighted_sum() -> None:
    tree, (c, a, d), text = rand_nodes(pruning=False)
    assert [n.kind for n in (c, a, d)] == ["chance"] * 3
    assert [n.value for n in (c, a, d)] == [2.5, 2.0, 1.0]
    assert [ch.data["probability"] for ch in d.children] == [0.8, 0.2]
    assert [ch.value for ch in d.children] == [0, 5]
    assert d.data["weighted"] == "4/5×0 + 1/5×5" and "star1" not in d.data
    assert "└── d: CHANCE [-inf, +inf] = 4/5×0 + 1/5×5 = 1" in text
    assert "    ├── 0: p=4/5 MIN [-inf, +inf] = 0" in text
    assert len(tree.leaf_visits) == 12  # every leaf


def test_star1_stops_the_rand_node_that_cannot_reach_alpha() -> None:
    tree, (c, a, d), text = rand_nodes(pruning=True)
    assert c.data["weighted"] == "1/2×1 + 1/2×4" and c.value == 2.5
    # a's second outcome gets the window [2, 10]: its MIN stops at 1 and never reads the 8
    assert a.children[1].data["alpha"] == 2 and a.children[1].data["pruned"] == ["1"]
    # at d, after the 0.8 outcome is worth 0, d is at most 0 + 0.2 x 10 = 2 <= alpha 2.5
    assert d.data["star1"] == {
        "after": "0",
        "bound": "upper",
        "rest": 0.2,
        "test": "<= alpha",
        "v": pytest.approx(2.0),
        "window": 2.5,
    }
    assert d.data["pruned"] == ["1"] and d.value == pytest.approx(2.0)
    assert d.data["weighted"] == "4/5×0 + 1/5×(at most 10)"
    # and the 0.8 outcome got its own window: (2.5 - 0 - 0.2 x 10) / 0.8 = 0.625
    (first,) = d.children
    assert math.isclose(first.data["alpha"], 0.625) and first.data["pruned"] == ["1"]
    line = "d: CHANCE [2.5, +inf] = 4/5×0 + 1/5×(at most 10) = 2  Star1 cut-off (2 <= alpha 2.5)"
    assert line in text
    assert (2, 1, 0) not in tree.leaf_visits and (2, 0, 1) not in tree.leaf_visits


def test_backgammon_rolls_are_chance_nodes_with_their_probabilities() -> None:
    g = games.get("backgammon")
    s = g.initial_state().result((3, 1))
    s = s.result(s.actions()[0]).result((6, 5))  # after the opening, black has rolled 6-5
    # depth 2: my play, the roll (a RAND node uses up no depth), the reply, eval(n); two levels
    # recorded: the plays and the rolls
    agent = reference_agents.make("expectiminimax", g, depth=2, seed=0)
    move, info, t = record(agent, s, view=View(levels=2, limit=None))
    assert t.agrees and t.answer["move"] == g.format_move(s, move)
    assert t.root is not None and t.root.kind == "max"
    assert t.root.size == t.iterations[-1]["nodes"]  # all it searched, recorded or not
    assert sum(it["nodes"] for it in t.iterations) == info.nodes
    rolls = [n for n in t.root.children if n.kind == "chance"]
    assert len(rolls) == len(s.actions())
    full = next(n for n in rolls if "star1" not in n.data)
    assert math.isclose(sum(ch.data["probability"] for ch in full.children), 1.0)
    assert len(full.children) == 21 and {"1-1", "6-5", "6-6"} <= {ch.move for ch in full.children}
    assert {ch.kind for ch in full.children} == {"min"}
    assert full.children[0].children == [] and full.children[0].size > 1  # not recorded
    assert any("star1" in n.data for n in rolls)  # Star1 fires in backgammon too


def test_dice_probabilities_are_written_as_the_notes_write_them() -> None:
    game = games.get("backgammon")
    state = game.initial_state()
    for move in ("3-1", "8/5 6/5", "6-5"):
        state = state.result(game.parse_move(state, move))
    agent = reference_agents.make("expectiminimax", game, depth=2)
    _, _, t = record(agent, state, view=View(limit=12))
    text = render_text(t)
    assert "1-1: p=1/36 MIN (white)" in text and "2-1: p=1/18 MIN (white)" in text
    assert "0.02778" not in text and "0.05556" not in text
    assert "= 1/36×" in text and "+ 1/18×" in text
