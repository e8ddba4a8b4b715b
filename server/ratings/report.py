"""Leaderboards, bot pages and rating histories as plain JSON data: what the REST API serves
and ``arena leaderboard`` prints (from the local database or a server's API alike).

Ranked by the conservative rating mu - 3 sigma (the bot very probably is at least this strong),
shown with mu and sigma; a bot with fewer than ``provisional`` rated matches in a game is
provisional there. Disabled bots are left out of the rankings. A game's rating anchor
(server/ratings/anchors.py) is marked: ``"anchor": true`` and ``"fixed_at"``, its pinned rating
(it is never provisional: its rating is fixed, not estimated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.models import Bot, Classroom, ClassSeason, Rating
from ply_arena.server.ratings.anchors import Anchor, anchor_in
from ply_arena.server.ratings.ledger import RatingState
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.ratings.season import season_ratings
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import ratings as rating_repo
from ply_arena.server.repositories.matches import iso

#: Matches listed on a bot's page.
RECENT_MATCHES = 10


def rating_row(
    rating: Rating | RatingState, provisional: int, anchor: Anchor | None = None
) -> dict[str, Any]:
    return {
        "conservative": round(rating.conservative, 3),
        "mu": round(rating.mu, 3),
        "sigma": round(rating.sigma, 3),
        "provisional": anchor is None and rating.matches < provisional,
        "anchor": anchor is not None,
        "fixed_at": None if anchor is None else anchor.rating,
        "matches": rating.matches,
        "wins": rating.wins,
        "draws": rating.draws,
        "losses": rating.losses,
        "timeouts": rating.timeouts,
        "illegal_moves": rating.illegal_moves,
        "disconnects": rating.disconnects,
        "last_played": iso(rating.last_played_at) if rating.last_played_at else None,
    }


async def leaderboard(
    session: AsyncSession,
    game: str,
    *,
    limit: int,
    offset: int,
    provisional: int,
    classroom: Classroom | None = None,
    season: ClassSeason | None = None,
    model: RatingModel | None = None,
) -> dict[str, Any]:
    """A page of the leaderboard under ``model`` (the server's: its anchors are marked; default:
    the default model). With ``classroom``: the class's leaderboard in ``season`` (default: its
    current one), its bots rated afresh from the season's start (server/ratings/season.py) with
    ``model``: the enabled bots in the current season, every bot that played in an ended one
    (read-only, as it was)."""
    model = model or RatingModel()
    anchors = model.anchors
    if classroom is not None:
        return await _class_leaderboard(
            session,
            game,
            limit=limit,
            offset=offset,
            provisional=provisional,
            classroom=classroom,
            season=season or await class_repo.season(session, classroom),
            model=model,
        )
    rows, total = await rating_repo.leaderboard(session, game, limit=limit, offset=offset)
    return {
        "game": game,
        "class": None,
        "season": None,
        "total": total,
        "limit": limit,
        "offset": offset,
        "provisional_below": provisional,
        "ranking": [
            {"rank": offset + i + 1, "bot": bot.name, "house": bot.house}
            | rating_row(rating, provisional, anchor_in(anchors, bot.name, game))
            for i, (rating, bot) in enumerate(rows)
        ],
    }


def season_info(season: ClassSeason) -> dict[str, Any]:
    return {
        "number": season.number,
        "started_at": iso(season.started_at),
        "ended_at": None if season.ended_at is None else iso(season.ended_at),
        "current": season.ended_at is None,
    }


async def _class_leaderboard(
    session: AsyncSession,
    game: str,
    *,
    limit: int,
    offset: int,
    provisional: int,
    classroom: Classroom,
    season: ClassSeason,
    model: RatingModel,
) -> dict[str, Any]:
    anchors = model.anchors
    rows = await season_ratings(session, season, game, model)
    if season.ended_at is None:
        # As on every leaderboard now: disabled (and retired) bots are left out.
        rows = [r for r in rows if r.bot.enabled]
    shown = rows[offset : offset + limit]
    return {
        "game": game,
        "class": classroom.name,
        "season": season_info(season),
        "total": len(rows),
        "limit": limit,
        "offset": offset,
        "provisional_below": provisional,
        "ranking": [
            {"rank": offset + i + 1, "bot": r.bot.name, "house": r.bot.house}
            | {"retired": r.bot.retired_at is not None}
            | rating_row(r.rating, provisional, anchor_in(anchors, r.bot.name, game))
            for i, r in enumerate(shown)
        ],
    }


async def bot_page(
    session: AsyncSession, bot: Bot, *, provisional: int, anchors: Sequence[Anchor] = ()
) -> dict[str, Any]:
    ratings = await rating_repo.ratings_of(session, bot.id)
    recent, total = await match_repo.list_matches(session, bot_id=bot.id, limit=RECENT_MATCHES)
    return {
        "name": bot.name,
        "enabled": bot.enabled,
        "house": bot.house,
        "agent": bot.agent,
        "created_at": iso(bot.created_at),
        "ratings": [
            # A disabled bot is left out of the rankings: no rank (its rating is kept).
            {"game": r.game, "rank": rank if bot.enabled else None, "ranked": ranked}
            | rating_row(r, provisional, anchor_in(anchors, bot.name, r.game))
            for r, rank, ranked in ratings
        ],
        "matches": total,
        "recent_matches": recent,
        "head_to_head": await rating_repo.head_to_head(session, bot.id),
    }


async def history(session: AsyncSession, bot: Bot, game: str | None) -> dict[str, Any]:
    changes = await rating_repo.history(session, bot.id, game)
    return {
        "bot": bot.name,
        "game": game,
        "history": [
            {
                "match_id": c.match_id,
                "game": c.game,
                "at": iso(c.at),
                "place": c.rank,
                "mu": round(c.mu, 3),
                "sigma": round(c.sigma, 3),
                "conservative": round(c.conservative, 3),
                "mu_before": round(c.mu_before, 3),
                "sigma_before": round(c.sigma_before, 3),
            }
            for c in changes
        ],
    }
