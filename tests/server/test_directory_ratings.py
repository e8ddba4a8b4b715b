"""Ratings stored by one process reach the others' lobbies (server/cluster/directory.py): two
referees on one PostgreSQL database, each with its own bus connection, as two processes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from _waiting import until

from ply_arena.server.cluster.bus import open_bus
from ply_arena.server.cluster.directory import Directory
from ply_arena.server.db.database import Database
from ply_arena.server.ratings.ledger import RatingState
from ply_arena.server.referee import Referee
from ply_arena.server.settings import Settings

pytestmark = pytest.mark.postgresql_only


@contextlib.asynccontextmanager
async def _process(db_url: str) -> AsyncIterator[Referee]:
    database = Database(db_url)
    await database.migrate()
    referee = Referee(database, Settings(db_url=db_url, house_bots=""))
    await referee.start()
    bus = open_bus(db_url)
    await bus.start()
    referee.directory = Directory(referee, bus, lambda: referee.owner)
    await referee.directory.start()
    try:
        yield referee
    finally:
        await referee.stop()
        referee.directory.stop()
        await bus.close()
        await database.dispose()


async def test_a_rating_stored_by_one_process_reaches_the_others_book(db_url: str) -> None:
    async with _process(db_url) as one, _process(db_url) as other:
        assert other.ratings.mu(7, "othello") == 25.0
        one.ratings.confirm([RatingState(7, "othello", 31.5, 6.0)])
        await until(lambda: other.ratings.mu(7, "othello") == 31.5, 10, "the rating heard")
        assert other.ratings.get(7, "othello") == (31.5, 6.0)
        # Alone on the database, a process tells nobody (no message on the bus per match).
        assert one.directory is not None
        one.directory.alone = True
        one.ratings.confirm([RatingState(8, "othello", 20.0, 6.0)])
        one.ratings.confirm([RatingState(7, "othello", 33.0, 6.0)])
        one.directory.alone = False
        one.ratings.confirm([RatingState(9, "othello", 22.0, 6.0)])
        await until(lambda: other.ratings.mu(9, "othello") == 22.0, 10, "the last one")
        assert other.ratings.mu(8, "othello") == 25.0  # never sent
        assert other.ratings.mu(7, "othello") == 31.5
