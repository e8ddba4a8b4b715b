"""``arena play``: local games through the real CLI (typer's runner), table and JSON file."""

from __future__ import annotations

import json
import math
from pathlib import Path

from typer.testing import CliRunner

from ply_arena.server.cli import app
from ply_arena.server.cli.play import (
    agent_labels,
    elo_difference,
    elo_text,
    game_places,
    game_points,
)

runner = CliRunner()


def test_two_agents_table_elo_and_json(tmp_path: Path) -> None:
    out = tmp_path / "match.json"
    result = runner.invoke(
        app,
        [
            "play",
            "tic_tac_toe",
            "mcts:simulations=300",
            "random",
            "--games",
            "6",
            "--move-time",
            "1",
            "--seed",
            "3",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    for word in ("agent", "wins", "draws", "losses", "score", "Elo difference", "95% interval"):
        assert word in result.output
    report = json.loads(out.read_text())
    assert report["game"] == "tic_tac_toe" and len(report["games"]) == 6
    rows = {r["agent"]: r for r in report["results"]}
    mcts, rnd = rows["mcts:simulations=300"], rows["random"]
    assert mcts["wins"] + mcts["draws"] + mcts["losses"] == 6
    assert mcts["wins"] == rnd["losses"] and mcts["draws"] == rnd["draws"]
    assert mcts["score"] + rnd["score"] == 1.0 and mcts["score"] >= 0.75
    # seats rotate: mcts is X in games 1, 3, 5 and O in 2, 4, 6
    assert [g["seats"][0] for g in report["games"]] == ["mcts:simulations=300", "random"] * 3
    assert report["elo"]["agent"] == "mcts:simulations=300"
    assert all(len(g["moves"]) == g["plies"] for g in report["games"])


def test_seeded_runs_repeat_exactly(tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        out = tmp_path / f"{i}.json"
        result = runner.invoke(
            app,
            [
                "play",
                "backgammon",
                "expectiminimax:depth=1",
                "mcts:simulations=30",
                "--games",
                "2",
                "--seed",
                "7",
                "--move-time",
                "5",
                "--json",
                str(out),
            ],
        )
        assert result.exit_code == 0, result.output
        outs.append(json.loads(out.read_text()))
    assert [g["moves"] for g in outs[0]["games"]] == [g["moves"] for g in outs[1]["games"]]


def test_three_players_places_labels_and_json_by_seat(tmp_path: Path) -> None:
    out = tmp_path / "three.json"
    result = runner.invoke(
        app,
        [
            "play",
            "chinese_checkers",
            "maxn:depth=1",
            "random",
            "random",
            "--games",
            "3",
            "--seed",
            "1",
            "--json",
            str(out),
        ],
        env={"COLUMNS": "120"},
    )
    assert result.exit_code == 0, result.output
    assert "Elo" not in result.output
    # Places, not wins/draws/losses (a second place is no draw); the two randoms told apart.
    header = next(line for line in result.output.splitlines() if "agent" in line)
    assert header.split("┃")[1:-1] == [" agent        ", " 1st ", " 2nd ", " 3rd ", "  score "]
    assert "draws" not in result.output
    table = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│" in line}
    assert set(table) == {"maxn:depth=1", "random #1", "random #2"}

    report = json.loads(out.read_text())
    assert report["agents"] == ["maxn:depth=1", "random #1", "random #2"]
    rows = report["results"]
    assert [(r["agent"], r["spec"]) for r in rows] == [
        ("maxn:depth=1", "maxn:depth=1"),
        ("random #1", "random"),
        ("random #2", "random"),
    ]
    assert all(sum(r["places"]) == 3 and "draws" not in r for r in rows)
    assert "by seat" in report["order"]
    scores = dict.fromkeys(report["agents"], 0.0)
    for g in report["games"]:
        # Every list of a game is by seat.
        assert g["points"] == game_points(g["returns"])
        assert g["places"] == game_places(g["returns"])
        assert len(g["slowest_move_s"]) == len(g["seats"]) == 3
        for label, points in zip(g["seats"], g["points"], strict=True):
            scores[label] += points
    assert [round(scores[r["agent"]] / 3, 6) for r in rows] == [round(r["score"], 6) for r in rows]


def test_seat_count_errors() -> None:
    result = runner.invoke(app, ["play", "chinese_checkers", "maxn", "random"])
    assert result.exit_code == 2 and "3 seats" in result.output
    result = runner.invoke(app, ["play", "backgammon", "alphabeta", "random"])
    assert result.exit_code == 2 and "expectiminimax" in result.output


def test_points_and_elo() -> None:
    assert game_points([1.0, -1.0]) == [1.0, 0.0]
    assert game_points([0.0, 0.0]) == [0.5, 0.5]
    assert game_points([2.0, -2.0]) == [1.0, 0.0]  # a gammon is one win
    assert game_points([0.0, 1.0, -1.0]) == [0.5, 1.0, 0.0]
    even = elo_difference([1.0, 0.0] * 10)
    assert even["elo"] == 0.0 and even["low"] < -100 and even["high"] > 100
    perfect = elo_difference([1.0] * 20)
    assert math.isinf(perfect["elo"]) and math.isinf(perfect["high"]) and perfect["low"] > 200


def test_places_labels_and_no_negative_zero() -> None:
    import doctest

    from ply_arena.server.cli import play

    assert doctest.testmod(play).failed == 0
    assert game_places([1.0, 0.0, -1.0]) == [1, 2, 3]
    assert game_places([0.5, 0.5, -1.0]) == [1, 1, 3]  # tied seats share the better place
    assert game_places([1.0, -1.0]) == [1, 2]
    assert agent_labels(["random", "mcts", "random"]) == ["random #1", "mcts", "random #2"]
    # All draws: the Elo difference is -0.0 in floating point; it prints as 0.
    elo = {"agent": "minimax", "against": "negamax", **elo_difference([0.5] * 4)}
    assert elo["elo"] == 0.0
    assert elo_text(elo).startswith("Elo difference minimax - negamax: 0 (95% interval -")
    assert elo_text({**elo, "elo": -0.4, "low": -12.6, "high": 0.3}) == (
        "Elo difference minimax - negamax: 0 (95% interval -13 .. 0)"
    )


def test_all_draws_print_an_elo_difference_of_0() -> None:
    result = runner.invoke(app, ["play", "tic_tac_toe", "minimax", "negamax", "--games", "2"])
    assert result.exit_code == 0, result.output
    assert "Elo difference minimax - negamax: 0 (95% interval" in result.output
    assert "-0 " not in result.output
