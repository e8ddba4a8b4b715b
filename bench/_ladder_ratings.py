"""Ratings at scale: the cost of rating a result, a rebuild, and the leaderboard under load.

    python -m bench.ladder ratings                    # the figures of docs/benchmarks.md
    python -m bench.ladder ratings --rated-matches 20000 --rebuilds 1   # quicker
    python -m bench.ladder ratings --store both      # the rebuild on SQLite and on PostgreSQL

Three measurements, each against a peer measured in the same run:

1. **Rating write.** 2,000 results stored through the database's single writer, awaited one at a
   time as the referee does when a match ends: rated (``store_result`` on a rated match: result,
   ratings, history and rating order in one transaction) against the same write on unrated
   matches (the result alone). The difference per match is what rating adds to the recorder.
2. **Rebuild.** ``--rated-matches`` rated results between ``--bots`` bots in one game, written
   straight into a fresh SQLite file (``--store postgresql`` or ``both``: a database in a
   throwaway PostgreSQL cluster with durable settings, bench/_stores.py), then
   ``ply_arena.server.ratings.rebuild.rebuild`` (what ``arena ratings rebuild`` runs), against
   reading the same rated results (its database part alone).
3. **Leaderboard.** A real server (uvicorn, as ``arena serve``) on that database answers
   ``GET /api/leaderboard/tic_tac_toe`` 500 times at various pages; p50 and p99, against
   ``GET /api/health`` on the same server in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert

from bench._in_process import serve
from bench._stores import add_store_argument, open_store, stores
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Base, Bot, Match, Result, Seat
from ply_arena.server.ratings import RatingBook, RatingModel
from ply_arena.server.ratings.rebuild import rebuild
from ply_arena.server.ratings.service import store_result
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import ratings as rating_repo

GAME = "tic_tac_toe"


# --- data -----------------------------------------------------------------------------------------


async def fill(database: Database, bots: int, matches: int, seed: int = 1) -> None:
    """``bots`` bots and ``matches`` finished, rated results between them (Core bulk inserts)."""
    rng = random.Random(seed)
    strength = [rng.gauss(0.0, 1.0) for _ in range(bots)]
    start = datetime(2026, 9, 1, tzinfo=UTC)
    tables = Base.metadata.tables
    async with database.session() as session:
        await session.execute(
            insert(tables[Bot.__tablename__]),
            [
                {
                    "id": i + 1,
                    "name": f"bot{i:04d}",
                    "name_key": f"bot{i:04d}",
                    "token_hash": f"{i:064x}",
                    "enabled": True,
                    "created_at": start,
                    "house": False,
                }
                for i in range(bots)
            ],
        )
        for first in range(0, matches, 20_000):
            rows, seats, results = [], [], []
            for k in range(first, min(matches, first + 20_000)):
                a, b = rng.sample(range(bots), 2)
                p_a = 1 / (1 + math.exp(strength[b] - strength[a]))
                roll = rng.random()
                payoffs = (1.0, -1.0) if roll < p_a * 0.9 else (-1.0, 1.0)
                if roll > 0.9:
                    payoffs = (0.0, 0.0)
                at = start + timedelta(seconds=k)
                match_id = f"b{k:07d}"
                rows.append(
                    {
                        "id": match_id, "game": GAME, "status": "finished", "move_ms": 1000,
                        "bank_ms": 0, "policy": "forfeit", "seed": "0", "created_at": at,
                        "origin": "lobby", "rated": True,
                    }
                )  # fmt: skip
                seats += [
                    {"match_id": match_id, "seat": 0, "bot_id": a + 1, "payoff": payoffs[0]},
                    {"match_id": match_id, "seat": 1, "bot_id": b + 1, "payoff": payoffs[1]},
                ]
                results.append(
                    {
                        "match_id": match_id, "termination": "normal", "at_fault": None,
                        "final_position": None, "finished_at": at, "rated_seq": k + 1,
                    }
                )  # fmt: skip
            await session.execute(insert(tables[Match.__tablename__]), rows)
            await session.execute(insert(tables[Seat.__tablename__]), seats)
            await session.execute(insert(tables[Result.__tablename__]), results)


# --- 1. the rating write ---------------------------------------------------------------------


async def rating_write(
    workdir: Path, results: int = 2000, *, batched: bool = False
) -> tuple[float, float]:
    """Milliseconds per result write: (rated, unrated); awaited one at a time, or (``batched``)
    all submitted at once, as many matches ending together are (the recorder then commits
    them in batches)."""
    database = Database(f"sqlite+aiosqlite:///{workdir / f'write{int(batched)}.db'}")
    await database.migrate()
    await fill(database, bots=200, matches=0)
    book = RatingBook(RatingModel())
    async with database.session() as session:
        await book.load(session)  # as the referee does when the server starts
    rng = random.Random(2)
    timings = {}
    try:
        for rated in (False, True, False, True):
            ids = []
            for k in range(results):
                match_id = f"w{int(rated)}{k}{rng.random()}"
                bot_ids = rng.sample(range(1, 201), 2)
                await database.recorder.submit(
                    match_repo.create_match,
                    match_id=match_id,
                    game=GAME,
                    bot_ids=bot_ids,
                    time_control={"move_ms": 1000, "bank_ms": 0},
                    policy="forfeit",
                    seed=k,
                    rated=rated,
                )
                ids.append((match_id, bot_ids))
            began = time.perf_counter()
            pending = []
            for match_id, bot_ids in ids:
                write = database.recorder.submit(
                    store_result,
                    match_id=match_id,
                    payoffs=[1.0, -1.0] if rng.random() < 0.5 else [-1.0, 1.0],
                    termination="normal",
                    at_fault=None,
                    final_position={},
                    game=GAME,
                    bot_ids=bot_ids,
                    rated=rated,
                    book=book,
                )
                if batched:
                    pending.append(write)
                else:
                    await write
            await asyncio.gather(*pending)
            timings.setdefault(rated, []).append((time.perf_counter() - began) / results * 1000)
    finally:
        await database.dispose()
    return min(timings[True]), min(timings[False])


# --- 2. rebuild ------------------------------------------------------------------------------


async def rebuild_times(database: Database, runs: int) -> tuple[list[float], list[float]]:
    """Seconds: rebuilds, and reads of the rated results (the rebuild's database part)."""
    full, reads = [], []
    for _ in range(runs):
        began = time.perf_counter()
        async with database.session() as session:
            await rating_repo.all_rated_results(session)
        reads.append(time.perf_counter() - began)
        began = time.perf_counter()
        async with database.session() as session:
            await rebuild(session, RatingModel())
        full.append(time.perf_counter() - began)
    return full, reads


# --- 3. the leaderboard ------------------------------------------------------------------------


def leaderboard_latency(db_path: Path, requests: int = 500) -> dict[str, list[float]]:
    """Milliseconds per request against a real server on the database: leaderboard and health."""
    base, server, thread = serve(db_path)
    times: dict[str, list[float]] = {"leaderboard": [], "health": []}
    rng = random.Random(3)
    try:
        with httpx.Client(base_url=base, timeout=30) as http:
            for _ in range(20):  # warm up
                http.get(f"/api/leaderboard/{GAME}")
            for _ in range(requests):
                offset = rng.choice([0, 0, 0, 50, 500, 950])
                for name, path in (
                    ("leaderboard", f"/api/leaderboard/{GAME}?limit=50&offset={offset}"),
                    ("health", "/api/health"),
                ):
                    began = time.perf_counter()
                    response = http.get(path)
                    times[name].append((time.perf_counter() - began) * 1000)
                    assert response.status_code == 200, response.text
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    return times


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def measure(args: argparse.Namespace) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench-ladder-ratings-") as tmp:
        workdir = Path(tmp)
        for batched in (False, True):
            rated_ms, unrated_ms = await rating_write(workdir, batched=batched)
            how = "all submitted at once" if batched else "awaited one at a time"
            lines.append(
                f"rating write ({how}): {rated_ms:.3f} ms per rated result vs "
                f"{unrated_ms:.3f} ms unrated: rating adds {rated_ms - unrated_ms:.3f} ms per "
                f"match (x{rated_ms / unrated_ms:.2f})"
            )
        matches = args.rated_matches
        db_path = workdir / "ladder.db"
        for kind in args.stores:
            with open_store(kind, workdir) as store:
                database = Database(store.url("ladder"))
                await database.migrate()
                await fill(database, args.bots, matches)
                full, reads = await rebuild_times(database, args.rebuilds)
                where = f" on {kind}" + (f" {store.version.split()[0]}" if store.version else "")
                lines.append(
                    f"rebuild of {matches:,} rated matches between {args.bots:,} bots{where}: "
                    f"median {statistics.median(full):.2f} s (runs: "
                    f"{', '.join(f'{t:.2f}' for t in full)}); reading them alone "
                    f"{statistics.median(reads):.2f} s "
                    f"(x{statistics.median(full) / statistics.median(reads):.1f})"
                )
                await database.dispose()
        if "sqlite" not in args.stores:
            return lines
        times = leaderboard_latency(db_path)
        board, health = times["leaderboard"], times["health"]
        lines.append(
            f"GET /api/leaderboard/{GAME} ({args.bots:,} bots, {matches:,} matches, "
            f"{len(board)} requests): p50 {statistics.median(board):.2f} ms, "
            f"p99 {p(board, 99):.2f} ms; GET /api/health p50 {statistics.median(health):.2f} ms, "
            f"p99 {p(health, 99):.2f} ms (p99 x{p(board, 99) / p(health, 99):.1f})"
        )
    return lines


def add_arguments(group: Any) -> None:
    group.add_argument(
        "--rated-matches", type=int, default=100_000, help="stored rated matches (ratings)"
    )
    group.add_argument("--rebuilds", type=int, default=3, help="rebuilds timed (ratings)")
    add_store_argument(group, "where the rebuild runs (ratings; the leaderboard: on SQLite)")


def run(args: argparse.Namespace) -> str:
    """The section's report (``python -m bench.ladder ratings``); uses ``--bots`` too."""
    args.stores = stores(args)
    return "ratings\n" + "\n".join("  " + line for line in asyncio.run(measure(args)))
