"""The server processes working on this database (``instances``) and who plays which running
match (``matches.owner``): the SQL of server/cluster.

Every time is the database's (``cluster.clock``). A process holds what it owns while its lease
runs; ``claim_orphans`` hands the running matches of processes whose lease ran out (and those
nobody owns) to the caller, each to exactly one caller however many ask at once: on PostgreSQL
the candidates are locked with ``FOR UPDATE SKIP LOCKED``, so two processes claiming at the same
moment split them instead of waiting for each other or taking the same match twice.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import delete, exists, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from ply_arena.server.cluster.clock import database_seconds
from ply_arena.server.db.models import Instance, Match, Seat, utcnow
from ply_arena.server.repositories.matches import RUNNING


def _now(session: AsyncSession) -> ColumnElement[float]:
    return database_seconds(session.get_bind().dialect.name)


async def register(
    session: AsyncSession,
    instance_id: str,
    *,
    host: str,
    pid: int,
    process_start: str | None,
    lease_s: float,
) -> None:
    """A new process, holding a lease of ``lease_s`` from now."""
    session.add(
        Instance(
            id=instance_id,
            host=host,
            pid=pid,
            process_start=process_start,
            started_at=utcnow(),
            lease_until=0.0,
        )
    )
    await session.flush()
    await session.execute(
        update(Instance)
        .where(Instance.id == instance_id)
        .values(lease_until=_now(session) + lease_s)
    )


async def renew(session: AsyncSession, instance_id: str, lease_s: float) -> bool:
    """Extend the lease to ``lease_s`` from now; False when it had already run out (or was given
    up): then another process may have taken over what this one owned, and it must let go."""
    result = await session.execute(
        update(Instance)
        .where(
            Instance.id == instance_id,
            Instance.lease_until > _now(session),
            Instance.stopped_at.is_(None),
        )
        .values(lease_until=_now(session) + lease_s)
        .returning(Instance.id)
    )
    return result.first() is not None


async def give_up(session: AsyncSession, instance_id: str) -> None:
    """A clean stop: end the lease now, so that others take over its matches at once."""
    await session.execute(
        update(Instance)
        .where(Instance.id == instance_id)
        .values(lease_until=0.0, stopped_at=utcnow())
    )


async def expire(
    session: AsyncSession,
    instance_id: str,
    *,
    host: str | None = None,
    alive: Callable[[int, str | None], bool] | None = None,
) -> list[str]:
    """End the leases of processes known to be gone, other than ``instance_id``: those (on
    ``host``, when given) for which ``alive(pid, process_start)`` is False (a kill -9 on this
    machine need not wait for its lease to run out), or, with neither argument, every other
    one. Their ids."""
    query = select(Instance.id, Instance.pid, Instance.process_start).where(
        Instance.id != instance_id, Instance.lease_until > _now(session)
    )
    if host is not None:
        query = query.where(Instance.host == host)
    gone = [
        i
        for i, pid, start in (await session.execute(query)).all()
        if alive is None or not alive(pid, start)
    ]
    if gone:
        await session.execute(update(Instance).where(Instance.id.in_(gone)).values(lease_until=0.0))
    return gone


async def claim_orphans(
    session: AsyncSession, instance_id: str, *, unowned: bool = True
) -> dict[str, str | None]:
    """Make ``instance_id`` the owner of every running match whose owner's lease has run out,
    and (``unowned``: at a start) of those that have none (stored before owners existed); the
    ids taken, each with its former owner. Rows another claimer holds locked right now are
    skipped (that claimer takes them); those read here stay locked until the transaction
    ends."""
    live_owner = exists().where(Instance.id == Match.owner, Instance.lease_until > _now(session))
    dead_owner = Match.owner.is_not(None) & ~live_owner
    orphans = (
        select(Match.id, Match.owner)
        .where(
            Match.status == RUNNING,
            or_(Match.owner.is_(None), ~live_owner) if unowned else dead_owner,
        )
        .with_for_update(of=Match, skip_locked=True)
    )
    taken: dict[str, str | None] = {
        match_id: owner for match_id, owner in await session.execute(orphans)
    }
    if taken:
        await session.execute(
            update(Match).where(Match.id.in_(list(taken))).values(owner=instance_id)
        )
    return taken


async def owned(session: AsyncSession, instance_id: str) -> list[str]:
    """The running matches ``instance_id`` owns."""
    query = select(Match.id).where(Match.status == RUNNING, Match.owner == instance_id)
    return list((await session.scalars(query)).all())


async def live(session: AsyncSession) -> list[Instance]:
    """The processes whose lease runs, oldest first."""
    query = (
        select(Instance)
        .where(Instance.lease_until > _now(session))
        .order_by(Instance.started_at, Instance.id)
    )
    return list((await session.scalars(query)).all())


async def live_ids(session: AsyncSession) -> set[str]:
    """The ids of the processes whose lease runs."""
    query = select(Instance.id).where(Instance.lease_until > _now(session))
    return set((await session.scalars(query)).all())


async def prune(session: AsyncSession, *, older_than_s: float) -> int:
    """Forget processes whose lease ran out over ``older_than_s`` ago and that own no running
    match; how many."""
    busy = exists().where(Match.owner == Instance.id, Match.status == RUNNING)
    result = await session.scalars(
        delete(Instance)
        .where(Instance.lease_until < _now(session) - older_than_s, ~busy)
        .returning(Instance.id)
    )
    return len(result.all())


async def running_matches_of(session: AsyncSession, bot_id: int) -> list[tuple[str, str | None]]:
    """The running matches in which ``bot_id`` holds a seat, whichever process plays them,
    oldest first: (match id, owner)."""
    query = (
        select(Match.id, Match.owner)
        .join(Seat, Seat.match_id == Match.id)
        .where(Seat.bot_id == bot_id, Match.status == RUNNING)
        .order_by(Match.created_at, Match.id)
    )
    return [(match_id, owner) for match_id, owner in (await session.execute(query)).all()]


async def live_owner(session: AsyncSession, match_id: str) -> str | None:
    """The live process that plays ``match_id`` while it runs (None: not running, or its
    process's lease ran out)."""
    query = (
        select(Match.owner)
        .join(Instance, Instance.id == Match.owner)
        .where(Match.id == match_id, Match.status == RUNNING, Instance.lease_until > _now(session))
    )
    return await session.scalar(query)
