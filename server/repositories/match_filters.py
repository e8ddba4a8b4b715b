"""The tournament and class filters of the match lists (``/matches``, ``GET /api/matches``):
names turned into ids, with one answer for a name that cannot be one and another for a name
that is free, shared by the page and the API."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.protocol.wire import clip
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import tournaments as tournament_repo
from ply_arena.server.repositories.bots import name_problem


class BadFilterError(ValueError):
    """The value cannot be a name of what it filters by (a 400)."""


class UnknownFilterError(LookupError):
    """Nothing has that name (a 404, as ``?class=`` of the leaderboard and tournament list)."""


@dataclass(frozen=True)
class ContextFilter:
    tournament: str | None = None
    tournament_id: int | None = None
    class_name: str | None = None
    class_id: int | None = None


async def resolve(
    session: AsyncSession, tournament: str | None, class_name: str | None
) -> ContextFilter:
    """Ids of the tournament and class named (None: no such filter), with their names as
    stored; BadFilterError or UnknownFilterError."""
    found = ContextFilter()
    if tournament:
        if (problem := name_problem(tournament, "tournament")) is not None:
            raise BadFilterError(problem)
        t = await tournament_repo.tournament_by_name(session, tournament)
        if t is None:
            raise UnknownFilterError(f"no tournament named {clip(repr(tournament), 80)}")
        found = ContextFilter(tournament=t.name, tournament_id=t.id)
    if class_name:
        if (problem := name_problem(class_name, "class")) is not None:
            raise BadFilterError(problem)
        c = await class_repo.class_by_name(session, class_name)
        if c is None:
            raise UnknownFilterError(f"no class named {clip(repr(class_name), 80)}")
        found = ContextFilter(found.tournament, found.tournament_id, c.name, c.id)
    return found
