"""The single writer: one task that drains a queue of writes and commits them in batches.

SQLite has one writer at a time. Many matches committing one move each from pooled connections
wait on each other through SQLite's busy handler, whose sleeps grow to tens of milliseconds;
the next turn of every match waits behind that. Instead every write goes through this queue:
the writer takes everything queued, runs it in one transaction, commits once (a group commit)
and resolves each write's future. While a commit is in progress new writes accumulate, so the
batch size adapts to the load and an idle server adds no delay.

    fut = database.recorder.submit(matches.record_move, match_id=..., ply=..., ...)
    ...                      # writes are applied in submission order; no need to wait here
    await fut                # only where the caller must know the write is committed

If a batch fails, its writes are retried one by one in their own transactions, so a bad write
fails only its own future.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from ply_arena.server.db.commit_hooks import after_commit, take_callbacks

if TYPE_CHECKING:
    from ply_arena.server.db.database import Database
    from ply_arena.server.db.writer_thread import WriterThread

log = logging.getLogger(__name__)

Write = Callable[..., Awaitable[Any]]
#: ``bulk(connection, [kwargs, ...])``: the same writes as calling a Write once per kwargs,
#: faster; synchronous, so that the recorder can run a batch of them on the SQLite writer's
#: thread (server/db/writer_thread.py), and on an async session through ``run_bulk``.
BulkWrite = Callable[[Connection, list[dict[str, Any]]], None]
#: fn -> (phase, bulk)
_BULK: dict[Write, tuple[int, BulkWrite]] = {}
#: Writes committed ahead of the others queued with them (see register_bulk's ``ahead``).
_AHEAD: set[Write] = set()
#: Writes nobody waits for, which may wait a moment for company (see register_bulk's
#: ``linger``): fn -> the keyword that names what a write belongs to (a move: its match).
_LINGER: dict[Write, str] = {}
#: How long a batch of lingering writes alone waits for more writes before it commits.
LINGER_S = 0.02


def register_bulk(
    fn: Write,
    bulk: BulkWrite,
    *,
    phase: int = 0,
    ahead: bool = False,
    linger: str | None = None,
) -> None:
    """Let the recorder run queued ``fn`` writes as one ``bulk`` call (executemany).

    Consecutive queued writes of bulk-registered functions (a run not interrupted by any other
    write) are grouped per function and run in ``phase`` order, ties in registration order.
    So a write may overtake an earlier-submitted one of a higher phase: register phases only
    where that cannot matter (e.g. create a match = 0, its moves = 1, its result = 2, which is
    also the order in which any one match submits them). Bulk writes return None.

    ``ahead``: queued ``fn`` writes are committed before the other writes queued with them
    (in their own order among themselves): in a transaction of their own when those are more
    than ``AHEAD_ALONE_OVER``, else in theirs (one commit rather than two); and if that batch
    fails, they are retried first. For the writes that someone waits for before anything can
    happen (a new match's row: its bots hear of it only once it is stored), which depend on
    nothing queued before them. At saturation a batch of moves and results takes 50-150 ms,
    and a new match waited for the one under way and then for the whole next one; now it
    waits for the one under way and a short one.

    ``linger``: the keyword argument that names what a write belongs to (``"match_id"`` for
    a move). A batch made only of such writes (moves: the protocol does not wait for their
    commit) waits up to ``LINGER_S`` for more writes before it commits; any other write ends
    the wait at once, and so does a second write of the same owner (a match's next move while
    its last one still waits): so no more than one write of each owner ever waits for company,
    and a crash loses at most one move of a match to the wait, however long it is. Each
    transaction costs the server CPU whatever it holds, and with bots that think, the writer
    took each move as it came, one transaction per move or two (docs/benchmarks.md).
    """
    _BULK[fn] = (phase, bulk)
    if ahead:
        _AHEAD.add(fn)
    else:
        _AHEAD.discard(fn)
    if linger is not None:
        _LINGER[fn] = linger
    else:
        _LINGER.pop(fn, None)


async def run_bulk(session: AsyncSession, bulk: BulkWrite, rows: list[dict[str, Any]]) -> None:
    """Run a bulk write in ``session``'s transaction (its pending ORM rows flushed first; what
    the write asks to run after the commit, ``after_commit``, runs after the session's)."""
    await session.run_sync(_bulk_in_session, bulk, rows)


def _bulk_in_session(session: Session, bulk: BulkWrite, rows: list[dict[str, Any]]) -> None:
    session.flush()  # Core statements do not autoflush: a new bot must reach its table first
    connection = session.connection()
    try:
        bulk(connection, rows)
    finally:
        callbacks = take_callbacks(connection)
    for callback in callbacks:
        after_commit(session, callback)


#: A new match's row (an ``ahead`` write) shares the transaction of the writes queued with it
#: when they are at most this many (a few moves of other matches: one commit instead of two,
#: a fraction of a millisecond more for its bots), and goes in one of its own before them when
#: they are more (at saturation, a batch of hundreds takes tens of milliseconds).
AHEAD_ALONE_OVER = 32

#: Upper bound on writes per transaction, to keep each commit short for readers and the CLI.
MAX_BATCH = 1_000


@dataclass(slots=True)
class _Item:
    fn: Write
    kwargs: dict[str, Any]
    future: asyncio.Future[Any]


class RecorderClosedError(RuntimeError):
    """A write was submitted after the recorder was closed."""


class Recorder:
    """Ordered, batched writes through one task. Created by ``Database`` (``database.recorder``)."""

    def __init__(self, database: Database, max_batch: int = MAX_BATCH) -> None:
        self._database = database
        self._max_batch = max_batch
        #: Writes submitted and not yet taken into a batch; None: close after what is before.
        #: (A list and one future to wake the writer, rather than an asyncio.Queue and Event,
        #: and a timer rather than wait_for: a transaction's own cost on the event loop was
        #: about that of the commit on the writer's thread, docs/benchmarks.md.)
        self._pending: list[_Item | None] = []
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        #: A write that must not linger (see register_bulk's ``linger``) is pending: set as it
        #: is submitted, cleared as each batch is taken.
        self._company = False
        #: What the writer task waits on while it waits (for writes, or lingering for company).
        self._wake: asyncio.Future[None] | None = None
        self._lingering = False
        #: The owners (see register_bulk's ``linger``) of the lingering writes pending.
        self._owners: set[Any] = set()
        #: Committed transactions and writes, for tests and benchmarks.
        self.batches = 0
        self.writes = 0

    def submit(self, fn: Write, /, **kwargs: Any) -> asyncio.Future[Any]:
        """Queue ``await fn(session, **kwargs)``; the future resolves to its result after commit.

        Writes run in submission order (but for those registered to go ``ahead``, see
        register_bulk). The caller need not await the future (a failure is then
        logged), but must await it before relying on the write being stored.
        """
        if self._closed:
            raise RecorderClosedError("the database recorder is closed")
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="db-recorder")
        future: asyncio.Future[Any] = loop.create_future()
        future.add_done_callback(_log_failure)
        self._pending.append(_Item(fn, kwargs, future))
        owner_key = _LINGER.get(fn)
        if owner_key is None:
            self._company = True
            self._wake_writer()
        else:
            owner = kwargs.get(owner_key)
            if owner in self._owners:
                self._company = True  # its owner's last write still waits: no longer
            else:
                self._owners.add(owner)
            if self._company or not self._lingering:
                self._wake_writer()
        return future

    async def flush(self) -> None:
        """Wait until every write submitted so far is committed (or has failed)."""

        async def _noop(session: AsyncSession) -> None:
            return None

        if self._task is not None and not self._task.done():
            await asyncio.shield(self.submit(_noop))

    async def close(self) -> None:
        """Commit what is queued, then stop the writer task. Later submits raise."""
        self._closed = True
        if self._task is not None:
            self._pending.append(None)
            self._company = True
            self._wake_writer()
            await self._task
        self._task = None
        if self.writes:
            log.debug(
                "the recorder committed %d writes in %d transactions", self.writes, self.batches
            )

    def _wake_writer(self) -> None:
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def _wait(self, linger_s: float | None) -> None:
        """Until a write is submitted; lingering (``linger_s``): until a write that must not
        linger is, or ``linger_s`` has passed."""
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[None] = loop.create_future()
        self._wake = wake
        self._lingering = linger_s is not None
        timer = None if linger_s is None else loop.call_later(linger_s, _wake_up, wake)
        try:
            await wake
        finally:
            self._wake = None
            self._lingering = False
            if timer is not None:
                timer.cancel()

    async def _run(self) -> None:
        pending = self._pending
        while True:
            while not pending:
                await self._wait(None)
            first = pending[0]
            if first is not None and first.fn in _LINGER and not self._company:
                # Only writes nobody waits for so far: give the next ones a moment to join.
                await self._wait(LINGER_S)
            # Cleared before the batch is taken: a write submitted from here on sets it again.
            self._company = False
            batch: list[_Item] = []
            stopping = False
            for item in pending[: self._max_batch]:
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            del pending[: len(batch) + stopping]
            self._owners.clear()
            if pending:  # a batch cut at max_batch: the rest still wait, with their owners
                self._owners.update(
                    item.kwargs.get(_LINGER[item.fn])
                    for item in pending
                    if item is not None and item.fn in _LINGER
                )
            if batch:
                urgent = [item for item in batch if item.fn in _AHEAD]
                if urgent and len(batch) - len(urgent) > AHEAD_ALONE_OVER:
                    await self._commit(urgent)
                    batch = [item for item in batch if item.fn not in _AHEAD]
                await self._commit(batch)
            if stopping:
                return

    async def _commit(self, batch: list[_Item]) -> None:
        results: list[Any] = [None] * len(batch)
        writer = self._database.writer_thread
        try:
            if writer is not None and all(item.fn in _BULK for item in batch):
                await self._commit_on_thread(writer, batch)
            else:
                await self._commit_in_session(batch, results)
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0], error=exc)
                return
            # Find the bad write(s): each alone, in its own transaction, in order but for those
            # that go ahead (they depend on nothing queued before them), which go first.
            for item in sorted(batch, key=lambda item: item.fn not in _AHEAD):
                await self._commit([item])
            return
        except BaseException as exc:  # cancelled: nothing was committed (see _commit_on_thread)
            for item in batch:
                _settle(item, error=exc)
            raise
        self.batches += 1
        self.writes += len(batch)
        for item, value in zip(batch, results, strict=True):
            _settle(item, value=value)

    async def _commit_in_session(self, batch: list[_Item], results: list[Any]) -> None:
        """The batch in one transaction of an async session (PostgreSQL; and on SQLite, a
        batch with a write that is not a bulk write: those are few and rare)."""
        async with self._database.session() as session:
            i = 0
            while i < len(batch):
                item = batch[i]
                if item.fn not in _BULK:
                    results[i] = await item.fn(session, **item.kwargs)
                    i += 1
                    continue
                # A run of bulk writes: one executemany per function, in phase order.
                j = i
                while j < len(batch) and batch[j].fn in _BULK:
                    j += 1
                for bulk, rows in _grouped(batch[i:j]):
                    await run_bulk(session, bulk, rows)
                i = j

    async def _commit_on_thread(self, writer: WriterThread, batch: list[_Item]) -> None:
        """The batch (bulk writes only) in one transaction on the SQLite writer's thread: one
        hand-over for the whole batch, then its after-commit callbacks here, on the loop."""
        call = writer.submit(_commit_groups, _grouped(batch))
        try:
            callbacks = await asyncio.shield(call)
        except asyncio.CancelledError:
            # The thread takes the transaction to its end whatever happens here: wait for it,
            # so that a write it committed is not reported as failed (_commit then fails the
            # writes of a transaction that did not commit, as on the event loop).
            with contextlib.suppress(Exception):
                for callback in await call:
                    callback()
                for item in batch:
                    _settle(item)
            raise
        for callback in callbacks:
            callback()


def _grouped(run: list[_Item]) -> list[tuple[BulkWrite, list[dict[str, Any]]]]:
    """A run of bulk writes as one call per function, in phase order (ties: in the order of
    their first write in the run)."""
    groups: dict[Write, list[dict[str, Any]]] = {}
    for item in run:
        groups.setdefault(item.fn, []).append(item.kwargs)
    return [(_BULK[fn][1], groups[fn]) for fn in sorted(groups, key=lambda f: _BULK[f][0])]


def _commit_groups(
    connection: Connection, groups: list[tuple[BulkWrite, list[dict[str, Any]]]]
) -> list[Callable[[], None]]:
    """On the writer's thread: the groups in one transaction; the after-commit callbacks."""
    try:
        with connection.begin():
            for bulk, rows in groups:
                bulk(connection, rows)
    finally:
        callbacks = take_callbacks(connection)
    return callbacks


def _wake_up(wake: asyncio.Future[None]) -> None:
    if not wake.done():
        wake.set_result(None)


def _settle(item: _Item, value: Any = None, error: BaseException | None = None) -> None:
    if item.future.done():
        return
    if error is not None:
        item.future.set_exception(error)
    else:
        item.future.set_result(value)


def _log_failure(future: asyncio.Future[Any]) -> None:
    # Fire-and-forget writes are allowed, so a failed one must not vanish silently.
    if not future.cancelled() and future.exception() is not None:
        log.error("database write failed", exc_info=future.exception())
