"""The bus between the arena's processes (server/cluster/bus.py): a hop's latency and one-way
throughput on PostgreSQL's LISTEN/NOTIFY, against Redis pub/sub measured in the same run.

    python -m bench.bus                  # 3 runs, the two buses alternated; medians
    python -m bench.bus --runs 1 --hops 500 --messages 5000   # a quick look

Each bus is measured the same way, from one asyncio process with two bus objects on connections
of their own (as two processes would have them): a publisher and a subscriber.

- ``hop``: one message in flight at a time, from ``publish`` on the first bus to the handler's
  call on the second; p50 and p99 over ``--hops`` messages of a bot frame's size (300 bytes of
  JSON) and of 20 KB (a frame with a match's history: three NOTIFY parts on PostgreSQL).
  The CPU of this process and of the server per 300-byte hop: each message alone in its
  transaction or pipeline, the cost at light load.
- ``throughput``: ``--messages`` 300-byte messages published at once, to the last one handled:
  messages per second one way, and the CPU per message of this process and of the server
  (PostgreSQL's backends, or redis-server).

PostgreSQL: a throwaway cluster with its durable defaults (bench/_stores.py: fsync and
synchronous commits on), the bus as the arena runs it (server/cluster/bus_postgres.py: batches
of up to 500 notifications per transaction, ``synchronous_commit = off`` on its own
connection). Redis: Debian's ``redis-server`` on a free port, no persistence, and a bus of the
same shape written here for the comparison (the ``redis`` package's asyncio client; the same
batching: one pipeline per batch). Each again with ``--others`` more buses listening, each to a
channel of its own, as the other processes of an arena would (PostgreSQL's listening backends
all read every notification of the database server and keep those of their channels; Redis
sends a message to its channel's subscribers only). Two more rows: the PostgreSQL bus with
``synchronous_commit = on`` (PostgreSQL's default, what the bus turns off: each batch then waits
for a WAL flush, holding the database's notify lock), and the in-process ``LocalBus``'s hop, the
floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from bench._machine import machine_line
from bench._stores import open_store
from ply_arena.server.cluster.bus import (
    Bus,
    BusClosedError,
    LocalBus,
    Message,
    asyncpg_dsn,
    encode,
)
from ply_arena.server.cluster.bus_postgres import BATCH_MAX_PARTS, PostgresBus

FRAME_BYTES = 300
BIG_BYTES = 20_000


class DurablePostgresBus(PostgresBus):
    """The bus with PostgreSQL's default ``synchronous_commit = on``: each batch's commit waits
    for its WAL flush, holding the database's notify lock meanwhile (what the arena's bus
    turns off)."""

    async def _connect(self, role: str) -> Any:
        connection = await super()._connect(role)
        await connection.execute("SET synchronous_commit = on")
        return connection


class RedisBus(Bus):
    """The peer: the bus's interface on Redis pub/sub (one connection publishes in pipelines,
    one subscribes). For this comparison only: no reconnection."""

    def __init__(self, url: str) -> None:
        super().__init__()
        import redis.asyncio as redis

        self._publisher = redis.Redis.from_url(url)
        self._subscriber = redis.Redis.from_url(url)
        self._pubsub = self._subscriber.pubsub(ignore_subscribe_messages=True)
        self._outbox: deque[tuple[str, str]] = deque()
        self._mail = asyncio.Event()
        self._pending: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False

    async def start(self) -> None:
        await self._publisher.ping()
        self._started = True
        self._tasks.append(asyncio.create_task(self._send_loop()))

    async def close(self) -> None:
        self._started = False
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._pubsub.aclose()
        await self._publisher.aclose()
        await self._subscriber.aclose()

    def publish(self, channel: str, message: Message) -> None:
        text = encode(message)
        if not self._started:
            raise BusClosedError("not started")
        self._outbox.append((channel, text))
        self._mail.set()

    async def _send_loop(self) -> None:
        while True:
            if not self._outbox:
                self._mail.clear()
                await self._mail.wait()
                continue
            pipe = self._publisher.pipeline(transaction=False)
            for _ in range(min(len(self._outbox), BATCH_MAX_PARTS)):
                pipe.publish(*self._outbox.popleft())
            await pipe.execute()

    def _channel_added(self, channel: str) -> None:
        self._pending.add(channel)

    def _channel_removed(self, channel: str) -> None:
        self._pending.discard(channel)

    async def listening(self) -> None:
        if self._pending:
            await self._pubsub.subscribe(*self._pending)
            self._pending.clear()
        if len(self._tasks) == 1:
            self._tasks.append(asyncio.create_task(self._read_loop()))

    async def _read_loop(self) -> None:
        async for item in self._pubsub.listen():
            if item["type"] == "message":
                self._deliver(item["channel"].decode(), json.loads(item["data"]))


def run_async(coroutine: Any) -> Any:
    """On uvloop when it is installed, as the server runs (uvicorn's loop="auto")."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


class CpuMeter:
    """CPU seconds of a server's processes (a process and its children) over a window, counted
    per process alive at both ends: a backend that ended before (a previous measurement's
    connection, reaped meanwhile) must not count in this window."""

    def __init__(self, pid: int | None) -> None:
        self._root = psutil.Process(pid) if pid is not None else None

    def snapshot(self) -> dict[int, float]:
        if self._root is None:
            return {}
        seen = {}
        for process in [self._root, *self._root.children(recursive=True)]:
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            seen[process.pid] = times.user + times.system
        return seen

    def since(self, before: dict[int, float]) -> float:
        return sum(cpu - before.get(pid, 0.0) for pid, cpu in self.snapshot().items())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench.bus needs Debian's redis-server: apt-get install -y redis-server")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


def message(i: int, size: int) -> dict[str, Any]:
    """A frame-like message whose JSON is ``size`` bytes."""
    body: dict[str, Any] = {"type": "turn", "match": "Mx7Yq2aB9c", "ply": i, "pad": ""}
    body["pad"] = "x" * (size - len(encode(body)))
    return body


@dataclass
class Figures:
    p50_ms: dict[int, float]
    p99_ms: dict[int, float]
    per_s: float = 0.0
    client_us: float = 0.0  # this process's CPU per message
    server_us: float = 0.0  # the database's or redis-server's
    #: The same, per 300-byte hop (one message per transaction or pipeline: light load).
    hop_client_us: float = 0.0
    hop_server_us: float = 0.0


async def hops(publisher: Bus, subscriber: Bus, size: int, count: int) -> list[float]:
    """Seconds from publish to the handler's call, one message at a time."""
    got = asyncio.Event()
    arrived = 0.0

    def handler(_message: Message) -> None:
        nonlocal arrived
        arrived = time.perf_counter()
        got.set()

    unsubscribe = subscriber.subscribe(f"hop.{size}", handler)
    await subscriber.listening()
    times = []
    for i in range(count + count // 10):  # the first tenth warms up, not counted
        got.clear()
        sent = time.perf_counter()
        publisher.publish(f"hop.{size}", message(i, size))
        await asyncio.wait_for(got.wait(), 30)
        if i >= count // 10:
            times.append(arrived - sent)
    unsubscribe()
    return times


async def throughput(
    publisher: Bus, subscriber: Bus, count: int, server: CpuMeter
) -> tuple[float, float, float]:
    """(messages/s, this process's µs of CPU per message, the server's)."""
    done = asyncio.Event()
    seen = 0

    def handler(_message: Message) -> None:
        nonlocal seen
        seen += 1
        if seen == count:
            done.set()

    subscriber.subscribe("flow", handler)
    await subscriber.listening()
    messages = [message(i, FRAME_BYTES) for i in range(count)]
    cpu0, server0, t0 = time.process_time(), server.snapshot(), time.perf_counter()
    for m in messages:
        publisher.publish("flow", m)
    await asyncio.wait_for(done.wait(), 300)
    elapsed = time.perf_counter() - t0
    cpu, server_s = time.process_time() - cpu0, server.since(server0)
    return count / elapsed, 1e6 * cpu / count, 1e6 * server_s / count


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(
    make: Callable[[], Bus],
    args: argparse.Namespace,
    server: CpuMeter,
    others: int = 0,
) -> Figures:
    """The figures of one bus; ``others`` more buses listen meanwhile, each to a channel of its
    own, as the other processes of an arena would."""
    publisher = make()
    subscriber = publisher if isinstance(publisher, LocalBus) else make()
    await publisher.start()
    if subscriber is not publisher:
        await subscriber.start()
    bystanders = [make() for _ in range(others)]
    for i, bus in enumerate(bystanders):
        bus.subscribe(f"other.{i}", lambda _message: None)
        await bus.start()
        await bus.listening()
    try:
        figures = Figures({}, {})
        for size in (FRAME_BYTES, BIG_BYTES):
            cpu0, server0 = time.process_time(), server.snapshot()
            times = await hops(publisher, subscriber, size, args.hops)
            if size == FRAME_BYTES:
                count = args.hops + args.hops // 10
                figures.hop_client_us = 1e6 * (time.process_time() - cpu0) / count
                figures.hop_server_us = 1e6 * server.since(server0) / count
            figures.p50_ms[size] = 1000 * statistics.median(times)
            figures.p99_ms[size] = 1000 * percentile(times, 0.99)
        if not isinstance(publisher, LocalBus):
            figures.per_s, figures.client_us, figures.server_us = await throughput(
                publisher, subscriber, args.messages, server
            )
        return figures
    finally:
        for bus in [*bystanders, subscriber]:
            await bus.close()
        if subscriber is not publisher:
            await publisher.close()


def line(name: str, f: Figures) -> str:
    flow = (
        f"  {f.per_s:8,.0f} msg/s  CPU/msg: client {f.client_us:5.1f} µs, "
        f"server {f.server_us:5.1f} µs"
        if f.per_s
        else ""
    )
    return (
        f"{name:30} hop 300 B p50 {f.p50_ms[FRAME_BYTES]:.3f} p99 {f.p99_ms[FRAME_BYTES]:.3f} ms"
        f"  20 KB p50 {f.p50_ms[BIG_BYTES]:.3f} p99 {f.p99_ms[BIG_BYTES]:.3f} ms"
        f"  CPU/hop {f.hop_client_us:.0f}+{f.hop_server_us:.0f} µs{flow}"
    )


def table(results: dict[str, list[Figures]]) -> str:
    def med(values: list[float]) -> float:
        return statistics.median(values)

    rows = [
        "| bus | hop 300 B p50 / p99 | hop 20 KB p50 / p99 | CPU per hop: client, server "
        "| messages/s one way | CPU per message: client, server |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, runs in results.items():
        hop = " / ".join(
            f"{med([getattr(r, a)[FRAME_BYTES] for r in runs]):.3f}" for a in ("p50_ms", "p99_ms")
        )
        big = " / ".join(
            f"{med([getattr(r, a)[BIG_BYTES] for r in runs]):.3f}" for a in ("p50_ms", "p99_ms")
        )
        if runs[0].per_s:
            flow = ", ".join(f"{r.per_s:,.0f}" for r in runs)
            per_s = f"{med([r.per_s for r in runs]):,.0f} ({flow})"
            cpu = (
                f"{med([r.client_us for r in runs]):.1f} µs, "
                f"{med([r.server_us for r in runs]):.1f} µs"
            )
        else:
            per_s = cpu = ""
        hop_cpu = (
            f"{med([r.hop_client_us for r in runs]):.0f} µs, "
            f"{med([r.hop_server_us for r in runs]):.0f} µs"
        )
        rows.append(f"| {name} | {hop} ms | {big} ms | {hop_cpu} | {per_s} | {cpu} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bus", description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="runs, each bus once per run")
    parser.add_argument("--hops", type=int, default=3000, help="hops per message size")
    parser.add_argument("--messages", type=int, default=30_000, help="for the throughput")
    parser.add_argument(
        "--others", type=int, default=4, help="buses listening elsewhere, in the rows that say so"
    )
    args = parser.parse_args(argv)
    print(machine_line())
    results: dict[str, list[Figures]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="bench-bus-") as tmp,
        open_store("postgresql", Path(tmp)) as store,
    ):
        redis_proc, redis_url = start_redis(Path(tmp))
        try:
            dsn = asyncpg_dsn(store.url("bus"))
            postgres_cpu, redis_cpu = CpuMeter(store.server_pid()), CpuMeter(redis_proc.pid)

            def postgres() -> Bus:
                return PostgresBus(dsn)

            def redis() -> Bus:
                return RedisBus(redis_url)

            others = f"{args.others} other listeners"
            peers: list[tuple[str, Callable[[], Bus], CpuMeter, int]] = [
                ("PostgreSQL", postgres, postgres_cpu, 0),
                ("Redis", redis, redis_cpu, 0),
                (f"PostgreSQL, {others}", postgres, postgres_cpu, args.others),
                (f"Redis, {others}", redis, redis_cpu, args.others),
                ("PostgreSQL, sync commit", lambda: DurablePostgresBus(dsn), postgres_cpu, 0),
            ]
            results = {name: [] for name, *_ in peers} | {"LocalBus": []}
            print(f"PostgreSQL {store.version}, {subprocess.getoutput('redis-server --version')}")
            for run in range(args.runs):
                # Alternated: neither always runs first on a machine that warms up or gets busy.
                order = peers if run % 2 == 0 else peers[::-1]
                for name, make, cpu, n in order:
                    figures = run_async(measure(make, args, cpu, n))
                    results[name].append(figures)
                    print(f"run {run + 1}: {line(name, figures)}", flush=True)
                figures = run_async(measure(LocalBus, args, CpuMeter(None)))
                results["LocalBus"].append(figures)
                print(f"run {run + 1}: {line('LocalBus', figures)}", flush=True)
        finally:
            redis_proc.terminate()
            redis_proc.wait(10)
    print()
    print(f"medians of {args.runs} runs:")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
