"""Several ``arena serve`` processes on one PostgreSQL database (issue 22's two other goals):
what a move costs when its bot is on another process than its match, and what 1, 2 and 3
processes carry on this machine.

    python -m bench.processes                          # both parts, 3 runs each; medians
    python -m bench.processes latency --pairs 30 --think-ms 20 --duration 20 --runs 3
    python -m bench.processes scale --bots 400 --think-bots 200 --scale-think-ms 200 --runs 3
    python -m bench.processes --runs 1 --pairs 4 --bots 40 --think-bots 20 --duration 5 \\
        --warmup 2 --settle 3 --idle 4 --baseline 2 --workdir bench/results/processes  # quick

PostgreSQL only: a throwaway cluster with its durable defaults (bench/_stores.py), a fresh
database per run, ``arena serve`` processes started as bench/restart.py starts them (no house
bots). The bots are raw ``websockets`` clients (no kit) in ``--procs`` worker processes.

``latency`` (goal: a move whose bot is on another process than its match adds <= 5 ms at p99
over the same-process figure). Two processes; ``--pairs`` pairs of bots play Connect Four by
challenge, again and again (a challenge's match is played on the challenger's process), each
bot answering after ``--think-ms`` (+-50%), so that neither process is saturated. Two phases on
the same two processes, their order alternating from run to run:

- ``same`` (the peer): both bots of a pair connect to the same process (half the pairs to
  each);
- ``cross``: the challenger connects to one process and its opponent to the other (half the
  pairs each way), so every frame of the opponent's goes over the bus (its ``turn`` out, its
  move in).

Latency: from a bot's move sent to the opponent's next ``turn`` received (both stamp
``time.monotonic()``, one clock on one machine), p50 and p99 over the moves sent in the window
after ``--warmup``. A move of the challenger's crosses the bus once (the turn out to the
opponent), a move of the opponent's once too (the move in); half the samples each. Also the CPU
per move of both servers and the database server (the bus's relays are in it).

``scale`` (goal: throughput and CPU per move with 1, 2 and 3 processes on this machine, and
from them, on paper, the processes and cores that 10,000 concurrent bots need). For each count
of processes: ``--bots`` (saturation: they answer at once) or ``--think-bots`` (thinking: after
``--scale-think-ms``, +-50%) bots spread evenly over the processes, joining the tic-tac-toe lobby
again and again (one lobby for every process: a match is played on the process of its first
bot, so with N processes about 1 - 1/N of the matches have a bot on another process; the share
is counted from the bots' ``match_start``). Windows,
each measured by the CPU of every server process and of the database server:

- ``baseline``: the processes up, no bot connected (leases, the lobby's lock, takeover scans);
- ``idle``: every bot connected, none playing yet: the CPU per connected bot;
- ``play``: ``--duration`` of play after ``--warmup``: moves per second, CPU per move.

The ratios: moves/s with N processes / with 1, CPU per move with the most processes / with 1,
in the same run. The counts of processes and the two modes run in an order that alternates from
run to run. Every move a bot sent must be stored (checked). Then, on paper, what 10,000
concurrent thinking bots need (``_paper``: from the thinking runs' moves per bot and marginal
CPU per move, extrapolated to more processes by the share of relayed matches).

Server logs, one per process, are in the workdir (``--workdir`` keeps them); the report
counts their error and warning lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing as mp
import random
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import websockets
from websockets.asyncio.client import connect

from bench._machine import machine_line
from bench._stores import Store, open_store
from bench.restart import _serve, _serving, _stop
from bench.server import _create_bots, _quantile, _stored_counts, free_port
from ply_arena.protocol.messages import PROTOCOL_VERSION

LATENCY_GAME = "connect_four"
SCALE_GAME = "tic_tac_toe"
#: Generous, so that a busy machine's pauses are not timeouts.
TIME_CONTROL = {"move_ms": 10_000, "bank_ms": 0}
#: A bot done playing closes once nothing came for this long (a late match_start may still come).
LINGER_S = 3.0
#: Bots still to answer a turn give up this long after the end of play.
FINISH_S = 60.0
#: What marks a server log line as a problem: uvicorn's level prefixes, and what Python prints
#: on its own (a traceback, an exception nobody retrieved, a task destroyed while pending).
PROBLEMS = ("ERROR", "WARNING", "CRITICAL", "Traceback", "xception", "destroyed")
TARGET_BOTS = 10_000
#: The share of a core one event loop is planned at on paper (headroom for the p99).
PLANNED_LOAD = 0.7


# --- bots (in worker processes) -----------------------------------------------------------------


@dataclass
class Stats:
    #: (match_id, ply, monotonic time) of every move sent / every turn received.
    sent: list[tuple[str, int, float]] = field(default_factory=list)
    received: list[tuple[str, int, float]] = field(default_factory=list)
    moves: int = 0
    #: Matches ended, counted by their seat 0; matches started, and those with bots on two
    #: processes (the lobby's bots).
    matches: int = 0
    starts: int = 0
    cross: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    #: Challenges sent again after ``unknown_bot`` (the opponent not logged in yet).
    retried: int = 0
    #: When the last bot had its welcome.
    last_welcome: float = 0.0

    def merge(self, other: Stats) -> None:
        self.sent += other.sent
        self.received += other.received
        self.moves += other.moves
        self.matches += other.matches
        self.starts += other.starts
        self.cross += other.cross
        self.errors += other.errors
        self.retried += other.retried
        self.last_welcome = max(self.last_welcome, other.last_welcome)


class _Bot:
    """What every bench bot does: log in, answer pings, answer turns after ``think_s``."""

    def __init__(self, ws: Any, stats: Stats, think_s: float) -> None:
        self.ws, self.stats, self.think_s = ws, stats, think_s
        self.playing: set[str] = set()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def common(self, msg: dict[str, Any], now: float) -> None:
        kind = msg["type"]
        if kind == "turn":
            match_id, ply = msg["match_id"], msg["ply"]
            self.stats.received.append((match_id, ply, now))
            if self.think_s:
                # Jittered, so that bots started together do not move in lockstep waves.
                await asyncio.sleep(self.think_s * random.uniform(0.5, 1.5))
            move = random.choice(msg["legal_moves"])
            self.stats.sent.append((match_id, ply, time.monotonic()))
            await self.send({"type": "move", "match_id": match_id, "ply": ply, "move": move})
            self.stats.moves += 1
        elif kind == "welcome":
            self.stats.last_welcome = max(self.stats.last_welcome, now)
        elif kind == "match_start":
            self.playing.add(msg["match_id"])
        elif kind == "match_end":
            self.playing.discard(msg["match_id"])
            if msg["termination"] != "normal":
                self.stats.errors[f"termination:{msg['termination']}"] += 1
        elif kind == "ping":
            await self.send({"type": "pong", "id": msg.get("id", 0)})
        elif kind == "error":
            self.stats.errors[msg["code"]] += 1


async def _receive(ws: Any, timeout: float | None) -> tuple[dict[str, Any], float] | None:
    try:
        frame = await asyncio.wait_for(ws.recv(), timeout)
    except TimeoutError:
        return None
    return json.loads(frame), time.monotonic()


def _hello(token: str) -> str:
    return json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "token": token})


async def _challenger(
    url: str, token: str, opponent: str, think_s: float, stop_at: float, stats: Stats
) -> None:
    """Challenge ``opponent`` to Connect Four, play, and again until ``stop_at``."""
    challenge = {"type": "challenge", "game": LATENCY_GAME, "opponents": [opponent],
                 "time_control": TIME_CONTROL}  # fmt: skip
    async with connect(url, max_size=None, open_timeout=60, ping_interval=None) as ws:
        bot = _Bot(ws, stats, think_s)
        await ws.send(_hello(token))
        while True:
            got = await _receive(ws, None if bot.playing or time.monotonic() < stop_at else 1.0)
            if got is None:
                return
            msg, now = got
            await bot.common(msg, now)
            kind = msg["type"]
            if kind == "match_end":
                stats.matches += 1
            again = kind in ("welcome", "match_end", "challenge_declined")
            if kind == "error" and msg["code"] == "unknown_bot":
                # Not known on this process yet (its login still crossing the bus): again soon.
                stats.errors["unknown_bot"] -= 1
                stats.retried += 1
                await asyncio.sleep(0.2)
                again = True
            if again and not bot.playing and time.monotonic() < stop_at:
                await bot.send(challenge)


async def _opponent(
    url: str, token: str, think_s: float, stop_at: float, stats: Stats, welcome: asyncio.Event
) -> None:
    """Accept every challenge; once ``stop_at`` has passed, close when nothing comes.
    ``welcome`` is set once logged in."""
    async with connect(url, max_size=None, open_timeout=60, ping_interval=None) as ws:
        bot = _Bot(ws, stats, think_s)
        await ws.send(_hello(token))
        while True:
            idle = not bot.playing and time.monotonic() >= stop_at
            got = await _receive(ws, LINGER_S if idle else None)
            if got is None:
                return
            msg, now = got
            await bot.common(msg, now)
            if msg["type"] == "welcome":
                welcome.set()
            elif msg["type"] == "challenge_received":
                await bot.send({"type": "accept", "challenge_id": msg["challenge_id"]})


async def _lobby_bot(
    url: str,
    token: str,
    where: dict[str, int],
    think_s: float,
    play_at: float,
    stop_at: float,
    stats: Stats,
) -> None:
    """Log in, stay idle until ``play_at``, then join the tic-tac-toe lobby again and again
    until ``stop_at``, finish the match and leave. ``where``: every bot's process, to count the
    matches whose bots are on two processes."""
    async with connect(url, max_size=None, open_timeout=60, ping_interval=None) as ws:
        bot = _Bot(ws, stats, think_s)
        await ws.send(_hello(token))
        started = queued = stopping = False
        seat0: set[str] = set()
        while True:
            now = time.monotonic()
            if not started and now >= play_at:
                started = queued = True
                await bot.send({"type": "join", "game": SCALE_GAME})
            if started and now >= stop_at and queued and not stopping:
                # Leave the queue; a pairing may still beat the leave (keep reading).
                stopping = True
                await bot.send({"type": "leave"})
            lingering = False
            if not started:
                timeout = play_at - now
            elif now < stop_at:
                timeout = stop_at - now
            elif bot.playing or queued:
                timeout = stop_at + FINISH_S - now
            else:
                timeout, lingering = LINGER_S, True
            got = await _receive(ws, max(0.01, timeout))
            if got is None:
                if lingering or time.monotonic() >= stop_at + FINISH_S:
                    return
                continue
            msg, now = got
            await bot.common(msg, now)
            kind = msg["type"]
            if kind == "match_start":
                queued = False
                if msg["your_seat"] == 0:
                    seat0.add(msg["match_id"])
                    stats.starts += 1
                    processes = {where.get(seat["bot"], -1) for seat in msg["seats"]}
                    stats.cross += len(processes) > 1
            elif kind == "match_end" and msg["match_id"] in seat0:
                seat0.discard(msg["match_id"])
                stats.matches += 1
            elif kind == "left":
                queued = False
            again = started and kind in ("match_end", "left") and now < stop_at
            if again and not queued and not bot.playing:
                queued = True
                await bot.send({"type": "join", "game": SCALE_GAME})


@dataclass
class Job:
    """One worker's bots: ``kind`` "pair" (url, token, url, token, name of the second) or
    "lobby" (url, token)."""

    kind: str
    bots: Sequence[tuple[str, ...]]
    think_s: float
    start_at: float
    play_at: float
    stop_at: float
    where: dict[str, int] = field(default_factory=dict)


async def _job(job: Job) -> Stats:
    stats = Stats()
    await asyncio.sleep(max(0.0, job.start_at - time.monotonic()))

    async def guarded(coroutine: Any) -> None:
        try:
            await asyncio.wait_for(coroutine, job.stop_at + FINISH_S - time.monotonic())
        except (TimeoutError, OSError, websockets.exceptions.WebSocketException) as exc:
            stats.errors[f"bot:{type(exc).__name__}"] += 1

    async def after(welcome: asyncio.Event, coroutine: Any) -> None:
        try:
            await asyncio.wait_for(welcome.wait(), job.stop_at - time.monotonic())
        except TimeoutError:
            coroutine.close()
            stats.errors["bot:opponent never logged in"] += 1
            return
        await coroutine

    tasks = []
    if job.kind == "pair":
        for first_url, first, second_url, second, second_name in job.bots:
            welcome = asyncio.Event()
            opponent = _opponent(second_url, second, job.think_s, job.stop_at, stats, welcome)
            tasks.append(asyncio.create_task(guarded(opponent)))
            # A challenger once its opponent has logged in (on another process, the login
            # may still be crossing the bus: the challenger tries again on unknown_bot).
            challenger = _challenger(first_url, first, second_name, job.think_s, job.stop_at, stats)
            tasks.append(asyncio.create_task(guarded(after(welcome, challenger))))
    else:
        for url, token in job.bots:
            lobby = _lobby_bot(url, token, job.where, job.think_s, job.play_at, job.stop_at, stats)
            tasks.append(asyncio.create_task(guarded(lobby)))
    await asyncio.gather(*tasks)
    return stats


def _worker(job: Job, out: Any) -> None:
    out.put(asyncio.run(_job(job)))


def run_jobs(jobs: list[Job]) -> Stats:
    """Every job in a worker process of its own; their stats merged."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(job, out)) for job in jobs]
    for w in workers:
        w.start()
    merged = Stats()
    wait = max(job.stop_at for job in jobs) - time.monotonic() + FINISH_S + 120
    for _ in workers:
        merged.merge(out.get(timeout=wait))
    for w in workers:
        w.join()
    return merged


# --- servers and CPU ----------------------------------------------------------------------------


class Cpu:
    """CPU seconds of the server processes and of the database server, read at given moments
    by threads (the bots' workers own the main thread's time meanwhile)."""

    def __init__(self, procs: list[subprocess.Popen[bytes]], store: Store) -> None:
        self.servers = [psutil.Process(p.pid) for p in procs]
        self.store = store
        self.marks: dict[str, tuple[float, float, float]] = {}
        self.threads: list[threading.Thread] = []

    def read(self) -> tuple[float, float, float]:
        """(wall, servers' CPU, database's CPU)."""
        servers = 0.0
        for server in self.servers:
            t = server.cpu_times()
            servers += t.user + t.system
        return time.monotonic(), servers, self.store.cpu_seconds()

    def mark_at(self, at: float, key: str) -> None:
        def mark() -> None:
            time.sleep(max(0.0, at - time.monotonic()))
            self.marks[key] = self.read()

        thread = threading.Thread(target=mark, daemon=True)
        thread.start()
        self.threads.append(thread)

    def between(self, a: str, b: str) -> tuple[float, float, float]:
        """(wall s, servers' CPU s, database CPU s) from mark ``a`` to mark ``b``."""
        for thread in self.threads:
            thread.join()
        (wa, sa, da), (wb, sb, db) = self.marks[a], self.marks[b]
        return wb - wa, sb - sa, db - da


@contextmanager
def cluster(db_url: str, count: int, workdir: Path, name: str) -> Iterator[Any]:
    """``count`` ``arena serve`` processes on ``db_url``: yields (procs, ws urls)."""
    ports = [free_port() for _ in range(count)]
    procs = [_serve(db_url, port, workdir, f"{name}-p{i}") for i, port in enumerate(ports)]
    try:
        for port, proc in zip(ports, procs, strict=True):
            asyncio.run(_serving(port, proc))
        yield procs, [f"ws://127.0.0.1:{port}/ws" for port in ports]
    finally:
        for proc in procs:
            _stop(proc, signal.SIGTERM)


def log_problems(workdir: Path) -> Counter[str]:
    """Error and warning lines of every server log in ``workdir``, counted by their text
    (digits blanked, so that one problem with many ids counts as one)."""
    found: Counter[str] = Counter()
    for log in sorted(workdir.glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if any(word in line for word in PROBLEMS):
                text = "".join("#" if c.isdigit() else c for c in line)
                found[f"{log.name.split('-p')[0]}: {text[:200]}"] += 1
    return found


def _latencies(stats: Stats, lo: float, hi: float) -> list[float]:
    received = {(m, p): t for m, p, t in stats.received}
    return sorted(
        (received[(m, p + 1)] - t) * 1000
        for m, p, t in stats.sent
        if lo <= t < hi and (m, p + 1) in received
    )


# --- latency ------------------------------------------------------------------------------------


@dataclass
class LatencyPhase:
    name: str
    p50_ms: float
    p99_ms: float
    samples: int
    moves_per_s: float
    cpu_ms_per_move: float
    db_ms_per_move: float
    stats: Stats


def _latency_phase(
    name: str, args: argparse.Namespace, tokens: list[str], names: list[str], urls: list[str],
    cpu: Cpu,
) -> LatencyPhase:  # fmt: skip
    pairs = []
    for k in range(args.pairs):
        first, second = 2 * k, 2 * k + 1
        home = urls[k % 2]
        away = urls[(k + 1) % 2] if name == "cross" else home
        pairs.append((home, tokens[first], away, tokens[second], names[second]))
    start_at = time.monotonic() + 2.0 + 0.3 * args.procs
    play_at = start_at + 1.0
    lo, hi = play_at + args.warmup, play_at + args.warmup + args.duration
    cpu.mark_at(lo, f"{name}-a")
    cpu.mark_at(hi, f"{name}-b")
    jobs = [
        Job("pair", pairs[i :: args.procs], args.think_ms / 1000, start_at, play_at, hi)
        for i in range(args.procs)
        if pairs[i :: args.procs]
    ]
    stats = run_jobs(jobs)
    latencies = _latencies(stats, lo, hi)
    _, servers, db = cpu.between(f"{name}-a", f"{name}-b")
    moves = sum(1 for _, _, t in stats.sent if lo <= t < hi)
    return LatencyPhase(
        name=name,
        p50_ms=statistics.median(latencies) if latencies else 0.0,
        p99_ms=_quantile(latencies, 0.99),
        samples=len(latencies),
        moves_per_s=moves / args.duration,
        cpu_ms_per_move=servers / moves * 1000 if moves else 0.0,
        db_ms_per_move=db / moves * 1000 if moves else 0.0,
        stats=stats,
    )


def latency_main(args: argparse.Namespace, store: Store, workdir: Path) -> str:
    runs: list[dict[str, LatencyPhase]] = []
    checks: list[str] = []
    for n in range(args.runs):
        name = f"lat{n}"
        db_url = store.url(name)
        tokens = asyncio.run(_create_bots(db_url, 2 * args.pairs, name))
        names = [f"{name}-{i:04d}" for i in range(2 * args.pairs)]
        phases: dict[str, LatencyPhase] = {}
        with cluster(db_url, 2, workdir, name) as (procs, urls):
            cpu = Cpu(procs, store)
            # Alternated, so that a drift of the machine's pace hits both alike.
            for phase in ("same", "cross") if n % 2 == 0 else ("cross", "same"):
                phases[phase] = _latency_phase(phase, args, tokens, names, urls, cpu)
                print(_latency_line(f"run {n + 1} {phase}", phases[phase]), flush=True)
        stored, by_status = asyncio.run(_stored_counts(db_url))
        sent = sum(p.stats.moves for p in phases.values())
        checks.append(
            f"run {n + 1}: moves sent {sent}, stored {stored}"
            f" ({'all stored' if sent == stored else 'MISMATCH'}); matches by status {by_status}"
        )
        runs.append(phases)
    return _latency_report(args, runs, checks)


def _latency_line(label: str, p: LatencyPhase) -> str:
    return (
        f"  {label:14} p50 {p.p50_ms:6.2f} ms  p99 {p.p99_ms:6.2f} ms  ({p.samples} moves; "
        f"{p.moves_per_s:.0f} moves/s; CPU per move {p.cpu_ms_per_move:.3f} ms servers + "
        f"{p.db_ms_per_move:.3f} ms database; matches {p.stats.matches}; challenges again after "
        f"unknown_bot {p.stats.retried}; errors "
        f"{dict(p.stats.errors) or 'none'})"
    )


def _latency_report(
    args: argparse.Namespace, runs: list[dict[str, LatencyPhase]], checks: list[str]
) -> str:
    med = statistics.median

    def figure(phase: str, get: Callable[[LatencyPhase], float]) -> float:
        return med([get(r[phase]) for r in runs])

    same_p99, cross_p99 = figure("same", lambda p: p.p99_ms), figure("cross", lambda p: p.p99_ms)
    added = [r["cross"].p99_ms - r["same"].p99_ms for r in runs]
    lines = [
        f"latency: 2 processes, {args.pairs} Connect Four pairs playing by challenge, think "
        f"{args.think_ms:g} ms (+-50%), {args.duration:g} s window after {args.warmup:g} s; "
        f"median of {args.runs}",
        f"  {'':8} {'p50 ms':>8} {'p99 ms':>8} {'moves/s':>8} {'CPU/move ms (servers+db)':>25}",
    ]
    for phase in ("same", "cross"):
        lines.append(
            f"  {phase:8} {figure(phase, lambda p: p.p50_ms):8.2f} "
            f"{figure(phase, lambda p: p.p99_ms):8.2f} "
            f"{figure(phase, lambda p: p.moves_per_s):8.0f} "
            f"{figure(phase, lambda p: p.cpu_ms_per_move):12.3f} + "
            f"{figure(phase, lambda p: p.db_ms_per_move):.3f}"
        )  # fmt: skip
    lines += [
        f"  added by the other process: p99 {cross_p99 - same_p99:+.2f} ms (goal <= 5 ms); "
        f"runs: {', '.join(f'{a:+.2f}' for a in added)}; p50 "
        f"{figure('cross', lambda p: p.p50_ms) - figure('same', lambda p: p.p50_ms):+.2f} ms",
        f"  CPU per move cross / same: "
        f"{_ratio(figure('cross', _total_cpu), figure('same', _total_cpu)):.2f}",
        *(f"  {c}" for c in checks),
    ]
    return "\n".join(lines)


def _total_cpu(p: LatencyPhase) -> float:
    return p.cpu_ms_per_move + p.db_ms_per_move


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


# --- scale --------------------------------------------------------------------------------------


@dataclass
class ScalePhase:
    processes: int
    mode: str
    bots: int
    moves_per_s: float
    p50_ms: float
    p99_ms: float
    #: Cores used over the play window: every server process together, the database server.
    servers_cores: float
    db_cores: float
    #: CPU per move (ms): every server process together, the database server.
    servers_ms: float
    db_ms: float
    #: Cores with no bot connected, per server process; the database server's.
    base_servers_cores: float
    base_db_cores: float
    #: CPU per connected idle bot, over the baseline (us per second): servers, database.
    idle_servers_us: float
    idle_db_us: float
    #: CPU per move less the baseline's and the idle bots' (ms): what one more move costs.
    marginal_servers_ms: float
    marginal_db_ms: float
    cross_share: float
    #: Whether every bot had its welcome before the idle window opened.
    settled: bool
    check: str
    stats: Stats


def _scale_phase(
    args: argparse.Namespace, store: Store, workdir: Path, name: str, n: int, mode: str
) -> ScalePhase:
    count = args.bots if mode == "saturation" else args.think_bots
    think_s = 0.0 if mode == "saturation" else args.scale_think_ms / 1000
    db_url = store.url(name)
    tokens = asyncio.run(_create_bots(db_url, count, name))
    where = {f"{name}-{i:04d}": i % n for i in range(count)}
    with cluster(db_url, n, workdir, name) as (procs, urls):
        cpu = Cpu(procs, store)
        base_at = time.monotonic() + 0.5
        # The workers spawn meanwhile (their CPU is not counted: only the servers' and the
        # database's are).
        connect_at = base_at + max(args.baseline, 1.5 + 0.3 * args.procs)
        idle_at = connect_at + args.settle
        play_at = idle_at + args.idle
        lo = play_at + args.warmup
        hi = lo + args.duration
        for key, at in (("base-a", base_at), ("base-b", connect_at), ("idle-a", idle_at),
                        ("idle-b", play_at), ("play-a", lo), ("play-b", hi)):  # fmt: skip
            cpu.mark_at(at, key)
        mine = [(urls[i % n], tokens[i]) for i in range(count)]
        jobs = [
            Job("lobby", mine[w :: args.procs], think_s, connect_at, play_at, hi, where)
            for w in range(args.procs)
            if mine[w :: args.procs]
        ]
        stats = run_jobs(jobs)
        base = cpu.between("base-a", "base-b")
        idle = cpu.between("idle-a", "idle-b")
        play = cpu.between("play-a", "play-b")
    stored, by_status = asyncio.run(_stored_counts(db_url))
    latencies = _latencies(stats, lo, hi)
    moves = sum(1 for _, _, t in stats.sent if lo <= t < hi)

    def per_bot_us(i: int) -> float:
        over = idle[i] / idle[0] - base[i] / base[0]
        return over / count * 1e6

    def marginal_ms(i: int) -> float:
        # An idle bot's figure is noise at a few bots: counted only when positive.
        fixed = base[i] / base[0] + count * max(0.0, per_bot_us(i)) / 1e6
        return (play[i] / play[0] - fixed) / moves * play[0] * 1000 if moves else 0.0

    return ScalePhase(
        processes=n,
        mode=mode,
        bots=count,
        moves_per_s=moves / play[0],
        p50_ms=statistics.median(latencies) if latencies else 0.0,
        p99_ms=_quantile(latencies, 0.99),
        servers_cores=play[1] / play[0],
        db_cores=play[2] / play[0],
        servers_ms=play[1] / moves * 1000 if moves else 0.0,
        db_ms=play[2] / moves * 1000 if moves else 0.0,
        base_servers_cores=base[1] / base[0] / n,
        base_db_cores=base[2] / base[0],
        idle_servers_us=per_bot_us(1),
        idle_db_us=per_bot_us(2),
        marginal_servers_ms=marginal_ms(1),
        marginal_db_ms=marginal_ms(2),
        cross_share=stats.cross / stats.starts if stats.starts else 0.0,
        settled=0 < stats.last_welcome <= idle_at,
        check=f"moves sent {stats.moves}, stored {stored} "
        f"({'all stored' if stats.moves == stored else 'MISMATCH'}); matches by status "
        f"{by_status}",
        stats=stats,
    )


def scale_main(args: argparse.Namespace, store: Store, workdir: Path) -> str:
    phases: list[ScalePhase] = []
    for run in range(args.runs):
        # Alternated, so that a drift of the machine's pace hits every count alike.
        counts = args.processes if run % 2 == 0 else args.processes[::-1]
        for mode in ("saturation", "thinking") if run % 2 == 0 else ("thinking", "saturation"):
            for n in counts:
                name = f"s{run}{mode[0]}{n}"
                phase = _scale_phase(args, store, workdir, name, n, mode)
                phases.append(phase)
                print(
                    f"  run {run + 1} {mode} {n} process(es): {phase.moves_per_s:.0f} moves/s, "
                    f"p99 {phase.p99_ms:.1f} ms, CPU per move {phase.servers_ms:.3f} + "
                    f"{phase.db_ms:.3f} ms, cross {phase.cross_share:.0%}, idle bot "
                    f"{phase.idle_servers_us:.1f} + {phase.idle_db_us:.1f} us/s; "
                    f"{phase.check}; errors {dict(phase.stats.errors) or 'none'}",
                    flush=True,
                )
    return _scale_report(args, phases)


def _scale_report(args: argparse.Namespace, phases: list[ScalePhase]) -> str:
    med = statistics.median

    def of(mode: str, n: int, get: Callable[[ScalePhase], float]) -> float:
        return med([get(p) for p in phases if p.mode == mode and p.processes == n])

    lines = [
        f"scale: 1 lobby ({SCALE_GAME}), bots spread evenly over the processes; saturation: "
        f"{args.bots} bots answering at once; thinking: {args.think_bots} bots answering after "
        f"{args.scale_think_ms:g} ms (+-50%); {args.duration:g} s window after {args.warmup:g} s; "
        f"median of {args.runs}",
    ]
    for mode in ("saturation", "thinking"):
        one = of(mode, args.processes[0], lambda p: p.moves_per_s)
        lines += [
            f"  {mode}:",
            f"  {'procs':>5} {'moves/s':>8} {'/ ' + str(args.processes[0]):>6} {'p50 ms':>7} "
            f"{'p99 ms':>7} {'servers %':>9} {'db %':>5} {'CPU/move ms':>17} {'cross':>6} "
            f"{'runs (moves/s)':>20}",
        ]
        for n in args.processes:
            runs = [p.moves_per_s for p in phases if p.mode == mode and p.processes == n]
            lines.append(
                f"  {n:5d} {of(mode, n, lambda p: p.moves_per_s):8.0f} "
                f"{_ratio(of(mode, n, lambda p: p.moves_per_s), one):6.2f} "
                f"{of(mode, n, lambda p: p.p50_ms):7.1f} {of(mode, n, lambda p: p.p99_ms):7.1f} "
                f"{of(mode, n, lambda p: p.servers_cores) * 100:9.0f} "
                f"{of(mode, n, lambda p: p.db_cores) * 100:5.0f} "
                f"{of(mode, n, lambda p: p.servers_ms):8.3f}+{of(mode, n, lambda p: p.db_ms):.3f} "
                f"{of(mode, n, lambda p: p.cross_share):6.0%} "
                f"{', '.join(f'{r:.0f}' for r in runs):>20}"
            )  # fmt: skip
        one_cpu = of(mode, args.processes[0], lambda p: p.servers_ms + p.db_ms)
        last = args.processes[-1]
        lines.append(
            f"  CPU per move {last} / {args.processes[0]} process(es): "
            f"{_ratio(of(mode, last, lambda p: p.servers_ms + p.db_ms), one_cpu):.2f} "
            "(the bus's cost, servers and database together)"
        )
    lines.append(
        "  idle connected bot (every mode and run, over the baseline): "
        + "; ".join(
            f"{n} process(es) {med([p.idle_servers_us for p in phases if p.processes == n]):.1f}"
            f" + {med([p.idle_db_us for p in phases if p.processes == n]):.1f} us/s"
            for n in args.processes
        )
        + " (servers + database); no bot connected: "
        + "; ".join(
            f"{n}: {med([p.base_servers_cores for p in phases if p.processes == n]) * 100:.1f}% "
            f"per process + "
            f"{med([p.base_db_cores for p in phases if p.processes == n]) * 100:.1f}% database"
            for n in args.processes
        )
    )
    unsettled = [p for p in phases if not p.settled]
    if unsettled:
        lines.append(
            f"  (!) {len(unsettled)} phase(s) had bots still logging in when the idle window "
            "opened: raise --settle"
        )
    lines += _paper(args, phases)
    errors: Counter[str] = Counter()
    for p in phases:
        errors += p.stats.errors
    lines += [f"  errors/abnormal endings: {dict(errors) or 'none'}"]
    lines += [f"  {p.mode} {p.processes}: {p.check}" for p in phases if "MISMATCH" in p.check]
    return "\n".join(lines)


def _slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through (x, y); flat (the mean) for one x
    or a slope below 0."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    if not spread:
        return my, 0.0
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread
    if slope <= 0:
        # Noise, not a database that gets cheaper with more listeners: the mean, flat.
        return my, 0.0
    return my - slope * mx, slope


def _paper(args: argparse.Namespace, phases: list[ScalePhase]) -> list[str]:
    """10,000 concurrent bots that think like the thinking bots: processes and cores.

    From the thinking runs: moves per second per bot, and the marginal CPU per move (less the
    baseline's and the idle bots' CPU) with 1 process (``local``) and with N > 1, where a share
    ``s`` of the matches have a bot on another process (about 1 - 1/N with one lobby). A
    relayed match's extra CPU per move, ``(cpu(N) - local) / s``: constant for the servers
    (each process hears only its own channels); for the database it may grow with N (every
    listening backend reads every notification), so a line through N. At P processes,
    s = 1 - 1/P. Plus the idle bots' and the processes' own CPU."""
    med = statistics.median
    thinking = [p for p in phases if p.mode == "thinking"]
    ns = sorted({p.processes for p in thinking})
    if 1 not in ns:
        return ["  on paper: needs a thinking run with 1 process (--processes 1,...)"]

    def per_n(n: int, get: Callable[[ScalePhase], float]) -> float:
        return med([get(p) for p in thinking if p.processes == n])

    local_servers = per_n(1, lambda p: p.marginal_servers_ms)
    local_db = per_n(1, lambda p: p.marginal_db_ms)
    many = [n for n in ns if n > 1 and per_n(n, lambda p: p.cross_share) > 0]
    relay_servers = med(
        [(per_n(n, lambda p: p.marginal_servers_ms) - local_servers)
         / per_n(n, lambda p: p.cross_share) for n in many]
    ) if many else 0.0  # fmt: skip
    db_ys = [
        (per_n(n, lambda p: p.marginal_db_ms) - local_db) / per_n(n, lambda p: p.cross_share)
        for n in many
    ]
    db_at, db_per = _slope([float(n) for n in many], db_ys) if many else (0.0, 0.0)
    relay_servers = max(0.0, relay_servers)

    def relay_db(n: int) -> float:
        return max(0.0, db_at + db_per * n)

    per_bot = med([p.moves_per_s / p.bots for p in thinking])
    idle_servers = max(0.0, med([p.idle_servers_us for p in phases])) / 1e6
    idle_db = max(0.0, med([p.idle_db_us for p in phases])) / 1e6
    base_servers = med([p.base_servers_cores for p in phases])
    base_db = med([p.base_db_cores for p in phases])
    moves = TARGET_BOTS * per_bot

    def servers_cores(n: int) -> float:
        per_move = local_servers + (1 - 1 / n) * relay_servers
        return moves * per_move / 1000 + TARGET_BOTS * idle_servers + n * base_servers

    processes = 1
    while servers_cores(processes) > processes * PLANNED_LOAD and processes < 1000:
        processes += 1
    servers = servers_cores(processes)
    share = 1 - 1 / processes

    def db_cores(relay_ms: float) -> tuple[float, float]:
        per_move = local_db + share * relay_ms
        return per_move, moves * per_move / 1000 + TARGET_BOTS * idle_db + base_db

    # Two readings of the database's cost: a relayed move's as measured (flat), and growing
    # with the processes as the line through the counts measured says (every listening
    # backend reads every notification), the second a line through two or three noisy points
    # carried far: a bound to check, not a figure.
    flat_ms, flat = db_cores(statistics.fmean(db_ys) if db_ys else 0.0)
    grown_ms, grown = db_cores(relay_db(processes))
    return [
        f"  on paper, {TARGET_BOTS:,} concurrent bots thinking {args.scale_think_ms:g} ms "
        f"(+-50%): {per_bot:.2f} moves/s per bot measured -> {moves:,.0f} moves/s. Marginal CPU "
        f"per move (thinking runs, less the baseline and the idle bots): "
        + ", ".join(
            f"{n}: {per_n(n, lambda p: p.marginal_servers_ms):.3f}+"
            f"{per_n(n, lambda p: p.marginal_db_ms):.3f} ms"
            for n in ns
        )
        + f" (servers+database); a relayed match adds {relay_servers:.3f} ms per move to the "
        f"servers and {relay_db(2):.3f} ms at 2 processes ({db_per * 1000:.1f} us more per "
        f"process) to the database; an idle bot {idle_servers * 1e6:.1f}+{idle_db * 1e6:.1f} "
        f"us/s; a process with no bot {base_servers * 100:.1f}% of a core"
        + ("" if many else " (no thinking run with more than 1 process: relays not counted)")
        + ("" if processes < 1000 else " (NO SOLUTION under 1000 processes)"),
        f"  -> {processes} processes ({share:.0%} of the matches relayed; each event loop "
        f"planned at {PLANNED_LOAD:.0%} of a core: {servers:.1f} cores for them) + PostgreSQL "
        f"{flat:.1f} cores ({flat_ms:.3f} ms per move) = {math.ceil(servers + flat)} cores, the "
        f"bots apart; if a relayed move's database cost grows with the processes as measured "
        f"from {ns[0]} to {ns[-1]}: PostgreSQL {grown:.1f} cores ({grown_ms:.3f} ms per move), "
        f"{math.ceil(servers + grown)} in all",
    ]


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.processes", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "part", nargs="?", choices=["latency", "scale", "both"], default="both",
        help="which goal to measure (default both)",
    )  # fmt: skip
    parser.add_argument("--runs", type=int, default=3, help="runs (medians are shown)")
    parser.add_argument("--duration", type=float, default=20.0, help="measured window, s")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds not measured")
    parser.add_argument("--procs", type=int, default=2, help="bot worker processes")
    parser.add_argument("--workdir", type=Path, help="keep the server logs here")
    latency = parser.add_argument_group("latency")
    latency.add_argument("--pairs", type=int, default=30, help="concurrent matches (pairs)")
    latency.add_argument("--think-ms", type=float, default=20.0, help="their bots' think")
    scale = parser.add_argument_group("scale")
    scale.add_argument("--bots", type=int, default=400, help="bots at saturation")
    scale.add_argument("--think-bots", type=int, default=200, help="thinking bots")
    scale.add_argument(
        "--scale-think-ms", type=float, default=200.0, help="the thinking bots' think"
    )
    scale.add_argument(
        "--processes", default="1,2,3", help="counts of server processes (default 1,2,3)"
    )
    scale.add_argument(
        "--baseline", type=float, default=3.0, help="window with no bot connected, s"
    )
    scale.add_argument("--settle", type=float, default=5.0, help="for every bot to log in, s")
    scale.add_argument("--idle", type=float, default=10.0, help="window with idle bots, s")
    args = parser.parse_args(argv)
    args.processes = [int(n) for n in args.processes.split(",")]
    print(f"bench.processes: {machine_line()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-processes-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        with open_store("postgresql", workdir) as store:
            print(f"PostgreSQL {store.version}, durable defaults (bench/_stores.py)", flush=True)
            texts = []
            if args.part in ("latency", "both"):
                texts.append(latency_main(args, store, workdir))
            if args.part in ("scale", "both"):
                texts.append(scale_main(args, store, workdir))
        problems = log_problems(workdir)
    print()
    print("\n\n".join(texts))
    print(
        "server logs: "
        + (
            "no error or warning line"
            if not problems
            else f"{sum(problems.values())} error/warning lines:\n"
            + "\n".join(f"  {count} x {line}" for line, count in problems.most_common(15))
        )
    )
    if args.workdir:
        print(f"logs kept in {args.workdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
