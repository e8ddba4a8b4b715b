"""The rows of one query on a database a test's server processes use, read on a connection of
the test's own (what the processes stored, not what they say)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from ply_arena.server.db.database import Database


async def rows(db_url: str, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    database = Database(db_url)
    try:
        async with database.session() as session:
            return [tuple(row) for row in await session.execute(text(sql), params)]
    finally:
        await database.dispose()
