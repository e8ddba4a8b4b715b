"""The spectators of ``python -m bench.spectators``: many asyncio ``websockets`` clients in one
worker process, watching live matches through ``/ws/watch/{match_id}``.

Each spectator watches only during the phases it is given. It picks a running match (from
``GET /api/matches?status=running``, fetched at most every 2 s per process) with the fewest
spectators of this process, watches it to its ``match_end`` (or until the phase ends), looks at
the result for 0.5-2 s (as a page would show it: a match's spectators do not all come back in
the same millisecond), then picks another. Every ``move`` of a seat is stamped on arrival with
``time.monotonic()`` (one clock for every process on Linux), to be joined with the bots' send
stamps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import connect


@dataclass
class SpectatorStats:
    #: (match_id, ply, monotonic time) of every seat's move received.
    moves: list[tuple[str, int, float]] = field(default_factory=list)
    #: (monotonic time, spectators connected in this process), sampled every 0.25 s.
    connected: list[tuple[float, int]] = field(default_factory=list)
    snapshots: int = 0
    ends: int = 0
    frames: int = 0
    errors: Counter[str] = field(default_factory=Counter)


#: How often a process asks the server for the running matches (each answer costs the server
#: a few milliseconds of its event loop, which the players would see).
REFRESH_S = 2.0


class _Picker:
    """Which running match a spectator of this process watches next."""

    def __init__(self, http: httpx.AsyncClient, game: str) -> None:
        self._http = http
        self._game = game
        self._live: list[str] = []
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()
        self.watching: Counter[str] = Counter()
        self.over: set[str] = set()

    async def pick(self) -> str | None:
        async with self._lock:
            if time.monotonic() - self._fetched_at > REFRESH_S:
                response = await self._http.get(
                    "/api/matches", params={"status": "running", "game": self._game, "limit": 200}
                )
                self._live = [m["id"] for m in response.json()["matches"]]
                self._fetched_at = time.monotonic()
        live = [m for m in self._live if m not in self.over]
        return min(live, key=lambda m: self.watching[m]) if live else None


async def _watch(
    ws_base: str, picker: _Picker, start: float, end: float, stats: SpectatorStats, live: list[int]
) -> None:
    """One spectator during one phase: watch match after match until ``end``."""
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    while time.monotonic() < end:
        match_id = await picker.pick()
        if match_id is None:
            await asyncio.sleep(0.2)
            continue
        picker.watching[match_id] += 1
        live[0] += 1
        ended = False
        try:
            async with (
                asyncio.timeout(max(0.01, end - time.monotonic())),
                connect(
                    f"{ws_base}/watch/{match_id}",
                    max_size=None,
                    ping_interval=None,
                    open_timeout=30,
                    close_timeout=2,
                ) as ws,
            ):
                async for frame in ws:
                    now = time.monotonic()
                    stats.frames += 1
                    message: dict[str, Any] = json.loads(frame)
                    kind = message["type"]
                    if kind == "move":
                        if message["seat"] is not None:
                            stats.moves.append((match_id, message["ply"], now))
                    elif kind == "watch_start":
                        stats.snapshots += 1
                        if message["status"] != "running":
                            picker.over.add(match_id)
                    elif kind == "match_end":
                        stats.ends += 1
                        picker.over.add(match_id)
                        ended = True
                    elif kind == "error":
                        stats.errors[message["code"]] += 1
        except TimeoutError:
            pass  # the phase is over
        except (OSError, websockets.exceptions.WebSocketException) as exc:
            stats.errors[f"client:{type(exc).__name__}"] += 1
            await asyncio.sleep(0.1)
        finally:
            picker.watching[match_id] -= 1
            live[0] -= 1
        if ended:
            await asyncio.sleep(min(random.uniform(0.5, 2.0), max(0.0, end - time.monotonic())))


async def _main(
    http_base: str, ws_base: str, game: str, count: int, phases: list[tuple[float, float]]
) -> SpectatorStats:
    stats = SpectatorStats()
    live = [0]

    async def sample() -> None:
        while True:
            stats.connected.append((time.monotonic(), live[0]))
            await asyncio.sleep(0.25)

    sampler = asyncio.create_task(sample())
    async with httpx.AsyncClient(base_url=http_base, timeout=30) as http:
        picker = _Picker(http, game)
        for start, end in phases:
            # Spread over half a second, as people arriving would be, not one burst.
            await asyncio.gather(
                *(
                    _watch(ws_base, picker, start + 0.5 * i / count, end, stats, live)
                    for i in range(count)
                )
            )
    sampler.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await sampler
    return stats


def worker(
    http_base: str,
    ws_base: str,
    game: str,
    count: int,
    phases: list[tuple[float, float]],
    sched: str,
    nice: int,
    out: Any,
) -> None:
    """A worker process: ``count`` spectators over ``phases`` ((start, end) on the monotonic
    clock), at the lowest CPU priority (``sched`` "idle") or at ``nice``; its stats go to the
    queue ``out``."""
    with contextlib.suppress(AttributeError, OSError):
        if sched == "idle":
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        else:
            os.nice(nice)
    out.put(asyncio.run(_main(http_base, ws_base, game, count, phases)))
