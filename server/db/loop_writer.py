"""The recorder's SQLite transactions, run on the event loop's own thread.

aiosqlite runs SQLite on a thread of its own, and every statement is three or four hand-overs
between that thread and the event loop (a queue, a future, a wake-up of the loop), with the two
threads contending for the GIL in between. For the recorder's batches (a new match, its moves,
its result and ratings) those hand-overs cost far more than SQLite's own work: in
``python -m bench.match_life`` the writes of one tic-tac-toe match took about 8 ms of server CPU
through aiosqlite and 3 ms here (sqlite3 alone: a transaction of one insert costs 24 us, through
aiosqlite 140-220 us, through SQLAlchemy's asyncio session on aiosqlite about 1 ms; see
docs/benchmarks.md). So on a SQLite file the recorder's batches run through a synchronous
SQLAlchemy engine (the standard library's sqlite3 driver) on the loop's thread, and the same
write functions see a ``LoopSession``: an ``AsyncSession``'s methods as they use them, done at
once.

Nothing here may block the loop for long:

- **The write lock.** A batch begins with ``BEGIN IMMEDIATE``: it holds SQLite's write lock
  before its first statement or learns at once that another connection holds it (the CLI, or an
  admin request through the async engine, whose transaction may span awaits). It then waits on
  the loop (``asyncio.sleep``, backing off) instead of in SQLite's busy handler, which would hold
  the loop until the other writer is done, and that writer may need the loop to finish. After
  ``busy_timeout_ms`` it fails as a busy async connection would.
- **Checkpoints.** Copying the WAL back into the database file takes an fsync; SQLite does it
  in the commit that grows the WAL past its threshold. This engine's connections never do
  (``wal_autocheckpoint=0``): a checkpoint runs on a thread of its own, at most one at a time,
  once a second while there are commits.

A write function may still await (tests hold a batch open that way): the transaction then stays
open across the await, as it did on the async engine.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Connection, create_engine, event
from sqlalchemy.engine import URL
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

#: The first wait after finding the write lock taken, and the longest (it doubles in between).
FIRST_WAIT_S = 0.001
LONGEST_WAIT_S = 0.05
#: A checkpoint at most this often, and only after commits.
CHECKPOINT_EVERY_S = 1.0


class LoopSession:
    """What the recorder's write functions use of an ``AsyncSession``, done synchronously.

    ``execute``, ``scalar``, ``scalars``, ``get`` and ``flush`` return what the ``Session``
    methods return (the same result objects as ``AsyncSession``'s); ``add``, ``add_all`` and
    ``info`` are the session's own.
    """

    def __init__(self, session: Session) -> None:
        self.sync_session = session
        self.info = session.info
        self.add = session.add
        self.add_all = session.add_all

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        return self.sync_session.execute(*args, **kwargs)

    async def scalar(self, *args: Any, **kwargs: Any) -> Any:
        return self.sync_session.scalar(*args, **kwargs)

    async def scalars(self, *args: Any, **kwargs: Any) -> Any:
        return self.sync_session.scalars(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        return self.sync_session.get(*args, **kwargs)

    async def flush(self, *args: Any, **kwargs: Any) -> None:
        self.sync_session.flush(*args, **kwargs)


class LoopWriter:
    """Transactions on a SQLite file from the event loop's thread (see the module docstring)."""

    def __init__(
        self,
        url: URL,
        on_connect: Callable[[Any, Any], None],
        busy_timeout_ms: int,
    ) -> None:
        self.busy_timeout_s = busy_timeout_ms / 1000
        self.path = url.database
        # The standard library's driver, on this thread only, never waiting in SQLite's busy
        # handler (timeout=0 and busy_timeout=0 after the shared pragmas).
        # (Any thread may dispose of it; only the loop's thread uses it.)
        self.engine = create_engine(
            url.set(drivername="sqlite+pysqlite"),
            connect_args={"timeout": 0, "check_same_thread": False},
        )

        def connect(dbapi_connection: Any, record: Any) -> None:
            on_connect(dbapi_connection, record)
            dbapi_connection.execute("PRAGMA busy_timeout=0")
            dbapi_connection.execute("PRAGMA wal_autocheckpoint=0")

        event.listen(self.engine, "connect", connect)
        # One connection for every batch: checking one out of the pool and back (with its
        # reset) for each was a fifth of a transaction's cost.
        self._connection: Connection | None = None
        self._checkpointing: asyncio.Future[None] | None = None
        self._last_checkpoint = time.monotonic()
        #: Waits for the write lock so far (tests, benchmarks).
        self.lock_waits = 0

    @asynccontextmanager
    async def session(self) -> AsyncIterator[LoopSession]:
        """One transaction holding the write lock: commits when the block ends normally,
        rolls back on error."""
        connection = self._connect()
        # SQLite's own connection: BEGIN IMMEDIATE and the final COMMIT go to it directly
        # (SQLAlchemy's pysqlite dialect leaves BEGIN to the driver, which would defer it).
        sqlite = connection.connection.driver_connection
        assert isinstance(sqlite, sqlite3.Connection)
        await self._begin_immediate(sqlite)
        try:
            with Session(bind=connection, expire_on_commit=False) as session:
                yield LoopSession(session)
                session.commit()
            sqlite.commit()  # a batch that executed nothing through SQLAlchemy
        except BaseException:
            connection.rollback()
            sqlite.rollback()
            raise
        self._maybe_checkpoint()

    def _connect(self) -> Connection:
        connection = self._connection
        if connection is None or connection.closed or connection.invalidated:
            if connection is not None:
                connection.close()
            connection = self._connection = self.engine.connect()
        return connection

    async def _begin_immediate(self, sqlite: sqlite3.Connection) -> None:
        """Take the write lock, waiting on the loop (not in SQLite) while another has it."""
        deadline = time.monotonic() + self.busy_timeout_s
        wait = FIRST_WAIT_S
        while True:
            try:
                sqlite.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                busy = exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                if not busy or time.monotonic() >= deadline:
                    raise OperationalError("BEGIN IMMEDIATE", None, exc) from exc
            self.lock_waits += 1
            await asyncio.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT_S)

    def _maybe_checkpoint(self) -> None:
        now = time.monotonic()
        if (
            self._checkpointing is None
            and now - self._last_checkpoint >= CHECKPOINT_EVERY_S
            and self.path
        ):
            self._last_checkpoint = now
            loop = asyncio.get_running_loop()
            self._checkpointing = loop.run_in_executor(None, _checkpoint, self.path)
            self._checkpointing.add_done_callback(self._checkpointed)

    def _checkpointed(self, future: asyncio.Future[None]) -> None:
        self._checkpointing = None
        if not future.cancelled():
            future.exception()  # a failed checkpoint is retried with the next commits

    async def dispose(self) -> None:
        """Wait for a checkpoint under way, then close the connections."""
        if self._checkpointing is not None:
            await asyncio.gather(self._checkpointing, return_exceptions=True)
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self.engine.dispose()


def _checkpoint(path: str) -> None:
    """Copy the WAL back into the database file, without waiting for readers or writers."""
    connection = sqlite3.connect(path, timeout=0)
    try:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        connection.close()
