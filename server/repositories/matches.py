"""Matches, their seats, moves, chance events and results.

The referee writes each move as it is played (the recorder commits them in short batches), so
a crash loses at most the last few milliseconds of moves; the next start resumes what was left
running (server/repositories/resume.py), and ``abort_running`` ends matches by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, ScalarSelect, Table, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from ply_arena.protocol import dice
from ply_arena.server.db.many_rows import fetch_all, insert_rows, run_many
from ply_arena.server.db.models import (
    Base,
    Bot,
    ChanceEvent,
    Match,
    MatchResume,
    MoveRecord,
    Result,
    Seat,
    Tournament,
    TournamentGame,
    TournamentMatch,
    utcnow,
)
from ply_arena.server.db.recorder import register_bulk, run_bulk

RUNNING = "running"
FINISHED = "finished"
ABORTED = "aborted"
STATUSES = (RUNNING, FINISHED, ABORTED)


_MOVES = Base.metadata.tables[MoveRecord.__tablename__]
_CHANCE_EVENTS = Base.metadata.tables[ChanceEvent.__tablename__]
_MATCHES = Base.metadata.tables[Match.__tablename__]
_SEATS = Base.metadata.tables[Seat.__tablename__]
_RESULTS = Base.metadata.tables[Result.__tablename__]
#: An aborted match is not rated, whatever it was started as: ``rated`` says what counts.
_SET_STATUS = (
    update(_MATCHES)
    .where(_MATCHES.c.id == bindparam("b_id"))
    .values(status=bindparam("b_status"), rated=_MATCHES.c.rated & bindparam("b_rated"))
)
_SET_PAYOFF = (
    update(_SEATS)
    .where(_SEATS.c.match_id == bindparam("b_match_id"), _SEATS.c.seat == bindparam("b_seat"))
    .values(payoff=bindparam("b_payoff"))
)


def _plies_stored(table: Table) -> ScalarSelect[int]:
    return select(func.count()).where(table.c.match_id == _MATCHES.c.id).scalar_subquery()


_STATUS_AND_PLIES_COLUMNS = (
    _MATCHES.c.id,
    _MATCHES.c.status,
    _MATCHES.c.owner,
    _plies_stored(_MOVES) + _plies_stored(_CHANCE_EVENTS),
)
#: Matches by id (``ids``, expanding): id, status, and their moves and chance events stored.
_STATUS_AND_PLIES = select(*_STATUS_AND_PLIES_COLUMNS).where(
    _MATCHES.c.id.in_(bindparam("ids", expanding=True))
)
#: The same of one match (``id``): on SQLite, run through the driver directly (many_rows).
_STATUS_AND_PLIES_OF = select(*_STATUS_AND_PLIES_COLUMNS).where(_MATCHES.c.id == bindparam("id"))


class UnknownMatchError(LookupError):
    """No match has that id."""


class MatchOverError(ValueError):
    """The match already has a result."""


class NotOwnerError(MatchOverError):
    """The match is played by another server process now (``matches.owner`` names another
    one: this one's lease ran out and that one took the match over)."""


class IncompleteMatchError(ValueError):
    """``finish_match(plies=n)``: the match does not have exactly n moves and chance events."""


async def create_match(
    session: AsyncSession,
    *,
    match_id: str,
    game: str,
    bot_ids: Sequence[int],
    time_control: Mapping[str, Any],
    policy: str,
    seed: int,
    origin: str = "lobby",
    rated: bool = False,
    owner: str | None = None,
) -> None:
    """A running match with one seat per bot id, in seat order, played by the server process
    ``owner`` (``instances.id``; None: by none yet)."""
    await run_bulk(
        session,
        create_matches,
        [
            {
                "match_id": match_id,
                "game": game,
                "bot_ids": bot_ids,
                "time_control": time_control,
                "policy": policy,
                "seed": seed,
                "origin": origin,
                "rated": rated,
                "owner": owner,
            }
        ],
    )


def create_matches(connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many ``create_match`` calls at once (keyword dicts): one executemany per table.

    Core inserts rather than ORM objects: with short matches (tic-tac-toe: ~8 plies) creating
    and finishing matches cost the server more than the moves did.
    """
    matches: list[dict[str, Any]] = []
    seats: list[dict[str, Any]] = []
    for row in rows:
        match_id = row["match_id"]
        time_control = row["time_control"]
        matches.append(
            {
                "id": match_id,
                "game": row["game"],
                "status": RUNNING,
                "move_ms": int(time_control["move_ms"]),
                "bank_ms": int(time_control.get("bank_ms", 0)),
                "policy": str(row["policy"]),
                "seed": str(row["seed"]),
                "origin": str(row.get("origin", "lobby")),
                "rated": bool(row.get("rated", False)),
                "owner": row.get("owner"),
            }
        )
        seats.extend(
            {"match_id": match_id, "seat": i, "bot_id": b, "payoff": None}
            for i, b in enumerate(row["bot_ids"])
        )
    insert_rows(connection, _MATCHES, matches)
    insert_rows(connection, _SEATS, seats)


async def record_move(
    session: AsyncSession,
    *,
    match_id: str,
    ply: int,
    seat: int | None,
    move: str,
    think_ms: int | None = None,
    info: Mapping[str, Any] | None = None,
    forced: str | None = None,
    bank_ms: int | None = None,
) -> None:
    """Store one move (``seat`` None: a chance outcome, e.g. dice); ``bank_ms`` is the mover's
    bank once the move was charged (a resumed match's clock starts from it)."""
    row = {"match_id": match_id, "ply": ply, "seat": seat, "move": move, "think_ms": think_ms}
    await run_bulk(
        session, record_moves, [{**row, "info": info, "forced": forced, "bank_ms": bank_ms}]
    )


def record_moves(connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many ``record_move`` calls at once (keyword dicts), in one executemany per table.

    The recorder uses this for runs of queued moves: building ORM objects costs more than the
    insert itself at hundreds of moves per second.
    """
    now = utcnow()
    moves: list[dict[str, Any]] = []
    chance: list[dict[str, Any]] = []
    for row in rows:
        if row.get("seat") is None:
            chance.append(
                {
                    "match_id": row["match_id"],
                    "ply": row["ply"],
                    "outcome": row["move"],
                    "played_at": now,
                }
            )
        else:
            info = row.get("info")
            forced = row.get("forced")
            moves.append(
                {
                    "match_id": row["match_id"],
                    "ply": row["ply"],
                    "seat": row["seat"],
                    "move": row["move"],
                    "think_ms": row.get("think_ms"),
                    "info": dict(info) if info is not None else None,
                    "forced": str(forced) if forced is not None else None,
                    "bank_ms": row.get("bank_ms"),
                    "played_at": now,
                }
            )
    insert_rows(connection, _MOVES, moves)
    insert_rows(connection, _CHANCE_EVENTS, chance)


async def finish_match(
    session: AsyncSession,
    *,
    match_id: str,
    payoffs: Sequence[float],
    termination: str,
    at_fault: int | None,
    final_position: Mapping[str, Any] | None,
    plies: int | None = None,
    owner: str | None = None,
) -> None:
    """Store the result; termination "aborted" marks the match aborted, anything else finished
    (and a match that was rated stays so, unless the bulk row says ``rated: False``).

        With ``owner`` the result is stored only if the match is still that server process's
        (else NotOwnerError: another process took it over and plays it on).

        With ``plies`` the result is stored only if exactly that many moves and chance events are
        stored (else IncompleteMatchError): the referee queues its last moves and the result
        together, and a result whose moves are not all there would not re-derive.
    """
    await run_bulk(
        session,
        finish_matches,
        [
            {
                "match_id": match_id,
                "payoffs": payoffs,
                "termination": termination,
                "at_fault": at_fault,
                "final_position": final_position,
                "plies": plies,
                "owner": owner,
            }
        ],
    )


def finish_matches(connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many ``finish_match`` calls at once, in order: one status query, then executemany.

    Raises UnknownMatchError / MatchOverError for the first row that cannot be finished (and
    writes nothing; the recorder then retries the rows one by one).
    """
    ids = list({row["match_id"] for row in rows})
    # Each match's status and how many of its plies are stored, in one query.
    status: dict[str, str] = {}
    owners: dict[str, str | None] = {}
    stored: Counter[str] = Counter()
    if connection.dialect.driver == "pysqlite":
        # A query per match (many_rows.fetch_all: to the driver directly, no round trips) costs
        # less than one through SQLAlchemy.
        found = [r for i in ids for r in fetch_all(connection, _STATUS_AND_PLIES_OF, {"id": i})]
    else:
        found = [tuple(r) for r in connection.execute(_STATUS_AND_PLIES, {"ids": ids})]
    for match_id, match_status, owner, plies_stored in found:
        status[match_id] = match_status
        owners[match_id] = owner
        stored[match_id] = plies_stored
    updates: list[dict[str, Any]] = []
    payoffs: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for row in rows:
        match_id = row["match_id"]
        current = status.get(match_id)
        if current is None:
            raise UnknownMatchError(f"no match {match_id!r}")
        if current != RUNNING:
            raise MatchOverError(f"match {match_id!r} has already ended ({current})")
        owner = row.get("owner")
        if owner is not None and owners[match_id] != owner:
            raise NotOwnerError(
                f"match {match_id!r} is played by {owners[match_id]!r} now, not {owner!r}"
            )
        plies = row.get("plies")
        if plies is not None and stored[match_id] != plies:
            raise IncompleteMatchError(
                f"match {match_id!r} has {stored[match_id]} of its {plies} plies stored"
            )
        termination = str(row["termination"])
        # Later rows of this batch must see this one's effect (a second finish is refused).
        status[match_id] = ABORTED if termination == ABORTED else FINISHED
        # A row may say it is not rated (a match that ended before every seat moved).
        rated = termination != ABORTED and bool(row.get("rated", True))
        updates.append({"b_id": match_id, "b_status": status[match_id], "b_rated": rated})
        # Seats past the payoffs keep their null payoff (they were never set while running).
        payoffs.extend(
            {"b_match_id": match_id, "b_seat": seat, "b_payoff": float(p)}
            for seat, p in enumerate(row["payoffs"])
        )
        final_position = row["final_position"]
        results.append(
            {
                "match_id": match_id,
                "termination": termination,
                "at_fault": row["at_fault"],
                "final_position": dict(final_position) if final_position is not None else None,
                "finished_at": row.get("finished_at") or utcnow(),
                "rated_seq": row.get("rated_seq"),
            }
        )
    run_many(connection, _SET_STATUS, updates)
    run_many(connection, _SET_PAYOFF, payoffs)
    insert_rows(connection, _RESULTS, results)


async def running_ids(session: AsyncSession, ids: Sequence[str] | None = None) -> list[str]:
    """The ids of running matches (of ``ids`` when given), oldest first."""
    query = select(Match.id).where(Match.status == RUNNING)
    if ids is not None:
        query = query.where(Match.id.in_(list(ids)))
    return list((await session.scalars(query.order_by(Match.created_at, Match.id))).all())


async def running_of_bots(session: AsyncSession, bot_ids: Sequence[int]) -> dict[int, set[str]]:
    """bot id -> the ids of the running matches it holds a seat in (whichever process plays
    them); a bot of ``bot_ids`` that plays none maps to an empty set."""
    found: dict[int, set[str]] = {b: set() for b in bot_ids}
    if not found:
        return found
    query = (
        select(Seat.bot_id, Match.id)
        .join(Match, Match.id == Seat.match_id)
        .where(Match.status == RUNNING, Seat.bot_id.in_(list(found)))
    )
    for bot_id, match_id in await session.execute(query):
        found[bot_id].add(match_id)
    return found


async def abort_running(session: AsyncSession, ids: Sequence[str] | None = None) -> list[str]:
    """End running matches as aborted, unrated, keeping their moves (every running match, or
    those of ``ids`` that still run); the ids ended. For matches no server plays: a running
    server ends its own through its referee (``Referee.abort_match``)."""
    ids = await running_ids(session, ids)
    if not ids:
        return []
    now = utcnow()
    await session.execute(
        update(Match).where(Match.id.in_(ids)).values(status=ABORTED, rated=False)
    )
    session.add_all(
        Result(match_id=i, termination=ABORTED, at_fault=None, final_position=None, finished_at=now)
        for i in ids
    )
    await session.flush()
    return ids


async def get_match(session: AsyncSession, match_id: str) -> dict[str, Any] | None:
    """The full record of a match, or None. The seed, and each move's ``info`` (a bot's score,
    principal variation and comment: private to it while it plays, as in the protocol), are
    revealed only once the match is over."""
    match = await session.get(
        Match,
        match_id,
        options=[selectinload(Match.seats).selectinload(Seat.bot), selectinload(Match.result)],
    )
    if match is None:
        return None
    # Moves as plain rows, not ORM objects: a 1000-ply record loads several times faster, and
    # this runs on the event loop that also serves the matches.
    move_rows = await session.execute(
        select(
            MoveRecord.ply,
            MoveRecord.seat,
            MoveRecord.move,
            MoveRecord.think_ms,
            MoveRecord.info,
            MoveRecord.forced,
        ).where(MoveRecord.match_id == match_id)
    )
    chance_rows = await session.execute(
        select(ChanceEvent.ply, ChanceEvent.outcome).where(ChanceEvent.match_id == match_id)
    )
    events: list[tuple[int, int, dict[str, Any]]] = [
        (
            ply,
            0,
            {
                "ply": ply,
                "seat": None,
                "move": outcome,
                "think_ms": None,
                "info": None,
                "forced": None,
            },
        )
        for ply, outcome in chance_rows
    ]
    over = match.status != RUNNING
    events.extend(
        (
            ply,
            1,
            {
                "ply": ply,
                "seat": seat,
                "move": move,
                "think_ms": think_ms,
                "info": info if over else None,
                "forced": forced,
            },
        )
        for ply, seat, move, think_ms, info, forced in move_rows
    )
    # A chance event sharing a ply number with a move comes first: dice are rolled, then moved.
    events.sort(key=lambda e: (e[0], e[1]))
    record = _summary(match, match.result, plies=len(events))
    record["tournament"] = (await tournaments_of(session, [match.id])).get(match.id)
    record["moves"] = [e[2] for e in events]
    record["seed"] = match.seed if over else None
    record["dice"] = {
        "scheme": match.dice,
        # The commitment was sent in match_start (the legacy scheme had none); the seed is
        # revealed once the match is over.
        "commitment": (
            dice.commitment(match.seed, match.id) if match.dice == dice.SCHEME else None
        ),
        "seed": record["seed"],
    }
    resumes = await session.execute(
        select(MatchResume.ply, MatchResume.resumed_at)
        .where(MatchResume.match_id == match_id)
        .order_by(MatchResume.id)
    )
    #: The restarts the match lived through: it went on from ``ply`` at ``at``.
    record["resumed"] = [{"ply": ply, "at": iso(at)} for ply, at in resumes]
    record["result"] = (
        None
        if match.result is None
        else {
            "payoffs": _payoffs(match),
            "termination": match.result.termination,
            "at_fault": match.result.at_fault,
            "final_position": match.result.final_position,
        }
    )
    return record


async def list_matches(
    session: AsyncSession,
    game: str | None = None,
    bot: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
    count: bool = True,
    tournament_id: int | None = None,
    class_id: int | None = None,
    bot_id: int | None = None,
) -> tuple[list[dict[str, Any]], int | None]:
    """One page of match summaries, newest first, and the total number matching the filters
    (None with ``count=False``: counting reads every matching row, and the home page does not
    need it). ``tournament_id``: the matches of that tournament's games; ``class_id``: those
    in which a bot of that class sat; ``bot``: the bot that has that name now, ``bot_id``: that
    bot (a retired one too)."""
    query = select(Match)
    if game is not None:
        query = query.where(Match.game == game)
    if status is not None:
        query = query.where(Match.status == status)
    if bot is not None:
        query = query.where(
            Match.id.in_(
                select(Seat.match_id)
                .join(Bot, Seat.bot_id == Bot.id)
                .where(Bot.name_key == bot.lower())
            )
        )
    if bot_id is not None:
        query = query.where(Match.id.in_(select(Seat.match_id).where(Seat.bot_id == bot_id)))
    if tournament_id is not None:
        query = query.where(
            Match.id.in_(
                select(TournamentMatch.match_id)
                .join(TournamentGame, TournamentGame.id == TournamentMatch.game_id)
                .where(TournamentGame.tournament_id == tournament_id)
            )
        )
    if class_id is not None:
        query = query.where(
            Match.id.in_(
                select(Seat.match_id)
                .join(Bot, Seat.bot_id == Bot.id)
                .where(Bot.class_id == class_id)
            )
        )
    total = (
        (await session.scalar(select(func.count()).select_from(query.subquery())) or 0)
        if count
        else None
    )
    page = (
        await session.scalars(
            query.options(
                selectinload(Match.seats).selectinload(Seat.bot), selectinload(Match.result)
            )
            .order_by(Match.created_at.desc(), Match.id.desc())
            .limit(limit)
            .offset(offset)
        )
    ).all()
    ids = [m.id for m in page]
    counts = await _ply_counts(session, ids)
    context = await tournaments_of(session, ids)
    return [
        {**_summary(m, m.result, plies=counts.get(m.id, 0)), "tournament": context.get(m.id)}
        for m in page
    ], total


async def tournaments_of(session: AsyncSession, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The tournament game each of these matches was played for, by match id: the
    tournament's ``name``, the ``round`` and the ``board`` (``tournament_matches``: an aborted
    match its game replayed keeps them). A lobby or challenge match is in no game."""
    if not ids:
        return {}
    rows = await session.execute(
        select(
            TournamentMatch.match_id, Tournament.name, TournamentGame.round, TournamentGame.board
        )
        .join(TournamentGame, TournamentGame.id == TournamentMatch.game_id)
        .join(Tournament, Tournament.id == TournamentGame.tournament_id)
        .where(TournamentMatch.match_id.in_(list(ids)))
    )
    return {
        match_id: {"name": name, "round": round_, "board": board}
        for match_id, name, round_, board in rows
    }


async def pairing_counts(session: AsyncSession) -> Counter[tuple[str, frozenset[int]]]:
    """How many matches (of any status) each set of bots has been seated for, per game.

    The referee rotates seats by this count; reading it from the stored matches at start makes
    the rotation survive a restart.
    """
    rows = await session.execute(
        select(Seat.match_id, Match.game, Seat.bot_id).join(Match, Match.id == Seat.match_id)
    )
    seated: dict[str, tuple[str, set[int]]] = {}
    for match_id, game, bot_id in rows:
        seated.setdefault(match_id, (game, set()))[1].add(bot_id)
    return Counter((game, frozenset(bot_ids)) for game, bot_ids in seated.values())


async def _ply_counts(session: AsyncSession, ids: list[str]) -> dict[str, int]:
    if not ids:
        return {}
    counts: dict[str, int] = {}
    for model in (MoveRecord, ChanceEvent):
        rows = await session.execute(
            select(model.match_id, func.count())
            .where(model.match_id.in_(ids))
            .group_by(model.match_id)
        )
        for match_id, n in rows:
            counts[match_id] = counts.get(match_id, 0) + n
    return counts


def _payoffs(match: Match) -> list[float] | None:
    values = [s.payoff for s in match.seats]
    return None if any(v is None for v in values) else [float(v) for v in values if v is not None]


def _summary(match: Match, result: Result | None, *, plies: int) -> dict[str, Any]:
    return {
        "id": match.id,
        "game": match.game,
        "status": match.status,
        "created_at": iso(match.created_at),
        "finished_at": iso(result.finished_at) if result is not None else None,
        "time_control": {"move_ms": match.move_ms, "bank_ms": match.bank_ms},
        "policy": match.policy,
        "origin": match.origin,
        "rated": match.rated,
        "seats": [{"seat": s.seat, "bot": s.bot.name, "payoff": s.payoff} for s in match.seats],
        "termination": result.termination if result is not None else None,
        "at_fault": result.at_fault if result is not None else None,
        "plies": plies,
    }


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC; SQLite hands datetimes back without a zone, and we store UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# Phases: within a run of queued bulk writes the recorder groups them per function, in this
# order. For any one match they are submitted in this order anyway (created, moves, finished).
register_bulk(create_match, create_matches, phase=0, ahead=True)
register_bulk(record_move, record_moves, phase=1, linger="match_id")
register_bulk(finish_match, finish_matches, phase=2)
