"""Spectators: how fast 500 spectators of 20 live matches get each move, and what they cost the
players, in one run of a real server.

    python -m bench.spectators             # 20 backgammon matches, 500 spectators: ~2.5 minutes
    python -m bench.spectators --quick     # a smoke run: 4 matches, 40 spectators, ~30 s

One ``arena serve`` subprocess on a fresh SQLite file (no house bots) plays ``--matches``
matches for the whole run: 2 x ``--matches`` bots in a worker process (bench/server.py's bots:
they think ``--think-ms`` +-50%, answer with a random legal move, and join again). The run is cut
into phases that alternate, ``--repeat`` times each, order alternating: **no spectators**, and
**spectators**: ``--spectators`` clients in ``--spec-procs`` worker processes
(bench/_spectator_clients.py) watching the running matches, each about as many, following one
match to its end and then another. Each phase's first ``--settle`` seconds are not measured
(spectators arriving or leaving).

Measured, every stamp ``time.monotonic()`` (one clock for all processes on Linux):

- spectators: a bot's move sent -> a spectator's ``move`` received, every seat move of every
  spectator in the spectator phases (an upper bound of "arrived at the server -> received");
- players: a bot's move sent -> the next ``turn`` of that match received (in backgammon after
  the dice), in every phase; the figure is the p99 with spectators minus the p99 without
  (medians over the phases of each kind), in the same run on the same matches.

The spectators' processes run at the lowest CPU priority (``SCHED_IDLE``) by default: they
stand for browsers on other machines, and their CPU is not the server's. ``--spectator-sched
normal --nice 0`` shows what sharing the two cores with them costs. The server's garbage
collections are timed too (a callback in ``gc.callbacks``, printed to its log): the pauses of
each phase are in the report, since a full young generation stops every match at once.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench import _spectator_clients as clients
from bench.server import BotStats, _create_bots, _worker, free_port, stop, wait_for_port


@dataclass
class Phase:
    name: str
    spectators: bool
    #: The whole phase, and its measured window (after the settling), on time.monotonic().
    start: float
    end: float
    measured: float


@dataclass
class PhaseResult:
    phase: Phase
    moves_per_s: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    samples: int
    cpu_percent: float
    watching: float  # mean spectators connected in the window
    gc_ms: float  # the server's garbage-collection pauses in the window: total
    gc_max_ms: float  # ... and the longest
    gc_counts: Counter[int]  # collections by generation


def timeline(args: argparse.Namespace, t0: float) -> list[Phase]:
    """The phases from ``t0``: no spectators / spectators, order alternating per repeat."""
    phases = []
    t = t0
    for i in range(args.repeat):
        kinds = [False, True] if i % 2 == 0 else [True, False]
        for with_spectators in kinds:
            name = f"{'spectators' if with_spectators else 'no spectators'} #{i + 1}"
            length = args.settle + args.phase
            phases.append(Phase(name, with_spectators, t, t + length, t + args.settle))
            t += length
    return phases


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of sorted ``values`` (0 for none)."""
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def player_latencies(stats: BotStats) -> dict[str, list[tuple[float, float]]]:
    """match id -> (send time, ms until that match's next turn arrived) for every move sent."""
    turns: dict[str, list[tuple[int, float]]] = {}
    for match_id, ply, t in stats.received:
        turns.setdefault(match_id, []).append((ply, t))
    for arrived in turns.values():
        arrived.sort()
    out: dict[str, list[tuple[float, float]]] = {}
    for match_id, ply, t in stats.sent:
        later = turns.get(match_id, [])
        i = bisect.bisect_right(later, (ply, float("inf")))
        if i < len(later):
            out.setdefault(match_id, []).append((t, (later[i][1] - t) * 1000))
    return out


def cpu_sampler(pid: int, stop_at: float) -> list[tuple[float, float]]:
    """(time, the server's CPU seconds so far) every 0.25 s until ``stop_at`` (in a thread)."""
    samples: list[tuple[float, float]] = []
    server = psutil.Process(pid)

    def run() -> None:
        while time.monotonic() < stop_at:
            try:
                cpu = server.cpu_times()
            except psutil.Error:
                return
            samples.append((time.monotonic(), cpu.user + cpu.system))
            time.sleep(0.25)

    threading.Thread(target=run, daemon=True).start()
    return samples


def cpu_percent(samples: list[tuple[float, float]], lo: float, hi: float) -> float:
    inside = [s for s in samples if lo <= s[0] <= hi]
    if len(inside) < 2:
        return 0.0
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    return (c1 - c0) / (t1 - t0) * 100 if t1 > t0 else 0.0


#: Run as the server's ``python -c``: ``arena serve``, with every garbage collection timed.
SERVER_MAIN = """
import gc, sys, time
started = [0.0]
def timed(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        pause = (time.perf_counter() - started[0]) * 1000
        print(f"gc-pause {info['generation']} {pause:.3f} {time.monotonic():.4f}", file=sys.stderr)
gc.callbacks.append(timed)
from ply_arena.server.cli import main
main()
"""


def gc_pauses(log: Path) -> list[tuple[float, float, int]]:
    """(monotonic time, ms, generation) of every garbage collection the server logged."""
    pauses = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("gc-pause "):
            _, generation, ms, at = line.split()
            pauses.append((float(at), float(ms), int(generation)))
    return pauses


def measure(
    phases: list[Phase],
    bots: BotStats,
    spectators: list[clients.SpectatorStats],
    cpu: list[tuple[float, float]],
    gc: list[tuple[float, float, int]],
) -> tuple[list[PhaseResult], list[float]]:
    """Each phase's players' latency, and every spectator latency sample (ms) in the spectator
    phases' windows."""
    latencies = [x for per in player_latencies(bots).values() for x in per]
    results = []
    for phase in phases:
        lo, hi = phase.measured, phase.end
        window = sorted(ms for t, ms in latencies if lo <= t < hi)
        connected = [n for s in spectators for t, n in s.connected if lo <= t < hi]
        per_process = max(1, len(spectators))
        pauses = [(ms, generation) for t, ms, generation in gc if lo <= t < hi]
        results.append(
            PhaseResult(
                phase=phase,
                moves_per_s=sum(1 for _, _, t in bots.sent if lo <= t < hi) / (hi - lo),
                p50_ms=statistics.median(window) if window else 0.0,
                p99_ms=percentile(window, 0.99),
                max_ms=window[-1] if window else 0.0,
                samples=len(window),
                cpu_percent=cpu_percent(cpu, lo, hi),
                watching=sum(connected) / max(1, len(connected)) * per_process,
                gc_ms=sum(ms for ms, _ in pauses),
                gc_max_ms=max((ms for ms, _ in pauses), default=0.0),
                gc_counts=Counter(generation for _, generation in pauses),
            )
        )
    sent_at = {(m, p): t for m, p, t in bots.sent}
    watched = []
    for stats in spectators:
        for match_id, ply, received in stats.moves:
            sent = sent_at.get((match_id, ply))
            if sent is None:
                continue
            if any(p.spectators and p.measured <= sent < p.end for p in phases):
                watched.append((received - sent) * 1000)
    return results, sorted(watched)


def report(
    args: argparse.Namespace,
    results: list[PhaseResult],
    watched: list[float],
    spectators: list[clients.SpectatorStats],
    bots: BotStats,
) -> str:
    lines = [
        f"bench.spectators: {args.matches} concurrent {args.game} matches of bots that think "
        f"{args.think_ms:g} ms (+-50%); {args.spectators} spectators in {args.spec_procs} "
        f"process(es) ({priority(args)}); {args.repeat} x 2 phases of {args.phase:g} s "
        f"(+{args.settle:g} s settling); {os.cpu_count()} cores, load average before: "
        f"{args.load_before}",
        "",
        f"{'phase':18} {'watching':>8} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
        f"{'samples':>8} {'CPU %':>6} {'GC ms':>6} {'GC max':>6}  GC by generation",
    ]
    for r in results:
        lines.append(
            f"{r.phase.name:18} {r.watching:8.0f} {r.moves_per_s:8.1f} {r.p50_ms:7.2f} "
            f"{r.p99_ms:7.2f} {r.max_ms:7.1f} {r.samples:8d} {r.cpu_percent:6.0f} "
            f"{r.gc_ms:6.1f} {r.gc_max_ms:6.1f}  {dict(sorted(r.gc_counts.items()))}"
        )
    without = [r for r in results if not r.phase.spectators]
    with_spectators = [r for r in results if r.phase.spectators]
    p99_without = statistics.median(r.p99_ms for r in without)
    p99_with = statistics.median(r.p99_ms for r in with_spectators)
    p50_without = statistics.median(r.p50_ms for r in without)
    p50_with = statistics.median(r.p50_ms for r in with_spectators)
    cpu_without = statistics.median(r.cpu_percent for r in without)
    cpu_with = statistics.median(r.cpu_percent for r in with_spectators)
    ratio = p99_with / p99_without if p99_without else 0.0
    lines += [
        "",
        f"players, move sent -> next turn received, medians of the phases: p99 "
        f"{p99_without:.2f} ms without spectators, {p99_with:.2f} ms with: "
        f"{p99_with - p99_without:+.2f} ms (x{ratio:.2f}; goal <= +2 ms); p50 "
        f"{p50_without:.2f} -> {p50_with:.2f} ms; server CPU {cpu_without:.0f}% -> "
        f"{cpu_with:.0f}%",
        f"spectators, move sent by a bot -> received by a spectator: p50 "
        f"{statistics.median(watched) if watched else 0:.2f} ms, p99 "
        f"{percentile(watched, 0.99):.2f} ms (goal <= 50 ms), max "
        f"{watched[-1] if watched else 0:.1f} ms, {len(watched)} samples",
    ]
    errors: Counter[str] = Counter()
    for s in spectators:
        errors += s.errors
    lines.append(
        f"spectators: {sum(s.snapshots for s in spectators)} snapshots (connections), "
        f"{sum(s.ends for s in spectators)} match ends seen, "
        f"{sum(s.frames for s in spectators)} messages; errors: {dict(errors) or 'none'}"
    )
    bot_errors = {k: v for k, v in bots.errors.items() if v}
    lines.append(
        f"bots: {bots.moves} moves, {bots.ended // 2} matches ended; errors/abnormal "
        f"endings: {bot_errors or 'none'}"
    )
    return "\n".join(lines)


def priority(args: argparse.Namespace) -> str:
    return "SCHED_IDLE" if args.spectator_sched == "idle" else f"nice {args.nice}"


def run(args: argparse.Namespace, workdir: Path) -> str:
    db_url = f"sqlite+aiosqlite:///{workdir / 'arena.db'}"
    tokens = asyncio.run(_create_bots(db_url, 2 * args.matches))
    port = free_port()
    env = dict(
        os.environ,
        ARENA_ADMIN_TOKEN="bench-admin",
        ARENA_HOUSE_BOTS="none",
        ARENA_MAX_SPECTATORS=str(2 * args.spectators + 100),
        ARENA_MAX_SPECTATORS_PER_MATCH=str(args.spectators + 1),
    )
    cmd = [sys.executable, "-c", SERVER_MAIN, "serve", "--port", str(port), "--db", db_url]
    log = (workdir / "server.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    try:
        wait_for_port(port, proc)
        ctx = mp.get_context("spawn")
        start_at = time.monotonic() + 2.0 + 0.3 * (1 + args.spec_procs)
        phases = timeline(args, start_at + args.warmup)
        stop_at = phases[-1].end
        cpu = cpu_sampler(proc.pid, stop_at)
        out = ctx.Queue()
        bot_proc = ctx.Process(
            target=_worker,
            args=(
                f"ws://127.0.0.1:{port}/ws",
                tokens,
                args.game,
                start_at,
                stop_at,
                args.think_ms / 1000,
                out,
            ),
        )
        spec_out = ctx.Queue()
        windows: list[tuple[float, float]] = []
        for phase in phases:
            if phase.spectators and windows and windows[-1][1] == phase.start:
                windows[-1] = (windows[-1][0], phase.end)  # back to back: they stay connected
            elif phase.spectators:
                windows.append((phase.start, phase.end))
        spec_procs = [
            ctx.Process(
                target=clients.worker,
                args=(
                    f"http://127.0.0.1:{port}",
                    f"ws://127.0.0.1:{port}/ws",
                    args.game,
                    args.spectators // args.spec_procs + (i < args.spectators % args.spec_procs),
                    windows,
                    args.spectator_sched,
                    args.nice,
                    spec_out,
                ),
            )
            for i in range(args.spec_procs)
        ]
        for p in (bot_proc, *spec_procs):
            p.start()
        duration = stop_at - time.monotonic()
        spectators: list[clients.SpectatorStats] = [
            spec_out.get(timeout=duration + 120) for _ in spec_procs
        ]
        bots: BotStats = out.get(timeout=duration + 180)
        for p in (bot_proc, *spec_procs):
            p.join()
    finally:
        stop(proc)
        log.close()
    results, watched = measure(phases, bots, spectators, cpu, gc_pauses(workdir / "server.log"))
    return report(args, results, watched, spectators, bots)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.spectators", description=__doc__)
    parser.add_argument("--matches", type=int, default=20, help="concurrent matches")
    parser.add_argument("--spectators", type=int, default=500, help="spectators at once")
    parser.add_argument("--game", default="backgammon", help="the matches' game")
    parser.add_argument("--think-ms", type=float, default=200.0, help="bots' thinking, +-50%%")
    parser.add_argument("--phase", type=float, default=12.0, help="measured seconds per phase")
    parser.add_argument("--settle", type=float, default=3.0, help="unmeasured start of a phase")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before the phases")
    parser.add_argument("--repeat", type=int, default=3, help="pairs of phases")
    parser.add_argument("--spec-procs", type=int, default=2, help="spectator processes")
    parser.add_argument(
        "--spectator-sched",
        choices=["idle", "normal"],
        default="idle",
        help="the spectator processes' scheduling: SCHED_IDLE (default), or normal with --nice",
    )
    parser.add_argument("--nice", type=int, default=0, help="with --spectator-sched normal")
    parser.add_argument("--quick", action="store_true", help="a smoke run of ~30 s")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.matches, args.spectators, args.spec_procs, args.think_ms = 4, 40, 1, 50.0
        args.phase, args.settle, args.warmup, args.repeat = 3.0, 1.0, 1.0, 1
    args.load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="bench-spectators-") as tmp:
        text = run(args, Path(tmp))
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
