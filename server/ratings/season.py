"""A class's season leaderboard: its bots' ratings rated afresh from the season's start.

A season (``class_seasons``) is a window of time. Its class leaderboard replays, through a fresh
:class:`~ply_arena.server.ratings.ledger.Ledger` with the server's model and anchors, every rated
result of the game that finished in that window with a bot of the class in it, in the order the
results were rated (``rated_seq``). The class's bots start at the initial rating (mu 25, sigma
8.33, an anchor pinned), as new bots would; every other seat (a house bot, a bot of another
class) plays at its global rating before that match, read from its ``rating_history`` row: the
yardstick the global ratings use, so a season's number means what a global one means.

Nothing is stored: the board is a function of the stored results and their history rows, which
``arena ratings rebuild`` recomputes to the same numbers; so a season's board is the same after a
rebuild, and an ended season never changes (read-only). In a class's first season, whose window
opens when the class was made (before any of its bots existed), each bot's season rating is its
global rating: same inputs, same arithmetic, same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.models import Bot, ClassSeason, Match, RatingChange, Result, Seat
from ply_arena.server.ratings.ledger import Ledger, RatedResult, RatingState
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.repositories import ratings as rating_repo


@dataclass(frozen=True, slots=True)
class SeasonRow:
    """A class bot's season rating and record in one game."""

    bot: Bot
    rating: RatingState


def _window(season: ClassSeason, game: str, class_ids: Sequence[int]) -> Select[Any]:
    """The ids of the season's rated results of ``game`` with a class bot in them."""
    query = (
        select(Result.match_id)
        .join(Match, Match.id == Result.match_id)
        .where(
            Match.game == game,
            Result.rated_seq.is_not(None),
            Result.finished_at >= season.started_at,
            Result.match_id.in_(select(Seat.match_id).where(Seat.bot_id.in_(class_ids))),
        )
    )
    if season.ended_at is not None:
        query = query.where(Result.finished_at < season.ended_at)
    return query


async def season_ratings(
    session: AsyncSession, season: ClassSeason, game: str, model: RatingModel
) -> list[SeasonRow]:
    """Every class bot rated in ``game`` in ``season`` (retired and disabled ones too), best
    conservative rating first (then mu, then name), as the leaderboard ranks."""
    members = {
        bot.id: bot
        for bot in (await session.scalars(select(Bot).where(Bot.class_id == season.class_id)))
    }
    if not members:
        return []
    ids = list(members)
    window = _window(season, game, ids)
    rows = (
        await session.execute(
            select(Result.match_id, Result.termination, Result.at_fault, Result.finished_at)
            .where(Result.match_id.in_(window))
            .order_by(Result.rated_seq)
        )
    ).all()
    seats: dict[str, list[tuple[int, int, float | None]]] = {}
    for match_id, seat, bot_id, payoff in await session.execute(
        select(Seat.match_id, Seat.seat, Seat.bot_id, Seat.payoff).where(Seat.match_id.in_(window))
    ):
        seats.setdefault(match_id, []).append((seat, bot_id, payoff))
    # The opponents' global ratings before each match (their seats' history rows).
    before: dict[tuple[str, int], tuple[float, float]] = {
        (match_id, seat): (mu, sigma)
        for match_id, seat, mu, sigma in await session.execute(
            select(
                RatingChange.match_id,
                RatingChange.seat,
                RatingChange.mu_before,
                RatingChange.sigma_before,
            ).where(RatingChange.match_id.in_(window), RatingChange.bot_id.not_in(ids))
        )
    }
    anchors = await session.run_sync(
        lambda sync: rating_repo.anchor_ids(sync.connection(), model.anchors)
    )
    ledger = Ledger(model, anchors=anchors)
    for match_id, termination, at_fault, finished_at in rows:
        ordered = sorted(seats.get(match_id, []))
        for seat, bot_id, _ in ordered:
            if bot_id not in members:
                mu, sigma = before.get((match_id, seat)) or model.initial()
                ledger.states[(bot_id, game)] = RatingState(bot_id, game, mu, sigma)
        ledger.record(
            RatedResult(
                match_id,
                game,
                tuple(bot_id for _, bot_id, _ in ordered),
                tuple(float(payoff or 0.0) for _, _, payoff in ordered),
                termination,
                at_fault,
                finished_at,
            )
        )
    found = [
        SeasonRow(members[bot_id], state)
        for (bot_id, _), state in ledger.states.items()
        if bot_id in members
    ]
    found.sort(key=lambda r: (-r.rating.conservative, -r.rating.mu, r.bot.name, r.bot.id))
    return found
