"""This process's lease on the database: registered at start, renewed while it lives, given up
at a clean stop.

A process holds its running matches while its lease runs. It renews it every third of
``lease_s``; a renewal that finds the lease already run out (the process was paused, or cut
from the database, for longer than the lease) means that another process may have taken its
matches over: ``on_lost`` is called, and the process registers again under a new id. The
same happens when no renewal has succeeded for a whole lease (the database is unreachable):
whatever the database says once it answers again, others were entitled to take over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable

from ply_arena.server.db import server_mark
from ply_arena.server.db.database import Database
from ply_arena.server.repositories import instances as instance_repo

log = logging.getLogger(__name__)


def new_instance_id() -> str:
    """``host-pid-random``: whose it is, readable in logs and in ``matches.owner``."""
    host = socket.gethostname()[:40]
    return f"{host}-{os.getpid()}-{secrets.token_hex(3)}"


class Lease:
    """The lease of one process; ``instance_id`` is what it writes as the owner of its matches
    (it changes when a lost lease is registered again)."""

    def __init__(
        self,
        database: Database,
        lease_s: float,
        on_lost: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.database = database
        self.lease_s = lease_s
        self.on_lost = on_lost
        self.instance_id = new_instance_id()
        #: How many times the lease was lost (tests and logs).
        self.losses = 0
        self._held_until = 0.0  # monotonic: the lease surely runs until then
        self._task: asyncio.Task[None] | None = None

    async def acquire(self) -> None:
        """Register this process and end the leases of processes known to be gone: every
        other one on SQLite (the server mark proves none runs), those of this machine whose
        pid is dead on PostgreSQL (a restart after kill -9 takes over at once)."""
        started = time.monotonic()
        async with self.database.session() as session:
            await instance_repo.register(
                session,
                self.instance_id,
                host=socket.gethostname(),
                pid=os.getpid(),
                process_start=server_mark.process_start(os.getpid()),
                lease_s=self.lease_s,
            )
            if self.database.is_sqlite:
                gone = await instance_repo.expire(session, self.instance_id)
            else:
                gone = await instance_repo.expire(
                    session,
                    self.instance_id,
                    host=socket.gethostname(),
                    alive=server_mark.process_alive,
                )
        self._held_until = started + self.lease_s
        if gone:
            log.info("server process(es) %s are gone: their leases ended", ", ".join(gone))

    def start(self) -> None:
        """Renew the lease in the background from now on."""
        self._task = asyncio.create_task(self._renew_forever(), name="lease")

    def held(self) -> bool:
        """Whether the lease surely still runs (by this process's own clock)."""
        return time.monotonic() < self._held_until

    async def release(self) -> None:
        """Stop renewing and give the lease up, so that others take over at once."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            async with self.database.session() as session:
                await instance_repo.give_up(session, self.instance_id)
        except Exception as exc:  # the database is gone: the lease runs out by itself
            log.warning("could not give up the lease of %s: %s", self.instance_id, exc)

    async def renew(self) -> bool:
        """Renew once; False when the lease had run out (``on_lost`` has then been called and
        the process holds a new lease)."""
        started = time.monotonic()
        async with self.database.session() as session:
            renewed = await instance_repo.renew(session, self.instance_id, self.lease_s)
        if renewed:
            self._held_until = started + self.lease_s
            return True
        await self._lost("its lease had run out")
        return False

    async def _renew_forever(self) -> None:
        period = self.lease_s / 3
        while True:
            await asyncio.sleep(period)
            try:
                await self.renew()
            except Exception as exc:  # the database does not answer: try again next period
                log.warning("could not renew the lease of %s: %s", self.instance_id, exc)
                if not self.held():
                    await self._lost("no renewal succeeded for a whole lease")

    async def _lost(self, why: str) -> None:
        self.losses += 1
        old = self.instance_id
        log.error(
            "server process %s lost its lease (%s): its matches may be played elsewhere now; "
            "it lets them go and registers again",
            old,
            why,
        )
        self._held_until = 0.0
        if self.on_lost is not None:
            await self.on_lost()
        self.instance_id = new_instance_id()
        while True:
            try:
                await self.acquire()
                return
            except Exception as exc:
                log.warning("could not register %s again: %s", self.instance_id, exc)
                await asyncio.sleep(self.lease_s / 3)
