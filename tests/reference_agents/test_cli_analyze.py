"""``arena analyze``: the real command through typer, and once as a real process."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from server.cli import app

runner = CliRunner()


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["analyze", *args])
    return result.exit_code, result.output


def test_connect_four_pons_string_is_solved() -> None:
    # first position of Test_L3_R1: the side to move loses, Pons score -1
    code, out = run(
        "connect_four",
        "--moves",
        "2252576253462244111563365343671351441",
        "--agent",
        "alphabeta",
        "--json",
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["value"] == -1.0 and report["to_move"] == "O"
    assert "Pons score -1" in report["comment"]
    assert report["pv"][0] == report["best"] and len(report["moves"]) == 37


def test_depth_limited_text_report() -> None:
    code, out = run("connect_four", "--moves", "4 4 5 3", "--agent", "alphabeta", "--depth", "6")
    assert code == 0, out
    assert "X to move" in out and "depth      6" in out
    best = next(line for line in out.splitlines() if line.startswith("best move"))
    pv = next(line for line in out.splitlines() if line.startswith("pv"))
    assert best.split()[-1] == pv.split()[1]


def test_move_time_and_othello() -> None:
    code, out = run(
        "othello", "--moves", "d3 c5", "--agent", "negamax", "--move-time", "0.3", "--json"
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["depth"] >= 2 and report["time_ms"] < 300 and report["nodes"] > 0


def test_trace_of_a_tic_tac_toe_search() -> None:
    code, out = run(
        "tic_tac_toe",
        "--moves",
        "b2 a3 c3",
        "--agent",
        "alphabeta",
        "--depth",
        "2",
        "--trace",
        "--json",
    )
    assert code == 0, out
    report = json.loads(out)
    tree = report["trace"]["tree"]
    assert report["trace"]["algorithm"] == "alphabeta" and tree["kind"] == "max"
    assert any(child["pruned"] for child in tree["children"])  # alpha-beta cut something
    assert report["trace_text"].startswith("MAX root [-inf, +inf]")
    code, out = run("tic_tac_toe", "--moves", "b2", "--agent", "minimax", "--depth", "1", "--trace")
    assert code == 0 and "search tree (minimax):" in out and "eval = " in out


def test_errors_say_what_is_wrong() -> None:
    code, out = run("connect_four", "--moves", "4 4 9")
    assert code == 2 and "move 3" in out and "1-7" in out
    code, out = run("tic_tac_toe", "--moves", "b2 b2")
    assert code == 2 and "illegal" in out
    code, out = run("tic_tac_toe", "--moves", "b2", "--depth", "2", "--move-time", "1")
    assert code == 2 and "not both" in out
    code, out = run("tic_tac_toe", "--moves", "a3 a1 b3 b1 c3")
    assert code == 2 and "game is over" in out
    code, out = run("tic_tac_toe", "--agent", "alphabeta:bogus=1")
    assert code == 2 and "does not take bogus" in out


def test_as_a_real_process() -> None:
    # no --depth / --move-time: one second of iterative deepening, enough to solve tic-tac-toe
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from server.cli import main; main()",
            "analyze",
            "tic_tac_toe",
            "--agent",
            "alphabeta",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["value"] == 0.0 and report["depth"] == 9 and report["time_ms"] < 1000
