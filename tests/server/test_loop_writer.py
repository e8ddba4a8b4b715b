"""The recorder's SQLite transactions on the event loop's thread (server/db/loop_writer.py): the
write lock taken with BEGIN IMMEDIATE and waited for on the loop, never in SQLite's busy
handler; rollbacks; checkpoints on a thread of their own. A real SQLite file throughout."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from ply_arena.server.db import loop_writer
from ply_arena.server.db.database import (
    SQLITE_BUSY_TIMEOUT_MS,
    Database,
    _sqlite_on_connect,
    after_commit,
)
from ply_arena.server.db.loop_writer import LoopWriter
from ply_arena.server.repositories import bots


def _file(database: Database) -> str:
    assert database.loop_writer is not None and database.loop_writer.path
    return database.loop_writer.path


async def _names(database: Database) -> list[str]:
    async with database.session() as session:
        return list((await session.execute(text("SELECT name FROM bots ORDER BY id"))).scalars())


async def test_a_sqlite_file_gets_a_loop_writer_and_memory_does_not(database: Database) -> None:
    assert database.loop_writer is not None
    memory = Database("sqlite+aiosqlite:///:memory:")
    assert memory.loop_writer is None
    await memory.dispose()


async def test_a_batch_waits_on_the_loop_while_another_connection_holds_the_write_lock(
    database: Database,
) -> None:
    writer = database.loop_writer
    assert writer is not None
    locked = asyncio.Event()
    release = asyncio.Event()

    async def other_writer() -> None:
        # An async-engine transaction that holds the lock across awaits: it needs the loop to
        # get to its commit, so a batch that waited in SQLite's busy handler would block both.
        async with database.session() as session:
            await bots.create_bot(session, "first")
            await session.flush()
            locked.set()
            await release.wait()

    holder = asyncio.create_task(other_writer())
    await asyncio.wait_for(locked.wait(), 10)

    async def batch() -> None:
        async with database.write_session() as session:
            await bots.create_bot(session, "second")

    writing = asyncio.create_task(batch())
    # The loop runs on while the batch waits: the batch is not done, and it has waited.
    while writer.lock_waits == 0:
        await asyncio.sleep(0.001)
    assert not writing.done()
    release.set()
    await asyncio.wait_for(asyncio.gather(holder, writing), 10)
    assert await _names(database) == ["first", "second"]


async def test_a_lock_held_past_the_busy_timeout_fails_the_batch_and_writes_nothing(
    db_url: str, database: Database
) -> None:
    path = _file(database)
    writer = LoopWriter(database.engine.url, _sqlite_on_connect, busy_timeout_ms=50)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(OperationalError, match="BEGIN IMMEDIATE"):
            async with writer.session() as session:
                await session.execute(text("INSERT INTO bots (name) VALUES ('never')"))
        assert writer.lock_waits >= 2  # it waited, backing off, then gave up
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    # The writer works again once the lock is free.
    async with writer.session() as session:
        await bots.create_bot(session, "after")
    await writer.dispose()
    assert await _names(database) == ["after"]
    assert SQLITE_BUSY_TIMEOUT_MS >= 1000  # the server's own writer waits much longer


async def test_a_failed_batch_rolls_back_and_the_next_one_commits(database: Database) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        async with database.write_session() as session:
            await bots.create_bot(session, "lost")
            await session.flush()
            raise RuntimeError("boom")
    async with database.write_session() as session:
        await bots.create_bot(session, "kept")
    assert await _names(database) == ["kept"]


async def test_a_batch_that_executes_nothing_still_releases_the_write_lock(
    database: Database,
) -> None:
    async with database.write_session():
        pass
    # Another connection can take the lock at once (no busy wait at all).
    other = sqlite3.connect(_file(database), timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()


async def test_after_commit_callbacks_run_after_the_commit_and_not_after_a_rollback(
    database: Database,
) -> None:
    heard: list[str] = []
    async with database.write_session() as session:
        after_commit(session, lambda: heard.append("committed"))
        assert heard == []
    assert heard == ["committed"]
    with pytest.raises(RuntimeError):
        async with database.write_session() as session:
            after_commit(session, lambda: heard.append("rolled back"))
            raise RuntimeError
    assert heard == ["committed"]


async def test_commits_never_checkpoint_on_the_loop_a_thread_does(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's connection leaves the WAL alone; a checkpoint on another thread copies it
    into the database file (read here with the WAL ignored: ``immutable=1``)."""
    writer = database.loop_writer
    assert writer is not None
    path = _file(database)

    def in_file(name: str) -> bool:
        uri = f"{Path(path).as_uri()}?immutable=1"
        reader = sqlite3.connect(uri, uri=True)
        try:
            return (
                reader.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is not None
            )
        finally:
            reader.close()

    async with writer.session() as session:
        autocheckpoint = (await session.execute(text("PRAGMA wal_autocheckpoint"))).scalar()
    assert autocheckpoint == 0

    async def write(name: str, every_s: float) -> None:
        monkeypatch.setattr(loop_writer, "CHECKPOINT_EVERY_S", every_s)
        async with writer.session() as session:
            await bots.create_bot(session, name)
        if writer._checkpointing is not None:
            await asyncio.wait_for(asyncio.shield(writer._checkpointing), 10)

    await write("first", 0.0)  # a checkpoint: the schema and this bot reach the file
    assert in_file("first")
    await write("in-the-wal", 3600.0)
    assert not in_file("in-the-wal")  # committed, but only in the WAL
    await write("next", 0.0)
    assert in_file("in-the-wal") and in_file("next")
    assert await _names(database) == ["first", "in-the-wal", "next"]
