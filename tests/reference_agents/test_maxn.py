"""maxn: the notes' three-player example, shallow pruning, paranoid search, Chinese checkers."""

from __future__ import annotations

import random
from typing import ClassVar

import pytest

from ply_arena import games
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.maxn import MaxNAgent

A, B, C = 0, 1, 2

# Figure 6.4 of the notes (R&N): A at the root, B below, C choosing between terminal vectors.
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


def test_c_chooses_1_2_6_over_4_2_3() -> None:
    game = TreeGame(FIG_6_4["children"][0]["children"][0], num_players=3)  # type: ignore[index]
    move, info = MaxNAgent(game).choose(game.initial_state())
    assert move == 0 and info.score == 6.0
    assert MaxNAgent(game).vector_value(game.initial_state(), 1) == (1.0, 2.0, 6.0)


def test_figure_6_4_backs_up_1_2_6_to_the_root() -> None:
    game = TreeGame(FIG_6_4, num_players=3)
    agent = MaxNAgent(game, depth=3)
    assert agent.vector_value(game.initial_state(), 3) == (1.0, 2.0, 6.0)
    move, info = agent.choose(game.initial_state())
    assert move == 0 and info.score == 1.0 and info.pv == [0, 0, 0]


class ConstantSumTree(TreeGame):
    """Three players whose payoffs (0..10 each) always add up to 10: shallow pruning applies."""

    min_utility: ClassVar[float] = 0.0
    max_utility: ClassVar[float] = 10.0
    constant_sum: ClassVar[float | None] = 10.0


# A gets 6 from its first child. At the second, B's first option already gives B 5, which leaves
# at most 10 - 5 = 5 < 6 for A: the rest of that node is pruned; likewise at the third (B: 4).
KORF = {
    "player": A,
    "children": [
        {"player": B, "children": [(6, 3, 1), (7, 2, 1)]},
        {"player": B, "children": [(2, 5, 3), (9, 0, 1), (8, 1, 1)]},
        {"player": B, "children": [(5, 4, 1), (9, 1, 0)]},
    ],
}


def test_shallow_pruning_same_value_fewer_nodes() -> None:
    full, pruned = ConstantSumTree(KORF, num_players=3), ConstantSumTree(KORF, num_players=3)
    m1, i1 = MaxNAgent(full, depth=2, pruning=False).choose(full.initial_state())
    m2, i2 = MaxNAgent(pruned, depth=2, pruning=True).choose(pruned.initial_state())
    assert m1 == m2 == 0 and i1.score == i2.score == 6.0
    assert set(full.leaf_visits) - set(pruned.leaf_visits) == {(1, 1), (1, 2), (2, 1)}
    assert i2.nodes < i1.nodes


def _random_constant_sum_tree(rng: random.Random, depth: int, player: int) -> object:
    if depth == 0:
        a = rng.randint(0, 10)
        b = rng.randint(0, 10 - a)
        return (a, b, 10 - a - b)
    return {
        "player": player,
        "children": [
            _random_constant_sum_tree(rng, depth - 1, (player + 1) % 3)
            for _ in range(rng.randint(2, 4))
        ],
    }


def test_shallow_pruning_never_changes_the_answer_on_random_trees() -> None:
    rng = random.Random(11)
    saved = 0
    for _ in range(100):
        tree = _random_constant_sum_tree(rng, 4, A)
        full = ConstantSumTree(tree, num_players=3)
        pruned = ConstantSumTree(tree, num_players=3)
        m1, i1 = MaxNAgent(full, depth=4, pruning=False).choose(full.initial_state())
        m2, i2 = MaxNAgent(pruned, depth=4, pruning=True).choose(pruned.initial_state())
        assert (m1, i1.score) == (m2, i2.score)
        assert MaxNAgent(full, pruning=False).vector_value(full.initial_state(), 4) == (
            MaxNAgent(pruned).vector_value(pruned.initial_state(), 4)
        )
        assert i2.nodes <= i1.nodes
        saved += i2.nodes < i1.nodes
    assert saved > 50


def test_no_shallow_pruning_without_a_constant_sum() -> None:
    class GeneralSum(ConstantSumTree):
        constant_sum: ClassVar[float | None] = None

    game = GeneralSum(KORF, num_players=3)
    MaxNAgent(game, depth=2).choose(game.initial_state())
    assert len(game.leaf_visits) == 7


def test_paranoid_assumes_the_others_minimise_my_value() -> None:
    game = TreeGame(FIG_6_4, num_players=3)
    for pruning in (False, True):
        _, info = MaxNAgent(game, depth=3, paranoid=True, pruning=pruning).choose(
            game.initial_state()
        )
        # B and C together hold A to min(1, 4, 6, 7) = 1 on the left, min(5, 1, 7, 5) = 1 right
        assert info.score == 1.0


def test_paranoid_alpha_beta_prunes_and_agrees_in_chinese_checkers() -> None:
    g = games.get("chinese_checkers")
    rng = random.Random(4)
    s = g.initial_state()
    for _ in range(24):
        s = s.result(rng.choice(s.actions()))
    _, i1 = MaxNAgent(g, depth=3, paranoid=True, pruning=False).choose(s)
    _, i2 = MaxNAgent(g, depth=3, paranoid=True, pruning=True).choose(s)
    assert i1.score == pytest.approx(i2.score) and i2.nodes < i1.nodes / 5


def test_chinese_checkers_shallow_pruning_agrees_with_full_search() -> None:
    g = games.get("chinese_checkers")
    rng = random.Random(9)
    s = g.initial_state()
    for _ in range(40):
        s = s.result(rng.choice(s.actions()))
    m1, i1 = MaxNAgent(g, depth=2, pruning=False).choose(s)
    m2, i2 = MaxNAgent(g, depth=2, pruning=True).choose(s)
    assert (m1, i1.score) == (m2, i2.score)


def test_moves_into_the_goal_to_win() -> None:
    g = games.get("chinese_checkers")
    s = g.state_from_json(CC_WIN)
    move, info = MaxNAgent(g, depth=2).choose(s)
    assert g.format_move(s, move) == "m5-n1" and info.score == 1.0


def test_time_limit_and_refusal() -> None:
    g = games.get("chinese_checkers")
    move, info = MaxNAgent(g, seed=2).choose(g.initial_state(), time_limit=0.2)
    assert move in g.initial_state().actions() and info.depth >= 1 and info.time_ms < 200
    reason = MaxNAgent.refusal(games.get("backgammon"))
    assert reason is not None and "chance" in reason
    assert MaxNAgent.refusal(games.get("connect_four")) is None


# Red (seat 0) has nine pieces in its target (the bottom point) and one next to the last hole.
CC_WIN = {
    "pieces": [
        ["n2", "n3", "n4", "o1", "o2", "o3", "p1", "p2", "q1", "m5"],
        ["j10", "k10", "k11", "l10", "l11", "l12", "m10", "m11", "m12", "m13"],
        ["j1", "k1", "k2", "l1", "l2", "l3", "m1", "m2", "m3", "m4"],
    ],
    "player": 0,
    "ply": 60,
}


def test_chinese_checkers_evaluation_ranks_by_distance_and_sums_to_zero() -> None:
    from ply_arena.games.chinese_checkers import ChineseCheckersState, distance_to_goal
    from ply_arena.reference_agents.evaluation import evaluator_for

    g = games.get("chinese_checkers")
    evaluate = evaluator_for(g)
    rng = random.Random(5)
    s = g.initial_state()
    for ply in range(300):
        assert isinstance(s, ChineseCheckersState)
        if s.is_terminal():  # seat 0 (greedy max^n) has filled its target
            assert s.winner() == 0 and ply > 30
            break
        v = evaluate(s)
        assert abs(sum(v)) < 1e-12 and all(abs(x) < 0.75 for x in v)
        d = distance_to_goal(s)
        for i in range(3):
            for j in range(3):
                if d[i] < d[j]:
                    assert v[i] > v[j]
        s = s.result(rng.choice(s.actions()) if ply % 3 else MaxNAgent(g, depth=1).choose(s)[0])
