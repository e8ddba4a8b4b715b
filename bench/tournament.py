"""Tournaments: Swiss pairing of a large field, and the director's overhead through a real server.

    python -m bench.tournament                    # both parts, 3 runs each
    python -m bench.tournament --part swiss       # the pairing only
    python -m bench.tournament --part robin --bots 32 --runs 3

**Swiss pairing** (goal: one round of 512 entrants in 1 s or less). A simulated Swiss of
``--entrants`` entrants over ``--rounds`` rounds (random results: 45% wins each side, 10%
draws); each round is paired by ``swiss.pair_round`` (rustworkx's blossom among each entrant's
32 nearest first, server/tournaments/swiss.py), timed, and again on the whole graph (every pair
that has not met), the peer measured in the same run. The figure per run is the slowest round;
the report gives the median over runs, and checks that the nearest-first pairing never cost more
in squared score gaps than the whole graph's.

**Round robin through a server** (goal: the scheduler's overhead 10% or less). ``arena serve``
in a process of its own; ``--bots`` kit bots (random tic-tac-toe, one process, in the
benchmark) play, in turn, (a) a one-cycle round robin of ``bots x (bots - 1)`` games with
concurrency ``bots / 2`` (every bot can be busy at once), and (b) as many matches through the
lobby (every bot in the queue, playing one match at a time). Throughput is the matches over the
time from the first one's start to the last one's end, read from the stored matches (for the
lobby, the first ``bots x (bots - 1)`` to end: the bots are then stopped, and the matches they
leave behind end later by timeout). The order of (a) and (b) alternates between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.pages import server_process
from ply_arena.protocol.client import BotClient
from ply_arena.reference_agents.registry import make
from ply_arena.server.tournaments import swiss

ADMIN = "bench-admin-token"


# --- Swiss pairing ------------------------------------------------------------------------------


def swiss_run(entrants: int, rounds: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    field = [swiss.SwissEntrant(f"e{i}", seed=i) for i in range(entrants)]
    by = {e.name: e for e in field}
    nearest, whole, worse = [], [], 0

    def cost(pairs: list[tuple[str, str]]) -> float:
        return sum((by[a].points - by[b].points) ** 2 for a, b in pairs)

    for _ in range(rounds):
        t = time.perf_counter()
        pairs, bye = swiss.pair_round(field)
        nearest.append(time.perf_counter() - t)
        ordered = sorted(field, key=lambda e: (-e.points, e.seed, e.name))
        if bye is not None:
            ordered = [e for e in ordered if e.name != bye]
        t = time.perf_counter()
        best = swiss._matching(ordered, True, None)
        whole.append(time.perf_counter() - t)
        if len(best) == len(pairs) and cost(pairs) > cost(best):
            worse += 1
        for a, b in pairs:
            x = rng.random()
            by[a].points += 1.0 if x < 0.45 else 0.0 if x < 0.9 else 0.5
            by[b].points += 0.0 if x < 0.45 else 1.0 if x < 0.9 else 0.5
            by[a].opponents.add(b)
            by[b].opponents.add(a)
            by[a].first_seat_balance += 1
            by[b].first_seat_balance -= 1
            by[a].last_seat, by[b].last_seat = 0, 1
        if bye is not None:
            by[bye].points += 1.0
            by[bye].had_bye = True
    return {
        "slowest": max(nearest),
        "median_round": statistics.median(nearest),
        "whole_slowest": max(whole),
        "whole_median_round": statistics.median(whole),
        "worse": worse,
    }


def bench_swiss(args: argparse.Namespace) -> None:
    runs = [swiss_run(args.entrants, args.rounds, seed) for seed in range(args.runs)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"Swiss pairing, {args.entrants} entrants, {args.rounds} rounds, {args.runs} runs")
    print(
        f"  nearest 32 first (what the server does): slowest round {med['slowest']:.3f} s "
        f"(median round {med['median_round']:.3f} s)   goal <= 1 s"
    )
    print(
        f"  whole graph (peer): slowest round {med['whole_slowest']:.3f} s "
        f"(median round {med['whole_median_round']:.3f} s)"
    )
    print(
        f"  ratio slowest: {med['slowest'] / med['whole_slowest']:.2f}; rounds paired worse "
        f"than the whole graph: {sum(int(r['worse']) for r in runs)}"
    )


# --- round robin against the lobby ----------------------------------------------------------------


def _api(url: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    response = httpx.request(
        method, url + path, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60, **kwargs
    )
    response.raise_for_status()
    return response


def _throughput(db: Path, origin: str, count: int) -> dict[str, float]:
    """Of the first ``count`` finished matches of ``origin`` to end: how many, per second, at
    once on average, and how long each took on average (ms)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT m.created_at, r.finished_at FROM matches m JOIN results r ON r.match_id = m.id"
            " WHERE m.origin = ? AND m.status = 'finished' ORDER BY r.finished_at LIMIT ?",
            (origin, count),
        ).fetchall()
    starts = [datetime.fromisoformat(a) for a, _ in rows]
    ends = [datetime.fromisoformat(b) for _, b in rows]
    span = (max(ends) - min(starts)).total_seconds()
    busy = sum((b - a).total_seconds() for a, b in zip(starts, ends, strict=True))
    return {
        "matches": len(rows),
        "rate": len(rows) / span,
        "at_once": busy / span,
        "ms": 1000 * busy / len(rows),
    }


#: The bots' moves are computed on a few reused threads: the kit's default (a new thread per
#: move, so that a stuck choose() cannot hold the bot) costs the benchmark's process more than
#: the random moves themselves, and the benchmark measures the server, not its clients.
_MOVES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bench-move")


def _clients(url: str, tokens: list[str], *, lobby: bool) -> list[BotClient]:
    ws = url.replace("http://", "ws://") + "/ws"
    return [
        BotClient(ws, t, agent=lambda g: make("random", g), game="tic_tac_toe", lobby=lobby,
                  games=0, max_backoff_s=0.5, executor=_MOVES)
        for t in tokens
    ]  # fmt: skip


async def _play(
    clients: list[BotClient], done: Callable[[], bool], start: Callable[[], Any] | None = None
) -> None:
    """Run the clients until ``done()`` (called in a thread) says so; ``start()`` first."""
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        while not all(c.bot_name for c in clients):
            await asyncio.sleep(0.05)
        if start is not None:
            await asyncio.to_thread(start)
        while not await asyncio.to_thread(done):
            await asyncio.sleep(0.2)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


async def robin_run(bots: int, run: int, workdir: Path) -> dict[str, dict[str, float]]:
    db = workdir / f"robin{run}.db"
    games = bots * (bots - 1)
    with server_process(db, workdir / f"robin{run}.log") as url:
        names = [f"b{run}x{i:02d}" for i in range(bots)]
        tokens = [_api(url, "POST", "/api/bots", json={"name": n}).json()["token"] for n in names]
        _api(url, "POST", "/api/tournaments", json={
            "name": "robin", "game": "tic_tac_toe", "format": "round_robin", "bots": names,
            "concurrency": bots // 2, "rated": True, "no_show_s": 60,
        })  # fmt: skip

        async def tournament() -> None:
            await _play(
                _clients(url, tokens, lobby=False),
                # The list, not the tournament's whole document: polling must cost the server
                # next to nothing.
                lambda: (
                    _api(url, "GET", "/api/tournaments").json()["tournaments"][0]["status"]
                    == "finished"
                ),
                lambda: _api(url, "POST", "/api/tournaments/robin/start"),
            )

        async def lobby() -> None:
            clients = _clients(url, tokens, lobby=True)
            await _play(clients, lambda: sum(len(c.results) for c in clients) >= 2 * games)
            # The matches the stopped bots left behind end by timeout: wait for them, so that
            # the next phase runs alone.
            while _api(url, "GET", "/api/matches?status=running&limit=1").json()["matches"]:
                await asyncio.sleep(0.5)

        for phase in (tournament, lobby) if run % 2 == 0 else (lobby, tournament):
            await phase()
    return {
        "tournament": _throughput(db, "tournament", games),
        "lobby": _throughput(db, "lobby", games),
    }


def bench_robin(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = [asyncio.run(robin_run(args.bots, k, Path(tmp))) for k in range(args.runs)]
    overheads = []
    for k, r in enumerate(runs):
        t, lo = r["tournament"], r["lobby"]
        overheads.append(1 - t["rate"] / lo["rate"])
        print(
            f"  run {k + 1}: round robin {t['rate']:.1f} matches/s ({t['matches']:.0f}), lobby "
            f"{lo['rate']:.1f} matches/s ({lo['matches']:.0f}), overhead "
            f"{100 * overheads[-1]:+.1f}%; matches at once {t['at_once']:.1f} vs "
            f"{lo['at_once']:.1f}, a match {t['ms']:.0f} vs {lo['ms']:.0f} ms"
        )
    t_rate = statistics.median(r["tournament"]["rate"] for r in runs)
    l_rate = statistics.median(r["lobby"]["rate"] for r in runs)
    print(
        f"Round robin of {args.bots} bots (tic-tac-toe, random) through arena serve, "
        f"{args.runs} runs: {t_rate:.1f} matches/s; the lobby in the same runs {l_rate:.1f} "
        f"matches/s; the scheduler's overhead (median of the runs) "
        f"{100 * statistics.median(overheads):+.1f}%   goal <= 10%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--part", choices=("swiss", "robin", "both"), default="both")
    parser.add_argument("--entrants", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--bots", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.part in ("swiss", "both"):
        bench_swiss(args)
    if args.part in ("robin", "both"):
        bench_robin(args)


if __name__ == "__main__":
    main()
