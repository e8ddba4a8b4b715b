"""``python -m bench.ladder pairing``: the time of one lobby decision.

The lobby of a busy class: ``--bots`` registered bots (ratings drawn around the rating model's
starting mu), ``--waiting`` of them waiting in one queue (joined over the last 15 s), a third of
the others playing matches from that queue (they are coming back), every bot's latest opponent
known, three house bots with room. A decision is what the referee does on each join and each
tick: ``pairing.pair`` over the queue's waiting bots and the bots coming back, both as the
referee keeps them between decisions (``pairing.Waiters``: a ``pairing.Waiter`` per waiting bot
with its rating, by arrival and by rating, kept by server/referee/lobby.py; a ``pairing.Roster``
of the bots coming back, kept by server/referee/coming_back.py), built once here. The peer,
timed in the same run on the same waiting bots (as a list): the lobby's former rule, first come
first paired (``pairing.first_come``).

Two lobbies: ``typical`` (ratings N(25, 8), joined over the last 15 s: most bots have good
opponents at hand) and ``spread`` (ratings 6 apart, joined over the last 2 s, every waiting bot
with a bot coming back near it: nobody has a good opponent waiting, so every anchor looks at its
neighbours, checks who is coming back and waits).
Median of ``--runs`` decisions (each on the same inputs, the rng reseeded), perf_counter.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench._machine import machine_line
from ply_arena.server.ratings import RatingBook, RatingModel
from ply_arena.server.referee.pairing import (
    Group,
    HouseSeat,
    Params,
    Player,
    Roster,
    Waiter,
    Waiters,
    first_come,
    pair,
)

GAME = "connect_four"


def add_arguments(group: Any) -> None:
    group.add_argument("--bots", type=int, default=1000, help="registered bots (pairing)")
    group.add_argument("--waiting", type=int, default=200, help="bots waiting (pairing)")
    group.add_argument("--runs", type=int, default=21, help="decisions timed per rule (pairing)")


class Lobby:
    """The inputs the referee holds: its rating book, the queue, who comes back, who met whom."""

    def __init__(self, bots: int, waiting: int, kind: str, seed: int = 1) -> None:
        rng = random.Random(seed)
        self.book = RatingBook(RatingModel())
        ids = list(range(1, bots + 1))
        rng.shuffle(ids)
        queue, rest = ids[:waiting], ids[waiting:]
        coming = rest[: len(rest) // 3]
        now = 1000.0
        self.now = now
        if kind == "typical":
            for b in ids:
                self.book.set(b, GAME, (rng.gauss(25.0, 8.0), 4.0))
        else:  # spread: waiting bots 6 apart, each with a bot coming back 1 above it
            for i, b in enumerate(queue):
                self.book.set(b, GAME, (6.0 * i, 4.0))
            for i, b in enumerate(coming):
                self.book.set(b, GAME, (6.0 * (i % waiting) + 1.0, 4.0))
        # spread: joined in the last 2 s, so that windows (3 + 1/s) stay under 6.
        joined = 15.0 if kind == "typical" else 2.0
        self.queue = [(b, now - rng.uniform(0.0, joined)) for b in queue]
        self.roster = Roster(Player(b, self.book.mu(b, GAME)) for b in coming)
        self.waiters = [Waiter(b, joined, self.book.mu(b, GAME)) for b, joined in self.queue]
        self.kept = Waiters(self.waiters)
        self.last = {b: frozenset({rng.choice(ids)}) - {b} for b in ids}
        self.house = [HouseSeat(bots + i, 20.0 + 5 * i, 8) for i in range(3)]
        self.params = Params(group_size=2)

    def decide(self) -> list[Group]:
        """The referee's decision: ratings read, then pair()."""
        return pair(
            self.kept,
            now=self.now,
            rng=random.Random(7),
            params=self.params,
            playing=self.roster,
            last_opponents=self.last,
            house=self.house,
        )

    def decide_first_come(self) -> list[Group]:
        return first_come(self.waiters, 2)


def _median_ms(fn: Callable[[], list[Group]], runs: int) -> tuple[float, list[Group]]:
    fn()  # warm
    times = []
    result: list[Group] = []
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), result


def run(args: argparse.Namespace) -> str:
    lines = [
        f"bench.ladder pairing: {args.bots} registered bots, {args.waiting} waiting in one "
        f"queue, median of {args.runs} decisions; {machine_line()}",
        "",
        f"{'lobby':8} {'ours ms':>8} {'first come ms':>14} {'ratio':>6} {'groups':>7} {'reasons'}",
    ]
    worst = 0.0
    for kind in ("typical", "spread"):
        lobby = Lobby(args.bots, args.waiting, kind)
        ours, groups = _median_ms(lobby.decide, args.runs)
        peer, _ = _median_ms(lobby.decide_first_come, args.runs)
        worst = max(worst, ours)
        reasons: dict[str, int] = {}
        for g in groups:
            reasons[g.reason] = reasons.get(g.reason, 0) + 1
        lines.append(
            f"{kind:8} {ours:8.3f} {peer:14.3f} {ours / peer:6.1f} {len(groups):7d} {reasons}"
        )
    lines += ["", f"slowest decision: {worst:.2f} ms (goal <= 5 ms)"]
    return "\n".join(lines)
