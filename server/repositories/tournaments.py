"""Tournaments, their entrants and their games, as stored (server/tournaments runs them).

A tournament's games are stored a round at a time: every round of a round robin or gauntlet
when it starts (they are fixed in advance), a Swiss round when the one before it is over. A game
names its match from the moment the match is started, which is what lets a restart tell a
finished game (its match has a result) from one to replay (no match, or an aborted one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.models import (
    Bot,
    Classroom,
    Match,
    Rating,
    Result,
    Seat,
    Tournament,
    TournamentEntrant,
    TournamentGame,
    TournamentMatch,
    utcnow,
)
from ply_arena.server.db.recorder import register_bulk, run_bulk
from ply_arena.server.repositories.bots import name_problem

#: Statuses a game ends in (nothing more happens to it).
DONE = frozenset({"finished", "no_show", "bye", "cancelled"})


class TournamentNameError(ValueError):
    """Not an acceptable tournament name."""


class TournamentExistsError(ValueError):
    """A tournament of that name exists."""


@dataclass(frozen=True)
class Participant:
    bot_id: int
    name: str
    role: str  # entrant | pool
    seed: int
    class_id: int | None
    owner: str | None


@dataclass(frozen=True)
class MatchOutcome:
    """What became of a tournament game's match, read at resume."""

    status: str  # running | finished | aborted
    termination: str | None
    at_fault: int | None
    payoffs: list[float] | None
    #: The server process that plays (or played) it (``matches.owner``).
    owner: str | None = None


async def create_tournament(
    session: AsyncSession,
    *,
    name: str,
    game: str,
    format: str,
    rounds: int,
    move_ms: int,
    bank_ms: int,
    policy: str,
    concurrency: int,
    rated: bool,
    no_show_s: float,
    classroom: Classroom | None,
    entrants: Sequence[Bot],
    pool: Sequence[Bot] = (),
) -> Tournament:
    """A new tournament (status ``created``) with its entrants seeded in the order given."""
    problem = name_problem(name, "tournament")
    if problem is not None:
        raise TournamentNameError(problem)
    if await tournament_by_name(session, name) is not None:
        raise TournamentExistsError(f"a tournament named {name!r} already exists")
    tournament = Tournament(
        name=name,
        name_key=name.lower(),
        game=game,
        format=format,
        rounds=rounds,
        move_ms=move_ms,
        bank_ms=bank_ms,
        policy=policy,
        concurrency=concurrency,
        rated=rated,
        no_show_s=float(no_show_s),
        class_id=classroom.id if classroom is not None else None,
        status="created",
    )
    session.add(tournament)
    await session.flush()
    for seed, bot in enumerate(entrants, start=1):
        session.add(
            TournamentEntrant(tournament_id=tournament.id, bot_id=bot.id, role="entrant", seed=seed)
        )
    for seed, bot in enumerate(pool, start=len(entrants) + 1):
        session.add(
            TournamentEntrant(tournament_id=tournament.id, bot_id=bot.id, role="pool", seed=seed)
        )
    await session.flush()
    return tournament


async def tournament_by_name(session: AsyncSession, name: str) -> Tournament | None:
    found = await session.scalars(select(Tournament).where(Tournament.name_key == name.lower()))
    return found.first()


async def tournament_by_id(session: AsyncSession, tournament_id: int) -> Tournament:
    tournament = await session.get(Tournament, tournament_id)
    assert tournament is not None, tournament_id
    return tournament


async def list_tournaments(
    session: AsyncSession, *, class_id: int | None = None, status: str | None = None
) -> Sequence[Tournament]:
    """The tournaments, newest first; of one class, or in one status, when asked."""
    query = select(Tournament).order_by(Tournament.id.desc())
    if class_id is not None:
        query = query.where(Tournament.class_id == class_id)
    if status is not None:
        query = query.where(Tournament.status == status)
    return (await session.scalars(query)).all()


async def participants(session: AsyncSession, tournament: Tournament) -> list[Participant]:
    """Entrants then pool, each in seed order."""
    rows = await session.execute(
        select(TournamentEntrant, Bot)
        .join(Bot, Bot.id == TournamentEntrant.bot_id)
        .where(TournamentEntrant.tournament_id == tournament.id)
        .order_by(TournamentEntrant.seed)
    )
    found = [
        Participant(bot.id, bot.name, entrant.role, entrant.seed, bot.class_id, bot.owner)
        for entrant, bot in rows
    ]
    return [p for p in found if p.role == "entrant"] + [p for p in found if p.role == "pool"]


async def games_of(session: AsyncSession, tournament: Tournament) -> list[TournamentGame]:
    """Every stored game, by round and board."""
    rows = await session.scalars(
        select(TournamentGame)
        .where(TournamentGame.tournament_id == tournament.id)
        .order_by(TournamentGame.round, TournamentGame.board)
    )
    return list(rows.all())


async def add_round(
    session: AsyncSession,
    tournament: Tournament,
    round_number: int,
    pairings: Sequence[Sequence[int]],
    bye: int | None = None,
) -> None:
    """Store one round's games (bot ids in seat order), and a Swiss bye when there is one."""
    for board, bot_ids in enumerate(pairings, start=1):
        session.add(
            TournamentGame(
                tournament_id=tournament.id,
                round=round_number,
                board=board,
                bot_ids=list(bot_ids),
                status="pending",
                replays=0,
            )
        )
    if bye is not None:
        session.add(
            TournamentGame(
                tournament_id=tournament.id,
                round=round_number,
                board=len(pairings) + 1,
                bot_ids=[bye],
                status="bye",
                termination="bye",
                replays=0,
                finished_at=utcnow(),
            )
        )
    await session.flush()


async def set_status(session: AsyncSession, tournament: Tournament, status: str) -> None:
    now = utcnow()
    tournament.status = status
    if status == "running" and tournament.started_at is None:
        tournament.started_at = now
    if status in ("finished", "cancelled"):
        tournament.finished_at = now
        await _keep_final_ratings(session, tournament)
    if status == "cancelled":
        # The games not started, and those under way: their matches are ended aborted
        # (unrated) by the directors (``Directors.cancel_games``), and none of them counts.
        await session.execute(
            update(TournamentGame)
            .where(
                TournamentGame.tournament_id == tournament.id,
                TournamentGame.status.in_(("pending", "playing")),
            )
            .values(status="cancelled", termination="cancelled", finished_at=now)
        )
    await session.flush()


async def game_started(session: AsyncSession, game_id: int, match_id: str) -> None:
    await run_bulk(session, games_started, [{"game_id": game_id, "match_id": match_id}])


async def game_over(
    session: AsyncSession,
    game_id: int,
    *,
    status: str,
    termination: str,
    payoffs: Sequence[float] | None = None,
    at_fault: int | None = None,
    absent: Sequence[int] | None = None,
    at: datetime | None = None,
) -> None:
    await run_bulk(
        session,
        games_over,
        [
            {
                "game_id": game_id,
                "status": status,
                "termination": termination,
                "payoffs": payoffs,
                "at_fault": at_fault,
                "absent": absent,
                "at": at,
            }
        ],
    )


async def game_replays(session: AsyncSession, game_id: int, match_id: str | None = None) -> None:
    """The game's match was aborted (a restart) or never stored (a crash): play it again.

    With ``match_id``, only while the game is still on that match: a process that lost its
    lease may tell of a match's end after another process took the tournament over and
    started the game again, and must not undo that. Only a game being played (``playing``):
    one of a cancelled tournament stays ``cancelled``."""
    query = update(TournamentGame).where(
        TournamentGame.id == game_id, TournamentGame.status == "playing"
    )
    if match_id is not None:
        query = query.where(TournamentGame.match_id == match_id)
    await session.execute(
        query.values(status="pending", match_id=None, replays=TournamentGame.replays + 1)
    )


async def running_matches_of(
    session: AsyncSession, tournament_id: int
) -> list[tuple[str, str | None]]:
    """The tournament's matches still running, each with the server process that plays it
    (``matches.owner``; None: none named)."""
    rows = await session.execute(
        select(Match.id, Match.owner)
        .join(TournamentMatch, TournamentMatch.match_id == Match.id)
        .join(TournamentGame, TournamentGame.id == TournamentMatch.game_id)
        .where(TournamentGame.tournament_id == tournament_id, Match.status == "running")
    )
    return [(str(match_id), owner) for match_id, owner in rows]


async def match_outcomes(
    session: AsyncSession, match_ids: Sequence[str]
) -> dict[str, MatchOutcome]:
    """Status, termination and payoffs (by seat) of the stored ones among ``match_ids``."""
    if not match_ids:
        return {}
    matches = await session.execute(
        select(Match.id, Match.status, Result.termination, Result.at_fault, Match.owner)
        .outerjoin(Result, Result.match_id == Match.id)
        .where(Match.id.in_(match_ids))
    )
    seats = await session.execute(
        select(Seat.match_id, Seat.seat, Seat.payoff)
        .where(Seat.match_id.in_(match_ids))
        .order_by(Seat.match_id, Seat.seat)
    )
    payoffs: dict[str, list[float | None]] = {}
    for match_id, _, payoff in seats:
        payoffs.setdefault(match_id, []).append(payoff)
    found = {}
    for match_id, status, termination, at_fault, owner in matches:
        values = payoffs.get(match_id, [])
        complete = bool(values) and all(v is not None for v in values)
        found[match_id] = MatchOutcome(
            status,
            termination,
            at_fault,
            [float(v) for v in values if v is not None] if complete else None,
            owner,
        )
    return found


async def ratings_in(session: AsyncSession, game: str, bot_ids: Sequence[int]) -> dict[int, Rating]:
    """The bots' ratings in ``game`` (those that have one)."""
    rows = await session.scalars(
        select(Rating).where(Rating.game == game, Rating.bot_id.in_(list(bot_ids)))
    )
    return {r.bot_id: r for r in rows.all()}


async def status_of(session: AsyncSession, tournament_id: int) -> str | None:
    """The tournament's status, read fresh (the API changes it while a director runs)."""
    found = await session.scalar(select(Tournament.status).where(Tournament.id == tournament_id))
    return None if found is None else str(found)


def games_started(connection: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Many ``game_started`` at once (the recorder's bulk form): one executemany, and the
    matches noted as the games' for good (``tournament_matches``: a replay will not undo it)."""
    connection.execute(
        update(TournamentGame.__table__)  # type: ignore[arg-type]
        .where(TournamentGame.__table__.c.id == bindparam("b_game_id"))
        .values(status="playing", match_id=bindparam("b_match_id")),
        [{"b_game_id": r["game_id"], "b_match_id": r["match_id"]} for r in rows],
    )
    connection.execute(
        insert(TournamentMatch.__table__),  # type: ignore[arg-type]
        [{"match_id": r["match_id"], "game_id": r["game_id"]} for r in rows],
    )


def games_over(connection: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Many ``game_over`` at once: one executemany (a game's end is written once per game, a
    thousand times in a 32-bot round robin)."""
    table = TournamentGame.__table__
    now = utcnow()
    connection.execute(
        update(table)  # type: ignore[arg-type]
        .where(table.c.id == bindparam("b_game_id"))
        .values(
            status=bindparam("b_status"),
            termination=bindparam("b_termination"),
            payoffs=bindparam("b_payoffs"),
            at_fault=bindparam("b_at_fault"),
            absent=bindparam("b_absent"),
            finished_at=bindparam("b_finished_at"),
        ),
        [
            {
                "b_game_id": r["game_id"],
                "b_status": r["status"],
                "b_termination": r["termination"],
                "b_payoffs": list(r["payoffs"]) if r.get("payoffs") is not None else None,
                "b_at_fault": r.get("at_fault"),
                "b_absent": list(r["absent"]) if r.get("absent") is not None else None,
                "b_finished_at": r.get("at") or now,
            }
            for r in rows
        ],
    )


# Through the database's single writer (server/tournaments/director.py): a game's start in the
# same transaction as its match's row at the latest (phase 0, as creating the match); its end
# after its match's result (phase 2).
register_bulk(game_started, games_started, phase=0, ahead=True)
register_bulk(game_over, games_over, phase=2)


async def _keep_final_ratings(session: AsyncSession, tournament: Tournament) -> None:
    """Each entrant's rating in the game as the tournament ends: the grade sheet's, which must
    not move with the matches played after it."""
    entrants = (
        await session.scalars(
            select(TournamentEntrant).where(TournamentEntrant.tournament_id == tournament.id)
        )
    ).all()
    ratings = await ratings_in(session, tournament.game, [e.bot_id for e in entrants])
    for entrant in entrants:
        rating = ratings.get(entrant.bot_id)
        if rating is not None:
            entrant.final_mu = rating.mu
            entrant.final_sigma = rating.sigma
            entrant.final_conservative = rating.conservative


async def final_ratings(
    session: AsyncSession, tournament: Tournament
) -> dict[int, tuple[float, float, float]]:
    """bot id -> (mu, sigma, conservative) kept when the tournament ended."""
    rows = await session.execute(
        select(
            TournamentEntrant.bot_id,
            TournamentEntrant.final_mu,
            TournamentEntrant.final_sigma,
            TournamentEntrant.final_conservative,
        ).where(
            TournamentEntrant.tournament_id == tournament.id,
            TournamentEntrant.final_mu.is_not(None),
        )
    )
    return {
        b: (float(mu), float(sigma), float(cons or 0.0))
        for b, mu, sigma, cons in rows
        if mu is not None and sigma is not None
    }
