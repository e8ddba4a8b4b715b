"""How long a restart costs a server with matches under way (issue 21's goal: <= 5 s to every
resumed match's next turn with 200 running matches).

    python -m bench.restart                       # 200 matches, kill -9, SQLite; median of 3
    python -m bench.restart --store both --runs 3 --signal term

Each run: ``arena serve`` (a subprocess) on a fresh database; ``2 x matches`` bots (one asyncio
process of raw ``websockets`` clients, no kit) join the Connect Four queue at 60 s a move, play
the first four plies at once and then hold their turns, so every match is running with moves
stored; the server is stopped (``--signal kill``: kill -9, a crash; ``term``: a clean stop) and
a new one is started on the same database and port. The bots reconnect every 50 ms until one
answers. Measured from the new process's start:

- ``serving``: the port answers ``/api/health`` (migrations, loading, resuming every match);
- ``logged in``: every bot has its ``welcome`` again;
- ``turns``: every resumed match's next ``turn`` has reached its bot (the match waits for both
  bots, then sends it): **the figure of the goal**.

The peer, in the same run: the same restart of a server with the same bots and no match running
(every match aborted by hand first), to ``logged in``. The ratio says what resuming adds to a
plain restart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

from bench._stores import Store, add_store_argument, open_store, stores
from bench.server import _create_bots, free_port

GAME = "connect_four"
#: Plies each match plays at once before its bots hold their turns.
PLAYED = 4
RECONNECT_S = 0.05


@dataclass
class Bots:
    """Every bot's state, shared by the clients of one run."""

    tokens: list[str]
    url: str
    #: 0: playing the first plies; 1: after the restart (hold nothing, just note turns).
    phase: int = 0
    held: set[str] = field(default_factory=set)
    logged_in: set[int] = field(default_factory=set)
    turns_after: set[str] = field(default_factory=set)
    logged_in_at: float | None = None
    turns_at: float | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)


async def _client(bots: Bots, i: int, matches: int) -> None:
    hello = json.dumps({"type": "hello", "protocol": 1, "token": bots.tokens[i], "client": "bench"})
    join = json.dumps(
        {"type": "join", "game": GAME, "time_control": {"move_ms": 60_000, "bank_ms": 0}}
    )
    while True:
        try:
            async with websockets.connect(bots.url, open_timeout=5, max_size=None) as ws:
                await ws.send(hello)
                async for raw in ws:
                    message = json.loads(raw)
                    kind = message["type"]
                    if kind == "ping":
                        await ws.send(json.dumps({"type": "pong", "id": message["id"]}))
                    elif kind == "welcome":
                        bots.logged_in.add(i)
                        if bots.phase == 0 and not message["matches"]:
                            await ws.send(join)
                        if len(bots.logged_in) == len(bots.tokens):
                            bots.logged_in_at = time.monotonic()
                        bots.changed.set()
                    elif kind == "turn":
                        match_id = message["match_id"]
                        if bots.phase == 1:
                            bots.turns_after.add(match_id)
                            if len(bots.turns_after) == matches:
                                bots.turns_at = time.monotonic()
                            bots.changed.set()
                        elif message["ply"] < PLAYED:
                            move = message["legal_moves"][0]
                            answer = {"type": "move", "match_id": match_id, "ply": message["ply"]}
                            await ws.send(json.dumps({**answer, "move": move}))
                        else:
                            bots.held.add(match_id)
                            bots.changed.set()
        except (OSError, websockets.WebSocketException, TimeoutError):
            pass
        bots.logged_in.discard(i)
        await asyncio.sleep(RECONNECT_S)


async def _until(bots: Bots, ready: Any, timeout: float, what: str) -> None:
    async with asyncio.timeout(timeout):
        while not ready():
            bots.changed.clear()
            await bots.changed.wait()
    del what


def _serve(
    db_url: str, port: int, workdir: Path, name: str, **settings: str
) -> subprocess.Popen[bytes]:
    """``arena serve`` with ``ARENA_<NAME>`` settings (and the bench's admin token, no house
    bots)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_ADMIN_TOKEN="bench-admin", ARENA_HOUSE_BOTS="none")
    env.update({f"ARENA_{k.upper()}": v for k, v in settings.items()})
    log = (workdir / f"{name}.log").open("ab")
    cmd = [sys.executable, "-m", "ply_arena", "serve", "--port", str(port), "--db", db_url]
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)


async def _serving(port: int, proc: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient(timeout=1) as http:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"arena serve exited with {proc.returncode}")
            try:
                if (await http.get(f"http://127.0.0.1:{port}/api/health")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.01)


def _stop(proc: subprocess.Popen[bytes], how: signal.Signals) -> None:
    proc.send_signal(how)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@dataclass
class Run:
    serving_s: float
    logged_in_s: float
    turns_s: float | None


async def _one(
    store: Store, workdir: Path, name: str, matches: int, how: signal.Signals, resume: bool
) -> Run:
    db_url = store.url(name)
    tokens = await _create_bots(db_url, 2 * matches, name)
    port = free_port()
    bots = Bots(tokens, f"ws://127.0.0.1:{port}/ws")
    proc = _serve(db_url, port, workdir, name)
    clients: list[asyncio.Task[None]] = []
    try:
        await _serving(port, proc)
        clients = [asyncio.create_task(_client(bots, i, matches)) for i in range(len(tokens))]
        await _until(bots, lambda: len(bots.held) == matches, 300, "every match under way")
        if not resume:
            async with httpx.AsyncClient(timeout=60) as http:
                headers = {"Authorization": "Bearer bench-admin"}
                url = f"http://127.0.0.1:{port}/api/matches/abort"
                aborted = (await http.post(url, json={"all": True}, headers=headers)).json()
            assert len(aborted["aborted"]) == matches, aborted
        await asyncio.to_thread(_stop, proc, how)
        bots.phase = 1
        bots.logged_in.clear()
        bots.logged_in_at = None
        started = time.monotonic()
        proc = _serve(db_url, port, workdir, name)
        await _serving(port, proc)
        serving = time.monotonic() - started
        await _until(bots, lambda: bots.logged_in_at is not None, 120, "every bot back")
        assert bots.logged_in_at is not None
        turns: float | None = None
        if resume:
            await _until(bots, lambda: bots.turns_at is not None, 120, "every resumed turn")
            assert bots.turns_at is not None
            turns = bots.turns_at - started
        return Run(serving, bots.logged_in_at - started, turns)
    finally:
        for task in clients:
            task.cancel()
        await asyncio.gather(*clients, return_exceptions=True)
        _stop(proc, signal.SIGTERM)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="running matches (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="runs per store (the median is shown)")
    parser.add_argument(
        "--signal", choices=["kill", "term"], default="kill", help="how the server is stopped"
    )
    add_store_argument(parser, "the database")
    args = parser.parse_args(argv)
    how = signal.SIGKILL if args.signal == "kill" else signal.SIGTERM
    for kind in stores(args):
        with (
            tempfile.TemporaryDirectory(prefix="bench-restart-") as tmp,
            open_store(kind, Path(tmp)) as store,
        ):
            resumed: list[Run] = []
            plain: list[Run] = []
            for n in range(args.runs):
                # Alternated, so that a drift of the machine's pace hits both alike.
                plain.append(asyncio.run(_one(store, Path(tmp), f"p{n}", args.matches, how, False)))
                resumed.append(
                    asyncio.run(_one(store, Path(tmp), f"r{n}", args.matches, how, True))
                )
            _report(kind, args, resumed, plain)


def _report(kind: str, args: argparse.Namespace, resumed: list[Run], plain: list[Run]) -> None:
    med = statistics.median
    turns = med([r.turns_s for r in resumed if r.turns_s is not None])
    peer = med([r.logged_in_s for r in plain])
    print(
        f"{kind}: {args.matches} matches, {2 * args.matches} bots, stopped with {args.signal}; "
        f"median of {args.runs}"
    )
    print(
        f"  resuming: serving {med([r.serving_s for r in resumed]):.2f} s, every bot back "
        f"{med([r.logged_in_s for r in resumed]):.2f} s, every resumed turn {turns:.2f} s "
        f"(goal <= 5 s); runs: {', '.join(f'{r.turns_s:.2f}' for r in resumed)}"
    )
    print(
        f"  peer (nothing to resume): serving {med([r.serving_s for r in plain]):.2f} s, every "
        f"bot back {peer:.2f} s"
    )
    print(f"  ratio: every resumed turn / a plain restart's every bot back = {turns / peer:.2f}")


if __name__ == "__main__":
    main()
