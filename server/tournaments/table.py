"""A tournament as its users read it: standings, crosstable and rounds from the stored games.

One document (``tournament_document``) serves ``GET /api/tournaments/{name}``, the tournament
page and the JSON export; the CSV exports are flat views of the same document, so that all of
them agree. A gauntlet's pool bots play in every game but are not ranked: the standings list
the entrants only (their tiebreaks still count the pool's points), and its crosstable's columns
are the pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.models import Classroom, Tournament, TournamentGame
from ply_arena.server.repositories import tournaments as repo
from ply_arena.server.repositories.matches import iso
from ply_arena.server.repositories.tournaments import Participant
from ply_arena.server.tournaments.progress import progress
from ply_arena.server.tournaments.standings import GameResult, Standing, crosstable, standings
from ply_arena.server.tournaments.swiss import SwissEntrant


def results_of(stored: Sequence[TournamentGame], names: dict[int, str]) -> list[GameResult]:
    """The decided games (finished, no_show, bye) as the standings read them."""
    results = []
    for game in stored:
        seats = tuple(names[b] for b in game.bot_ids)
        if game.status == "finished" and game.payoffs is not None:
            results.append(
                GameResult(game.round, seats, tuple(game.payoffs), game.termination or "normal")
            )
        elif game.status == "no_show":
            results.append(GameResult(game.round, seats, None, "no_show", tuple(game.absent or ())))
        elif game.status == "bye":
            results.append(GameResult(game.round, seats, None, "bye"))
    return results


def swiss_entrants(
    entrants: Sequence[Participant], results: Sequence[GameResult]
) -> list[SwissEntrant]:
    """What the Swiss pairing needs to know of each entrant after ``results``."""
    table = standings([p.name for p in entrants], results, swiss=True)
    points = {row.bot: row.points for row in table}
    found = {p.name: SwissEntrant(p.name, points=points[p.name], seed=p.seed) for p in entrants}
    for result in sorted(results, key=lambda r: r.round):
        if result.termination == "bye":
            found[result.seats[0]].had_bye = True
            continue
        first, second = result.seats
        found[first].opponents.add(second)
        found[second].opponents.add(first)
        found[first].first_seat_balance += 1
        found[second].first_seat_balance -= 1
        found[first].last_seat = 0
        found[second].last_seat = 1
    return list(found.values())


async def read_document(
    session: AsyncSession, tournament: Tournament, playing_now: set[str]
) -> dict[str, Any]:
    """``tournament_document`` of a stored tournament; ``playing_now``: the ids of the matches
    being played (``Referee.live_matches``), which its games link to as live."""
    people = await repo.participants(session, tournament)
    stored = await repo.games_of(session, tournament)
    classroom = await session.get(Classroom, tournament.class_id) if tournament.class_id else None
    return tournament_document(
        tournament,
        people,
        stored,
        class_name=classroom.name if classroom is not None else None,
        playing_now=playing_now,
    )


def tournament_document(
    tournament: Tournament,
    people: Sequence[Participant],
    stored: Sequence[TournamentGame],
    *,
    class_name: str | None,
    playing_now: set[str] = frozenset(),  # type: ignore[assignment]
) -> dict[str, Any]:
    """The whole tournament as JSON: settings, entrants, standings, crosstable and rounds."""
    names = {p.bot_id: p.name for p in people}
    entrants = [p for p in people if p.role == "entrant"]
    results = results_of(stored, names)
    ranked = _ranked(tournament, people, results)
    entrant_names = {p.name for p in entrants}
    rows = [row for row in ranked if row.bot in entrant_names]
    rounds: dict[int, list[dict[str, Any]]] = {}
    for game in stored:
        rounds.setdefault(game.round, []).append(_game_json(game, names, playing_now))
    pool = [p.name for p in people if p.role == "pool"]
    done = progress(tournament, [p.name for p in entrants], pool, stored)
    return {
        "name": tournament.name,
        "game": tournament.game,
        "format": tournament.format,
        "rounds": tournament.rounds,
        "time_control": {"move_ms": tournament.move_ms, "bank_ms": tournament.bank_ms},
        "policy": tournament.policy,
        "concurrency": tournament.concurrency,
        "rated": tournament.rated,
        "no_show_s": tournament.no_show_s,
        "class": class_name,
        "status": tournament.status,
        "created_at": iso(tournament.created_at),
        "started_at": iso(tournament.started_at) if tournament.started_at else None,
        "finished_at": iso(tournament.finished_at) if tournament.finished_at else None,
        "entrants": [p.name for p in entrants],
        "pool": pool,
        **done,
        "standings": [_standing_json(i + 1, row) for i, row in enumerate(rows)],
        "crosstable": _crosstable(ranked, results, entrant_names),
        # A gauntlet's entrants never meet one another: its columns are the pool they play.
        "crosstable_columns": pool if tournament.format == "gauntlet" else [r.bot for r in rows],
        "schedule": [{"round": r, "games": g} for r, g in sorted(rounds.items())],
    }


def _ranked(
    tournament: Tournament, people: Sequence[Participant], results: Sequence[GameResult]
) -> list[Standing]:
    return standings([p.name for p in people], results, swiss=tournament.format == "swiss")


def _standing_json(rank: int, row: Standing) -> dict[str, Any]:
    # The rank among the entrants (a gauntlet's pool is not ranked).
    return {**row.as_json(), "rank": rank}


def _crosstable(
    rows: Sequence[Standing], results: Sequence[GameResult], entrants: set[str]
) -> list[dict[str, Any]]:
    return [
        {**line, "rank": i + 1}
        for i, line in enumerate(row for row in crosstable(rows, results) if row["bot"] in entrants)
    ]


def _game_json(
    game: TournamentGame, names: dict[int, str], playing_now: set[str]
) -> dict[str, Any]:
    return {
        "board": game.board,
        "bots": [names[b] for b in game.bot_ids],
        "status": game.status,
        "match_id": game.match_id,
        "live": game.match_id in playing_now if game.match_id else False,
        "termination": game.termination,
        "payoffs": game.payoffs,
        "at_fault": game.at_fault,
        "absent": game.absent,
        "replays": game.replays,
        "finished_at": iso(game.finished_at) if game.finished_at else None,
    }
