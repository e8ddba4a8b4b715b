"""What a restarted server needs to resume the matches its predecessor left running.

A match is stored as it is played (server/repositories/matches.py): its row, seats, time
control, policy and seed when it starts, each move with the mover's bank once it was charged
(``moves.bank_ms``), each roll of the dice. That is all a referee needs to go on from the last
stored ply: the position comes from the moves through the rules, the dice from the seed, each
seat's clock from its last stored bank (server/referee/resume.py builds the runner).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.models import Bot, ChanceEvent, Match, MatchResume, MoveRecord, Seat
from ply_arena.server.repositories.matches import RUNNING


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One stored ply: a seat's move (``seat`` set) or a roll of the dice (``seat`` None)."""

    ply: int
    seat: int | None
    move: str
    forced: str | None = None
    #: The mover's bank (ms) once the move was charged; None for dice and for old moves.
    bank_ms: int | None = None


@dataclass(slots=True)
class StoredMatch:
    """A running match as the database has it."""

    match_id: str
    game: str
    #: (bot id, name) per seat, in seat order.
    seats: list[tuple[int, str]]
    move_ms: int
    bank_ms: int
    policy: str
    seed: int
    origin: str
    rated: bool
    events: list[StoredEvent] = field(default_factory=list)


async def running_matches(
    session: AsyncSession, ids: Sequence[str] | None = None
) -> list[StoredMatch]:
    """Every match stored as running (of ``ids`` when given), oldest first, with its events in
    ply order."""
    query = select(Match).where(Match.status == RUNNING)
    if ids is not None:
        query = query.where(Match.id.in_(list(ids)))
    matches = (await session.scalars(query.order_by(Match.created_at, Match.id))).all()
    if not matches:
        return []
    ids = [m.id for m in matches]
    stored = {
        m.id: StoredMatch(
            match_id=m.id,
            game=m.game,
            seats=[],
            move_ms=m.move_ms,
            bank_ms=m.bank_ms,
            policy=m.policy,
            seed=int(m.seed),
            origin=m.origin,
            rated=m.rated,
        )
        for m in matches
    }
    seats = await session.execute(
        select(Seat.match_id, Seat.seat, Bot.id, Bot.name)
        .join(Bot, Bot.id == Seat.bot_id)
        .where(Seat.match_id.in_(ids))
        .order_by(Seat.match_id, Seat.seat)
    )
    for match_id, _seat, bot_id, name in seats:
        stored[match_id].seats.append((bot_id, name))
    events: dict[str, list[tuple[int, int, StoredEvent]]] = {i: [] for i in ids}
    moves = await session.execute(
        select(
            MoveRecord.match_id,
            MoveRecord.ply,
            MoveRecord.seat,
            MoveRecord.move,
            MoveRecord.forced,
            MoveRecord.bank_ms,
        ).where(MoveRecord.match_id.in_(ids))
    )
    for match_id, ply, seat, move, forced, bank_ms in moves:
        events[match_id].append((ply, 1, StoredEvent(ply, seat, move, forced, bank_ms)))
    rolls = await session.execute(
        select(ChanceEvent.match_id, ChanceEvent.ply, ChanceEvent.outcome).where(
            ChanceEvent.match_id.in_(ids)
        )
    )
    for match_id, ply, outcome in rolls:
        events[match_id].append((ply, 0, StoredEvent(ply, None, outcome)))
    for match_id, found in events.items():
        # A roll sharing a ply number with a move comes first (as in the record).
        found.sort(key=lambda e: (e[0], e[1]))
        stored[match_id].events = [e for _, _, e in found]
    return list(stored.values())


async def note_resumed(session: AsyncSession, *, match_id: str, ply: int) -> None:
    """The match goes on from ``ply`` after a restart (its record lists each such moment)."""
    session.add(MatchResume(match_id=match_id, ply=ply))
