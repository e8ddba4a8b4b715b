"""Swiss pairing: each round pairs entrants with the same score or as close as can be, never
twice the same two, and balances who sits first.

The round is a maximum-weight matching (networkx's ``max_weight_matching``, the blossom
algorithm, with maximum cardinality) on the graph of pairs that have not met yet and would not
put anyone three games off seat balance (two firsts more than seconds, or the other way), an
edge weighing more the closer the two scores are (the sum of the squared gaps is the least
possible); among pairings as good on scores, those that give more players the seat they are
owed weigh more. With an odd number of entrants, the lowest-placed
entrant that has not had a bye yet (and whose bye leaves the others pairable) sits out and
scores a win. When no pairing without a rematch exists, SwissError says so: a Swiss
tournament has fewer rounds than entrants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx


class SwissError(ValueError):
    """The round cannot be paired without a rematch."""


@dataclass
class SwissEntrant:
    """What the pairing needs to know of an entrant after the rounds played so far."""

    name: str
    points: float = 0.0
    #: Seeding order (rating, then name): the tie-break of the pairing among equal scores.
    seed: int = 0
    opponents: set[str] = field(default_factory=set)
    #: Games in the first seat minus games in the second.
    first_seat_balance: int = 0
    #: The seat of its last game (0 first, 1 second), None before its first.
    last_seat: int | None = None
    had_bye: bool = False


#: Weight of an edge: a large base (so that cardinality dominates), minus the square of the
#: score gap in half points, plus the seat term (``_seat_term``).
_BASE = 1_000_000
_GAP = 1_000


def pair_round(entrants: Sequence[SwissEntrant]) -> tuple[list[tuple[str, str]], str | None]:
    """The next round: (pairings in seat order, the entrant with a bye or None)."""
    ordered = sorted(entrants, key=lambda e: (-e.points, e.seed, e.name))
    if len(ordered) % 2 == 0:
        return _pair(ordered), None
    # The bye: the lowest-placed entrant without one whose absence leaves a pairing.
    for candidate in reversed(ordered):
        if candidate.had_bye:
            continue
        rest = [e for e in ordered if e is not candidate]
        try:
            return _pair(rest), candidate.name
        except SwissError:
            continue
    raise SwissError(
        "no entrant can take the bye and leave the others pairable without a rematch: "
        "play fewer rounds"
    )


def _pair(entrants: list[SwissEntrant]) -> list[tuple[str, str]]:
    # First without putting anyone three games off seat balance; only if that leaves someone
    # unpaired, with it (heavily weighed against).
    for strict in (True, False):
        pairs = _matching(entrants, strict)
        if 2 * len(pairs) == len(entrants):
            return pairs
    raise SwissError("this round cannot be paired without a rematch: play fewer rounds")


def seats_clash(a: SwissEntrant, b: SwissEntrant) -> bool:
    """Both owed the same seat by two games or more: one would end three games off."""
    x, y = a.first_seat_balance, b.first_seat_balance
    return x * y > 0 and min(abs(x), abs(y)) >= 2


def _matching(entrants: list[SwissEntrant], strict: bool) -> list[tuple[str, str]]:
    graph = nx.Graph()
    graph.add_nodes_from(e.name for e in entrants)
    by_name = {e.name: e for e in entrants}
    for i, a in enumerate(entrants):
        for b in entrants[i + 1 :]:
            if b.name in a.opponents:
                continue  # no rematch
            clash = seats_clash(a, b)
            if clash and strict:
                continue
            gap = round(abs(a.points - b.points) * 2)
            weight = _BASE - _GAP * gap * gap + _seat_term(a, b) - (_BASE // 2 if clash else 0)
            graph.add_edge(a.name, b.name, weight=weight)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    pairs = [_seated(by_name[x], by_name[y]) for x, y in matching]
    # Top boards first: the pair with the best score, then the better seed.
    pairs.sort(key=lambda p: (-max(by_name[p[0]].points, by_name[p[1]].points),
                              min(by_name[p[0]].seed, by_name[p[1]].seed)))  # fmt: skip
    return pairs


def _seat_term(a: SwissEntrant, b: SwissEntrant) -> int:
    """A little lower when both are owed the same seat (one of them will not get it): never
    enough to outweigh a closer score."""
    x, y = a.first_seat_balance, b.first_seat_balance
    return -10 * min(abs(x), abs(y)) if x * y > 0 else 0


def _seated(a: SwissEntrant, b: SwissEntrant) -> tuple[str, str]:
    """(first seat, second seat): the one that sat first less often goes first; then the one
    that sat second last time; then the better seed."""
    if a.first_seat_balance != b.first_seat_balance:
        return (a.name, b.name) if a.first_seat_balance < b.first_seat_balance else (b.name, a.name)
    if a.last_seat != b.last_seat:
        return (a.name, b.name) if a.last_seat == 1 or b.last_seat == 0 else (b.name, a.name)
    return (a.name, b.name) if (a.seed, a.name) < (b.seed, b.name) else (b.name, a.name)
