"""Standings of a tournament from its results: points, tiebreaks and the crosstable.

**Points** per game: in a two-player game 1 for a win, ½ for a draw, 0 for a loss (by the
payoffs); in a three-player game 1 for first place, ½ for second, 0 for third, players level on
payoff sharing the places' points. A **bye** (Swiss) scores 1 and has no opponent; a
**no_show** is a loss for the seat that did not come (the others score as winners).

**Tiebreaks**, in this order after points:

- Swiss: **Buchholz**, the sum of the final points of every opponent met (byes add nothing),
  then **Sonneborn-Berger**, then head-to-head;
- round robin and gauntlet: **Sonneborn-Berger**, the sum over games of the points scored in
  that game times the opponent's final points (three players: the opponents' mean), then
  head-to-head;
- **head-to-head**: among the entrants still level, the points each scored in their games
  against one another;

then the name, so that the order is always the same.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GameResult:
    """One finished game of the tournament: the bots in seat order and their payoffs.

    ``payoffs`` None with ``termination`` ``bye`` (one seat) or ``no_show`` (``absent`` lists
    the seats that did not come).
    """

    round: int
    seats: tuple[str, ...]
    payoffs: tuple[float, ...] | None
    termination: str = "normal"
    absent: tuple[int, ...] = ()


def game_points(result: GameResult) -> tuple[float, ...]:
    """Each seat's points in this game."""
    n = len(result.seats)
    if result.termination == "bye":
        return (1.0,)
    if result.termination == "no_show":
        absent = set(result.absent)
        if len(absent) == n:
            return tuple(0.0 for _ in range(n))
        return tuple(0.0 if i in absent else 1.0 for i in range(n))
    assert result.payoffs is not None
    if n == 2:
        a, b = result.payoffs
        return (1.0, 0.0) if a > b else (0.0, 1.0) if b > a else (0.5, 0.5)
    # Places: 1, 1/2, 0, ... for first, second, third; level seats share their places.
    share = [1.0 - k / (n - 1) for k in range(n)]
    order = sorted(range(n), key=lambda i: -result.payoffs[i])  # type: ignore[index]
    points = [0.0] * n
    k = 0
    while k < n:
        level = [i for i in order[k:] if result.payoffs[i] == result.payoffs[order[k]]]
        mean = sum(share[k : k + len(level)]) / len(level)
        for i in level:
            points[i] = mean
        k += len(level)
    return tuple(points)


@dataclass
class Standing:
    bot: str
    points: float = 0.0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0
    head_to_head: float = 0.0
    rank: int = 0
    #: opponent -> the points scored against it, game by game
    against: dict[str, list[float]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "bot": self.bot,
            "points": self.points,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "byes": self.byes,
            "buchholz": self.buchholz,
            "sonneborn_berger": self.sonneborn_berger,
            "head_to_head": self.head_to_head,
        }


def standings(
    entrants: Sequence[str], results: Sequence[GameResult], *, swiss: bool = False
) -> list[Standing]:
    """Every entrant's standing, best first, ``rank`` filled (level entrants share none: the
    tiebreaks and then the name order them)."""
    table = {bot: Standing(bot) for bot in entrants}
    per_game: list[tuple[GameResult, tuple[float, ...]]] = []
    for result in results:
        points = game_points(result)
        per_game.append((result, points))
        if result.termination == "bye":
            row = table[result.seats[0]]
            row.points += 1.0
            row.byes += 1
            continue
        for seat, bot in enumerate(result.seats):
            row = table[bot]
            row.points += points[seat]
            row.games += 1
            # A whole point is a win (first alone), none a loss; anything between (a draw,
            # a shared or second place of three) counts as a draw.
            if points[seat] == 1.0:
                row.wins += 1
            elif points[seat] == 0.0:
                row.losses += 1
            else:
                row.draws += 1
            for other_seat, other in enumerate(result.seats):
                if other_seat != seat:
                    row.against.setdefault(other, []).append(points[seat])
    final = {bot: row.points for bot, row in table.items()}
    for result, points in per_game:
        if result.termination == "bye":
            continue
        for seat, bot in enumerate(result.seats):
            others = [b for i, b in enumerate(result.seats) if i != seat]
            table[bot].buchholz += sum(final[o] for o in others)
            table[bot].sonneborn_berger += (
                points[seat] * sum(final[o] for o in others) / len(others)
            )
    _head_to_head(table)
    key = (
        (lambda s: (-s.points, -s.buchholz, -s.sonneborn_berger, -s.head_to_head, s.bot))
        if swiss
        else (lambda s: (-s.points, -s.sonneborn_berger, -s.head_to_head, s.bot))
    )
    ordered = sorted(table.values(), key=key)
    for i, row in enumerate(ordered):
        row.rank = i + 1
    return ordered


def _head_to_head(table: dict[str, Standing]) -> None:
    """Within each group level on points, the points scored against the group's others."""
    groups: dict[float, list[Standing]] = defaultdict(list)
    for row in table.values():
        groups[row.points].append(row)
    for group in groups.values():
        names = {row.bot for row in group}
        for row in group:
            row.head_to_head = sum(
                sum(scores) for other, scores in row.against.items() if other in names
            )


def crosstable(ordered: Sequence[Standing], results: Sequence[GameResult]) -> list[dict[str, Any]]:
    """One row per entrant (in standings order): its points against each other entrant, game
    by game (two-player games; a three-player game counts against both opponents)."""
    cells: dict[str, dict[str, list[float]]] = {row.bot: {} for row in ordered}
    for result in results:
        if result.termination == "bye":
            continue
        points = game_points(result)
        for seat, bot in enumerate(result.seats):
            for other_seat, other in enumerate(result.seats):
                if other_seat != seat:
                    cells[bot].setdefault(other, []).append(points[seat])
    return [
        {"bot": row.bot, "rank": row.rank, "points": row.points, "against": cells[row.bot]}
        for row in ordered
    ]
