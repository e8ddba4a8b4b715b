"""Whether the stored ratings are what ``arena ratings rebuild`` makes of the stored results,
and whether every rating anchor found among them is at its pinned rating."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from ply_arena.server.db.database import Database
from ply_arena.server.ratings import RatingModel
from ply_arena.server.ratings.rebuild import rebuild
from ply_arena.server.repositories import ratings as rating_repo


async def assert_ratings_equal_a_rebuild(db_url: str, model: RatingModel | None = None) -> None:
    """``model``: the server's (its anchors); the default settings' when None."""
    model = model or RatingModel()
    database = Database(db_url)
    try:
        stored = await _every_rating(database)
        assert stored, "no rating was stored"
        await _assert_anchors_pinned(database, model, stored)
        async with database.session() as session:
            await rebuild(session, model)
        assert await _every_rating(database) == stored
    finally:
        await database.dispose()


async def _assert_anchors_pinned(
    database: Database, model: RatingModel, stored: list[tuple[Any, ...]]
) -> None:
    async with database.session() as session:
        anchors = await session.run_sync(
            lambda sync: rating_repo.anchor_ids(sync.connection(), model.anchors)
        )
    for bot_id, game, mu, sigma, _ in stored:
        if (bot_id, game) in anchors:
            assert (mu, sigma) == (anchors[bot_id, game], 0.0), f"anchor {bot_id} moved in {game}"


async def _every_rating(database: Database) -> list[tuple[Any, ...]]:
    async with database.session() as session:
        rows = await session.execute(
            text("SELECT bot_id, game, mu, sigma, matches FROM ratings ORDER BY bot_id, game")
        )
        return [tuple(row) for row in rows.all()]
