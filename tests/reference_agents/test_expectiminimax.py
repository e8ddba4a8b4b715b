"""expectiminimax: the notes' RAND nodes on a hand-built tree, Star1 pruning, backgammon."""

from __future__ import annotations

import random
from typing import ClassVar

import pytest
from _timing import within_limit

from ply_arena import games
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.expectiminimax import ExpectiminimaxAgent


class BoundedTree(TreeGame):
    """Leaves between 0 and 10: the utility range that Star1 reasons with."""

    min_utility: ClassVar[float] = 0.0
    max_utility: ClassVar[float] = 10.0


def MIN(*leaves: float) -> dict[str, object]:  # named as the notes draw the node
    return {"player": 1, "children": list(leaves)}


# MAX chooses among three dice-like RAND nodes, each over MIN nodes:
#   c: 0.5 * min(1, 2) + 0.5 * min(4, 4)   = 2.5   (first, so that alpha is 2.5 at once)
#   a: 0.5 * min(3, 5) + 0.5 * min(1, 8)   = 2.0
#   d: 0.8 * min(0, 7) + 0.2 * min(5, 6)   = 1.0
# and at d, once the 0.8 outcome is worth 0, d is at most 0 + 0.2 * 10 = 2 < 2.5: Star1 leaves
# the 0.2 outcome (leaves 5 and 6) unsearched, and the window given to the 0.8 outcome skips 7.
CHANCE_TREE = {
    "player": 0,
    "children": [
        {"label": "c", "chance": [(0.5, MIN(1, 2)), (0.5, MIN(4, 4))]},
        {"label": "a", "chance": [(0.5, MIN(3, 5)), (0.5, MIN(1, 8))]},
        {"label": "d", "chance": [(0.8, MIN(0, 7)), (0.2, MIN(5, 6))]},
    ],
}


def test_hand_built_chance_tree_has_the_expected_value() -> None:
    for pruning in (False, True):
        game = BoundedTree(CHANCE_TREE)
        move, info = ExpectiminimaxAgent(game, depth=2, pruning=pruning).choose(
            game.initial_state()
        )
        assert game.label(game.initial_state(), move) == "c"
        assert info.score == pytest.approx(2.5)


def test_star1_pruning_skips_the_outcomes_that_cannot_matter() -> None:
    full = BoundedTree(CHANCE_TREE)
    ExpectiminimaxAgent(full, depth=2, pruning=False).choose(full.initial_state())
    pruned = BoundedTree(CHANCE_TREE)
    ExpectiminimaxAgent(pruned, depth=2, pruning=True).choose(pruned.initial_state())
    assert len(full.leaf_visits) == 12
    skipped = set(full.leaf_visits) - set(pruned.leaf_visits)
    # a (child 1): after 0.5 * 3, its second outcome must reach (2.5 - 1.5) / 0.5 = 2 to
    # matter; MIN's first leaf 1 is below that, so leaf 8 is skipped (the outcome's own window).
    # d (child 2): leaf 7 of its 0.8 outcome, and the whole 0.2 outcome (leaves 5 and 6).
    assert skipped == {(1, 1, 1), (2, 0, 1), (2, 1, 0), (2, 1, 1)}


def test_every_value_in_the_window_is_exact_on_random_chance_trees() -> None:
    """Pruning never changes the root's value or its move, over many random trees."""
    rng = random.Random(7)

    def node(depth: int, player: int) -> object:
        if depth == 0:
            return rng.randint(0, 10)
        if rng.random() < 0.4:
            k = rng.randint(2, 3)
            weights = [rng.randint(1, 4) for _ in range(k)]
            return {"chance": [(w / sum(weights), node(depth - 1, player)) for w in weights]}
        return {"player": player, "children": [node(depth - 1, 1 - player) for _ in range(3)]}

    fewer = 0
    for _ in range(60):
        tree = {"player": 0, "children": [node(4, 1) for _ in range(3)]}
        full, pruned = BoundedTree(tree), BoundedTree(tree)
        m1, i1 = ExpectiminimaxAgent(full, depth=6, pruning=False).choose(full.initial_state())
        m2, i2 = ExpectiminimaxAgent(pruned, depth=6, pruning=True).choose(pruned.initial_state())
        assert i2.score == pytest.approx(i1.score)
        assert m1 == m2 or i1.score == pytest.approx(_child_value(BoundedTree(tree), m2))
        assert len(pruned.leaf_visits) <= len(full.leaf_visits)
        fewer += len(pruned.leaf_visits) < len(full.leaf_visits)
    assert fewer > 30


def _child_value(game: TreeGame, move: object) -> float:
    agent = ExpectiminimaxAgent(game, depth=6, pruning=False)
    return agent.value(game.initial_state().result(move), 6, 0, -1e9, 1e9)[0]


def test_backgammon_pruning_keeps_the_value_and_saves_nodes() -> None:
    g = games.get("backgammon")
    rng = random.Random(3)
    for _ in range(3):
        s = g.initial_state()
        for _ in range(rng.randrange(6, 30)):
            s = s.result(rng.choice(s.actions()))
            if s.is_terminal():
                break
        if s.is_terminal():
            continue
        if s.is_chance_node():
            s = s.result(rng.choice(s.actions()))
        if len(s.actions()) < 2:
            continue
        _, i1 = ExpectiminimaxAgent(g, depth=2, pruning=False).choose(s)
        _, i2 = ExpectiminimaxAgent(g, depth=2, pruning=True).choose(s)
        assert i2.score == pytest.approx(i1.score)
        assert i2.nodes <= i1.nodes


def test_bears_off_to_win_a_race() -> None:
    g = games.get("backgammon")
    points = [0] * 24
    points[5] = points[4] = 1  # white: one checker on its 6-point, one on its 5-point
    points[23] = -1  # black: its last checker on its 1-point, off next turn
    s = g.state_from_json(
        {
            "points": points,
            "bar": [0, 0],
            "off": [13, 14],
            "player": 0,
            "turn": 0,
            "dice": [6, 5],
            "opening": False,
        }
    )
    move, info = ExpectiminimaxAgent(g, depth=2).choose(s)
    assert g.format_move(s, move) == "6/off 5/off"
    assert s.result(move).is_terminal() and info.score == pytest.approx(1.0)
    # the other play (6/1 5/off) loses to any roll of black's: worth -1
    other = next(a for a in s.actions() if a != move)
    value, _ = ExpectiminimaxAgent(g, depth=2).value(s.result(other), 1, 0, -9, 9)
    assert value == pytest.approx(-1.0)


def test_time_limit_is_kept_and_the_move_is_legal() -> None:
    g = games.get("backgammon")
    s = g.initial_state().result((6, 2))
    agent = ExpectiminimaxAgent(g, seed=1)
    move, info = within_limit(lambda: agent.choose(s, time_limit=0.3), 0.3)
    assert move in s.actions() and info.depth >= 1 and info.nodes > 0
    assert info.as_json(g, s)["pv"] == [g.format_move(s, move)]  # the line stops at the dice


def test_reproducible_with_a_seed() -> None:
    g = games.get("tic_tac_toe")
    s = g.initial_state()
    first = [ExpectiminimaxAgent(g, depth=3, seed=5).choose(s)[0] for _ in range(3)]
    assert len(set(first)) == 1


def test_deterministic_games_give_the_minimax_value() -> None:
    g = games.get("tic_tac_toe")
    _, info = ExpectiminimaxAgent(g, depth=9).choose(g.initial_state())
    assert info.score == 0.0


def test_refuses_three_players() -> None:
    reason = ExpectiminimaxAgent.refusal(games.get("chinese_checkers"))
    assert reason is not None and "3 players" in reason and "maxn" in reason
    assert ExpectiminimaxAgent.refusal(games.get("backgammon")) is None


def test_backgammon_evaluation_estimates_the_expected_payoff() -> None:
    from ply_arena.reference_agents.evaluation import evaluator_for

    g = games.get("backgammon")
    evaluate = evaluator_for(g)
    rng = random.Random(1)
    for _ in range(20):
        s = g.initial_state()
        while not s.is_terminal():
            w, b = evaluate(s)
            assert -1.0 < w < 1.0 and w == -b  # inside the utility range [-3, 3], zero sum
            s = s.result(rng.choice(s.actions()))
    # a pure race (no contact): white 40 pips ahead, on roll -> clearly ahead, not yet certain
    race = g.state_from_json(
        {
            "points": [3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -3, -3, -3, -3, -3, 0],
            "bar": [0, 0],
            "off": [0, 0],
            "player": -1,
            "turn": 0,
            "dice": None,
            "opening": False,
        }
    )
    w, _ = evaluate(race)
    assert 0.5 < w < 1.0
    # a blot in reach of the opponent costs; the same checker safe on a made point does not
    base = [0] * 24
    base[5], base[7], base[12], base[23] = 5, 3, 5, 2  # white: the start, minus nothing
    hit_risk = [*base]
    hit_risk[7], hit_risk[9] = 2, 1  # one checker from 8 to 10, alone
    black = {0: -2, 11: -5, 16: -3, 18: -5}  # black's start (white's 1, 12, 17, 19)
    values = []
    for pts in (base, hit_risk):
        board = [*pts]
        for i, v in black.items():
            board[i] = v
        # both positions have white's pips equal up to the 2 pips moved; compare blot effect
        s = g.state_from_json(
            {
                "points": board,
                "bar": [0, 0],
                "off": [0, 0],
                "player": -1,
                "turn": 1,
                "dice": None,
                "opening": False,
            }
        )
        values.append(evaluate(s)[0])
    assert values[1] < values[0] + 0.05  # 2 pips gained do not pay for a blot
