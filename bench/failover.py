"""How long the matches of a killed server process wait for another process to take them over
(issue 22's goal: <= 10 s from a kill -9 to the next turn of each of 200 matches it hosted).

    python -m bench.failover                      # 200 matches, two processes; median of 3
    python -m bench.failover --matches 200 --runs 3 --lease 6

PostgreSQL only (a throwaway cluster, bench/_stores.py): several processes share a database
there. Each run: two ``arena serve`` processes on a fresh database; ``2 x matches`` bots (the
raw ``websockets`` clients of bench/restart.py) all connect to the first one, join the Connect
Four queue at 60 s a move, play four plies at once and hold their turns, so that every match is
running on the first process with moves stored. Then the first process is killed (kill -9) and
the bots reconnect, every 50 ms, to the second one, as a load balancer would send them. Measured
from the kill:

- ``logged in``: every bot has its ``welcome`` from the second process;
- ``turns``: every match's next ``turn`` has reached its bot: the second process saw the first
  one's lease run out, took its matches over, resumed them and sent their turns. **The figure
  of the goal**, bounded below by the lease (``ARENA_LEASE_S``, ``--lease``).

The peer, in the same run: bench/restart.py's restart of one process (kill -9, then a new
process on the same database and port, which ends a dead process's lease on its own machine at
once), to every resumed turn. The ratio says what waiting for a lease adds.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench._stores import Store, open_store
from bench.restart import Bots, _client, _one, _serve, _serving, _stop, _until
from bench.server import _create_bots, free_port


@dataclass
class Failover:
    logged_in_s: float
    turns_s: float


async def _failover(
    store: Store, workdir: Path, name: str, matches: int, lease_s: float
) -> Failover:
    db_url = store.url(name)
    tokens = await _create_bots(db_url, 2 * matches, name)
    first_port, second_port = free_port(), free_port()
    first = _serve(db_url, first_port, workdir, f"{name}-first", lease_s=str(lease_s))
    second = _serve(db_url, second_port, workdir, f"{name}-second", lease_s=str(lease_s))
    bots = Bots(tokens, f"ws://127.0.0.1:{first_port}/ws")
    clients: list[asyncio.Task[None]] = []
    try:
        await _serving(first_port, first)
        await _serving(second_port, second)
        clients = [asyncio.create_task(_client(bots, i, matches)) for i in range(len(tokens))]
        await _until(bots, lambda: len(bots.held) == matches, 300, "every match under way")
        bots.phase = 1
        bots.url = f"ws://127.0.0.1:{second_port}/ws"
        bots.logged_in_at = None
        killed = time.monotonic()
        await asyncio.to_thread(_stop, first, signal.SIGKILL)
        bots.logged_in.clear()
        await _until(bots, lambda: bots.turns_at is not None, 120, "every match's next turn")
        assert bots.turns_at is not None and bots.logged_in_at is not None
        return Failover(bots.logged_in_at - killed, bots.turns_at - killed)
    finally:
        for task in clients:
            task.cancel()
        await asyncio.gather(*clients, return_exceptions=True)
        _stop(first, signal.SIGKILL)
        _stop(second, signal.SIGTERM)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="running matches (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="runs (the median is shown)")
    parser.add_argument("--lease", type=float, default=6.0, help="ARENA_LEASE_S (default 6)")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="bench-failover-") as tmp,
        open_store("postgresql", Path(tmp)) as store,
    ):
        failovers: list[Failover] = []
        restarts: list[float] = []
        for n in range(args.runs):
            # Alternated, so that a drift of the machine's pace hits both alike.
            restart = asyncio.run(
                _one(store, Path(tmp), f"r{n}", args.matches, signal.SIGKILL, True)
            )
            assert restart.turns_s is not None
            restarts.append(restart.turns_s)
            failovers.append(
                asyncio.run(_failover(store, Path(tmp), f"f{n}", args.matches, args.lease))
            )
    med = statistics.median
    turns = med([f.turns_s for f in failovers])
    print(
        f"postgresql: {args.matches} matches on a process killed with kill -9, lease "
        f"{args.lease:g} s; median of {args.runs}"
    )
    print(
        f"  failover: every bot back {med([f.logged_in_s for f in failovers]):.2f} s, every "
        f"match's next turn {turns:.2f} s (goal <= 10 s); runs: "
        f"{', '.join(f'{f.turns_s:.2f}' for f in failovers)}"
    )
    print(
        f"  peer (a restart on the same machine): every resumed turn {med(restarts):.2f} s; "
        f"runs: {', '.join(f'{r:.2f}' for r in restarts)}"
    )
    print(f"  ratio: failover / restart = {turns / med(restarts):.2f}")


if __name__ == "__main__":
    main()
