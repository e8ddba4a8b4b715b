"""Random playouts per second and microseconds per actions()+result(), ours vs OpenSpiel.

    python -m bench.games [--games NAME ...] [--runs 5] [--seconds 1.0]

Both sides drive the same loop from Python: ours calls the pure-Python rules in `games`, the peer
calls OpenSpiel's C++ games through pyspiel (`pip install -e '.[bench]'`). Each figure is the
median of --runs timed runs; runs alternate between the two sides so machine noise hits both,
and time is the process's CPU time (time.process_time) so other jobs on a loaded machine do not
count against either side.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from ply_arena import games
from ply_arena.games import CHANCE

#: OpenSpiel's name for the same game (three seats for Chinese checkers, its default 1000-ply cap).
PEERS = {
    "tic_tac_toe": "tic_tac_toe",
    "connect_four": "connect_four",
    "othello": "othello",
    "backgammon": "backgammon",
    "chinese_checkers": "chinese_checkers(players=3)",
}


def ours_playout(game: games.Game, rng: random.Random) -> int:
    s = game.initial_state()
    choice, choices = rng.choice, rng.choices
    plies = 0
    while not s.is_terminal():
        if s.player == CHANCE:
            outcomes, probs = zip(*s.chance_outcomes(), strict=True)
            s = s.result(choices(outcomes, probs)[0])
        else:
            s = s.result(choice(s.actions()))
        plies += 1
    return plies


def peer_playout(game: Any, rng: random.Random) -> int:
    s = game.new_initial_state()
    choice, choices = rng.choice, rng.choices
    plies = 0
    while not s.is_terminal():
        if s.is_chance_node():
            outcomes, probs = zip(*s.chance_outcomes(), strict=True)
            s.apply_action(choices(outcomes, probs)[0])
        else:
            s.apply_action(choice(s.legal_actions()))
        plies += 1
    return plies


def rate(playout: Callable[[random.Random], int], seconds: float, seed: int) -> tuple[float, float]:
    """(playouts per second, plies per playout) over about ``seconds``."""
    rng = random.Random(seed)
    n = plies = 0
    start = time.process_time()
    while True:
        plies += playout(rng)
        n += 1
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return n / elapsed, plies / n


def sample_states(game: games.Game, count: int, seed: int) -> list[Any]:
    """Decision states met in random playouts, with one legal move each."""
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < count:
        s = game.initial_state()
        while not s.is_terminal() and len(out) < count:
            if s.player == CHANCE:
                outcomes, probs = zip(*s.chance_outcomes(), strict=True)
                s = s.result(rng.choices(outcomes, probs)[0])
                continue
            out.append(s)
            s = s.result(rng.choice(s.actions()))
    return out


def peer_sample_states(game: Any, count: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < count:
        s = game.new_initial_state()
        while not s.is_terminal() and len(out) < count:
            if s.is_chance_node():
                outcomes, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply_action(rng.choices(outcomes, probs)[0])
                continue
            out.append(s.clone())
            s.apply_action(rng.choice(s.legal_actions()))
    return out


def step_us(states: list[Any], ours: bool) -> float:
    """Microseconds per actions() + result() of the first legal move (a new state each time)."""
    start = time.process_time()
    if ours:
        for s in states:
            s.result(s.actions()[0])
    else:
        for s in states:
            s.child(s.legal_actions()[0])
    return (time.process_time() - start) / len(states) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=list(PEERS))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--states", type=int, default=3000)
    args = parser.parse_args()
    import pyspiel

    print(
        f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"pyspiel {getattr(pyspiel, '__version__', '?')}; median of {args.runs} runs"
    )
    header = f"{'game':18} {'ours/s':>10} {'openspiel/s':>12} {'ratio':>6}   "
    header += f"{'ours us/step':>12} {'os us/step':>10} {'ratio':>6}  plies(ours/os)"
    print(header)
    for name in args.games:
        game = games.get(name)
        peer = pyspiel.load_game(PEERS[name])
        ours_rates, peer_rates, ours_len, peer_len = [], [], [], []
        for run in range(args.runs):
            r, n = rate(lambda rng, g=game: ours_playout(g, rng), args.seconds, run)
            ours_rates.append(r)
            ours_len.append(n)
            r, n = rate(lambda rng, g=peer: peer_playout(g, rng), args.seconds, run)
            peer_rates.append(r)
            peer_len.append(n)
        # Fresh copies for every timed run: a state may cache its actions once computed, and the
        # sampled states computed theirs during the playouts that found them.
        wire = [game.state_to_json(s) for s in sample_states(game, args.states, 1)]
        peer_states = peer_sample_states(peer, args.states, 1)
        ours_step = statistics.median(
            step_us([game.state_from_json(d) for d in wire], True) for _ in range(args.runs)
        )
        peer_step = statistics.median(step_us(peer_states, False) for _ in range(args.runs))
        o, p = statistics.median(ours_rates), statistics.median(peer_rates)
        print(
            f"{name:18} {o:10.0f} {p:12.0f} {o / p:6.2f}   {ours_step:12.2f} {peer_step:10.2f} "
            f"{peer_step / ours_step:6.2f}  {statistics.median(ours_len):.0f}/"
            f"{statistics.median(peer_len):.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
