"""The SQLite writer's own thread: the recorder's batches run there, on a synchronous connection.

Through SQLAlchemy's asyncio layer and aiosqlite, every statement crosses between the event
loop and aiosqlite's thread several times (a queue, a future, a wake-up of the loop each way),
and a transaction of a few moves cost the server about a millisecond of CPU; the same
transaction on a synchronous connection costs a fifth of that (docs/benchmarks.md, "A match's
life"). So for an SQLite file the recorder hands each whole batch to this thread once, and the
thread runs it on its own ``sqlite3`` connection, start to commit, while the event loop goes on
serving the matches.

Run on the loop's own thread instead, the same batches were cheaper still but stalled every
match while they ran (a batch at saturation takes tens of milliseconds, and a lock held by
another writer, the CLI for instance, would block the loop for up to the busy timeout).

    writer = WriterThread("sqlite:///arena.sqlite", on_connect)
    result = await writer.call(fn, arg)   # fn(connection, arg) on the writer's thread
    future = writer.submit(fn, arg)       # the same, without waiting here
    await writer.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, create_engine, event
from sqlalchemy.engine import URL
from sqlalchemy.pool import StaticPool

#: fn(connection, *args), run on the writer's thread.
Job = Callable[..., Any]


class WriterThreadClosedError(RuntimeError):
    """A call was made after the writer thread was closed."""


class WriterThread:
    """One thread, one synchronous connection, calls run one at a time in submission order."""

    def __init__(self, url: URL, on_connect: Callable[[Any, Any], None], timeout_s: float) -> None:
        # isolation_level=None: the sqlite3 module then leaves transactions to SQLAlchemy, which
        # begins each with BEGIN IMMEDIATE (below): the write lock is taken, or waited for under
        # the busy timeout, when the transaction starts, not at its first write, where a read
        # done before it (finishing a match reads its status first) could no longer wait.
        self._engine = create_engine(
            url,
            poolclass=StaticPool,
            connect_args={
                "isolation_level": None,
                "timeout": timeout_s,
                "check_same_thread": False,
            },
        )
        event.listen(self._engine, "connect", on_connect)
        event.listen(self._engine, "begin", _begin_immediate)
        self._jobs: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    async def call(self, fn: Job, /, *args: Any) -> Any:
        """``fn(connection, *args)`` on the writer's thread; its result, or its exception."""
        return await self.submit(fn, *args)

    def submit(self, fn: Job, /, *args: Any) -> asyncio.Future[Any]:
        """Hand ``fn(connection, *args)`` to the writer's thread; the future of its result.

        A plain future rather than a coroutine: the recorder hands over a batch per
        transaction, and wrapping each in a task cost more than the hand-over itself. Cancelling
        the future does not stop the call (the thread runs it to its end)."""
        if self._closed:
            raise WriterThreadClosedError("the database writer thread is closed")
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="db-writer", daemon=True)
            self._thread.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._jobs.put(_Call(loop, future, fn, args))
        return future

    async def close(self) -> None:
        """Finish the calls made so far, then close the connection and stop the thread."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._jobs.put(None)
            await asyncio.to_thread(self._thread.join)
        self._engine.dispose()

    def _serve(self) -> None:
        with self._engine.connect() as connection:
            while (job := self._jobs.get()) is not None:
                try:
                    result = job.fn(connection, *job.args)
                except BaseException as error:  # handed to the caller, whatever it is
                    job.settle(error=error)
                else:
                    job.settle(value=result)


@dataclass(slots=True)
class _Call:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    fn: Job
    args: tuple[Any, ...]

    def settle(self, value: Any = None, error: BaseException | None = None) -> None:
        # A closed loop: nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(_settle, self.future, value, error)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # the caller was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _begin_immediate(connection: Connection) -> None:
    # On the driver's connection directly: through exec_driver_sql, SQLAlchemy's machinery
    # cost more than the statement (server/db/many_rows.py).
    connection.connection.driver_connection.execute("BEGIN IMMEDIATE")  # type: ignore[union-attr]
