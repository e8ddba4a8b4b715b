"""``arena analyze``: the real command through typer, and once as a real process."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from typer.testing import CliRunner

from ply_arena.server.cli import app

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
    assert any(child.get("pruned") for child in tree["children"])  # alpha-beta cut something
    assert "root: MAX (O) [-inf, +inf] = " in report["trace_text"]
    code, out = run("tic_tac_toe", "--moves", "b2", "--agent", "minimax", "--depth", "1", "--trace")
    assert code == 0 and "search tree (minimax, recorded from this search):" in out
    assert "eval E(n) = " in out


def test_the_trace_is_the_search_that_gave_the_answer() -> None:
    code, out = run(
        "connect_four", "--moves", "4453", "--agent", "alphabeta:solver=false", "--depth", "4",
        "--trace", "--json",
    )  # fmt: skip
    assert code == 0, out
    report = json.loads(out)
    trace = report["trace"]
    assert trace["agrees"] and trace["options"]["depth"] == 4 and trace["options"]["seed"] == 0
    answer = trace["answer"]
    assert (answer["move"], answer["agent_value"], answer["depth"], answer["nodes"]) == (
        report["best"],
        report["value"],
        report["depth"],
        report["nodes"],
    )
    assert trace["tree"]["best"] == report["best"] == report["pv"][0]
    assert sum(it["nodes"] for it in trace["iterations"]) == report["nodes"]


def test_trace_depth_and_limit_say_what_they_cut() -> None:
    code, out = run("tic_tac_toe", "--agent", "minimax", "--depth", "3", "--trace-depth", "1",
                    "--json")  # fmt: skip
    assert code == 0, out
    trace = json.loads(out)["trace"]  # --trace-depth implies --trace
    assert {ch["level"] for ch in trace["tree"]["children"]} == {1}
    assert all(ch["children"] == [] for ch in trace["tree"]["children"])
    assert trace["shown"]["levels"] == 1 and trace["shown"]["recorded"] == 10
    assert any("--trace-depth 1" in line for line in trace["shown"]["header"])
    code, out = run("tic_tac_toe", "--agent", "minimax", "--depth", "2", "--trace-limit", "5")
    assert code == 0, out
    assert "shown: 5 of the 82 nodes of the search, level by level" in out
    assert "(not shown: --trace-limit)" in out
    code, out = run("tic_tac_toe", "--agent", "minimax", "--depth", "2", "--trace-limit", "0")
    assert code == 0 and "shown: all 82 nodes of the search" in out


def test_trace_simulations_prints_the_four_phases() -> None:
    args = ("tic_tac_toe", "--moves", "b2 a1", "--agent", "mcts:simulations=30",
            "--trace-simulations", "2")  # fmt: skip
    code, out = run(*args)
    assert code == 0, out
    assert "simulation 1\n  selection        root\n  expansion        " in out
    assert "simulation 2\n" in out and "simulation 3\n" not in out
    # Leaf first, root last: the order the values travel in.
    assert re.search(r"  backpropagation  \w+ N=1 U=[\d.]+ · root N=2\n", out), out
    assert "root: X to move  N=30" in out
    code, again = run(*args)

    def untimed(text: str) -> list[str]:  # the wall-clock line differs from run to run
        return [line for line in text.splitlines() if not line.startswith("time ")]

    assert untimed(again) == untimed(out)  # a fixed seed and simulation count: the same trace
    code, out = run(*args, "--json")
    trace = json.loads(out)["trace"]
    assert [s["simulation"] for s in trace["simulations"]] == [1, 2]
    assert trace["tree"]["visits"] == 30 and trace["algorithm"] == "mcts"


def test_every_search_agent_traces_its_games() -> None:
    for args in (
        ("backgammon", "--moves", "3-1 6/2 6-5", "--agent", "expectiminimax", "--depth", "2"),
        ("backgammon", "--moves", "3-1 6/2 6-5", "--agent", "mcts:simulations=20"),
        ("chinese_checkers", "--agent", "maxn", "--depth", "2"),
        ("chinese_checkers", "--agent", "maxn:paranoid=true", "--depth", "2"),
        ("chinese_checkers", "--agent", "mcts:simulations=50"),
        ("othello", "--agent", "negamax", "--depth", "3"),
    ):
        code, out = run(*args, "--trace-limit", "20", "--json")
        assert code == 0, (args, out)
        report = json.loads(out)
        assert report["trace"]["agrees"] and report["trace"]["answer"]["move"] == report["best"]
        assert report["trace"]["shown"]["nodes"] <= 20


def test_too_big_a_trace_is_refused_with_what_to_do() -> None:
    # minimax to depth 9 from the start of Connect Four is some 50 million nodes
    code, out = run("connect_four", "--agent", "minimax", "--depth", "9", "--trace")
    assert code == 2
    assert "went past 100,000 nodes" in out and "smaller --depth" in out
    # a search under a clock (analyze gives one second without --depth) is stopped there instead,
    # as its clock would stop it, and the trace says so
    code, out = run("connect_four", "--agent", "mcts:simulations=5000", "--trace",
                    "--trace-budget", "300", "--json")  # fmt: skip
    assert code == 0, out
    report = json.loads(out)
    assert report["nodes"] == 300 and report["trace"]["tree"]["visits"] == 300
    assert any("budget of 300 simulations" in note for note in report["trace"]["notes"])
    code, out = run("tic_tac_toe", "--agent", "alphabeta", "--trace-simulations", "2")
    assert code == 2 and "--trace-simulations" in out and "mcts" in out
    code, out = run("tic_tac_toe", "--agent", "random", "--trace")
    assert code == 2 and "no search tree" in out


def test_the_connect_four_solver_is_named_not_drawn() -> None:
    code, out = run("connect_four", "--moves", "2252576253462244111563365343671351441", "--trace")
    assert code == 0, out
    assert "no search tree" in out and "the Connect Four solver answered" in out


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
            "-m",
            "ply_arena",
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


def test_depth_flag_never_hides_or_overrides_agent_options() -> None:
    cases = [
        (("--agent", "alphabeta:depth=abc", "--depth", "2"), "depth=abc: expected an integer"),
        (("--agent", "alphabeta:depth=5", "--depth", "2"), "the depth is given twice"),
        (("--agent", "mcts", "--depth", "2"), "mcts does not search to a depth"),
        (("--agent", "alphabeta:move_time=-1"), "move_time must be a positive number"),
        (("--agent", "mcts:move_time=0"), "move_time must be a positive number"),
    ]
    for args, expected in cases:
        code, out = run("tic_tac_toe", *args)
        assert code == 2, (args, out)
        assert expected in out and out.count("\n") == 1 and "Traceback" not in out, (args, out)


def test_a_drawn_value_is_zero_not_minus_zero() -> None:
    code, out = run("tic_tac_toe", "--moves", "b2 a3 c3", "--agent", "alphabeta", "--depth", "3")
    assert code == 0 and "value      +0 (for O)" in out, out
    code, out = run(
        "tic_tac_toe", "--moves", "b2 a3 c3", "--agent", "alphabeta", "--depth", "3", "--json"
    )
    assert json.dumps(json.loads(out)["value"]) == "0.0"
