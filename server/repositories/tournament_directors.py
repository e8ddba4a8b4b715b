"""Which server process directs which tournament (``tournaments.director``): the SQL of the
directors' claims (server/tournaments/director.py), beside the tournaments' own.

A tournament being played (``running``, or ``paused`` with games still under way) is directed by
one process at a time, as a running match is played by one (``instances.claim_orphans``): a
process whose lease runs keeps its tournaments; one whose director's lease ran out, or that has
none, goes to the first process that claims it. On PostgreSQL the candidates are locked with
``FOR UPDATE SKIP LOCKED``, so two processes claiming at the same moment split them instead of
both taking one. Leases are compared on the database's clock (``cluster.clock``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import exists, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.cluster.clock import database_seconds
from ply_arena.server.db.models import Instance, Tournament

#: The statuses in which a tournament has a director: its games may be under way.
DIRECTED = ("running", "paused")


@dataclass(frozen=True)
class Claimed:
    """A tournament now directed by the claimer."""

    tournament_id: int
    status: str
    #: Whether the claimer directed it already (else: it was nobody's, or a dead process's).
    already: bool


async def claim(
    session: AsyncSession, instance_id: str, ids: Sequence[int] | None = None
) -> list[Claimed]:
    """Make ``instance_id`` the director of every tournament being played (of ``ids`` when
    given) that it directs already, that has no director or whose director's lease ran out;
    what it now directs, by id. Rows another claimer holds locked right now are skipped (that
    claimer takes them)."""
    now = database_seconds(session.get_bind().dialect.name)
    live_director = exists().where(Instance.id == Tournament.director, Instance.lease_until > now)
    query = (
        select(Tournament.id, Tournament.status, Tournament.director)
        .where(
            Tournament.status.in_(DIRECTED),
            or_(
                Tournament.director.is_(None),
                Tournament.director == instance_id,
                ~live_director,
            ),
        )
        .order_by(Tournament.id)
        .with_for_update(of=Tournament, skip_locked=True)
    )
    if ids is not None:
        query = query.where(Tournament.id.in_(list(ids)))
    found = (await session.execute(query)).all()
    taken = [t for t, _, director in found if director != instance_id]
    if taken:
        await session.execute(
            update(Tournament).where(Tournament.id.in_(taken)).values(director=instance_id)
        )
    return [Claimed(t, status, director == instance_id) for t, status, director in found]


async def take_on_start(session: AsyncSession, tournament_id: int, instance_id: str) -> bool:
    """The tournament is being started or resumed through ``instance_id``'s API: that process
    directs it, unless a live one does already; whether it does now. Written in the transaction
    that makes it ``running``, so that no other process's look claims it in between (a process
    to which none of its bots is connected would then direct it)."""
    now = database_seconds(session.get_bind().dialect.name)
    live_director = exists().where(
        Instance.id == Tournament.director,
        Instance.id != instance_id,
        Instance.lease_until > now,
    )
    taken = await session.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id, ~live_director)
        .values(director=instance_id)
        .returning(Tournament.id)
    )
    return taken.first() is not None


async def direction_of(session: AsyncSession, tournament_id: int) -> tuple[str | None, str | None]:
    """The tournament's status and director, read fresh: a director stops when either says
    the tournament is no longer its to play (paused, over, or taken over by another process
    after this one's lease ran out)."""
    found = (
        await session.execute(
            select(Tournament.status, Tournament.director).where(Tournament.id == tournament_id)
        )
    ).first()
    return (None, None) if found is None else (str(found[0]), found[1])


async def lock_if_director(session: AsyncSession, tournament_id: int, instance_id: str) -> bool:
    """Whether ``instance_id`` directs the tournament, its row then locked until the end of the
    transaction: a director draws a round in it, and no other process can claim the
    tournament meanwhile (its claim skips a locked row), so one round is drawn once."""
    found = await session.scalar(
        select(Tournament.director).where(Tournament.id == tournament_id).with_for_update()
    )
    return found == instance_id
