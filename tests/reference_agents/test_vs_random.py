"""Each game's reference agent against ``random``: at least 90% over 50 games, seats rotated.

Fixed shallow depths keep the run short and make it repeat exactly (seeded agents and dice).
The score of a game is the share of the opponents an agent finished ahead of (see
``ply_arena.server.cli.play.game_points``): 1 for a win, 1/2 for a draw; with three players 1 for
first.
"""

from __future__ import annotations

import pytest

from ply_arena.server.cli.play import Match

GAMES = 50

CASES = [
    ("connect_four", ["alphabeta:depth=4", "random"]),
    ("othello", ["alphabeta:depth=2", "random"]),
    ("backgammon", ["expectiminimax:depth=1", "random"]),
    ("chinese_checkers", ["maxn:depth=1", "random", "random"]),
]


@pytest.mark.slow
@pytest.mark.parametrize(("game_name", "specs"), CASES, ids=[c[0] for c in CASES])
def test_scores_at_least_90_percent_against_random(game_name: str, specs: list[str]) -> None:
    match = Match(game_name, specs, seed=2026, move_time=10.0)
    match.play(GAMES)
    report = match.report()
    ours = report["results"][0]
    assert ours["games"] == GAMES
    # every agent played every seat equally often (50 is not a multiple of 3: within one game)
    seats = [record["seats"].index(specs[0]) for record in report["games"]]
    assert (
        max(seats.count(s) for s in range(len(specs)))
        - min(seats.count(s) for s in range(len(specs)))
        <= 1
    )
    assert ours["score"] >= 0.9, ours
