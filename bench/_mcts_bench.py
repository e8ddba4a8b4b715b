"""MCTS against OpenSpiel, and alpha-beta against OpenSpiel's C++ MCTS (bench/agents.py, "mcts").

    python bench/_mcts_bench.py                               # everything, defaults below
    python bench/_mcts_bench.py --parts speed --simulations 3000
    python bench/_mcts_bench.py --parts strength --games 40 --move-time 0.2
    python bench/_mcts_bench.py --parts cpp --cpp-games 40 --cpp-move-time 1.0

Parts:

- ``speed``: simulations per second of our ``mcts`` (random rollouts) and of OpenSpiel's Python
  ``open_spiel.python.algorithms.mcts.MCTSBot`` with ``RandomRolloutEvaluator(n_rollouts=1)``,
  the same number of simulations from the same positions (tic-tac-toe, Connect Four, Othello:
  the start and seeded middle-game positions). The same exploration: ours scales payoffs to
  [0, 1] and uses c; OpenSpiel's payoffs are in [-1, 1], twice the range, so it gets
  ``uct_c = 2 c`` (the same UCB1 ordering). OpenSpiel runs with its defaults otherwise
  (but ``solve=False``, and ours without its decisive-move rule too: a solver stops simulating
  in proven subtrees, and the point here is the cost of the same number of simulations).
- ``strength``: our ``mcts`` against that OpenSpiel bot in Connect Four at equal time per move:
  OpenSpiel's bot has no clock, so its simulation budget is re-fitted after every move to the
  time it actually took (it starts from the rate measured on the empty board). Seats swapped.
- ``cpp``: our ``alphabeta`` (iterative deepening under the move time) against OpenSpiel's C++
  ``pyspiel.MCTSBot`` (random rollouts, uct_c 2, its own ``max_wall_clock_time`` = the move time,
  solver on) in Connect Four. Seats swapped.

``mcts_section(args)`` is what ``bench/agents.py`` calls; it reads the options above from
``args`` when present (``mcts_parts``, ``mcts_games``, ``mcts_move_time``, ``cpp_games``,
``cpp_move_time``, ``mcts_simulations``) and uses the defaults otherwise (``--quick``: a few
short games).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

from ply_arena import games
from ply_arena.reference_agents.alphabeta import AlphaBetaAgent
from ply_arena.reference_agents.mcts import MCTSAgent
from ply_arena.server.cli.play import elo_difference

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

Row = dict[str, Any]

DEFAULTS = {
    "mcts_parts": "speed,strength,cpp",
    "mcts_simulations": 2000,
    "mcts_games": 40,
    "mcts_move_time": 0.2,
    "cpp_games": 40,
    "cpp_move_time": 1.0,
    "mcts_c": math.sqrt(2),
}


#: ``bench/agents.py --quick``: a smoke run of every part.
QUICK = {
    "mcts_simulations": 500,
    "mcts_games": 4,
    "mcts_move_time": 0.05,
    "cpp_games": 2,
    "cpp_move_time": 0.1,
}


def _opt(args: argparse.Namespace, name: str) -> Any:
    value = getattr(args, name, None)
    if value is not None:
        return value
    if getattr(args, "quick", False) and name in QUICK:
        return QUICK[name]
    return DEFAULTS[name]


# -- positions --------------------------------------------------------------------------------


def positions(game_name: str, n: int, seed: int = 7) -> list[list[int]]:
    """Move lists: the start, then seeded random games 6..16 plies in (2..4 in tic-tac-toe),
    with moves that both programs name by the same action number."""
    import pyspiel

    rng = random.Random(seed)
    g = games.get(game_name)
    spiel = pyspiel.load_game(game_name)
    out: list[list[int]] = [[]]
    while len(out) < n:
        s, ss = g.initial_state(), spiel.new_initial_state()
        moves: list[int] = []
        lo, hi = (2, 5) if game_name == "tic_tac_toe" else (6, 17)
        for _ in range(rng.randrange(lo, hi)):
            a = rng.choice(s.actions())
            if a not in ss.legal_actions():  # a move both sides name the same way, or skip
                break
            moves.append(a)  # type: ignore[arg-type]
            s, _ = s.result(a), ss.apply_action(a)
            if s.is_terminal():
                break
        else:
            if not s.is_terminal():
                out.append(moves)
    return out


def _states(game_name: str, moves: list[int]) -> tuple[games.State, Any]:
    import pyspiel

    s = games.get(game_name).initial_state()
    ss = pyspiel.load_game(game_name).new_initial_state()
    for a in moves:
        s = s.result(a)
        ss.apply_action(a)
    return s, ss


def _spiel_bot(game_name: str, c: float, simulations: int, seed: int, solve: bool = True) -> Any:
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    rs = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    return mcts.MCTSBot(
        pyspiel.load_game(game_name), 2 * c, simulations, evaluator, solve=solve, random_state=rs
    )


# -- speed ------------------------------------------------------------------------------------


def speed(args: argparse.Namespace) -> list[Row]:
    sims = _opt(args, "mcts_simulations")
    c = _opt(args, "mcts_c")
    rows: list[Row] = []
    for game_name, n in (("tic_tac_toe", 3), ("connect_four", 4), ("othello", 3)):
        game = games.get(game_name)
        for i, moves in enumerate(positions(game_name, n)):
            ours, theirs = _states(game_name, moves)
            agent = MCTSAgent(game, c=c, simulations=sims, simulation="random", solve=False, seed=i)
            t0 = time.perf_counter()
            agent.choose(ours)
            ours_s = time.perf_counter() - t0
            # solve=False: with its solver OpenSpiel stops as soon as the root is proven, and
            # the point here is the cost of the same number of simulations
            bot = _spiel_bot(game_name, c, sims, seed=i, solve=False)
            t0 = time.perf_counter()
            bot.step(theirs)
            spiel_s = time.perf_counter() - t0
            row = {
                "section": "mcts_speed",
                "game": game_name,
                "position": " ".join(map(str, moves)) or "start",
                "simulations": sims,
                "ours_s": ours_s,
                "spiel_s": spiel_s,
                "ours_sps": sims / ours_s,
                "spiel_sps": sims / spiel_s,
                "ratio": spiel_s / ours_s,
            }
            rows.append(row)
            print(
                f"  {game_name:12s} {row['position'][:40]:40s} ours {row['ours_sps']:9,.0f} sims/s"
                f" | openspiel {row['spiel_sps']:8,.0f} sims/s | x{row['ratio']:.1f}",
                flush=True,
            )
    for game_name in ("tic_tac_toe", "connect_four", "othello"):
        rs = [r for r in rows if r["section"] == "mcts_speed" and r["game"] == game_name]
        ours_t, spiel_t = sum(r["ours_s"] for r in rs), sum(r["spiel_s"] for r in rs)
        rows.append(
            {
                "section": "mcts_speed_summary",
                "summary": (
                    f"mcts {game_name}, {len(rs)} positions x {sims} simulations (c={c:.3f}, "
                    f"OpenSpiel uct_c={2 * c:.3f}): ours {len(rs) * sims / ours_t:,.0f} sims/s vs "
                    f"OpenSpiel Python MCTSBot {len(rs) * sims / spiel_t:,.0f} sims/s = "
                    f"{spiel_t / ours_t:.1f}x (goal >= 3x; per position min "
                    f"{min(r['ratio'] for r in rs):.1f}x)"
                ),
            }
        )
    return rows


# -- matches ----------------------------------------------------------------------------------


def _match(
    label: str,
    n_games: int,
    move_time: float,
    ours_factory: Any,
    spiel_factory: Any,
    refit: bool,
) -> list[Row]:
    """Connect Four games, ours as seat ``g % 2`` in game g; OpenSpiel's bot answers with
    ``step`` (if ``refit``, its simulation budget is re-fitted to ``move_time`` each move)."""
    import pyspiel

    game = games.get("connect_four")
    spiel_game = pyspiel.load_game("connect_four")
    rows: list[Row] = []
    points: list[float] = []
    times_ours: list[float] = []
    times_spiel: list[float] = []
    for g in range(n_games):
        ours_seat = g % 2
        agent = ours_factory(g)
        bot = spiel_factory(g)
        s, ss = game.initial_state(), spiel_game.new_initial_state()
        moves: list[int] = []
        while not s.is_terminal():
            t0 = time.perf_counter()
            if s.player == ours_seat:
                a, _ = agent.choose(s, time_limit=move_time)
                times_ours.append(time.perf_counter() - t0)
            else:
                a = bot.step(ss)
                spent = time.perf_counter() - t0
                times_spiel.append(spent)
                if refit:  # keep its thinking time at move_time: simulations ~ time
                    # (clamped: a move its solver cut short says little about its speed)
                    factor = min(2.0, max(0.5, move_time / max(spent, 1e-3)))
                    bot.max_simulations = max(10, int(bot.max_simulations * factor))
            moves.append(int(a))
            s = s.result(a)
            ss.apply_action(int(a))
        r = s.returns()[ours_seat]
        p = 1.0 if r > 0 else 0.5 if r == 0 else 0.0
        points.append(p)
        rows.append(
            {
                "section": label,
                "game": g + 1,
                "ours_seat": ours_seat,
                "points": p,
                "moves": "".join(str(m + 1) for m in moves),
            }
        )
        print(
            f"  game {g + 1:3d}: ours as {'XO'[ours_seat]}, {p:.1f} "
            f"(running {100 * sum(points) / len(points):.1f}%)",
            flush=True,
        )
    elo = elo_difference(points)
    score = sum(points) / len(points)
    wins = points.count(1.0)
    draws = points.count(0.5)
    rows.append(
        {
            "section": label + "_summary",
            "score": score,
            "summary": (
                f"{label}: connect_four, {n_games} games at {move_time} s/move, seats swapped: "
                f"ours {wins} wins, {draws} draws, {n_games - wins - draws} losses = "
                f"{100 * score:.1f}% (Elo {elo['elo']:+.0f}, 95% {elo['low']:+.0f} .. "
                f"{elo['high']:+.0f}); mean move time ours {_mean(times_ours):.3f} s, "
                f"OpenSpiel {_mean(times_spiel):.3f} s"
            ),
        }
    )
    return rows


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def strength(args: argparse.Namespace) -> list[Row]:
    n_games, move_time = _opt(args, "mcts_games"), _opt(args, "mcts_move_time")
    c = _opt(args, "mcts_c")
    # starting budget: OpenSpiel's rate on the empty board for one move time
    bot = _spiel_bot("connect_four", c, 500, seed=0)
    import pyspiel

    t0 = time.perf_counter()
    bot.step(pyspiel.load_game("connect_four").new_initial_state())
    rate = 500 / (time.perf_counter() - t0)
    game = games.get("connect_four")
    rows = _match(
        "mcts_vs_openspiel_python_mcts",
        n_games,
        move_time,
        lambda g: MCTSAgent(game, c=c, simulation="random", seed=1000 + g),
        lambda g: _spiel_bot("connect_four", c, max(10, int(rate * move_time)), seed=2000 + g),
        refit=True,
    )
    rows[-1]["summary"] += " (goal >= 60%)"
    return rows


def cpp(args: argparse.Namespace) -> list[Row]:
    import pyspiel

    n_games, move_time = _opt(args, "cpp_games"), _opt(args, "cpp_move_time")
    game = games.get("connect_four")
    spiel_game = pyspiel.load_game("connect_four")

    def spiel_factory(g: int) -> Any:
        evaluator = pyspiel.RandomRolloutEvaluator(1, 3000 + g)
        return pyspiel.MCTSBot(
            spiel_game,
            evaluator,
            2.0,  # uct_c as in OpenSpiel's examples
            10**9,  # no simulation cap: the clock decides
            1000,  # max_memory_mb
            True,  # solve
            4000 + g,
            False,
            pyspiel.ChildSelectionPolicy.UCT,
            move_time,
        )

    rows = _match(
        "alphabeta_vs_openspiel_cpp_mcts",
        n_games,
        move_time,
        lambda g: AlphaBetaAgent(game, seed=5000 + g),
        spiel_factory,
        refit=False,
    )
    rows[-1]["summary"] += " (goal >= 75%)"
    return rows


PARTS = {"speed": speed, "strength": strength, "cpp": cpp}


def mcts_section(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    for part in str(_opt(args, "mcts_parts")).split(","):
        print(f"  [mcts: {part}]", flush=True)
        rows += PARTS[part.strip()](args)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", dest="mcts_parts", default=DEFAULTS["mcts_parts"])
    parser.add_argument("--simulations", dest="mcts_simulations", type=int)
    parser.add_argument("--games", dest="mcts_games", type=int)
    parser.add_argument("--move-time", dest="mcts_move_time", type=float)
    parser.add_argument("--cpp-games", type=int)
    parser.add_argument("--cpp-move-time", type=float)
    parser.add_argument("--c", dest="mcts_c", type=float)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    rows = mcts_section(args)
    summary = [str(r["summary"]) for r in rows if "summary" in r]
    text = "\n".join(
        [
            f"# bench/_mcts_bench.py, {started}",
            "command: python bench/_mcts_bench.py "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            "",
            *summary,
            "",
            *(str(r) for r in rows if "summary" not in r),
        ]
    )
    print("\n" + "\n".join(summary))
    if args.out:
        Path(args.out).write_text(text + "\n")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
