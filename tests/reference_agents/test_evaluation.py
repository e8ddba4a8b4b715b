"""Evaluation functions: the contract (per-seat vector strictly inside the utility range) and
the notes' tic-tac-toe E(n) = X(n) - O(n)."""

from __future__ import annotations

import random

import pytest

from ply_arena import games
from ply_arena.reference_agents.evaluation import evaluated_games, evaluator_for

MINE = ["connect_four", "othello", "tic_tac_toe"]


@pytest.mark.parametrize("game_name", MINE)
def test_values_inside_the_utility_range_and_zero_sum(game_name: str) -> None:
    g = games.get(game_name)
    evaluate = evaluator_for(g)
    rng = random.Random(0)
    seen = set()
    for _ in range(60):
        s = g.initial_state()
        while not s.is_terminal():
            v = evaluate(s)
            assert len(v) == g.num_players
            assert all(g.min_utility < x < g.max_utility for x in v), (s, v)
            assert sum(v) == pytest.approx(0.0)
            seen.add(round(v[0], 6))
            s = s.result(rng.choice(s.actions()))
        assert evaluate(s) == s.returns()  # at the end the evaluation is the utility
    assert len(seen) > 5  # it distinguishes positions


def test_registered_names() -> None:
    assert set(MINE) <= set(evaluated_games())


def test_unregistered_game_gets_the_neutral_evaluation() -> None:
    from ply_arena.games.tree import TreeGame

    tree = TreeGame({"player": 0, "children": [1, -1]})
    assert evaluator_for(tree)(tree.initial_state()) == (0.0, 0.0)


def test_tic_tac_toe_open_lines_as_in_the_notes() -> None:
    g = games.get("tic_tac_toe")
    evaluate = evaluator_for(g)
    s = g.initial_state()
    assert evaluate(s) == (0.0, 0.0)  # 8 - 8
    centre = s.result(g.parse_move(s, "b2"))
    assert evaluate(centre) == (0.4, -0.4)  # X(n) = 8, O(n) = 4
    corner = s.result(g.parse_move(s, "a3"))
    assert evaluate(corner) == (0.3, -0.3)  # 8 - 5
    edge = s.result(g.parse_move(s, "b3"))
    assert evaluate(edge) == (0.2, -0.2)  # 8 - 6
    # notes' 2-ply example: X in the centre, O on an edge: X(n) = 6, O(n) = 4
    reply = centre.result(g.parse_move(centre, "b3"))
    assert evaluate(reply) == (0.2, -0.2)


def test_connect_four_prefers_the_centre_and_counts_threats() -> None:
    from ply_arena.games.connect_four import state_from_moves

    evaluate = evaluator_for(games.get("connect_four"))
    assert evaluate(state_from_moves("4"))[0] > evaluate(state_from_moves("1"))[0]
    # X has an open three on the bottom row (two threats): clearly better for X
    assert evaluate(state_from_moves("41526"))[0] > 0.3


def test_othello_values_corners() -> None:
    from ply_arena.games.othello import OthelloState, _from_bitboards

    evaluate = evaluator_for(games.get("othello"))
    base_black = 1 << 35 | 1 << 28 | 1 << 20
    white = 1 << 27 | 1 << 36
    plain = _from_bitboards(base_black, white, 1)
    with_corner = _from_bitboards(base_black | 1 << 0, white, 1)
    assert isinstance(plain, OthelloState)
    assert evaluate(with_corner)[0] > evaluate(plain)[0]
