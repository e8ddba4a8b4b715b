"""Ratings and their history: what the rating service reads and writes, and what the
leaderboard and bot pages show."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from sqlalchemy import (
    Connection,
    bindparam,
    case,
    delete,
    func,
    insert,
    select,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.many_rows import insert_rows, run_many
from ply_arena.server.db.models import Base, Bot, Match, Rating, RatingChange, Result, Seat
from ply_arena.server.ratings.anchors import Anchor
from ply_arena.server.ratings.ledger import RatedResult, RatingState
from ply_arena.server.ratings.ledger import RatingChange as Change

_RATINGS = Base.metadata.tables[Rating.__tablename__]
_HISTORY = Base.metadata.tables[RatingChange.__tablename__]
_RESULTS = Base.metadata.tables[Result.__tablename__]
_STATE_FIELDS = (
    "mu",
    "sigma",
    "matches",
    "wins",
    "draws",
    "losses",
    "timeouts",
    "illegal_moves",
    "disconnects",
    "last_played_at",
)
_CHANGE_FIELDS = tuple(f.name for f in fields(Change))
_UPDATE_STATE = (
    update(_RATINGS)
    .where(_RATINGS.c.bot_id == bindparam("b_bot_id"), _RATINGS.c.game == bindparam("b_game"))
    .values(
        conservative=bindparam("b_conservative"),
        **{name: bindparam(f"b_{name}") for name in _STATE_FIELDS},
    )
)
#: Built once (see server/repositories/matches.py's statements).
_INSERT_HISTORY = insert(_HISTORY)
# --- what the rating service reads and writes ------------------------------------------------


async def _with_seats(session: AsyncSession, rows: Sequence[Any]) -> dict[str, RatedResult]:
    """The rated results of ``rows`` (every rated result), with their seats."""
    # One query for the seats of every rated match, in a join: a rebuild reads them all, and
    # chunks of ids cost a round trip each (PostgreSQL: 200 of them for 100,000 matches).
    seats: dict[str, list[tuple[int, int, float | None]]] = {}
    for match_id, seat, bot_id, payoff in await session.execute(
        select(Seat.match_id, Seat.seat, Seat.bot_id, Seat.payoff)
        .join(Result, Result.match_id == Seat.match_id)
        .where(Result.rated_seq.is_not(None))
    ):
        seats.setdefault(match_id, []).append((seat, bot_id, payoff))
    results = {}
    for match_id, game, termination, at_fault, finished_at in rows:
        ordered = sorted(seats.get(match_id, []))
        results[match_id] = RatedResult(
            match_id,
            game,
            tuple(bot_id for _, bot_id, _ in ordered),
            tuple(float(payoff or 0.0) for _, _, payoff in ordered),  # finished: all set
            termination,
            at_fault,
            finished_at,
        )
    return results


def anchor_ids(connection: Connection, anchors: Sequence[Anchor]) -> dict[tuple[int, str], float]:
    """The pinned rating of each anchor, by (bot id, game): the anchors whose bot exists (a
    name is found whatever its case, as bot names are)."""
    if not anchors:
        return {}
    keys = {a.bot.lower() for a in anchors}
    ids = dict(connection.execute(select(Bot.name_key, Bot.id).where(Bot.name_key.in_(keys))).all())
    return {(ids[a.bot.lower()], a.game): a.rating for a in anchors if a.bot.lower() in ids}


def name_keys(connection: Connection, bot_ids: Iterable[int]) -> dict[int, str]:
    """bot id -> its name in lower case (``name_key``), for those of ``bot_ids`` that exist."""
    query = select(Bot.id, Bot.name_key).where(Bot.id.in_(list(bot_ids)))
    return {bot_id: str(key) for bot_id, key in connection.execute(query).all()}


def load_states(connection: Connection, keys: Iterable[tuple[int, str]]) -> list[RatingState]:
    """The stored rating states of these (bot id, game) pairs (absent ones are left out)."""
    wanted = list(set(keys))
    if not wanted:
        return []
    rows = connection.execute(
        select(_RATINGS).where(tuple_(_RATINGS.c.bot_id, _RATINGS.c.game).in_(wanted))
    )
    return [
        RatingState(row.bot_id, row.game, **{name: getattr(row, name) for name in _STATE_FIELDS})
        for row in rows
    ]


async def all_states(session: AsyncSession) -> list[RatingState]:
    """Every stored rating state."""
    rows = await session.execute(select(_RATINGS))
    return [
        RatingState(row.bot_id, row.game, **{name: getattr(row, name) for name in _STATE_FIELDS})
        for row in rows
    ]


def save(
    connection: Connection,
    states: Sequence[RatingState],
    stored: set[tuple[int, str]],
    changes: Sequence[Change],
) -> None:
    """Write the states (update the ``stored`` keys, insert the others) and the history rows,
    in the caller's transaction."""
    updates = [_state_row(s, prefix="b_") for s in states if (s.bot_id, s.game) in stored]
    inserts = [_state_row(s) for s in states if (s.bot_id, s.game) not in stored]
    run_many(connection, _UPDATE_STATE, updates)
    insert_rows(connection, _RATINGS, inserts)
    insert_rows(connection, _HISTORY, [_change_row(c) for c in changes])


def _change_row(change: Change) -> dict[str, Any]:
    # (dataclasses.asdict deep-copies field by field: several times slower on this hot path)
    return {name: getattr(change, name) for name in _CHANGE_FIELDS}


def _state_row(state: RatingState, prefix: str = "") -> dict[str, Any]:
    row = {f"{prefix}{name}": getattr(state, name) for name in _STATE_FIELDS}
    row[f"{prefix}bot_id"] = state.bot_id
    row[f"{prefix}game"] = state.game
    row[f"{prefix}conservative"] = state.conservative
    return row


# --- rebuild -----------------------------------------------------------------------------------


async def all_rated_results(session: AsyncSession) -> list[RatedResult]:
    """Every rated result, in the order it was rated."""
    rows = (
        await session.execute(
            select(Match.id, Match.game, Result.termination, Result.at_fault, Result.finished_at)
            .join(Result, Result.match_id == Match.id)
            .where(Result.rated_seq.is_not(None))
            .order_by(Result.rated_seq)
        )
    ).all()
    by_id = await _with_seats(session, rows)
    return [by_id[row[0]] for row in rows]


async def clear(session: AsyncSession) -> None:
    """Delete every rating and every history row (a rebuild writes them again)."""
    await session.execute(delete(_HISTORY))
    await session.execute(delete(_RATINGS))


async def write_history(session: AsyncSession, changes: Sequence[Change]) -> None:
    if session.get_bind().dialect.name == "postgresql":
        # PostgreSQL's COPY, through asyncpg: a rebuild writes a history row per seat of every
        # rated match, and asyncpg's executemany runs the insert once per row, three times the
        # time SQLite takes (docs/benchmarks.md).
        connection = await session.connection()
        raw = await connection.get_raw_connection()
        await raw.driver_connection.copy_records_to_table(  # type: ignore[union-attr]
            _HISTORY.name,
            columns=list(_CHANGE_FIELDS),
            records=[tuple(getattr(c, name) for name in _CHANGE_FIELDS) for c in changes],
        )
        return
    for start in range(0, len(changes), 5_000):
        chunk = changes[start : start + 5_000]
        await session.execute(_INSERT_HISTORY, [_change_row(c) for c in chunk])


async def counts(session: AsyncSession) -> tuple[int, int]:
    """(rated results, matches with history rows): equal unless the ratings need a rebuild."""
    rated = await session.scalar(
        select(func.count()).select_from(Result).where(Result.rated_seq.is_not(None))
    )
    with_history = await session.scalar(select(func.count(func.distinct(RatingChange.match_id))))
    return int(rated or 0), int(with_history or 0)


# --- leaderboards and bot pages ------------------------------------------------------------


async def leaderboard(
    session: AsyncSession, game: str, *, limit: int, offset: int, class_id: int | None = None
) -> tuple[list[tuple[Rating, Bot]], int]:
    """One page of ``game``'s ratings of enabled bots, best conservative rating first; with
    ``class_id``, of that class's bots only."""
    base = (
        select(Rating, Bot)
        .join(Bot, Bot.id == Rating.bot_id)
        .where(Rating.game == game, Bot.enabled)
    )
    if class_id is not None:
        base = base.where(Bot.class_id == class_id)
    total = await session.scalar(select(func.count()).select_from(base.subquery())) or 0
    rows = await session.execute(
        base.order_by(Rating.conservative.desc(), Rating.mu.desc(), Bot.name)
        .limit(limit)
        .offset(offset)
    )
    return [(rating, bot) for rating, bot in rows], int(total)


async def ratings_of(session: AsyncSession, bot_id: int) -> list[tuple[Rating, int, int]]:
    """The bot's rating in every game it is rated in, with its rank and the number ranked."""
    ratings = (await session.scalars(select(Rating).where(Rating.bot_id == bot_id))).all()
    found = []
    for rating in sorted(ratings, key=lambda r: r.game):
        enabled = select(Bot.id).where(Bot.enabled)
        above = await session.scalar(
            select(func.count())
            .select_from(Rating)
            .where(
                Rating.game == rating.game,
                Rating.conservative > rating.conservative,
                Rating.bot_id.in_(enabled),
            )
        )
        ranked = await session.scalar(
            select(func.count())
            .select_from(Rating)
            .where(Rating.game == rating.game, Rating.bot_id.in_(enabled))
        )
        found.append((rating, int(above or 0) + 1, int(ranked or 0)))
    return found


async def history(
    session: AsyncSession, bot_id: int, game: str | None, *, last: int | None = None
) -> list[RatingChange]:
    """The bot's rating changes, oldest first; with ``last``, only the latest that many (the
    index on bot, game and id reads just those)."""
    query = select(RatingChange).where(RatingChange.bot_id == bot_id)
    if game is not None:
        query = query.where(RatingChange.game == game)
    if last is None:
        return list((await session.scalars(query.order_by(RatingChange.id))).all())
    latest = await session.scalars(query.order_by(RatingChange.id.desc()).limit(last))
    return list(reversed(latest.all()))


async def recent_ratings(
    session: AsyncSession, game: str, names: Sequence[str], *, last: int
) -> dict[str, list[float]]:
    """Each named bot's latest ``last`` conservative ratings in ``game``, oldest first (the
    leaderboard's sparklines). One statement, a UNION ALL of one indexed LIMIT query per bot: a
    window function would read every change of those bots, and a query per bot costs a round
    trip each."""
    if not names:
        return {}
    # A retired bot keeps its name, which another bot may have now: the live one's ratings.
    rows = await session.execute(
        select(Bot.id, Bot.name).where(Bot.name.in_(list(names)), Bot.retired_at.is_(None))
    )
    bots: dict[int, str] = {bot_id: name for bot_id, name in rows}
    found: dict[str, list[float]] = {name: [] for name in bots.values()}
    if not bots:
        return found
    parts = [
        select(RatingChange.bot_id, RatingChange.id, RatingChange.conservative)
        .where(RatingChange.bot_id == bot_id, RatingChange.game == game)
        .order_by(RatingChange.id.desc())
        .limit(last)
        .subquery()
        for bot_id in bots
    ]
    query = union_all(*(select(part) for part in parts))
    changes = sorted((await session.execute(query)).all(), key=lambda row: row[1])
    for bot_id, _, conservative in changes:
        found[bots[bot_id]].append(float(conservative))
    return found


async def head_to_head(session: AsyncSession, bot_id: int) -> list[dict[str, Any]]:
    """Per game and opponent, over every finished match: matches, and the bot's wins, draws and
    losses against that opponent (finishing ahead of, level with, behind it)."""
    other = Seat.__table__.alias("other")
    mine = Seat.__table__.alias("mine")
    rows = await session.execute(
        select(
            Match.game,
            Bot.name,
            func.count(),
            func.sum(case((mine.c.payoff > other.c.payoff, 1), else_=0)),
            func.sum(case((mine.c.payoff == other.c.payoff, 1), else_=0)),
            func.sum(case((mine.c.payoff < other.c.payoff, 1), else_=0)),
        )
        .select_from(mine)
        .join(other, (other.c.match_id == mine.c.match_id) & (other.c.seat != mine.c.seat))
        .join(Match, Match.id == mine.c.match_id)
        .join(Bot, Bot.id == other.c.bot_id)
        .where(mine.c.bot_id == bot_id, Match.status == "finished")
        .group_by(Match.game, Bot.id, Bot.name)  # a retired bot and its name's new holder apart
        .order_by(Match.game, func.count().desc(), Bot.name)
    )
    return [
        {
            "game": game,
            "opponent": name,
            "matches": int(n),
            "wins": int(w or 0),
            "draws": int(d or 0),
            "losses": int(lost or 0),
        }
        for game, name, n, w, d, lost in rows
    ]
