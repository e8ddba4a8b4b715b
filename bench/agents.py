"""Reference agents against OpenSpiel, side by side in one run on the same positions.

    python bench/agents.py                      # everything, results also in --out
    python bench/agents.py --quick              # fewer positions, for a smoke run
    python bench/agents.py --sections solve     # only Connect Four solving

Sections:

- ``alphabeta``: our ``alphabeta`` agent (``depth=D``, iterative deepening to D, move ordering,
  transposition table; the Connect Four solver is switched off, this is the generic search)
  against OpenSpiel's Python ``open_spiel.python.algorithms.minimax.alpha_beta_search`` with
  ``maximum_depth=D`` on the same Connect Four and Othello positions, with the same evaluation:
  ours is passed to OpenSpiel as ``value_function`` (a pyspiel state is turned into our state
  through a memo of action histories, so the conversion costs one ``result()`` per leaf). Both
  return the exact depth-D minimax value, which the bench checks is the same. Nodes: ours counts
  every state visited; OpenSpiel's are counted in a second run with a counting wrapper around
  its recursive ``_alpha_beta`` (the timed run is unwrapped).
- ``solve``: Connect Four solving (``ply_arena.reference_agents.connect_four_solver``, driven by the
  ``alphabeta`` agent): mean time and nodes per position over Pons' Test_L3_R1 and Test_L2_R1,
  checking every exact score.
- ``mcts``: filled in by ``bench/_mcts_bench.py`` when present (see ``mcts_section``).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ply_arena import games
from ply_arena.reference_agents.alphabeta import AlphaBetaAgent
from ply_arena.reference_agents.connect_four_solver import Solver, play_moves
from ply_arena.reference_agents.evaluation import evaluator_for

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

DATA = ROOT / "tests" / "data" / "connect_four"
Row = dict[str, Any]


# -- positions ------------------------------------------------------------------------------------


def connect_four_positions(n: int) -> list[str]:
    """Early middle-game positions from Pons' Test_L1_R2 (4-14 discs played, 14-27 moves left),
    so that a depth-8 search stays above the end of the game."""
    lines = (DATA / "Test_L1_R2").read_text().split("\n")
    picked = [line.split()[0] for line in lines[:: max(1, 1000 // n)] if line.strip()]
    return picked[:n]


def othello_positions(n: int, seed: int = 2026) -> list[list[int]]:
    """Move lists of seeded random games, 12 to 24 plies in (the middle game)."""
    rng = random.Random(seed)
    g = games.get("othello")
    out: list[list[int]] = []
    while len(out) < n:
        s = g.initial_state()
        moves: list[int] = []
        for _ in range(rng.randrange(12, 25)):
            a = rng.choice(s.actions())
            moves.append(a)  # type: ignore[arg-type]
            s = s.result(a)
            if s.is_terminal():
                break
        if not s.is_terminal():
            out.append(moves)
    return out


# -- alpha-beta against OpenSpiel -----------------------------------------------------------------


def _our_state(game: games.Game, moves: list[int]) -> games.State:
    s = game.initial_state()
    for a in moves:
        s = s.result(a)
    return s


def _spiel_value_function(game: games.Game, me: int) -> Callable[[Any], float]:
    """Our eval(n) for a pyspiel state, MAX's component (the form OpenSpiel expects)."""
    evaluate = evaluator_for(game)
    memo: dict[tuple[int, ...], games.State] = {(): game.initial_state()}

    def state_of(history: tuple[int, ...]) -> games.State:
        s = memo.get(history)
        if s is None:
            s = memo[history] = state_of(history[:-1]).result(history[-1])
        return s

    def value(spiel_state: Any) -> float:
        return evaluate(state_of(tuple(spiel_state.history())))[me]

    return value


def clear_memos() -> None:
    """Empty the evaluations' memo tables so that no timed search profits from an earlier one."""
    from ply_arena.reference_agents.evaluation import connect_four, othello

    connect_four._MEMO.clear()
    othello._MEMO.clear()


def count_spiel_nodes(
    spiel_game: Any, spiel_state: Any, value_function: Callable[[Any], float], depth: int
) -> int:
    """Nodes of OpenSpiel's search (calls of its recursive ``_alpha_beta``), counted in a second,
    untimed run through a wrapper: the recursion looks the name up in the module each time."""
    from open_spiel.python.algorithms import minimax as spiel_minimax

    count = 0
    original = spiel_minimax._alpha_beta

    def counting(*a: Any, **k: Any) -> Any:
        nonlocal count
        count += 1
        return original(*a, **k)

    spiel_minimax._alpha_beta = counting
    try:
        spiel_minimax.alpha_beta_search(
            spiel_game,
            state=spiel_state.clone(),
            value_function=value_function,
            maximum_depth=depth,
        )
    finally:
        spiel_minimax._alpha_beta = original
    return count


def alphabeta_section(args: argparse.Namespace) -> list[Row]:
    import pyspiel
    from open_spiel.python.algorithms import minimax as spiel_minimax

    rows: list[Row] = []
    cases: list[tuple[str, list[int]]] = [
        ("connect_four", [int(c) - 1 for c in p]) for p in connect_four_positions(args.c4_positions)
    ]
    cases += [("othello", m) for m in othello_positions(args.othello_positions)]
    for game_name, moves in cases:
        game = games.get(game_name)
        spiel_game = pyspiel.load_game(game_name)
        state = _our_state(game, moves)
        me = state.player
        depth = args.depth

        clear_memos()
        agent = AlphaBetaAgent(game, depth=depth, solver=False)
        t0 = time.perf_counter()
        ours_move, info = agent.choose(state)
        ours_time = time.perf_counter() - t0

        spiel_state = spiel_game.new_initial_state()
        for a in moves:
            spiel_state.apply_action(a)
        value_function = _spiel_value_function(game, me)
        clear_memos()  # OpenSpiel starts as cold as we did
        t0 = time.perf_counter()
        spiel_value, spiel_move = spiel_minimax.alpha_beta_search(
            spiel_game,
            state=spiel_state.clone(),
            value_function=value_function,
            maximum_depth=depth,
        )
        spiel_time = time.perf_counter() - t0

        spiel_nodes = count_spiel_nodes(spiel_game, spiel_state, value_function, depth)

        row = {
            "section": "alphabeta",
            "game": game_name,
            "position": "".join(str(a + 1) for a in moves)
            if game_name == "connect_four"
            else " ".join(
                game.format_move(_our_state(game, moves[:i]), a) for i, a in enumerate(moves)
            ),
            "depth": depth,
            "ours_s": ours_time,
            "spiel_s": spiel_time,
            "speedup": spiel_time / ours_time,
            "ours_nodes": info.nodes,
            "spiel_nodes": spiel_nodes,
            "ours_nps": info.nodes / ours_time,
            "spiel_nps": spiel_nodes / spiel_time,
            "same_value": abs((info.score or 0.0) - spiel_value) < 1e-9,
            "ours_move": ours_move,
            "spiel_move": spiel_move,
        }
        rows.append(row)
        del value_function  # its memo of states is large: free it before the next timing
        gc.collect()
        print(
            f"  {game_name:12s} depth {depth}: ours {ours_time:7.3f} s {info.nodes:>9,} nodes | "
            f"openspiel {spiel_time:7.3f} s {spiel_nodes:>9,} nodes | "
            f"x{row['speedup']:.1f} time, nps ratio {row['ours_nps'] / row['spiel_nps']:.2f}, "
            f"same value: {row['same_value']}",
            flush=True,
        )
    return rows


# -- Connect Four solving -------------------------------------------------------------------------


def solve_section(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    for name, limit in (("Test_L3_R1", args.l3_positions), ("Test_L2_R1", args.l2_positions)):
        lines = [line for line in (DATA / name).read_text().split("\n") if line.strip()][:limit]
        solver = Solver()
        times: list[float] = []
        nodes: list[int] = []
        wrong = 0
        for line in lines:
            moves, expected = line.split()
            position = play_moves(moves)
            solver.reset()  # every position from an empty table, as in Pons' benchmark
            t0 = time.perf_counter()
            score = solver.solve(*position)
            times.append(time.perf_counter() - t0)
            nodes.append(solver.nodes)
            wrong += score != int(expected)
        row = {
            "section": "solve",
            "file": name,
            "positions": len(lines),
            "wrong": wrong,
            "mean_ms": statistics.fmean(times) * 1000,
            "median_ms": statistics.median(times) * 1000,
            "max_ms": max(times) * 1000,
            "mean_nodes": statistics.fmean(nodes),
            "knps": sum(nodes) / sum(times) / 1000,
        }
        rows.append(row)
        print(
            f"  {name}: {len(lines)} positions, {wrong} wrong, mean {row['mean_ms']:.3f} ms, "
            f"median {row['median_ms']:.3f} ms, max {row['max_ms']:.1f} ms, "
            f"mean {row['mean_nodes']:.0f} nodes, {row['knps']:.0f} k nodes/s",
            flush=True,
        )
    return rows


# -- MCTS (developer B) ---------------------------------------------------------------------------


def mcts_section(args: argparse.Namespace) -> list[Row]:
    """HOOK for the MCTS benchmarks (simulations per second against OpenSpiel's MCTSBot, and the
    strength matches). They live in ``bench/_mcts_bench.py``, which defines a function of the same
    name and signature returning rows (dicts with at least a "section" key); nothing runs here
    while that module does not exist."""
    import importlib.util

    path = HERE / "_mcts_bench.py"
    if not path.exists():
        print("  (bench/_mcts_bench.py not present: skipped)")
        return []
    spec = importlib.util.spec_from_file_location("_mcts_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows: list[Row] = module.mcts_section(args)
    return rows


SECTIONS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "alphabeta": alphabeta_section,
    "solve": solve_section,
    "mcts": mcts_section,
}


# -- report ---------------------------------------------------------------------------------------


def machine() -> str:
    try:
        import psutil

        mem = f", {psutil.virtual_memory().total / 2**30:.1f} GiB RAM"
    except ImportError:
        mem = ""
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores{mem}; "
        f"Python {platform.python_version()} ({platform.python_implementation()}); "
        f"{platform.system()} {platform.release()}"
    )


def summary(rows: list[Row]) -> list[str]:
    out: list[str] = []
    for game_name in ("connect_four", "othello"):
        rs = [r for r in rows if r["section"] == "alphabeta" and r["game"] == game_name]
        if not rs:
            continue
        ours = sum(r["ours_s"] for r in rs)
        spiel = sum(r["spiel_s"] for r in rs)
        ours_nps = sum(r["ours_nodes"] for r in rs) / ours
        spiel_nps = sum(r["spiel_nodes"] for r in rs) / spiel
        out.append(
            f"alphabeta {game_name}, depth {rs[0]['depth']}, {len(rs)} positions: total time ours "
            f"{ours:.2f} s vs OpenSpiel {spiel:.2f} s = {spiel / ours:.1f}x faster "
            f"(goal >= 10x; per position min {min(r['speedup'] for r in rs):.1f}x, median "
            f"{statistics.median(r['speedup'] for r in rs):.1f}x); nodes/s ours {ours_nps:,.0f} vs "
            f"{spiel_nps:,.0f} = {ours_nps / spiel_nps:.2f}x (goal >= 1x); same values: "
            f"{sum(r['same_value'] for r in rs)}/{len(rs)}"
        )
    for r in rows:
        if r["section"] == "solve":
            goal = 0.5 if r["file"] == "Test_L3_R1" else 10.0
            out.append(
                f"solve {r['file']}: {r['positions']} positions, {r['wrong']} wrong, mean "
                f"{r['mean_ms']:.3f} ms (goal < {goal} ms), mean {r['mean_nodes']:.0f} nodes, "
                f"{r['knps']:.0f} k nodes/s"
            )
    for r in rows:
        if r["section"] not in ("alphabeta", "solve") and "summary" in r:
            out.append(str(r["summary"]))
    return out


def write_report(out: str, started: str, command: str, rows: list[Row]) -> None:
    if not out:
        return
    lines = [
        f"# bench/agents.py, {started}",
        f"command: {command.strip()}",
        f"machine: {machine()}",
        "",
        *summary(rows),
        "",
        "per position / per file:",
        *(str(r) for r in rows),
    ]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", default="solve,alphabeta,mcts")
    parser.add_argument("--depth", type=int, default=8, help="alpha-beta depth (default 8)")
    parser.add_argument("--c4-positions", type=int, default=6)
    parser.add_argument("--othello-positions", type=int, default=4)
    parser.add_argument("--l3-positions", type=int, default=1000)
    parser.add_argument("--l2-positions", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="few positions, a smoke run")
    parser.add_argument("--out", default=str(HERE / "results" / "agents.txt"))
    args = parser.parse_args(argv)
    if args.quick:
        args.c4_positions, args.othello_positions = 2, 1
        args.l3_positions, args.l2_positions = 100, 50
    rows: list[Row] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    command = f"python bench/agents.py {' '.join(argv if argv is not None else sys.argv[1:])}"
    for name in args.sections.split(","):
        print(f"[{name}]", flush=True)
        rows += SECTIONS[name.strip()](args)
        # the report is rewritten after every section, so a long run leaves its results so far
        write_report(args.out, started, command, rows)
    print("\n" + "\n".join(summary(rows)))
    if args.out:
        print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
