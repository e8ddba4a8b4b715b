"""``python -m bench.match_life``: what one match's life costs the server, and where it goes.

Two bots play ``--matches`` tic-tac-toe matches one after the other against a real ``arena
serve`` (a fresh SQLite file, no house bots): both join, the match is paired, created and
announced, they answer every turn at once, the result is stored, rated and told, and they join
again. Nothing else runs, so the server's CPU between two events is the cost of what happened
between them. The server's CPU, every thread of it (the event loop's and the database driver's),
is read in nanoseconds from Linux's scheduler statistics (``/proc/PID/task/*/schedstat``) at:

- both joins sent -> the first turn received: the join, pairing, the match created (its row
  committed) and started (``match_start`` to both, the first ``turn``);
- a move sent -> the next turn received: one move (every move but the last);
- the last move sent -> ``match_end`` received by both: the last move, the end of the match,
  its result recorded and rated (one transaction), ``match_end`` to both.

A match's life is everything but the moves: the whole match's CPU less its moves, the last one
counted as a median move, less what the server spends idle over the same wall time (measured
first, with both bots connected and nothing to do). The peer, in the same run: the median move.

``--profile FILE`` also samples the server with py-spy (500 Hz, every thread) while the matches
are played, and splits the CPU by the innermost of our functions on each sample's stack into the
issue's phases: pairing, create, start, end, rating, record, and apart the moves, the database
commits (shared by whatever a batch holds), the database driver's thread, the frames read and
written (every message's), and the rest. Shares of samples times the measured CPU: an estimate,
where the totals above are measured.

    python -m bench.match_life --matches 300
    python -m bench.match_life --matches 300 --profile life.txt
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench._machine import machine_line
from bench.profile_summary import frame_name, read, unqualified
from bench.server import _create_bots, free_port, stop, wait_for_port
from ply_arena.protocol.messages import PROTOCOL_VERSION

GAME = "tic_tac_toe"


def server_cpu_ns(pid: int) -> int:
    """CPU time of every thread of process ``pid`` so far, in nanoseconds."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        # (a thread may end between the listing and the read)
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


class Bot:
    """One bot's connection; frames arrive in its queue."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for frame in self.ws:
            message = json.loads(frame)
            if message["type"] == "ping":
                await self.ws.send(json.dumps({"type": "pong", "id": message.get("id", 0)}))
            else:
                await self.frames.put(message)

    async def next(self, *kinds: str) -> dict[str, Any]:
        """The next frame of one of these kinds (others are skipped: ``joined``, ``welcome``)."""
        while True:
            message = await asyncio.wait_for(self.frames.get(), 30.0)
            if message["type"] == "error":
                raise RuntimeError(f"the server said: {message}")
            if message["type"] in kinds:
                return message

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))


@dataclass
class Figures:
    """CPU (ns) and wall time (s) of each measured stretch, over all matches."""

    start_cpu: list[int] = field(default_factory=list)
    move_cpu: list[int] = field(default_factory=list)
    end_cpu: list[int] = field(default_factory=list)
    match_cpu: list[int] = field(default_factory=list)
    match_wall: list[float] = field(default_factory=list)
    moves_per_match: list[int] = field(default_factory=list)
    #: Per match, the CPU of its moves but the last.
    moves_cpu: list[int] = field(default_factory=list)
    idle_ns_per_s: float = 0.0


async def _play_one(pid: int, bots: list[Bot], figures: Figures, rng: random.Random) -> None:
    t0, c0 = time.monotonic(), server_cpu_ns(pid)
    for bot in bots:
        await bot.send({"type": "join", "game": GAME})
    starts = [await bot.next("match_start") for bot in bots]
    first = next(i for i, s in enumerate(starts) if s["your_seat"] == 0)
    turn = await bots[first].next("turn")
    c = server_cpu_ns(pid)
    figures.start_cpu.append(c - c0)
    mover, moves, move_cpu = first, 0, 0
    while True:
        before = server_cpu_ns(pid)
        await bots[mover].send(
            {"type": "move", "match_id": turn["match_id"], "ply": turn["ply"],
             "move": rng.choice(turn["legal_moves"])}
        )  # fmt: skip
        moves += 1
        other = 1 - mover
        message = await bots[other].next("turn", "match_end")
        if message["type"] == "turn":
            spent = server_cpu_ns(pid) - before
            figures.move_cpu.append(spent)
            move_cpu += spent
            mover, turn = other, message
            continue
        await bots[mover].next("match_end")
        end = server_cpu_ns(pid)
        figures.end_cpu.append(end - before)
        figures.match_cpu.append(end - c0)
        figures.match_wall.append(time.monotonic() - t0)
        figures.moves_per_match.append(moves)
        figures.moves_cpu.append(move_cpu)
        return


async def _drive(url: str, tokens: list[str], pid: int, matches: int, idle_s: float) -> Figures:
    figures = Figures()
    rng = random.Random(1)
    sockets = [await connect(url, max_size=None, ping_interval=None) for _ in tokens]
    try:
        bots = [Bot(ws) for ws in sockets]
        for bot, token in zip(bots, tokens, strict=True):
            await bot.send({"type": "hello", "protocol": PROTOCOL_VERSION, "token": token})
            await bot.next("welcome")
        # The server's own idle cost (ticks, heartbeats) with both bots connected.
        t, c = time.monotonic(), server_cpu_ns(pid)
        await asyncio.sleep(idle_s)
        figures.idle_ns_per_s = (server_cpu_ns(pid) - c) / (time.monotonic() - t)
        for _ in range(min(20, matches)):  # warm-up: caches, the first compiled statements
            await _play_one(pid, bots, Figures(), rng)
        for _ in range(matches):
            await _play_one(pid, bots, figures, rng)
        for bot in bots:
            bot.reader.cancel()
    finally:
        for ws in sockets:
            await ws.close()
    return figures


#: Where a profile sample's CPU goes: the innermost of these frames on its stack decides.
_GROUPS: list[tuple[str, str, str]] = [
    # (function, file suffix, group)
    ("rate", "ratings/service.py", "rating"),
    ("", "ratings/model.py", "rating"),
    ("", "ratings/ledger.py", "rating"),
    ("finish_matches", "repositories/matches.py", "record"),
    ("finish_match", "repositories/matches.py", "record"),
    ("store_results", "ratings/service.py", "record"),
    ("store_result", "ratings/service.py", "record"),
    ("create_matches", "repositories/matches.py", "create"),
    ("create_match", "repositories/matches.py", "create"),
    ("record_moves", "repositories/matches.py", "moves"),
    ("record_move", "repositories/matches.py", "moves"),
    ("_commit", "db/recorder.py", "transactions (any batch)"),
    ("_commit_groups", "db/recorder.py", "transactions (any batch)"),
    ("_finish", "referee/match_runner.py", "end"),
    ("_match_start", "referee/match_runner.py", "start"),
    ("_play", "referee/match_runner.py", "moves"),
    ("submit", "referee/match_runner.py", "moves"),
    ("move", "referee/__init__.py", "moves"),
    ("run", "referee/match_runner.py", "start"),
    ("start_match", "referee/__init__.py", "create"),
    ("_finished", "referee/__init__.py", "end"),
    ("pair_queue", "referee/__init__.py", "pairing"),
    ("_pair_due", "referee/__init__.py", "pairing"),
    ("join", "referee/__init__.py", "pairing"),
    ("_write_loop", "ws/session.py", "frames in and out"),
    ("_read_loop", "ws/session.py", "frames in and out"),
    ("_connection_worker_thread", "aiosqlite/core.py", "database thread"),
    ("_serve", "db/writer_thread.py", "database thread"),
]
#: A thread blocked in C shows its last Python frame: the loop waiting for I/O, a pool thread
#: (aiosqlite's, the executor's) waiting for work.
_IDLE_TOPS = (
    "run (asyncio/runners.py)",
    "_connection_worker_thread (aiosqlite/core.py)",
    "_worker (concurrent/futures/thread.py)",
    "_serve (server/db/writer_thread.py)",  # the SQLite writer's thread waiting for a batch
)
#: The issue's phases of a match's life, in its order; the other groups are reported apart.
PHASES = ("pairing", "create", "start", "end", "rating", "record")
OTHERS = (
    "moves",
    "transactions (any batch)",
    "SQL in greenlets (any batch)",
    "database thread",
    "frames in and out",
    "other",
)


def group_of(stack: list[str]) -> str | None:
    """The group of one sample (None: idle), from the innermost frame that names one."""
    # py-spy names methods with their class (``MatchRunner._play``): the groups name functions.
    names = [unqualified(frame_name(f)) for f in stack]
    if not names or names[-1] in _IDLE_TOPS or names[-1].startswith(("select (", "poll (")):
        return None
    for name in reversed(names):
        for function, suffix, group in _GROUPS:
            func, _, path = name.partition(" (")
            if path.rstrip(")").endswith(suffix) and (not function or func == function):
                return group
    # SQLAlchemy's asyncio layer runs the statements in greenlets, whose stacks start there:
    # the function that issued them is not on the sample's stack.
    if any(n.startswith("_serve (") and n.endswith("db/writer_thread.py)") for n in names):
        return "database thread"
    if any("(sqlalchemy/" in n or "(aiosqlite/" in n for n in names):
        return "SQL in greenlets (any batch)"
    return "other"


def split(profile: Path) -> Counter[str]:
    """Busy samples per group."""
    counts: Counter[str] = Counter()
    for stack, n in read(profile):
        group = group_of(stack)
        if group is not None:
            counts[group] += n
    return counts


def _start_profiler(pid: int, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["py-spy", "record", "--pid", str(pid), "--rate", "500", "--format", "raw",
         "--threads", "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def measure(args: argparse.Namespace, workdir: Path) -> tuple[Figures, Counter[str] | None]:
    db_url = f"sqlite+aiosqlite:///{workdir / 'life.db'}"
    tokens = asyncio.run(_create_bots(db_url, 2, "life"))
    port = free_port()
    env = dict(os.environ, ARENA_ADMIN_TOKEN="bench-admin", ARENA_HOUSE_BOTS="none")
    log = (workdir / "server.log").open("wb")
    cmd = [sys.executable, "-m", "ply_arena", "serve", "--port", str(port), "--db", db_url]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    profiler = None
    try:
        wait_for_port(port, proc)
        if args.profile:
            profiler = _start_profiler(proc.pid, Path(args.profile))
        figures = asyncio.run(
            _drive(f"ws://127.0.0.1:{port}/ws", tokens, proc.pid, args.matches, args.idle)
        )
    finally:
        try:
            if profiler is not None:
                profiler.send_signal(2)  # py-spy writes its file on SIGINT
                _, err = profiler.communicate(timeout=60)
                if not Path(args.profile).exists():
                    raise RuntimeError(f"py-spy wrote no profile: {err.decode(errors='replace')}")
        finally:
            stop(proc)
            log.close()
    return figures, split(Path(args.profile)) if args.profile else None


def report(figures: Figures, groups: Counter[str] | None, matches: int) -> str:
    us = 1e-3  # ns -> us
    idle = figures.idle_ns_per_s
    move = statistics.median(figures.move_cpu)
    match = statistics.median(figures.match_cpu)
    wall = statistics.median(figures.match_wall)
    moves = statistics.median(figures.moves_per_match)
    # Per match: its CPU, less every move (the last one as a median move), less idle time.
    lives = [
        total - sum_moves - move - idle * w
        for total, sum_moves, w in zip(
            figures.match_cpu, figures.moves_cpu, figures.match_wall, strict=True
        )
    ]
    life = statistics.median(lives)
    rows = [
        ("join -> first turn (pairing, create, start)", statistics.median(figures.start_cpu)),
        ("one move (move sent -> next turn)", move),
        ("last move -> match_end (move, end, record, rating)", statistics.median(figures.end_cpu)),
        (f"whole match ({moves:.0f} moves, {wall * 1000:.1f} ms wall)", match),
    ]
    lines = [
        f"bench.match_life: {matches} {GAME} matches one after the other, two bots answering "
        f"at once; {machine_line()}",
        "",
        "server CPU, medians per match:",
        *(f"  {label:52} {value * us:7.0f} us" for label, value in rows),
        f"  {'idle server':52} {idle * us:7.0f} us/s",
        "",
        f"a match's life (all but its moves): {life * us:.0f} us (goal <= 2000 us); "
        f"{life / move:.1f} moves' worth",
    ]
    if groups:
        busy = sum(groups.values())
        per_match = match - idle * wall
        lines += [
            "",
            f"split by profile ({busy} busy samples; us per match = share x "
            f"{per_match * us:.0f} us):",
        ]
        for name in (*PHASES, *OTHERS):
            share = groups.get(name, 0) / busy
            lines.append(f"  {name:26} {share * 100:5.1f}%  {share * per_match * us:7.0f} us")
        phases = sum(groups.get(p, 0) for p in PHASES) / busy
        lines.append(f"  the six phases: {phases * 100:.1f}% ({phases * per_match * us:.0f} us)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of idle measurement")
    parser.add_argument("--profile", help="also sample the server with py-spy into this file")
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="match-life-") as tmp:
        figures, groups = measure(args, Path(tmp))
    text = report(figures, groups, args.matches)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
