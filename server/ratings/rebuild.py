"""Every rating recomputed from the rated results, in the order they were rated.

Ratings are derived data: the ``ratings`` and ``rating_history`` tables hold nothing that the
stored results do not. ``rebuild`` deletes both and replays every rated result (``results``
with a ``rated_seq``) through a fresh :class:`~ply_arena.server.ratings.ledger.Ledger` with the
current settings' model, so it gives exactly what the incremental updates gave (same arithmetic,
same order, the same anchors pinned), or what they would have given with other settings:
changing ``ARENA_RATING_*`` and rebuilding is how an instructor corrects the ratings.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.ratings.anchors import pinned
from ply_arena.server.ratings.ledger import Ledger, RatingChange
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.ratings.service import ratings_lock
from ply_arena.server.repositories import ratings as rating_repo


@dataclass(frozen=True)
class Rebuilt:
    matches: int
    ratings: int


async def rebuild(session: AsyncSession, model: RatingModel) -> Rebuilt:
    """Recompute every rating and history row (in the caller's transaction), holding the
    ratings lock (PostgreSQL): no server process stores a rated result meanwhile."""
    await session.run_sync(lambda sync: ratings_lock(sync.connection()))
    results = await rating_repo.all_rated_results(session)
    anchors = await session.run_sync(
        lambda sync: rating_repo.anchor_ids(sync.connection(), model.anchors)
    )
    ledger = Ledger(model, anchors=anchors)
    changes: list[RatingChange] = []
    for result in results:
        changes.extend(ledger.record(result))
    await rating_repo.clear(session)
    states = list(ledger.states.values())
    await session.run_sync(lambda sync: rating_repo.save(sync.connection(), states, set(), []))
    await rating_repo.write_history(session, changes)
    return Rebuilt(len(results), len(states))


async def needs_rebuild(session: AsyncSession, model: RatingModel | None = None) -> bool:
    """Whether some rated result has no rating rows (a database from before ratings, or one
    whose rating tables were emptied), or (given the ``model``) an anchor's stored rating is
    not its pinned one (the anchors were changed: its opponents were rated against something
    else): the server then rebuilds on start."""
    rated, with_history = await rating_repo.counts(session)
    if rated != with_history:
        return True
    if model is None:
        return False

    def unpinned(connection: Connection) -> bool:
        anchors = rating_repo.anchor_ids(connection, model.anchors)
        states = rating_repo.load_states(connection, anchors)
        return any((s.mu, s.sigma) != pinned(anchors[s.bot_id, s.game]) for s in states)

    return await session.run_sync(lambda sync: unpinned(sync.connection()))


async def rebuild_if_needed(session: AsyncSession, model: RatingModel) -> Rebuilt | None:
    """Rebuild when :func:`needs_rebuild` says so (None: no need), deciding under the ratings
    lock: of several processes starting at once on one database, one rebuilds and the others,
    waiting for it, find nothing left to do."""
    await session.run_sync(lambda sync: ratings_lock(sync.connection()))
    if not await needs_rebuild(session, model):
        return None
    return await rebuild(session, model)
