"""The pages' server time with a large database, against a trivial endpoint in the same run.

    python -m bench.pages                                   # 100,000 stored matches, 3 runs
    python -m bench.pages --matches 20000 --requests 100 --runs 1   # quicker

A fresh SQLite file gets ``--matches`` finished, rated tic-tac-toe results between ``--bots``
bots (bench/_ladder_ratings.py's ``fill``: Core bulk inserts, no moves), then ``--replays``
real matches with every move stored (Connect Four, Othello and backgammon with its dice from the
seed, so that each replay re-derives and verifies), then the ratings and their history are
rebuilt (``arena ratings rebuild``). ``arena serve`` on that file, a process of its own (as in
a deployment: the benchmark's client does not share its interpreter), answers, in turn,
``--requests`` times each:

- ``/`` (home: live matches, the 15 latest results),
- ``/leaderboard/tic_tac_toe`` at various offsets (50 rows, a sparkline each),
- ``/bots/NAME`` (ratings, a chart of the last 200 ratings, recent matches, head to head),
- ``/matches/ID`` of a stored match with its moves, first request (cold: re-derived) and again
  (warm: the replay is kept),
- ``/api/health`` (one ``SELECT 1``): the peer, the floor of a request on this machine.

Times are measured by the client on the same machine (localhost round trip, an upper bound of
the server's time). Each figure is the median over ``--runs`` runs of that run's p50 / p99.
The server's garbage collections are timed (``gc.callbacks``, as in bench.spectators): the
report says how many of the slow requests (over 20 ms and twice the page's p50) had one
inside them, and how long the collections of each generation took. ``--server thread`` runs
the server in a thread of the benchmark's own process instead (the earlier set-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench._in_process import serve
from bench._ladder_ratings import GAME, fill, p
from bench.server import free_port, wait_for_port
from bench.spectators import SERVER_MAIN, gc_pauses
from ply_arena import games
from ply_arena.protocol import dice
from ply_arena.server.db.database import Database
from ply_arena.server.db.recorder import run_bulk
from ply_arena.server.ratings import RatingModel
from ply_arena.server.ratings.rebuild import rebuild
from ply_arena.server.repositories import matches as match_repo

REPLAY_GAMES = ("connect_four", "othello", "backgammon")


async def add_replays(database: Database, count: int, bots: int, seed: int = 5) -> list[str]:
    """``count`` finished matches with every move stored, as the referee stores them."""
    rng = random.Random(seed)
    ids = []
    async with database.session() as session:
        for k in range(count):
            game = REPLAY_GAMES[k % len(REPLAY_GAMES)]
            rules = games.get(game)
            match_id = f"r{k:05d}"
            seed_value = rng.getrandbits(64)
            await match_repo.create_match(
                session, match_id=match_id, game=game, bot_ids=rng.sample(range(1, bots + 1), 2),
                time_control={"move_ms": 1000, "bank_ms": 0}, policy="forfeit", seed=seed_value,
            )  # fmt: skip
            state, rows = rules.initial_state(), []
            while not state.is_terminal():
                if state.is_chance_node():
                    move = dice.roll(str(seed_value), match_id, len(rows), state.chance_outcomes())
                    seat = None
                else:
                    move, seat = rng.choice(list(state.actions())), state.player
                rows.append(
                    {"match_id": match_id, "ply": len(rows), "seat": seat,
                     "move": rules.format_move(state, move),
                     "think_ms": None if seat is None else rng.randrange(900),
                     "info": None if seat is None else {"depth": 4, "score": rng.uniform(-1, 1)}}
                )  # fmt: skip
                state = state.result(move)
            await run_bulk(session, match_repo.record_moves, rows)
            await match_repo.finish_match(
                session, match_id=match_id, payoffs=[float(x) for x in state.returns()],
                termination="normal", at_fault=None, final_position=rules.state_to_json(state),
                plies=len(rows),
            )  # fmt: skip
            ids.append(match_id)
    return ids


#: (page, monotonic start, monotonic end) of every timed request of every run.
Spans = list[tuple[str, float, float]]


def one_run(
    base: str, replays: list[str], requests: int, seed: int, spans: Spans
) -> dict[str, list[float]]:
    rng = random.Random(seed)
    times: dict[str, list[float]] = {}
    cold = iter(rng.sample(replays, len(replays)))
    with httpx.Client(base_url=base, timeout=60, headers={"Accept": "text/html"}) as http:

        def timed(name: str, path: str) -> None:
            began, at = time.perf_counter(), time.monotonic()
            response = http.get(path)
            times.setdefault(name, []).append((time.perf_counter() - began) * 1000)
            spans.append((name, at, time.monotonic()))
            assert response.status_code == 200, (path, response.text[:200])

        for _ in range(10):  # warm up: imports, templates compiled, connection pool
            timed("warmup", "/")
            timed("warmup", f"/leaderboard/{GAME}")
        for _ in range(requests):
            timed("home /", "/")
            timed(f"leaderboard /leaderboard/{GAME}",
                  f"/leaderboard/{GAME}?offset={rng.choice([0, 0, 0, 50, 500])}")  # fmt: skip
            timed("bot /bots/NAME", f"/bots/bot{rng.randrange(50):04d}")
            match_id = next(cold, None)
            if match_id is not None:
                timed("match /matches/ID (cold)", f"/matches/{match_id}")
            timed("match /matches/ID (warm)", f"/matches/{rng.choice(replays[:50])}")
            timed("peer /api/health", "/api/health")
    del times["warmup"]
    return times


async def prepare(db_path: Path, args: argparse.Namespace) -> list[str]:
    database = Database(f"sqlite+aiosqlite:///{db_path}")
    await database.migrate()
    began = time.perf_counter()
    await fill(database, args.bots, args.matches)
    replays = await add_replays(database, args.replays, args.bots)
    async with database.session() as session:
        await rebuild(session, RatingModel())
    await database.dispose()
    print(f"database ready in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    return replays


@contextmanager
def server_process(db_path: Path, log: Path) -> Iterator[str]:
    """``arena serve`` on ``db_path`` in a process of its own, its collections timed into
    ``log``; the base URL."""
    port = free_port()
    env = dict(os.environ, ARENA_ADMIN_TOKEN="bench-admin-token", ARENA_HOUSE_BOTS="none")
    command = [sys.executable, "-c", SERVER_MAIN, "serve", "--port", str(port),
               "--db", f"sqlite+aiosqlite:///{db_path}"]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, proc)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def server_thread(db_path: Path) -> Iterator[str]:
    base, server, thread = serve(db_path)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def slow_requests_and_collections(
    runs: list[dict[str, list[float]]], spans: Spans, pauses: list[tuple[float, float, int]]
) -> list[str]:
    """Lines on the slow requests (over 20 ms and twice their page's p50) and the server's
    collections inside them."""
    p50 = {name: statistics.median(t for r in runs for t in r[name]) for name in runs[0]}
    lines = []
    for name in runs[0]:
        bound = max(20, 2 * p50[name]) / 1000
        slow = [(a, b) for n, a, b in spans if n == name and b - a > bound]
        with_gc = [
            (a, b) for a, b in slow
            if any(a <= at and at - ms / 1000 <= b for at, ms, _ in pauses)
        ]  # fmt: skip
        if slow:
            lines.append(
                f"  {name:<36} {len(slow)} slow request(s), {len(with_gc)} with a collection "
                f"of the server inside"
            )
    for generation in (0, 1, 2):
        ms = [m for _, m, g in pauses if g == generation]
        if ms:
            lines.append(
                f"  server collections of generation {generation}: {len(ms)}, median "
                f"{statistics.median(ms):.2f} ms, longest {max(ms):.2f} ms"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pages", description=__doc__)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--replays", type=int, default=300, help="stored matches with moves")
    parser.add_argument("--requests", type=int, default=300, help="requests per page per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    args = parser.parse_args(argv)
    spans: Spans = []
    pauses: list[tuple[float, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="bench-pages-") as tmp:
        db_path = Path(tmp) / "pages.db"
        log = Path(tmp) / "server.log"
        replays = asyncio.run(prepare(db_path, args))
        runs = []
        in_process = args.server == "thread"
        with server_thread(db_path) if in_process else server_process(db_path, log) as base:
            for run in range(args.runs):
                # Each run's cold requests are matches no run has asked for yet.
                share = len(replays) // args.runs
                runs.append(one_run(base, replays[run * share : (run + 1) * share], args.requests,
                                    seed=run, spans=spans))  # fmt: skip
        if log.exists():
            pauses = gc_pauses(log)
    peer = statistics.median(p(r["peer /api/health"], 99) for r in runs)
    print(
        f"pages with {args.matches:,} stored matches ({args.bots} bots, {args.replays} with "
        f"moves); median of {args.runs} run(s), {args.requests} requests per page per run:"
    )
    for name in runs[0]:
        p50 = statistics.median(statistics.median(r[name]) for r in runs)
        p99 = statistics.median(p(r[name], 99) for r in runs)
        print(
            f"  {name:<36} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  (p99 x{p99 / peer:.1f} the peer)"
        )
    if args.server == "process":
        print("\n".join(slow_requests_and_collections(runs, spans, pauses)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
