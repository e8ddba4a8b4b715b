"""negamax: the compact form gives minimax's values, prunes Figure 6.5 like alpha-beta."""

from __future__ import annotations

import random

from _timing import within_limit

from ply_arena import games, reference_agents
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.minimax import MinimaxAgent
from ply_arena.reference_agents.negamax import NegamaxAgent

FIG_6_5 = {
    "player": 0,
    "children": [
        {"player": 1, "label": "a1", "children": [3, 12, 8]},
        {"player": 1, "label": "a2", "children": [2, 4, 6]},
        {"player": 1, "label": "a3", "children": [14, 5, 2]},
    ],
}


def test_figure_6_5_value_and_pruning() -> None:
    tree = TreeGame(FIG_6_5)
    move, info = reference_agents.make("negamax", tree, depth=2).choose(tree.initial_state())
    assert move == 0 and info.score == 3.0 and info.pv == [0, 0]
    assert (1, 1) not in tree.leaf_visits and (1, 2) not in tree.leaf_visits


def test_min_player_at_the_root_sees_its_own_values() -> None:
    # MIN to move at the root: negamax scores the node for the player to move, i.e. negated
    tree = TreeGame({"player": 1, "children": [3, 12, 8]})
    move, info = NegamaxAgent(tree).choose(tree.initial_state())
    assert move == 0 and info.score == -3.0


def test_tic_tac_toe_draw_and_same_values_as_minimax() -> None:
    g = games.get("tic_tac_toe")
    _, info = NegamaxAgent(g, depth=9).choose(g.initial_state())
    assert info.score == 0.0
    rng = random.Random(4)
    for _ in range(30):
        s = g.initial_state()
        for _ in range(rng.randrange(6)):
            s = s.result(rng.choice(s.actions()))
        if s.is_terminal():
            continue
        depth = rng.randrange(1, 6)
        assert (
            NegamaxAgent(g, depth=depth).choose(s)[1].score
            == MinimaxAgent(g, depth=depth).choose(s)[1].score
        )


def test_othello_passes_keep_the_sign_right() -> None:
    # with the turn sometimes staying put, negamax still agrees with minimax
    g = games.get("othello")
    rng = random.Random(2)
    s = g.initial_state()
    for _ in range(10):
        s = s.result(rng.choice(s.actions()))
    for depth in (1, 2, 3):
        assert (
            NegamaxAgent(g, depth=depth).choose(s)[1].score
            == MinimaxAgent(g, depth=depth).choose(s)[1].score
        )


def test_returns_within_its_time_limit_and_is_reproducible() -> None:
    g = games.get("connect_four")
    agent = NegamaxAgent(g, seed=3)
    _, info = within_limit(lambda: agent.choose(g.initial_state(), time_limit=0.2), 0.2)
    assert info.depth >= 3
    a = NegamaxAgent(g, depth=4, seed=3).choose(g.initial_state())
    b = NegamaxAgent(g, depth=4, seed=3).choose(g.initial_state())
    assert a[0] == b[0] and a[1].pv == b[1].pv
