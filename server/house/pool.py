"""The house bots' search processes: a process pool, so that no search runs on the event loop.

Workers start from a fork server (``spawn`` where there is none) that has imported the games and
the agents once, so a worker comes up in milliseconds, including one that replaces a worker that
died. A worker that dies (killed, out of memory) breaks the whole executor: every search it held
fails with ``SearchFailed``, the death is logged once, and a new executor is started and warmed
at once (the agents of the last warm-up made in it), so that the next search finds a worker
ready rather than start one inside a house bot's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ply_arena.server import subprocesses
from ply_arena.server.house import worker

log = logging.getLogger(__name__)

#: How long stopping waits for a worker to go after SIGTERM, before SIGKILL.
STOP_GRACE_S = 2.0


class SearchFailed(Exception):
    """The search did not come back: its worker process died."""


class SearchPool:
    def __init__(self, workers: int = 0) -> None:
        # One core is left to the event loop: measured on two cores, a search on every core
        # added 2.6-3.8 ms to other matches' p99 latency, on one core under 1 ms.
        self.workers = workers if workers > 0 else max(1, (os.cpu_count() or 1) - 1)
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        #: Worker deaths seen so far (each broke an executor).
        self.failures = 0
        #: The agents of the last warm-up, made again in the executor that replaces a broken one.
        self._specs: list[tuple[str, str, dict[str, Any]]] = []
        self._rewarm: asyncio.Future[list[int]] | None = None

    def _ensure(self) -> ProcessPoolExecutor:
        if self._closed:
            raise SearchFailed("the house is stopping")
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=subprocesses.context(),
                initializer=worker.init,
                initargs=(os.getpid(),),
            )
        return self._executor

    async def warm_up(self, specs: list[tuple[str, str, dict[str, Any]]]) -> list[int]:
        """Start every worker and make the agents in it; the workers' pids."""
        self._specs = specs
        executor = self._ensure()
        loop = asyncio.get_running_loop()
        # Submitted together, so that each one starts a worker of its own.
        calls = [loop.run_in_executor(executor, worker.warm, specs) for _ in range(self.workers)]
        pids = await asyncio.gather(*calls, return_exceptions=True)
        return sorted({p for p in pids if isinstance(p, int)})

    async def search(
        self,
        game: str,
        agent: str,
        options: dict[str, Any],
        position: dict[str, Any],
        deadline: float,
        *,
        fresh: bool = False,
    ) -> tuple[str, dict[str, Any]]:
        """``worker.search`` in a worker process; SearchFailed if the worker died."""
        executor = self._ensure()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                executor, worker.search, game, agent, options, position, deadline, fresh
            )
        except BrokenProcessPool:
            if self._executor is executor:
                self._executor = None
                self.failures += 1
                log.error(
                    "house bots: a search process died; its searches are lost (those house bots "
                    "lose on time) and new search processes start"
                )
                executor.shutdown(wait=False, cancel_futures=True)
                if self._specs and not self._closed:
                    self._rewarm = asyncio.ensure_future(self.warm_up(self._specs))
            raise SearchFailed("the search process died") from None

    async def recovered(self) -> None:
        """Wait until the executor that replaced a broken one is warm (at once if none did)."""
        if self._rewarm is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._rewarm)

    def pids(self) -> list[int]:
        """The worker processes running now."""
        executor = self._executor
        processes = getattr(executor, "_processes", None) or {}
        return sorted(p.pid for p in processes.values() if p.is_alive() and p.pid is not None)

    async def close(self) -> None:
        """Stop the workers now (a search in progress is abandoned); never waits long."""
        self._closed = True
        if self._rewarm is not None:
            self._rewarm.cancel()
        executor, self._executor = self._executor, None
        if executor is None:
            return
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()

        def reap() -> None:
            for process in processes:
                process.join(STOP_GRACE_S)
                if process.is_alive():
                    process.kill()
                    process.join(STOP_GRACE_S)

        await asyncio.to_thread(reap)
