"""A rated match stored as the referee stores one (created, then its result with its ratings),
without playing it: for tests of ratings and leaderboards."""

from __future__ import annotations

from collections.abc import Sequence

from ply_arena.server.db.database import Database
from ply_arena.server.ratings import RatingBook
from ply_arena.server.ratings.service import store_result
from ply_arena.server.repositories import matches as match_repo


async def store_rated(
    database: Database,
    book: RatingBook,
    *,
    match_id: str,
    game: str,
    bot_ids: Sequence[int],
    payoffs: Sequence[float],
    seed: int = 0,
) -> None:
    await database.recorder.submit(
        match_repo.create_match,
        match_id=match_id,
        game=game,
        bot_ids=list(bot_ids),
        time_control={"move_ms": 1000, "bank_ms": 0},
        policy="forfeit",
        seed=seed,
        rated=True,
    )
    await database.recorder.submit(
        store_result,
        match_id=match_id,
        payoffs=list(payoffs),
        termination="normal",
        at_fault=None,
        final_position=None,
        game=game,
        bot_ids=list(bot_ids),
        rated=True,
        book=book,
    )
