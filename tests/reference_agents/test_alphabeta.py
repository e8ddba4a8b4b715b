"""alphabeta: same values as minimax and negamax with fewer nodes, Figure 6.5, limits, seeds."""

from __future__ import annotations

import random
import time

import pytest

from ply_arena import games, reference_agents
from ply_arena.games.tree import TreeGame
from ply_arena.reference_agents.alphabeta import AlphaBetaAgent
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


def random_positions(game: games.Game, n: int, max_plies: int, seed: int) -> list[games.State]:
    rng = random.Random(seed)
    out: list[games.State] = []
    while len(out) < n:
        s = game.initial_state()
        for _ in range(rng.randrange(max_plies + 1)):
            if s.is_terminal():
                break
            s = s.result(rng.choice(s.actions()))
        if not s.is_terminal():
            out.append(s)
    return out


@pytest.mark.parametrize(("game_name", "max_plies"), [("tic_tac_toe", 6), ("connect_four", 14)])
def test_minimax_alphabeta_negamax_agree_and_alphabeta_visits_fewer(
    game_name: str, max_plies: int
) -> None:
    g = games.get(game_name)
    nodes = {"minimax": 0, "alphabeta": 0, "negamax": 0}
    for s in random_positions(g, 12, max_plies, seed=3):
        for depth in (1, 2, 3, 4):
            _, mm = MinimaxAgent(g, depth=depth).choose(s)
            _, ab = AlphaBetaAgent(g, depth=depth).choose(s)
            _, nm = NegamaxAgent(g, depth=depth).choose(s)
            assert mm.score == ab.score == nm.score, (game_name, s, depth)
            assert ab.nodes <= mm.nodes
            nodes["minimax"] += mm.nodes
            nodes["alphabeta"] += ab.nodes
            nodes["negamax"] += nm.nodes
    assert nodes["alphabeta"] < nodes["minimax"] / 2
    assert nodes["negamax"] < nodes["minimax"]


def test_without_ordering_or_table_the_value_is_the_same() -> None:
    g = games.get("connect_four")
    for s in random_positions(g, 5, 12, seed=5):
        values = {
            AlphaBetaAgent(g, depth=5, order=o, tt=t).choose(s)[1].score
            for o in (True, False)
            for t in (True, False)
        }
        assert len(values) == 1


def test_figure_6_5_prunes_the_two_leaves_of_the_notes() -> None:
    tree = TreeGame(FIG_6_5)
    move, info = reference_agents.make("alphabeta", tree, depth=2).choose(tree.initial_state())
    assert move == 0 and info.score == 3.0
    assert (1, 1) not in tree.leaf_visits and (1, 2) not in tree.leaf_visits
    assert sorted(set(tree.leaf_visits)) == [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (2, 1), (2, 2)]


def test_tic_tac_toe_solved_from_the_empty_board() -> None:
    g = games.get("tic_tac_toe")
    s0 = g.initial_state()
    _, info = AlphaBetaAgent(g, depth=9).choose(s0)
    assert info.score == 0.0 and info.depth == 9 and len(info.pv) == 9
    agent = AlphaBetaAgent(g, depth=8)
    for a in s0.actions():  # every first move draws with best play
        assert agent.choose(s0.result(a))[1].score == 0.0  # O's value after X's move


def test_iterative_deepening_stops_when_the_whole_tree_is_searched() -> None:
    g = games.get("tic_tac_toe")
    start = time.monotonic()
    _, info = AlphaBetaAgent(g).choose(g.initial_state(), time_limit=5.0)
    assert info.depth == 9 and info.score == 0.0
    assert time.monotonic() - start < 1.0  # did not keep searching until the deadline


@pytest.mark.parametrize("game_name", ["connect_four", "othello"])
@pytest.mark.parametrize("limit", [0.05, 0.3])
def test_returns_within_its_time_limit(game_name: str, limit: float) -> None:
    g = games.get(game_name)
    s = random_positions(g, 1, 8, seed=1)[0]
    agent = AlphaBetaAgent(g, solver=False)
    start = time.monotonic()
    move, _ = agent.choose(s, time_limit=limit)
    assert time.monotonic() - start < limit
    assert move in s.actions()


def test_time_limited_search_reaches_useful_depth_in_connect_four() -> None:
    g = games.get("connect_four")
    move, info = AlphaBetaAgent(g, solver=False).choose(g.initial_state(), time_limit=0.5)
    assert info.depth >= 6 and move in (2, 3, 4)
    assert len(info.pv) >= 4 and info.pv[0] == move


def test_reproducible_given_a_seed() -> None:
    g = games.get("connect_four")
    s = random_positions(g, 1, 10, seed=9)[0]
    a = AlphaBetaAgent(g, depth=6, seed=11).choose(s)
    b = AlphaBetaAgent(g, depth=6, seed=11).choose(s)
    assert a[0] == b[0] and a[1].pv == b[1].pv and a[1].nodes == b[1].nodes


def test_takes_the_win_and_blocks_in_connect_four() -> None:
    g = games.get("connect_four")
    from ply_arena.games.connect_four import state_from_moves

    win = state_from_moves("445566")  # X to move: 7 completes 4-5-6-7 on the bottom row
    for solver in (True, False):
        move, _ = AlphaBetaAgent(g, solver=solver, depth=None if solver else 4).choose(win, 1.0)
        assert g.format_move(win, move) in ("3", "7")
    block = state_from_moves("43546")  # O to move must block 7 (3 is taken)
    move, _ = AlphaBetaAgent(g, solver=False, depth=4).choose(block)
    assert g.format_move(block, move) == "7"


def test_refuses_three_players_and_chance() -> None:
    assert "players" in (AlphaBetaAgent.refusal(games.get("chinese_checkers")) or "")
    assert "chance" in (AlphaBetaAgent.refusal(games.get("backgammon")) or "")
    assert AlphaBetaAgent.refusal(games.get("othello")) is None
