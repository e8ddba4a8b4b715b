"""How far a tournament has got: games decided of the whole tournament, and the round under way.

A Swiss round is drawn only when the one before it is over, so the stored games of a Swiss in
round 1 of 5 are a fifth of its games: counting only those ("2 of 3 games decided") tells a
reader the tournament is nearly over. The whole tournament's games are therefore the stored
ones plus the games of the rounds still to be drawn; a round robin's or gauntlet's rounds are all
stored when it starts, and before it starts they are counted from the schedule it will draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ply_arena import games
from ply_arena.server.db.models import Tournament, TournamentGame
from ply_arena.server.tournaments import schedule

#: A game in one of these is decided (a cancelled game is over but was never decided).
DECIDED = frozenset({"finished", "no_show", "bye"})
#: A game in one of these is still to be played.
OPEN = frozenset({"pending", "playing"})


def progress(
    tournament: Tournament,
    entrants: Sequence[str],
    pool: Sequence[str],
    stored: Sequence[TournamentGame],
) -> dict[str, Any]:
    """``games`` (the whole tournament's: ``total``, ``decided``) and ``round`` (the round under
    way, ``number`` of ``of`` rounds, and its own ``games``; ``number`` 0 before the start)."""
    by_round: dict[int, list[TournamentGame]] = {}
    for game in stored:
        by_round.setdefault(game.round, []).append(game)
    rounds_total, games_total = _planned(tournament, entrants, pool, by_round)
    # The round under way: the first with a game still to play (a round robin's later rounds
    # may start before an earlier one is over); when none is (finished or cancelled), the last
    # round a game was decided in, so that a cancelled round robin does not claim its last.
    open_rounds = [r for r, gs in sorted(by_round.items()) if any(g.status in OPEN for g in gs)]
    decided_rounds = [r for r, gs in by_round.items() if any(g.status in DECIDED for g in gs)]
    number = (
        open_rounds[0] if open_rounds else max(decided_rounds, default=min(by_round, default=0))
    )
    current = by_round.get(number, [])
    return {
        "games": {"total": games_total, "decided": _decided(stored)},
        "round": {
            "number": number,
            "of": rounds_total,
            "games": {"total": len(current), "decided": _decided(current)},
        },
    }


def _decided(stored: Sequence[TournamentGame]) -> int:
    return sum(1 for g in stored if g.status in DECIDED)


def _planned(
    tournament: Tournament,
    entrants: Sequence[str],
    pool: Sequence[str],
    by_round: dict[int, list[TournamentGame]],
) -> tuple[int, int]:
    """(rounds, games) of the whole tournament."""
    stored_games = sum(len(gs) for gs in by_round.values())
    if tournament.status in ("finished", "cancelled"):
        # Nothing more will be drawn: what is stored is the whole tournament.
        return max(by_round, default=0), stored_games
    if tournament.format == "swiss":
        # Each round seats everyone: ceil(n / 2) games, a bye among them when n is odd.
        per_round = (len(entrants) + 1) // 2
        undrawn = max(0, tournament.rounds - max(by_round, default=0))
        return tournament.rounds, stored_games + undrawn * per_round
    if by_round:
        return max(by_round), stored_games
    try:
        if tournament.format == "gauntlet":
            drawn = schedule.gauntlet(entrants, pool, cycles=tournament.rounds)
        else:
            players = games.get(tournament.game).num_players
            drawn = schedule.round_robin(entrants, players=players, cycles=tournament.rounds)
    except ValueError:
        # A tournament that can no longer be drawn (it was refused at creation otherwise).
        return 0, 0
    return len(drawn), sum(len(r) for r in drawn)
