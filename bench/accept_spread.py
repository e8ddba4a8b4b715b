"""How the kernel spreads new connections over two worker processes, for ``arena serve
--workers`` (server/workers.py): one listening socket shared by the workers (what it does) vs
SO_REUSEPORT (a socket per worker, connections spread by a hash of their addresses).

    python -m bench.accept_spread [--connections 400]

Each worker is an event loop (uvloop) that accepts and holds connections; in the "busy" runs
worker 1's loop is blocked 40 ms out of every 50 (as by heavy matches). A client opens the
connections one every 5 ms and the workers say how many each accepted. Linux only (fork).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import time
from multiprocessing.queues import Queue

import uvloop

#: How long each worker serves; the client's connections must all arrive within it.
SERVE_S = 6.0


def _worker(port: int, shared: socket.socket | None, busy: bool, out: Queue[object]) -> None:
    async def main() -> None:
        held: list[asyncio.StreamWriter] = []

        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            held.append(writer)

        if shared is None:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(("127.0.0.1", port))
            sock.listen(2048)
        else:
            sock = shared
        await asyncio.start_server(accepted, sock=sock)
        out.put("ready")
        end = time.monotonic() + SERVE_S
        while time.monotonic() < end:
            if busy:
                started = time.monotonic()
                while time.monotonic() - started < 0.04:
                    pass  # the loop blocked, as by CPU-bound work
            await asyncio.sleep(0.01)
        out.put((busy, len(held)))

    uvloop.run(main())


def spread(mode: str, busy: bool, connections: int) -> list[int]:
    """Connections accepted by worker 0 and worker 1 (the busy one, if any)."""
    shared: socket.socket | None = None
    if mode == "shared":
        shared = socket.socket()
        shared.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        shared.bind(("127.0.0.1", 0))
        shared.listen(2048)
        port = shared.getsockname()[1]
    else:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    context = multiprocessing.get_context("fork")
    out: Queue[object] = context.Queue()
    workers = [
        context.Process(target=_worker, args=(port, shared, busy and i == 1, out)) for i in range(2)
    ]
    for worker in workers:
        worker.start()
    for _ in workers:
        assert out.get() == "ready"
    clients = []
    for _ in range(connections):
        clients.append(socket.create_connection(("127.0.0.1", port)))
        time.sleep(0.005)
    counts = sorted(out.get() for _ in workers)  # type: ignore[type-var]  # (busy, count)
    for worker in workers:
        worker.join()
    for client in clients:
        client.close()
    if shared is not None:
        shared.close()
    return [count for _, count in counts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=400)
    args = parser.parse_args()
    for mode in ("shared", "reuseport"):
        for busy in (False, True):
            idle, other = spread(mode, busy, args.connections)
            load = "worker 1 busy" if busy else "both idle"
            print(f"{mode:9}  {load:13}  worker 0: {idle:4}  worker 1: {other:4}")


if __name__ == "__main__":
    main()
