"""This process's lease on the database: registered at start, renewed while it lives, given up
at a clean stop.

A process holds its running matches while its lease runs. It renews it every third of
``lease_s``; a renewal that finds the lease already run out (the process was paused, or cut
from the database, for longer than the lease) means that another process may have taken its
matches over: ``on_lost`` is called, and the process registers again under a new id. The
same happens when no renewal has succeeded for a whole lease (the database is unreachable):
whatever the database says once it answers again, others were entitled to take over.

On PostgreSQL the renewals run on a thread of their own, with a connection of their own: a
process whose event loop is held up for a few seconds (a fork server starting for the house
bots' searches, a long collection, a busy machine) is alive and keeps its matches. An event loop
that has not run for ``HUNG_AFTER`` leases is taken for hung: the renewals stop, and the others
take its matches over. On SQLite one process serves the file: nobody else could take over, and
the renewals run on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ply_arena.server.db import server_mark
from ply_arena.server.db.database import Database
from ply_arena.server.repositories import instances as instance_repo

log = logging.getLogger(__name__)

#: Leases after which an event loop that has not run is taken for hung (PostgreSQL).
HUNG_AFTER = 5


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
        # PostgreSQL: the renewing thread, what stops it, and when the event loop last ran.
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._loop_seen = time.monotonic()
        self._ticker: asyncio.TimerHandle | None = None
        self._losing = False

    async def acquire(self) -> None:
        """Register this process and end the leases of processes known to be gone: every
        other process's on SQLite (the server mark proves none runs), those of this machine
        whose pid is dead on PostgreSQL (a restart after kill -9 takes over at once)."""
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
                # The server mark proves no other process serves the file; another server in
                # this very process (tests start several) is alive.
                pid = os.getpid()
                gone = await instance_repo.expire(
                    session, self.instance_id, alive=lambda other, _start: other == pid
                )
            else:
                gone = await instance_repo.expire(
                    session,
                    self.instance_id,
                    host=socket.gethostname(),
                    alive=server_mark.process_alive,
                )
        self._held_until = started + self.lease_s
        if not self.database.is_sqlite:
            log.info(
                "this server process is %s (pid %d; lease %g s)",
                self.instance_id,
                os.getpid(),
                self.lease_s,
            )
        if gone:
            log.info("server process(es) %s are gone: their leases ended", ", ".join(gone))

    def start(self) -> None:
        """Renew the lease in the background from now on."""
        if self.database.is_sqlite:
            self._task = asyncio.create_task(self._renew_forever(), name="lease")
            return
        loop = asyncio.get_running_loop()
        self._tick(loop)
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._renew_on_thread, args=(loop,), name="lease", daemon=True
        )
        self._thread.start()

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop runs: noted every third of a lease, for the renewing thread."""
        self._loop_seen = time.monotonic()
        self._ticker = loop.call_later(self.lease_s / 3, self._tick, loop)

    def _renew_on_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.run(self._renew_with_own_connection(loop))

    async def _renew_with_own_connection(self, loop: asyncio.AbstractEventLoop) -> None:
        import asyncpg  # the postgres extra's

        from ply_arena.server.cluster.bus import asyncpg_dsn

        period = self.lease_s / 3
        connection: Any = None
        while not self._stopping.wait(period):
            if self._losing:
                continue  # the event loop is taking a new lease
            if time.monotonic() - self._loop_seen > HUNG_AFTER * self.lease_s:
                log.error(
                    "the event loop has not run for %d leases: the lease of %s is no longer "
                    "renewed",
                    HUNG_AFTER,
                    self.instance_id,
                )
                continue
            started = time.monotonic()
            try:
                if connection is None or connection.is_closed():
                    connection = await asyncpg.connect(
                        asyncpg_dsn(self.database.url),
                        server_settings={"application_name": "ply-arena lease"},
                    )
                renewed = await connection.fetchval(_RENEW, self.instance_id, self.lease_s)
            except Exception as exc:
                log.warning("could not renew the lease of %s: %s", self.instance_id, exc)
                if connection is not None:
                    with contextlib.suppress(Exception):
                        connection.terminate()
                connection = None
                if not self.held():
                    self._hand_over(loop, "no renewal succeeded for a whole lease")
                continue
            if renewed is not None:
                self._held_until = started + self.lease_s
            else:
                self._hand_over(loop, "its lease had run out")
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close(timeout=2)

    def _hand_over(self, loop: asyncio.AbstractEventLoop, why: str) -> None:
        """From the renewing thread: the event loop lets the matches go and takes a new lease."""
        self._losing = True

        async def lost() -> None:
            try:
                await self._lost(why)
            finally:
                self._losing = False

        with contextlib.suppress(RuntimeError):  # the loop is closed: the process is stopping
            asyncio.run_coroutine_threadsafe(lost(), loop)

    def held(self) -> bool:
        """Whether the lease surely still runs (by this process's own clock)."""
        return time.monotonic() < self._held_until

    async def release(self) -> None:
        """Stop renewing and give the lease up, so that others take over at once."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._thread is not None:
            self._stopping.set()
            await asyncio.to_thread(self._thread.join, 10)
            self._thread = None
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


#: One renewal, on the database's clock (PostgreSQL): the id when renewed, null when the lease
#: had run out (instance_repo.renew, for the renewing thread's own connection).
_RENEW = """
UPDATE instances
SET lease_until = extract(epoch FROM clock_timestamp())::double precision + $2::double precision
WHERE id = $1 AND lease_until > extract(epoch FROM clock_timestamp())::double precision
AND stopped_at IS NULL
RETURNING id
"""
