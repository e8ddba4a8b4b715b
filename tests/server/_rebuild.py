"""Whether the stored ratings are what ``arena ratings rebuild`` makes of the stored results."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from ply_arena.server.db.database import Database
from ply_arena.server.ratings import RatingModel
from ply_arena.server.ratings.rebuild import rebuild


async def assert_ratings_equal_a_rebuild(db_url: str) -> None:
    database = Database(db_url)
    try:
        stored = await _every_rating(database)
        assert stored, "no rating was stored"
        async with database.session() as session:
            await rebuild(session, RatingModel())
        assert await _every_rating(database) == stored
    finally:
        await database.dispose()


async def _every_rating(database: Database) -> list[tuple[Any, ...]]:
    async with database.session() as session:
        rows = await session.execute(
            text("SELECT bot_id, game, mu, sigma, matches FROM ratings ORDER BY bot_id, game")
        )
        return [tuple(row) for row in rows.all()]
