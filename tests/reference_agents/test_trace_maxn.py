"""Traces of max^n: the notes' three-player vectors, shallow pruning, the paranoid option."""

from __future__ import annotations

from typing import ClassVar

from ply_arena import games, reference_agents
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.trace import TraceNode, record, render_text

A, B, C = 0, 1, 2

# Figure 6.4 of notes 004: A at the root, B below, C choosing between terminal vectors; at X,
# C takes (1, 2, 6) over (4, 2, 3) because 6 > 3, and (1, 2, 6) is backed up to the root.
FIG_6_4 = {
    "player": A,
    "children": [
        {
            "player": B,
            "children": [
                {"player": C, "label": "X", "children": [(1, 2, 6), (4, 2, 3)]},
                {"player": C, "children": [(6, 1, 2), (7, 4, 1)]},
            ],
        },
        {
            "player": B,
            "children": [
                {"player": C, "children": [(5, 1, 1), (1, 5, 2)]},
                {"player": C, "children": [(7, 7, 1), (5, 4, 5)]},
            ],
        },
    ],
}


def test_figure_6_4_vectors_and_who_maximises() -> None:
    game = TreeGame(FIG_6_4, num_players=3)
    # the figure's payoffs are not constant-sum: no shallow pruning, every node as drawn
    agent = reference_agents.make("maxn", game, depth=3, pruning=False)
    move, info, t = record(agent, game.initial_state())
    assert (move, info.score, t.agrees) == (0, 1.0, True)
    root = t.root
    assert root is not None and (root.kind, root.player, root.value) == ("choice", "A", (1, 2, 6))
    left, right = root.children
    x = left.children[0]
    assert (x.move, x.player, x.value) == ("X", "C", (1, 2, 6))
    assert [leaf.value for leaf in x.children] == [(1, 2, 6), (4, 2, 3)]
    assert [n.value for n in left.children] == [(1, 2, 6), (6, 1, 2)]
    assert (left.player, left.value) == ("B", (1, 2, 6))
    # on the right C takes (5, 4, 5) over (7, 7, 1), then B (1, 5, 2) for its 5; A gets 1
    # either way and keeps its first choice
    assert [n.value for n in right.children] == [(1, 5, 2), (5, 4, 5)]
    assert right.value == (1, 5, 2)
    text = render_text(t)
    assert "│   ├── X: C chooses (1, 2, 6)" in text
    assert "│   │   ├── 0: UTILITY = (1, 2, 6)" in text
    assert "│   │   └── 1: UTILITY = (4, 2, 3)" in text
    assert t.as_json()["tree"]["value"] == [1, 2, 6]


class ConstantSumTree(TreeGame):
    """Three players whose payoffs (0..10 each) add up to 10: shallow pruning applies."""

    min_utility: ClassVar[float] = 0.0
    max_utility: ClassVar[float] = 10.0
    constant_sum: ClassVar[float | None] = 10.0


# A gets 6 from its first child. At the second, B's first option gives B 5, which leaves A at
# most 10 - 5 = 5 < 6: the rest is pruned; likewise at the third (B: 4 leaves A 6, A has 6).
KORF = {
    "player": A,
    "children": [
        {"player": B, "children": [(6, 3, 1), (7, 2, 1)]},
        {"player": B, "children": [(2, 5, 3), (9, 0, 1), (8, 1, 1)]},
        {"player": B, "children": [(5, 4, 1), (9, 1, 0)]},
    ],
}


def test_shallow_cutoffs_say_what_was_left_to_the_player_above() -> None:
    game = ConstantSumTree(KORF, num_players=3)
    _, info, t = record(reference_agents.make("maxn", game, depth=2), game.initial_state())
    assert t.root is not None and t.root.value == (6, 3, 1) and info.score == 6.0
    first, second, third = t.root.children
    assert "cutoff" not in first.data
    assert second.data["cutoff"] == {
        "kind": "shallow",
        "after": "0",
        "has": 5,
        "total": 10,
        "leaves": 5,
        "parent": "A",
        "parent_has": 6,
    }
    assert second.data["pruned"] == ["1", "2"] and third.data["pruned"] == ["1"]
    assert third.data["cutoff"]["leaves"] == 6
    assert sorted(game.leaf_visits) == [(0, 0), (0, 1), (1, 0), (2, 0)]
    assert (
        "B chooses (2, 5, 3)  shallow cut-off (B has 5, which leaves A at most 10 - 5 = 5, "
        "and it has 6)" in render_text(t)
    )


def test_paranoid_is_max_against_a_coalition() -> None:
    game = TreeGame(FIG_6_4, num_players=3)
    agent = reference_agents.make("maxn", game, depth=3, paranoid=True)
    _, info, t = record(agent, game.initial_state())
    assert info.score == 1.0 and t.agrees and t.options["paranoid"] is True
    assert "coalition" in t.values["of"]

    def kinds(node: TraceNode) -> set[tuple[str, str | None]]:
        out = {(node.kind, node.player)} if node.kind in ("max", "min") else set()
        for ch in node.children:
            out |= kinds(ch)
        return out

    assert t.root is not None
    assert kinds(t.root) == {("max", "A"), ("min", "B"), ("min", "C")}
    right = t.root.children[1]  # B can hold A to 1 at once: alpha-beta cuts
    assert right.data["cutoff"]["test"] == "<= alpha" and right.data["pruned"] == ["1"]
    assert "1: MIN, coalition (B) [1, +inf] = 1  cut-off (1 <= alpha 1)" in render_text(t)


def test_chinese_checkers_vectors_for_three_seats() -> None:
    g = games.get("chinese_checkers")
    _, info, t = record(reference_agents.make("maxn", g, depth=1), g.initial_state())
    assert t.agrees and t.root is not None
    assert all(isinstance(n.value, tuple) and len(n.value) == 3 for n in t.root.children)
    assert t.root.value is not None and t.root.value[0] == info.score  # type: ignore[index]
    assert t.players == ["Red", "Green", "Blue"] and t.root.player == "Red"


def test_a_leaf_at_the_depth_limit_shows_every_seats_evaluation_and_the_vector() -> None:
    game = games.get("tic_tac_toe")
    state = game.initial_state()
    state = state.result(game.parse_move(state, "b2"))
    agent = reference_agents.make("maxn", game, depth=1)
    _, _, t = record(agent, state)
    text = render_text(t)
    # After O plays c2 (X has b2): X has 6 lines open, O 4.
    assert "c2: eval E(n) for each seat: X: 6 - 4 = 2, O: 4 - 6 = -2 → (2, -2)" in text
    assert t.root is not None
    (leaf,) = [n for n in t.root.children if n.move == "c2"]
    assert leaf.data["eval"]["terms"] == [[6, 4], [4, 6]]
