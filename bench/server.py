"""Server throughput and added latency, against a bare WebSocket relay in the same run.

    python -m bench.server                      # 200 concurrent tic-tac-toe matches, 20 s each side
    python -m bench.server --matches 200 --game connect_four --duration 20
    python -m bench.server --store both         # the arena on SQLite and on PostgreSQL, one relay

Two phases, each with 2 x ``--matches`` bots that answer at once (a random legal move), spread over
``--procs`` worker processes, each running many asyncio ``websockets`` clients:

1. arena: a real ``arena serve`` subprocess on a fresh SQLite file; bots log in with real tokens,
   join the lobby, play, and join again until the time is up, then finish their matches.
2. relay: a bare ``websockets`` server (another subprocess) that speaks just enough of the protocol
   to pair two bots and forward each move to the opponent as a ``turn`` of the same shape. No rules,
   no clocks, no database: the transport's own limit on this machine.

Measured in a window after a warm-up: relayed moves per second, the latency from a bot's move sent
to the opponent's ``turn`` received (p50, p99; both ends stamp ``time.monotonic()``, one clock for
all processes on Linux), the server process's CPU and memory (psutil). After the arena phase the
database is checked: every move a bot sent must be stored.

``--store postgresql`` runs the arena phase on a database in a throwaway PostgreSQL cluster with
its durable defaults (bench/_stores.py; Debian's postgresql package), ``--store both`` on each
store in turn beside the same relay; the database server's CPU (its own processes) is measured
over the same window and counted in the CPU per move.

House bots (``--house``): instead of the relay, the same arena phase twice, alternating
(``--repeat`` pairs): without house bots, and with one house bot (``--house-agent``, default
``mcts@1``: a 1 s search per move) playing ``--house-matches`` matches at once against bots that
wait alone in Connect Four queues of their own (10 s per move, so that every search gets its full
second) and answer at once. The figure is the p99 of the ``--matches`` other matches with the
house bot searching, minus the p99 without house bots::

    python -m bench.server --house --matches 100 --think-ms 200 --duration 20 --repeat 2

``--burn`` adds a control phase: no house bots, but as many busy loops at the workers' priority
as there are workers, to tell what the searches' CPU costs the machine from what the house adds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import websockets
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from bench._stores import Store, add_store_argument, open_store, stores
from ply_arena.protocol.messages import PROTOCOL_VERSION

# --- bots (run in worker processes) -------------------------------------------------------------


@dataclass
class BotStats:
    #: (match_id, ply, monotonic time) of every move sent / every turn received.
    sent: list[tuple[str, int, float]] = field(default_factory=list)
    received: list[tuple[str, int, float]] = field(default_factory=list)
    #: (start, end) of every match, recorded by its seat 0.
    spans: list[tuple[float, float]] = field(default_factory=list)
    #: (join sent, its match_start received) of every lobby wait: the time a bot spends
    #: between matches (pairing, and the match's row being stored before it is announced).
    waits: list[tuple[float, float]] = field(default_factory=list)
    moves: int = 0
    ended: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    unfinished_bots: int = 0
    #: Whether the server negotiated permessage-deflate (the relay then does the same).
    deflate: bool = False
    #: The measured phase: (start, stop) on time.monotonic().
    window: tuple[float, float] = (0.0, 0.0)


async def _bot(
    url: str, token: str, game: str, stop_at: float, stats: BotStats, think_s: float = 0.0
) -> None:
    """A bot that answers every turn at once (or after ``think_s``); joins again until
    ``stop_at``, then finishes its match and leaves."""
    started: dict[str, float] = {}
    seat0: set[str] = set()
    queued = False
    stopping = False
    joined_at = 0.0

    async def leave_when_idle(ws: Any) -> None:
        # A bot still waiting in the queue at the end would wait forever: take it out.
        nonlocal stopping
        await asyncio.sleep(max(0.0, stop_at - time.monotonic()))
        if queued and not started and not stopping:
            stopping = True
            await ws.send(json.dumps({"type": "leave"}))

    async with connect(url, max_size=None, open_timeout=60, ping_interval=None) as ws:
        extensions = ws.response.headers.get("Sec-WebSocket-Extensions", "") if ws.response else ""
        stats.deflate = stats.deflate or "permessage-deflate" in extensions
        timer = asyncio.create_task(leave_when_idle(ws))
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "token": token}))
        # Once done, wait a little before closing: a pairing made just before our leave reached
        # the server still starts, and its match_start may come after "left".
        linger: float | None = None
        while True:
            try:
                frame = await asyncio.wait_for(ws.recv(), linger)
            except TimeoutError:
                timer.cancel()
                return
            now = time.monotonic()
            msg = json.loads(frame)
            kind = msg["type"]
            if kind == "turn":
                match_id, ply = msg["match_id"], msg["ply"]
                stats.received.append((match_id, ply, now))
                move = random.choice(msg["legal_moves"])
                if think_s:
                    # Jittered, so that 400 bots started together do not move in lockstep waves.
                    await asyncio.sleep(think_s * random.uniform(0.5, 1.5))
                stats.sent.append((match_id, ply, time.monotonic()))
                await ws.send(
                    json.dumps({"type": "move", "match_id": match_id, "ply": ply, "move": move})
                )
                stats.moves += 1
            elif kind == "match_start":
                if queued:
                    stats.waits.append((joined_at, now))
                queued = False
                linger = None
                started[msg["match_id"]] = now
                if msg["your_seat"] == 0:
                    seat0.add(msg["match_id"])
            elif kind == "match_end":
                stats.ended += 1
                begun = started.pop(msg["match_id"], now)
                if msg["match_id"] in seat0:
                    seat0.discard(msg["match_id"])
                    stats.spans.append((begun, now))
                if msg["termination"] != "normal":
                    stats.errors[f"termination:{msg['termination']}"] += 1
            elif kind == "welcome":
                pass
            elif kind == "ping":
                await ws.send(json.dumps({"type": "pong", "id": msg.get("id", 0)}))
            elif kind == "left":
                queued = False
            elif kind == "error":
                stats.errors[msg["code"]] += 1
            if kind in ("welcome", "match_end", "left"):
                if time.monotonic() < stop_at:
                    if not queued and not started:
                        queued = True
                        joined_at = time.monotonic()
                        await ws.send(json.dumps({"type": "join", "game": game}))
                elif not started:
                    if queued and not stopping:
                        stopping = True  # leave the queue; a pairing may still beat the leave
                        await ws.send(json.dumps({"type": "leave"}))
                    elif not queued:
                        linger = 3.0
            elif kind == "joined" and time.monotonic() >= stop_at and not started and not stopping:
                stopping = True
                await ws.send(json.dumps({"type": "leave"}))


async def _worker_main(
    url: str, tokens: list[str], game: str, start_at: float, stop_at: float, think_s: float
) -> BotStats:
    stats = BotStats()
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))

    async def one(token: str) -> None:
        try:
            await asyncio.wait_for(
                _bot(url, token, game, stop_at, stats, think_s), stop_at + 60 - time.monotonic()
            )
        except (TimeoutError, OSError, websockets.exceptions.WebSocketException) as exc:
            stats.unfinished_bots += 1
            stats.errors[f"bot:{type(exc).__name__}"] += 1

    await asyncio.gather(*(one(t) for t in tokens))
    return stats


def _worker(
    url: str,
    tokens: list[str],
    game: str,
    start_at: float,
    stop_at: float,
    think_s: float,
    out: Any,
) -> None:
    stats = asyncio.run(_worker_main(url, tokens, game, start_at, stop_at, think_s))
    out.put(stats)


def run_bots(
    url: str,
    tokens: list[str],
    game: str,
    procs: int,
    start_at: float,
    stop_at: float,
    think_s: float = 0.0,
) -> BotStats:
    """Run the bots in ``procs`` processes from ``start_at``; merge their stats."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    duration = stop_at - start_at
    workers = [
        ctx.Process(
            target=_worker, args=(url, tokens[i::procs], game, start_at, stop_at, think_s, out)
        )
        for i in range(procs)
    ]
    for w in workers:
        w.start()
    merged = BotStats()
    for _ in workers:
        part: BotStats = out.get(timeout=duration + 180)
        merged.sent += part.sent
        merged.received += part.received
        merged.spans += part.spans
        merged.waits += part.waits
        merged.moves += part.moves
        merged.ended += part.ended
        merged.errors += part.errors
        merged.unfinished_bots += part.unfinished_bots
        merged.deflate = merged.deflate or part.deflate
    for w in workers:
        w.join()
    merged.window = (start_at, stop_at)
    return merged


# --- bots alone in a queue, for the house bot (run in a worker process) ---------------------------


@dataclass
class LoneStats:
    #: Turns received after a house move (one per house search), in the measured window.
    house_moves: int = 0
    #: When each house move arrived, and how long after the bot's own move (or match start).
    house_think_s: list[float] = field(default_factory=list)
    matches: int = 0
    terminations: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


async def _lone_bot(
    url: str, token: str, move_ms: int, lo: float, stop_at: float, stats: LoneStats
) -> None:
    """Join a Connect Four queue of its own (``move_ms``) until ``stop_at``; answer at once."""
    join = {"type": "join", "game": "connect_four",
            "time_control": {"move_ms": move_ms, "bank_ms": 0}}  # fmt: skip
    async with connect(url, max_size=None, open_timeout=60, ping_interval=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "token": token}))
        asked_at = time.monotonic()
        current: str | None = None
        while True:
            timeout = None if current or time.monotonic() < stop_at else 1.0
            try:
                frame = await asyncio.wait_for(ws.recv(), timeout)
            except TimeoutError:
                return
            now = time.monotonic()
            msg = json.loads(frame)
            kind = msg["type"]
            if kind == "turn":
                if msg["since_last"] and lo <= now < stop_at:
                    stats.house_moves += 1
                    stats.house_think_s.append(now - asked_at)
                if now >= stop_at:
                    await ws.send(json.dumps({"type": "resign", "match_id": msg["match_id"]}))
                    continue
                move = random.choice(msg["legal_moves"])
                await ws.send(json.dumps({"type": "move", "match_id": msg["match_id"],
                                          "ply": msg["ply"], "move": move}))  # fmt: skip
                asked_at = time.monotonic()
            elif kind == "match_start":
                current = msg["match_id"]
                asked_at = now
                stats.matches += 1
            elif kind == "match_end":
                current = None
                stats.terminations[msg["termination"]] += 1
            elif kind == "ping":
                await ws.send(json.dumps({"type": "pong", "id": msg.get("id", 0)}))
            elif kind == "error":
                stats.errors[msg["code"]] += 1
            if kind in ("welcome", "match_end") and time.monotonic() < stop_at:
                await ws.send(json.dumps(join))


def _burn(stop_at: float) -> None:
    """A busy loop at the house workers' priority (the --burn control): their CPU, no house."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    x = 0
    while time.monotonic() < stop_at:
        for _ in range(100_000):
            x += 1


def _lone_worker(url: str, tokens: list[str], lo: float, stop_at: float, out: Any) -> None:
    async def main() -> LoneStats:
        stats = LoneStats()
        await asyncio.gather(
            *(_lone_bot(url, t, 10_000 + i, lo, stop_at, stats) for i, t in enumerate(tokens))
        )
        return stats

    out.put(asyncio.run(main()))


# --- the bare relay (a subprocess) --------------------------------------------------------------


def relay_main(port: int, game_name: str, plies: int, deflate: bool) -> None:
    """Pair bots two by two and forward moves as turns; ends a match after ``plies`` moves.

    ``deflate``: offer permessage-deflate, as the arena server did in the same run (same costs).
    """
    from ply_arena import games

    game = games.get(game_name)
    state = game.initial_state()
    position = game.state_to_json(state)
    legal = [game.format_move(state, m) for m in state.actions()]
    waiting: list[ServerConnection] = []
    # match id -> [connection of seat 0, seat 1], plies played
    matches: dict[str, tuple[list[ServerConnection], list[int]]] = {}
    counter = iter(range(1, 1 << 62))

    def turn(match_id: str, ply: int, last: dict[str, Any] | None) -> str:
        return json.dumps(
            {
                "type": "turn",
                "match_id": match_id,
                "ply": ply,
                "position": position,
                "legal_moves": legal,
                "since_last": [last] if last else [],
                "clocks_ms": [10_000, 10_000],
                "move_ms": 1000,
                "deadline_ms": 11_000,
            }
        )

    def start(match_id: str, seat: int, pair: list[ServerConnection]) -> str:
        return json.dumps(
            {
                "type": "match_start",
                "match_id": match_id,
                "game": game_name,
                "seats": [{"seat": 0, "bot": "a"}, {"seat": 1, "bot": "b"}],
                "your_seat": seat,
                "time_control": {"move_ms": 1000, "bank_ms": 10_000},
                "policy": "forfeit",
                "position": position,
            }
        )

    async def handler(ws: ServerConnection) -> None:
        async for frame in ws:
            msg = json.loads(frame)
            kind = msg["type"]
            if kind == "move":
                pair, count = matches[msg["match_id"]]
                ply = msg["ply"] + 1
                count[0] += 1
                seat = 0 if pair[0] is ws else 1
                if count[0] >= plies:
                    del matches[msg["match_id"]]
                    end = json.dumps(
                        {
                            "type": "match_end",
                            "match_id": msg["match_id"],
                            "payoffs": [0.0, 0.0],
                            "termination": "normal",
                            "at_fault": None,
                            "position": position,
                            "plies": ply,
                        }
                    )
                    for c in pair:
                        await c.send(end)
                else:
                    last = {"ply": ply - 1, "seat": seat, "move": msg["move"]}
                    await pair[1 - seat].send(turn(msg["match_id"], ply, last))
            elif kind == "hello":
                await ws.send(
                    json.dumps(
                        {
                            "type": "welcome",
                            "protocol": PROTOCOL_VERSION,
                            "bot": "bot",
                            "server": "relay",
                            "heartbeat_ms": 15_000,
                            "matches": [],
                        }
                    )
                )
            elif kind == "join":
                waiting.append(ws)
                await ws.send(
                    json.dumps(
                        {
                            "type": "joined",
                            "game": game_name,
                            "time_control": {"move_ms": 1000, "bank_ms": 10_000},
                            "policy": "forfeit",
                            "waiting": len(waiting),
                        }
                    )
                )
                if len(waiting) >= 2:
                    pair = [waiting.pop(0), waiting.pop(0)]
                    match_id = f"r{next(counter)}"
                    matches[match_id] = (pair, [0])
                    for seat, c in enumerate(pair):
                        await c.send(start(match_id, seat, pair))
                    await pair[0].send(turn(match_id, 0, None))
            elif kind == "leave":
                if ws in waiting:
                    waiting.remove(ws)
                await ws.send(json.dumps({"type": "left", "game": None}))

    async def main() -> None:
        compression = "deflate" if deflate else None
        async with serve(handler, "127.0.0.1", port, max_size=64 * 1024, compression=compression):
            await asyncio.Future()

    asyncio.run(main())


# --- orchestration ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


async def _create_bots(db_url: str, count: int, prefix: str = "bench") -> list[str]:
    from ply_arena.server.db.database import Database
    from ply_arena.server.repositories.bots import create_bot

    database = Database(db_url)
    await database.migrate()
    tokens = []
    async with database.session() as session:
        for i in range(count):
            _, token = await create_bot(session, f"{prefix}-{i:04d}")
            tokens.append(token)
    await database.dispose()
    return tokens


async def _stored_counts(db_url: str) -> tuple[int, dict[str, int]]:
    """Moves stored, and matches stored by status."""
    from sqlalchemy import func, select

    from ply_arena.server.db.database import Database
    from ply_arena.server.db.models import Match, MoveRecord

    database = Database(db_url)
    async with database.session() as session:
        moves = await session.scalar(select(func.count()).select_from(MoveRecord))
        rows = await session.execute(select(Match.status, func.count()).group_by(Match.status))
        by_status = {str(status): int(count) for status, count in rows}
    await database.dispose()
    return int(moves or 0), by_status


@dataclass
class PhaseResult:
    name: str
    moves_per_s: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    samples: int
    mean_concurrency: float
    cpu_percent: float
    rss_mb: float
    stats: BotStats
    lone: LoneStats | None = None
    #: The database server's CPU over the window (PostgreSQL; None where it is the arena's own).
    db_cpu_percent: float | None = None


def measure(
    name: str,
    proc: subprocess.Popen[bytes],
    url: str,
    tokens: list[str],
    args: argparse.Namespace,
    lone_tokens: list[str] | None = None,
    burners: int = 0,
    store: Store | None = None,
) -> PhaseResult:
    server = psutil.Process(proc.pid)
    rss_peak = [0.0]
    stop_sampling = False

    def sample_rss() -> None:
        while not stop_sampling:
            try:
                rss_peak[0] = max(rss_peak[0], server.memory_info().rss / 2**20)
            except psutil.Error:
                return
            time.sleep(0.5)

    sampler = threading.Thread(target=sample_rss, daemon=True)
    sampler.start()
    # CPU over the measurement window: read cpu_times at its edges from a helper thread.
    cpu_marks: dict[str, float] = {}

    def mark_cpu(at: float, key: str) -> None:
        time.sleep(max(0.0, at - time.monotonic()))
        t = server.cpu_times()
        cpu_marks[key] = t.user + t.system
        cpu_marks[key + "_wall"] = time.monotonic()
        if store is not None and store.kind != "sqlite":
            cpu_marks[key + "_db"] = store.cpu_seconds()

    # Bots start together once every process is up (spawning takes a moment per process).
    start_at = time.monotonic() + 2.0 + 0.3 * args.procs
    stop_at = start_at + args.duration
    first, last = start_at + args.warmup, stop_at
    marks = [
        threading.Thread(target=mark_cpu, args=(first, "a"), daemon=True),
        threading.Thread(target=mark_cpu, args=(last, "b"), daemon=True),
    ]
    for t in marks:
        t.start()
    profiler = None
    if args.profile and name != "relay":
        profiler = _start_profiler(proc.pid, first, last, args.profile)
    lone_proc = None
    if lone_tokens:
        # Alone in their queues from the start (the house bot meets them after house_wait_s),
        # so that every house match is under way before the measured window opens.
        ctx = mp.get_context("spawn")
        lone_out = ctx.Queue()
        lone_proc = ctx.Process(
            target=_lone_worker, args=(url, lone_tokens, first, stop_at, lone_out)
        )
        lone_proc.start()
    burning = [
        mp.get_context("spawn").Process(target=_burn, args=(stop_at,)) for _ in range(burners)
    ]
    for b in burning:
        b.start()
    stats = run_bots(url, tokens, args.game, args.procs, start_at, stop_at, args.think_ms / 1000)
    for b in burning:
        b.join()
    lone = None
    if lone_proc is not None:
        lone = lone_out.get(timeout=120)
        lone_proc.join()
    for t in marks:
        t.join()
    if profiler is not None:
        profiler.join()
    stop_sampling = True
    lo, hi = first, last
    stats.window = (lo, hi)  # the measured window, without the warm-up
    received = {(m, p): t for m, p, t in stats.received}
    latencies = sorted(
        (received[(m, p + 1)] - t) * 1000
        for m, p, t in stats.sent
        if lo <= t < hi and (m, p + 1) in received
    )
    relayed = sum(1 for _, _, t in stats.sent if lo <= t < hi)
    window = hi - lo
    busy = sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in stats.spans)
    wall = cpu_marks["b_wall"] - cpu_marks["a_wall"]
    cpu = (cpu_marks["b"] - cpu_marks["a"]) / wall * 100
    db_cpu = None
    if "a_db" in cpu_marks:
        db_cpu = (cpu_marks["b_db"] - cpu_marks["a_db"]) / wall * 100

    return PhaseResult(
        name=name,
        moves_per_s=relayed / window,
        p50_ms=statistics.median(latencies) if latencies else 0.0,
        p99_ms=_quantile(latencies, 0.99),
        max_ms=latencies[-1] if latencies else 0.0,
        samples=len(latencies),
        mean_concurrency=busy / window,
        cpu_percent=cpu,
        rss_mb=rss_peak[0],
        stats=stats,
        lone=lone,
        db_cpu_percent=db_cpu,
    )


def _start_profiler(pid: int, first: float, last: float, out: Path) -> threading.Thread:
    """Sample the server with py-spy over the measured window (``--profile``): collapsed
    stacks in ``out`` (one line per stack and its count; ``python -m bench.profile_summary``
    sums them per function), idle time (the event loop waiting in select/epoll) included, so
    that the shares are of the wall time."""

    def record() -> None:
        time.sleep(max(0.0, first - time.monotonic()))
        duration = max(1, int(last - time.monotonic()))
        done = subprocess.run(
            ["py-spy", "record", "--pid", str(pid), "--duration", str(duration), "--rate", "250",
             "--format", "raw", "--idle", "--threads", "--nonblocking", "--output", str(out)],
            check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        if done.returncode != 0 or not out.exists():
            print(f"py-spy failed ({done.returncode}): {done.stdout.decode()[-800:]}", flush=True)

    thread = threading.Thread(target=record, daemon=True)
    thread.start()
    return thread


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def arena_phase(
    args: argparse.Namespace,
    workdir: Path,
    *,
    name: str = "arena",
    house_env: dict[str, str] | None = None,
    lone: int = 0,
    burners: int = 0,
    store: Store | None = None,
) -> tuple[PhaseResult, tuple[int, dict[str, int]]]:
    """One arena phase on a fresh database (an SQLite file in ``workdir`` unless ``store`` says
    otherwise). No house bots unless ``house_env`` configures them (a bot left alone at the end
    would otherwise meet one and prolong the phase); ``lone`` bots wait alone in queues of their
    own for the house bot."""
    store = store or Store("sqlite", workdir)
    db_url = store.url(name)
    tokens = asyncio.run(_create_bots(db_url, 2 * args.matches))
    lone_tokens = asyncio.run(_create_bots(db_url, lone, "lone")) if lone else None
    port = free_port()
    env = dict(os.environ, ARENA_ADMIN_TOKEN="bench-admin", ARENA_HOUSE_BOTS="none")
    env.update(house_env or {})
    env.update(args.server_env)
    cmd = [
        sys.executable, "-m", "ply_arena",
        "serve", "--port", str(port), "--db", db_url,
    ]  # fmt: skip
    log = (workdir / f"{name}.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    try:
        wait_for_port(port, proc)
        url = f"ws://127.0.0.1:{port}/ws"
        result = measure(name, proc, url, tokens, args, lone_tokens, burners, store)
    finally:
        stop(proc)
        log.close()
    return result, asyncio.run(_stored_counts(db_url))


def relay_phase(args: argparse.Namespace, workdir: Path, plies: int, deflate: bool) -> PhaseResult:
    port = free_port()
    cmd = [
        sys.executable, "-c",
        "from bench.server import relay_main; "
        f"relay_main({port}, {args.game!r}, {plies}, {deflate})",
    ]  # fmt: skip
    log = (workdir / "relay.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc)
        tokens = [f"relay-{i}" for i in range(2 * args.matches)]
        return measure("relay", proc, f"ws://127.0.0.1:{port}/ws", tokens, args)
    finally:
        stop(proc)
        log.close()


def report(
    arenas: list[tuple[PhaseResult, tuple[int, dict[str, int]]]],
    relay: PhaseResult,
    args: Any,
) -> str:
    """The arena phases (one per store) against the relay of the same run."""
    first = arenas[0][0]
    lines = [
        f"bench.server: {args.matches} concurrent {args.game} matches, {2 * args.matches} bots in "
        f"{args.procs} processes, think {args.think_ms:g} ms, {args.duration:.0f} s per phase "
        f"({args.warmup:.0f} s warm-up), {os.cpu_count()} cores, load average before: "
        f"{args.load_before}, permessage-deflate: {'on' if first.stats.deflate else 'off'}"
        + (f", stores: {', '.join(args.stores)}" if args.stores != ["sqlite"] else ""),
        *([f"PostgreSQL {args.pg_version}, durable defaults (bench/_stores.py)"]
          if args.pg_version else []),
        "",
        f"{'':10} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'samples':>8} "
        f"{'matches':>8} {'CPU %':>7} {'DB CPU %':>8} {'RSS MB':>7}",
    ]  # fmt: skip
    for r in [a for a, _ in arenas] + [relay]:
        db = f"{r.db_cpu_percent:8.0f}" if r.db_cpu_percent is not None else f"{'-':>8}"
        lines.append(
            f"{r.name:10} {r.moves_per_s:9.0f} {r.p50_ms:8.2f} {r.p99_ms:8.2f} {r.max_ms:8.1f} "
            f"{r.samples:8d} {r.mean_concurrency:8.1f} {r.cpu_percent:7.0f} {db} {r.rss_mb:7.0f}"
        )
    for arena, stored in arenas:
        ratio = arena.moves_per_s / relay.moves_per_s if relay.moves_per_s else 0.0
        cpu_ms = _cpu_per_move_ms(arena)
        lines += [
            "",
            f"[{arena.name}] throughput arena / relay: {ratio:.2f} (goal >= 0.50)",
            f"p50 arena / relay: {arena.p50_ms / relay.p50_ms if relay.p50_ms else 0:.2f}; "
            f"p99 arena / relay: {arena.p99_ms / relay.p99_ms if relay.p99_ms else 0:.2f}",
            f"added latency p99 (arena): {arena.p99_ms:.2f} ms (goal <= 20 ms); "
            f"over the relay: p50 +{arena.p50_ms - relay.p50_ms:.2f} ms, "
            f"p99 +{arena.p99_ms - relay.p99_ms:.2f} ms",
            f"CPU per move: {cpu_ms:.3f} ms (server"
            + (" + database server" if arena.db_cpu_percent is not None else "")
            + f"); relay {_cpu_per_move_ms(relay):.3f} ms",
            f"mean concurrent arena matches in the window: {arena.mean_concurrency:.1f}",
            f"between matches (join sent -> match_start), p50 / p90: arena "
            f"{_waits(arena, 0.5):.1f} / {_waits(arena, 0.9):.1f} ms, relay "
            f"{_waits(relay, 0.5):.1f} / {_waits(relay, 0.9):.1f} ms",
            f"moves sent by bots: {arena.stats.moves}; stored: {stored[0]} "
            f"({'all persisted' if stored[0] == arena.stats.moves else 'MISMATCH'}); "
            f"matches ended: {arena.stats.ended // 2}, stored by status: {stored[1]}",
        ]
    by_name = {a.name: a for a, _ in arenas}
    if "sqlite" in by_name and "postgresql" in by_name and by_name["sqlite"].moves_per_s:
        pg, lite = by_name["postgresql"], by_name["sqlite"]
        lines += [
            "",
            f"postgresql / sqlite throughput: {pg.moves_per_s / lite.moves_per_s:.2f} "
            f"(goal >= 0.80); CPU per move {_cpu_per_move_ms(pg):.3f} / "
            f"{_cpu_per_move_ms(lite):.3f} ms",
        ]
    errors: Counter[str] = Counter()
    for arena, _ in arenas:
        errors += arena.stats.errors
    errors += relay.stats.errors
    lines.append(f"errors/abnormal endings: {dict(errors) or 'none'}")
    return "\n".join(lines)


def _cpu_per_move_ms(phase: PhaseResult) -> float:
    """Server CPU (and the database server's, where separate) per relayed move, in ms."""
    if not phase.moves_per_s:
        return 0.0
    cpu = phase.cpu_percent + (phase.db_cpu_percent or 0.0)
    return cpu / 100 / phase.moves_per_s * 1000


def _quantile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of values sorted ascending (0.0 for none)."""
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _waits(phase: PhaseResult, q: float) -> float:
    """The ``q`` quantile of a phase's waits between matches that began in its window (ms)."""
    lo, hi = phase.stats.window
    waits = sorted((end - begin) * 1000 for begin, end in phase.stats.waits if lo <= begin < hi)
    return _quantile(waits, q)


def house_report(phases: list[PhaseResult], args: Any) -> str:
    """The --house comparison: the other matches' latency without and with the house bot."""
    lines = [
        f"bench.server --house: {args.matches} concurrent {args.game} matches of bots that think "
        f"{args.think_ms:g} ms (+-50%), {2 * args.matches} bots in {args.procs} processes; with "
        f"house bots: one house bot ({args.house_agent}) in {args.house_matches} concurrent "
        f"Connect Four matches against bots alone in their queues, {args.house_workers} search "
        f"process(es); {args.duration:.0f} s per phase ({args.warmup:.0f} s warm-up), "
        f"{os.cpu_count()} cores, load average before: {args.load_before}",
        "",
        f"{'':14} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'samples':>8} "
        f"{'CPU %':>7} {'house moves':>11} {'search s':>9}",
    ]
    for r in phases:
        searches = r.lone.house_moves if r.lone else 0
        think = statistics.median(r.lone.house_think_s) if r.lone and r.lone.house_think_s else 0
        lines.append(
            f"{r.name:14} {r.moves_per_s:9.0f} {r.p50_ms:8.2f} {r.p99_ms:8.2f} {r.max_ms:8.1f} "
            f"{r.samples:8d} {r.cpu_percent:7.0f} {searches:11d} {think:9.2f}"
        )
    without = [r for r in phases if r.name.startswith("no house")]
    with_house = [r for r in phases if r.lone is not None]
    burned = [r for r in phases if r.name.startswith("burn")]
    p99_without = statistics.median(r.p99_ms for r in without)
    p99_with = statistics.median(r.p99_ms for r in with_house)
    p50_without = statistics.median(r.p50_ms for r in without)
    p50_with = statistics.median(r.p50_ms for r in with_house)
    lines += [
        "",
        f"p99 of the other matches: {p99_without:.2f} ms without house bots, {p99_with:.2f} ms "
        f"with (medians of the phases): house bots add {p99_with - p99_without:+.2f} ms "
        "(goal <= 2 ms); "
        f"p50 {p50_without:.2f} -> {p50_with:.2f} ms ({p50_with - p50_without:+.2f} ms)",
    ]
    if burned:
        p99_burn = statistics.median(r.p99_ms for r in burned)
        lines.append(
            f"control: {args.house_workers} busy loops at the workers' priority, no house bots: "
            f"p99 {p99_burn:.2f} ms ({p99_burn - p99_without:+.2f} ms): what the CPU the "
            "searches use costs by itself"
        )
    terminations: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for r in with_house:
        assert r.lone is not None
        terminations += r.lone.terminations
        errors += r.lone.errors
    lines.append(
        f"house matches ended: {dict(terminations) or 'none'} (resign: stopped at the end of a "
        f"phase); lone bots' errors: {dict(errors) or 'none'}"
    )
    others = {k: v for r in phases for k, v in r.stats.errors.items() if v}
    lines.append(f"other matches' errors/abnormal endings: {others or 'none'}")
    return "\n".join(lines)


def house_main(args: argparse.Namespace, workdir: Path) -> str:
    house_env = {
        "ARENA_HOUSE_BOTS": f"connect_four={args.house_agent}",
        "ARENA_HOUSE_MAX_MATCHES": str(args.house_matches),
        "ARENA_HOUSE_WORKERS": str(args.house_workers),
        "ARENA_HOUSE_WAIT_S": "0.2",
    }
    phases = []
    kinds = ["no house", "house"] + (["burn"] if args.burn else [])
    for i in range(args.repeat):
        order = kinds if i % 2 == 0 else kinds[::-1]
        for kind in order:
            name = f"{kind} #{i + 1}"
            with_house = kind == "house"
            result, _ = arena_phase(
                args,
                workdir,
                name=name.replace(" ", "-").replace("#", ""),
                house_env=house_env if with_house else None,
                lone=args.house_matches if with_house else 0,
                burners=args.house_workers if kind == "burn" else 0,
            )
            result.name = name
            phases.append(result)
            print(
                f"{name}: p99 {result.p99_ms:.2f} ms, p50 {result.p50_ms:.2f} ms",
                file=sys.stderr,
                flush=True,
            )
    return house_report(phases, args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.server", description=__doc__)
    parser.add_argument("--matches", type=int, default=200, help="concurrent matches")
    parser.add_argument("--game", default="tic_tac_toe", choices=["tic_tac_toe", "connect_four"])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per phase")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds not measured")
    parser.add_argument("--procs", type=int, default=2, help="bot worker processes")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="bots wait this long on average (+-50%%) before answering (0: at once, saturation)",
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra environment for arena serve, e.g. ARENA_RATE_LIMIT_PER_S=100",
    )
    add_store_argument(parser, "the arena's database")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="sample the arena server with py-spy over the measured window (collapsed stacks "
        "to FILE; summarise with python -m bench.profile_summary FILE); needs py-spy",
    )
    house = parser.add_argument_group("house bots (--house)")
    house.add_argument(
        "--house", action="store_true", help="measure what a searching house bot adds instead"
    )
    house.add_argument("--house-agent", default="mcts@1", help="the house bot's spec")
    house.add_argument("--house-matches", type=int, default=10, help="its concurrent matches")
    house.add_argument(
        "--house-workers",
        type=int,
        default=0,
        help="search processes (ARENA_HOUSE_WORKERS; 0: the server's default, one per core)",
    )
    house.add_argument("--repeat", type=int, default=1, help="phase pairs, order alternating")
    house.add_argument(
        "--burn",
        action="store_true",
        help="add a control phase: no house bots, as many SCHED_IDLE busy loops as workers",
    )
    args = parser.parse_args(argv)
    args.server_env = dict(item.split("=", 1) for item in args.server_env)
    args.stores = stores(args)
    args.pg_version = ""
    args.load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    args.house_workers = args.house_workers or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        workdir = Path(tmp)
        if args.house:
            text = house_main(args, workdir)
            print(text)
            if args.out:
                args.out.write_text(text + "\n", encoding="utf-8")
            return 0
        arenas = []
        for kind in args.stores:
            with open_store(kind, workdir) as store:
                args.pg_version = args.pg_version or store.version
                name = "arena" if args.stores == ["sqlite"] else kind
                arenas.append(arena_phase(args, workdir, name=name, store=store))
        first = arenas[0][0]
        plies = round(first.stats.moves / max(1, first.stats.ended // 2))
        relay = relay_phase(args, workdir, max(1, plies), first.stats.deflate)
        text = report(arenas, relay, args)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
