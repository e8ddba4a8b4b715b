"""Traces of minimax, alpha-beta and negamax: Figure 6.5 as the notes draw it, the notes' units
for tic-tac-toe's E(n), the JSON form, and agents left as they were."""

from __future__ import annotations

import json
import math

import pytest

from ply_arena import games, reference_agents
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.trace import FORMAT, Trace, TraceNode, record, render_text

# Figure 6.5 (notes 004, chapter 6 of Russell & Norvig): MAX over three MIN nodes.
FIG_6_5 = {
    "player": 0,
    "children": [
        {"player": 1, "label": "B", "children": [3, 12, 8]},
        {"player": 1, "label": "C", "children": [2, 4, 6]},
        {"player": 1, "label": "D", "children": [14, 5, 2]},
    ],
}
ALL_LEAVES = [(i, j) for i in range(3) for j in range(3)]
# alpha-beta never reads the two leaves under C after its first (x and y in the notes)
READ_BY_ALPHABETA = [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (2, 1), (2, 2)]


def trace_of(name: str, tree: TreeGame, **options: object) -> tuple[object, Trace]:
    agent = reference_agents.make(name, tree, depth=2, **options)
    move, info, trace = record(agent, tree.initial_state())
    assert trace.agrees and trace.answer["move"] == "B" and info.score == 3.0
    return move, trace


def children(node: TraceNode | None) -> list[TraceNode]:
    assert node is not None
    return node.children


def nodes(trace: Trace) -> list[TraceNode]:
    assert trace.root is not None
    return trace.root.walk()


def test_alphabeta_figure_6_5_windows_cutoff_and_the_two_unread_leaves() -> None:
    tree = TreeGame(FIG_6_5)
    _, t = trace_of("alphabeta", tree)
    assert t.root is not None and t.root.value == 3 and t.root.data["best"] == "B"
    b, c, d = children(t.root)
    assert [n.move for n in (b, c, d)] == ["B", "C", "D"]
    assert [leaf.value for leaf in b.children] == [3, 12, 8]
    # (d) of the figure: C's first leaf is 2 <= alpha 3, so MAX never chooses C
    assert (c.data["alpha"], c.data["beta"], c.value) == (3, math.inf, 2)
    assert c.data["cutoff"] == {"after": "0", "test": "<= alpha", "v": 2, "bound": 3}
    assert c.data["pruned"] == ["1", "2"] and [leaf.value for leaf in c.children] == [2]
    assert (d.data["alpha"], d.value, "cutoff" in d.data) == (3, 2, False)
    assert [leaf.value for leaf in d.children] == [14, 5, 2]
    assert tree.leaf_visits == READ_BY_ALPHABETA  # read once each, in this order
    text = render_text(t)
    assert "root: MAX [-inf, +inf] = 3  order: B (best of the previous iteration)  best B" in text
    assert "├── C: MIN [3, +inf] = 2  cut-off (2 <= alpha 3)" in text
    assert "│   └── pruned: 1, 2" in text
    assert "shown: all 11 nodes of the search" in text


def test_minimax_figure_6_5_every_node_with_its_value() -> None:
    tree = TreeGame(FIG_6_5)
    _, t = trace_of("minimax", tree)
    assert [n.value for n in children(t.root)] == [3, 2, 2]
    assert [[leaf.value for leaf in n.children] for n in children(t.root)] == [
        [3, 12, 8],
        [2, 4, 6],
        [14, 5, 2],
    ]
    assert {n.kind for n in children(t.root)} == {"min"}
    assert sorted(tree.leaf_visits) == ALL_LEAVES  # no pruning: all nine leaves
    text = render_text(t)
    assert "[" not in text.split("root:")[1]  # no alpha-beta window in a minimax tree
    assert "├── C: MIN = 2" in text and "│   ├── 1: UTILITY = 4" in text


def test_negamax_figure_6_5_shows_the_sign_flip() -> None:
    tree = TreeGame(FIG_6_5)
    _, t = trace_of("negamax", tree)
    b, c, d = children(t.root)
    # MIN(3, 12, 8) = -MAX(-3, -12, -8): B scores itself -3, the root receives 3
    assert [leaf.value for leaf in b.children] == [-3, -12, -8]  # UTILITY for B's player
    assert (b.value, b.data["backed_up"], b.data["negated"]) == (-3, 3, True)
    # C is searched with the window negated and swapped, [-beta, -alpha] = [-inf, -3]
    assert (c.data["alpha"], c.data["beta"]) == (-math.inf, -3)
    assert (c.value, c.data["backed_up"], c.data["pruned"]) == (-2, 2, ["1", "2"])
    assert c.data["cutoff"]["v"] == -2 and c.data["cutoff"]["bound"] == -3
    assert (d.value, d.data["backed_up"]) == (-2, 2) and t.root is not None
    assert t.root.value == 3
    assert tree.leaf_visits == READ_BY_ALPHABETA
    text = render_text(t)
    assert "├── B: NEGAMAX [-inf, +inf] = -3  backed up -(-3) = 3" in text
    assert "C: NEGAMAX [-inf, -3] = -2  backed up -(-2) = 2  cut-off (alpha -2 >= beta -3)" in text


def test_tic_tac_toe_evaluation_in_the_notes_units() -> None:
    g = games.get("tic_tac_toe")
    s0 = g.initial_state()
    agent = reference_agents.make("minimax", g, depth=2)
    move, info, t = record(agent, s0)
    b2 = next(n for n in children(t.root) if n.move == "b2")
    a1 = next(n for n in b2.children if n.move == "a1")
    # X in the centre, O in a corner: "5 - 4 = 1" as notes 004 write E(n) = X(n) - O(n)
    assert a1.kind == "eval" and a1.value == 1
    assert a1.data["eval"] == {
        "formula": "E(n) = X(n) - O(n)",
        "for": "X",
        "terms": [5, 4],
        "text": "5 - 4 = 1",
    }
    assert "│   ├── a1: eval E(n) = 5 - 4 = 1" in render_text(t)
    assert t.values["scale"] == 10 and t.answer["value"] == 10 * (info.score or 0)
    # the agent itself still plays with E(n) / 10, and plays the same move traced or not
    from ply_arena.reference_agents.evaluation import evaluator_for

    assert evaluator_for(g)(s0.result(4).result(6)) == (0.1, -0.1)
    assert reference_agents.make("minimax", g, depth=2).choose(s0)[0] == move


def test_alphabeta_shows_why_moves_came_first() -> None:
    g = games.get("connect_four")
    from ply_arena.games.connect_four import state_from_moves

    s = state_from_moves("4453")
    agent = reference_agents.make("alphabeta", g, depth=4, solver=False)
    _, info, t = record(agent, s)
    reasons = {o["why"].split()[0] for n in nodes(t) for o in n.data.get("order", [])}
    assert {"tt", "killer", "history"} <= reasons
    tabled = [n for n in nodes(t) if "tt" in n.data]
    assert tabled and all(n.data["tt"]["bound"] in ("exact", "lower", "upper") for n in tabled)
    assert "order: " in render_text(t) and t.agrees
    # without ordering there are no reasons, and the value is the same
    _, plain, t2 = record(reference_agents.make("alphabeta", g, depth=4, order=False), s)
    assert plain.score == info.score
    assert not any(n.data.get("order") for n in nodes(t2))


def test_json_is_the_same_tree_and_describes_itself() -> None:
    tree = TreeGame(FIG_6_5)
    _, t = trace_of("alphabeta", tree)
    data = json.loads(json.dumps(t.as_json()))
    assert data["format"] == FORMAT and data["algorithm"] == "alphabeta"
    assert data["options"] == {"depth": 2, "order": True, "tt": True, "solver": False}
    assert data["answer"] == {"move": "B", "value": 3, "agent_value": 3, "depth": 2, "nodes": 15}
    assert set(data["kinds"]) == {"max", "min", "terminal"}
    assert data["shown"]["searched"] == data["shown"]["nodes"] == 11
    assert [it["depth"] for it in data["iterations"]] == [1, 2]
    root = data["tree"]
    assert (root["kind"], root["alpha"], root["beta"], root["value"]) == ("max", "-inf", "+inf", 3)
    c = root["children"][1]
    assert (c["move"], c["pruned"], c["cutoff"]["test"]) == ("C", ["1", "2"], "<= alpha")
    assert c["not_shown"] == {"children": 0, "nodes": 0, "not_recorded": 0}
    assert [ch["id"] for ch in root["children"]] == [1, 5, 7]  # the order the search entered


def test_the_agent_is_itself_again_after_a_trace() -> None:
    g = games.get("tic_tac_toe")
    agent = reference_agents.make("alphabeta", g, depth=3)
    record(agent, g.initial_state())
    assert not {"max_value", "min_value", "alpha_beta_search", "_ordered"} & set(vars(agent))
    with pytest.raises(ValueError, match="no search tree"):
        record(reference_agents.make("random", g), g.initial_state())


def test_negamax_does_not_flip_when_the_same_player_moves_again() -> None:
    # MAX moves twice in a row under "again" (a pass of the opponent): no negation there.
    # (Payoffs inside the tree's utility range [-1, 1], so that no depth looks like a proven win.)
    tree = TreeGame(
        {
            "player": 0,
            "children": [
                {
                    "player": 0,
                    "label": "again",
                    "children": [{"player": 1, "children": [0.4, 0.6]}],
                },
                {"player": 1, "label": "MIN", "children": [0.5, 0.7]},
            ],
        }
    )
    agent = reference_agents.make("negamax", tree, depth=3)
    move, info, t = record(agent, tree.initial_state())
    assert (move, info.score, info.depth, t.agrees) == (1, 0.5, 3, True)
    # (the previous iteration's best, MIN, is searched first)
    other, again = children(t.root)
    assert (other.move, again.move) == ("MIN", "again")
    assert (other.value, other.data["backed_up"], other.data["negated"]) == (-0.5, 0.5, True)
    # "again" is searched with alpha 0.5 from MIN: its child fails low (0.4) and, fail-hard as
    # the slide, the node returns alpha; MAX moves there again, so nothing is negated
    assert (again.value, again.data["backed_up"], again.data["negated"]) == (0.5, 0.5, False)
    (below,) = again.children  # O to move under "again": the flip is there
    assert (below.value, below.data["backed_up"], below.data["negated"]) == (-0.4, 0.4, True)
    line = "again: NEGAMAX [0.5, +inf] = 0.5  backed up as it is (the same player moves again)"
    assert line in render_text(t)
