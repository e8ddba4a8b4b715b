"""Connect Four solved by alpha-beta: Pons' benchmark positions with their exact scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from ply_arena import games, reference_agents
from ply_arena.games.connect_four import state_from_moves
from ply_arena.reference_agents.alphabeta import AlphaBetaAgent
from ply_arena.reference_agents.connect_four_solver import Solver, play_moves, solve_moves

DATA = Path(__file__).resolve().parents[1] / "data" / "connect_four"


def positions(name: str, limit: int | None = None) -> list[tuple[str, int]]:
    lines = (DATA / name).read_text().split("\n")
    out = [(m, int(s)) for m, s in (line.split() for line in lines if line.strip())]
    return out[:limit]


def test_all_of_test_l3_r1_exact_scores() -> None:
    data = positions("Test_L3_R1")
    assert len(data) == 1000
    agent = AlphaBetaAgent(games.get("connect_four"))
    wrong = [(m, s) for m, s in data if agent.solve(state_from_moves(m)) != s]
    assert wrong == []


def test_all_of_test_l2_r1_exact_scores() -> None:
    data = positions("Test_L2_R1")
    assert len(data) == 1000
    solver = Solver()
    wrong = []
    for moves, expected in data:
        solver.reset()
        if solver.solve(*play_moves(moves)) != expected:
            wrong.append(moves)
    assert wrong == []


@pytest.mark.slow
def test_test_l1_r1_first_200_exact_scores() -> None:
    wrong = [(m, s) for m, s in positions("Test_L1_R1", 200) if solve_moves(m) != s]
    assert wrong == []


def test_weak_solve_gives_the_sign() -> None:
    for moves, expected in positions("Test_L2_R1", 100):
        assert solve_moves(moves, weak=True) == (expected > 0) - (expected < 0)


def test_the_agent_plays_a_best_move_and_reports_the_score() -> None:
    g = games.get("connect_four")
    agent = reference_agents.make("alphabeta", g, seed=1)
    for moves, expected in positions("Test_L3_R1", 100):
        s = state_from_moves(moves)
        move, info = agent.choose(s, time_limit=1.0)
        assert f"Pons score {expected:+d}" in info.comment
        assert info.score == (expected > 0) - (expected < 0)
        after = s.result(move)
        if after.is_terminal():  # it connected four, or filled the board for a draw
            assert after.utility(s.player) == (expected > 0) - (expected < 0)
        else:
            # the move keeps the exact score: the opponent's score afterwards is its negation
            assert -solve_moves(moves + g.format_move(s, move)) == expected


def test_generic_alphabeta_agrees_with_the_solver_on_endgames() -> None:
    # the textbook search (no solver, no depth limit) on short endgames: same win/draw/loss
    g = games.get("connect_four")
    data = [(m, s) for m, s in positions("Test_L3_R1") if len(m) >= 36][:30]
    assert len(data) >= 20
    for moves, expected in data:
        agent = AlphaBetaAgent(g, solver=False, depth=42)
        _, info = agent.choose(state_from_moves(moves))
        assert info.score == (expected > 0) - (expected < 0), moves


def test_bad_move_strings_are_refused() -> None:
    with pytest.raises(ValueError, match="bad column"):
        play_moves("4489")
    with pytest.raises(ValueError, match="full"):
        play_moves("4444444")
