"""What an idle connected bot costs the server: CPU per second and memory, per bot.

    python -m bench.idle_bots                  # 1,000 bots, 30 s idle
    python -m bench.idle_bots --bots 2000 --duration 60 --heartbeat-s 15

A real ``arena serve`` subprocess on a fresh SQLite file (no house bots). First the server alone
(``--duration`` seconds: its CPU and RSS with nobody connected), then ``--bots`` bots in
``--procs`` worker processes connect, log in and each join a lobby queue where nobody else waits
(a time control of its own, so that no two of them are paired), then stay: they answer the
server's pings and send nothing else. Over ``--duration`` seconds of that the server's CPU time
and RSS are read (psutil); per bot = (connected - alone) / bots. The peer in the same run is the
empty server itself. Goals (issue 20): <= 50 us of CPU per second and <= 50 KB per idle bot.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from websockets.asyncio.client import connect

from bench.server import _create_bots, free_port, stop, wait_for_port
from ply_arena.protocol.messages import PROTOCOL_VERSION


async def _idle_bot(url: str, token: str, move_ms: int, ready: list[int], stop_at: float) -> None:
    async with connect(url, max_size=None, open_timeout=120, ping_interval=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "token": token}))
        join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": move_ms}}
        while time.monotonic() < stop_at:
            try:
                frame = await asyncio.wait_for(ws.recv(), max(0.01, stop_at - time.monotonic()))
            except TimeoutError:
                break
            msg = json.loads(frame)
            if msg["type"] == "welcome":
                await ws.send(json.dumps(join))
            elif msg["type"] == "joined":
                ready[0] += 1
            elif msg["type"] == "ping":
                await ws.send(json.dumps({"type": "pong", "id": msg["id"]}))
            elif msg["type"] in ("error", "match_start"):
                raise RuntimeError(f"an idle bot got {msg}")


def _worker(url: str, tokens: list[tuple[str, int]], stop_at: float, out: Any) -> None:
    async def main() -> int:
        ready = [0]
        await asyncio.gather(*(_idle_bot(url, t, ms, ready, stop_at) for t, ms in tokens))
        return ready[0]

    out.put(asyncio.run(main()))


def _cpu_s(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


def _window(proc: psutil.Process, seconds: float) -> tuple[float, float]:
    """The server's CPU (seconds per second) over ``seconds``, and its RSS (MB) at the end."""
    c0, w0 = _cpu_s(proc), time.monotonic()
    time.sleep(seconds)
    c1, w1 = _cpu_s(proc), time.monotonic()
    return (c1 - c0) / (w1 - w0), proc.memory_info().rss / 2**20


def run(args: argparse.Namespace, workdir: Path) -> str:
    db_url = f"sqlite+aiosqlite:///{workdir / 'idle.db'}"
    tokens = asyncio.run(_create_bots(db_url, args.bots, "idle"))
    port = free_port()
    env = dict(
        os.environ,
        ARENA_ADMIN_TOKEN="bench-admin",
        ARENA_HOUSE_BOTS="none",
        ARENA_HEARTBEAT_S=str(args.heartbeat_s),
    )
    cmd = [sys.executable, "-m", "ply_arena", "serve", "--port", str(port), "--db", db_url]
    log = (workdir / "idle.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, cwd=workdir)
    try:
        wait_for_port(port, proc)
        server = psutil.Process(proc.pid)
        time.sleep(2.0)  # start-up settles
        cpu_alone, rss_alone = _window(server, args.duration)
        url = f"ws://127.0.0.1:{port}/ws"
        # Every bot a time control of its own: alone in its queue, never paired.
        assigned = [(t, 1000 + i) for i, t in enumerate(tokens)]
        connect_s = 60.0
        stop_at = time.monotonic() + connect_s + args.duration + 5
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        workers = [
            ctx.Process(target=_worker, args=(url, assigned[i :: args.procs], stop_at, out))
            for i in range(args.procs)
        ]
        for w in workers:
            w.start()
        # Wait until every bot is in its queue (the server logs each login).
        deadline = time.monotonic() + connect_s
        while time.monotonic() < deadline:
            if (workdir / "idle.log").read_text(errors="replace").count(" login ") >= args.bots:
                break
            time.sleep(0.5)
        time.sleep(3.0)  # the joins that follow the last logins
        cpu_idle, rss_idle = _window(server, args.duration)
        joined = sum(out.get(timeout=args.duration + 120) for _ in workers)
        for w in workers:
            w.join()
    finally:
        stop(proc)
        log.close()
    n = args.bots
    per_bot_us = (cpu_idle - cpu_alone) / n * 1e6
    per_bot_kb = (rss_idle - rss_alone) * 1024 / n
    return "\n".join(
        [
            f"bench.idle_bots: {n} bots logged in, each alone in a lobby queue, heartbeat "
            f"{args.heartbeat_s:g} s, {args.duration:g} s windows, {os.cpu_count()} cores, "
            f"load average before: {args.load_before}",
            "",
            f"{'':18} {'server CPU %':>12} {'RSS MB':>8}",
            f"{'nobody connected':18} {cpu_alone * 100:12.2f} {rss_alone:8.1f}",
            f"{f'{n} idle bots':18} {cpu_idle * 100:12.2f} {rss_idle:8.1f}",
            "",
            f"per idle bot: {per_bot_us:.1f} us of server CPU per second (goal <= 50), "
            f"{per_bot_kb:.1f} KB of memory (goal <= 50); bots in a queue: {joined} of {n}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.idle_bots", description=__doc__)
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per window")
    parser.add_argument("--procs", type=int, default=2, help="bot worker processes")
    parser.add_argument("--heartbeat-s", type=float, default=15.0, help="ARENA_HEARTBEAT_S")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    args.load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as tmp:
        text = run(args, Path(tmp))
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
