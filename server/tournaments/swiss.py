"""Swiss pairing: each round pairs entrants with the same score or as close as can be, never
twice the same two, and balances who sits first.

The round is a maximum-weight matching (rustworkx's ``max_weight_matching``, the blossom
algorithm, with maximum cardinality) on the graph of pairs that have not met yet and would not
put anyone three games off seat balance (two firsts more than seconds, or the other way), an
edge weighing more the closer the two scores are (the sum of the squared gaps is the least
possible); among pairings as good on scores, those that give more players the seat they are
owed weigh more. With an odd number of entrants, the lowest-placed
entrant that has not had a bye yet (and whose bye leaves the others pairable) sits out and
scores a win; an entrant that is not connected when the round is drawn takes it only if
nobody connected can. When no pairing without a rematch exists, SwissError says so: a Swiss
tournament has fewer rounds than entrants.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import rustworkx as rx


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


def pair_round(
    entrants: Sequence[SwissEntrant], absent: Collection[str] = ()
) -> tuple[list[tuple[str, str]], str | None]:
    """The next round: (pairings in seat order, the entrant with a bye or None). ``absent``:
    entrants not connected now, who take the bye (a free point) only if nobody present can."""
    ordered = sorted(entrants, key=lambda e: (-e.points, e.seed, e.name))
    if len(ordered) % 2 == 0:
        return _pair(ordered), None
    # The bye: the lowest-placed entrant without one whose absence leaves a pairing; someone
    # present before anyone absent.
    candidates = [e for e in reversed(ordered) if e.name not in absent]
    candidates += [e for e in reversed(ordered) if e.name in absent]
    for candidate in candidates:
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


#: Each entrant's candidate opponents: first the nearest 32 above and below it in the standings
#: order, then, if that leaves someone unpaired, everyone. A best pairing joins entrants close
#: in score, so that is where it lies (bench/tournament.py compares the two on simulated
#: tournaments: the nearest 32 never paired worse), and the blossom algorithm's cost grows with
#: the edges: for 512 entrants, 16,000 edges instead of 130,000.
WINDOWS: tuple[int | None, ...] = (32, None)


def _pair(entrants: list[SwissEntrant]) -> list[tuple[str, str]]:
    # First without putting anyone three games off seat balance; only if that leaves someone
    # unpaired, with it (heavily weighed against).
    for strict in (True, False):
        for window in WINDOWS:
            everyone = window is None or window >= len(entrants) - 1
            pairs = _matching(entrants, strict, None if everyone else window)
            if 2 * len(pairs) == len(entrants):
                return pairs
            if everyone:
                break  # a wider window would draw the same graph
    raise SwissError("this round cannot be paired without a rematch: play fewer rounds")


def seats_clash(a: SwissEntrant, b: SwissEntrant) -> bool:
    """Both owed the same seat by two games or more: one would end three games off."""
    x, y = a.first_seat_balance, b.first_seat_balance
    return x * y > 0 and min(abs(x), abs(y)) >= 2


def _matching(
    entrants: list[SwissEntrant], strict: bool, window: int | None = None
) -> list[tuple[str, str]]:
    """The best pairing among ``entrants`` (in standings order), each paired with one of the
    ``window`` nearest on either side (None: anyone)."""
    graph = rx.PyGraph()
    graph.add_nodes_from(range(len(entrants)))
    edges = []
    for i, a in enumerate(entrants):
        last = len(entrants) if window is None else i + 1 + window
        for j in range(i + 1, min(last, len(entrants))):
            b = entrants[j]
            if b.name in a.opponents:
                continue  # no rematch
            clash = seats_clash(a, b)
            if clash and strict:
                continue
            gap = round(abs(a.points - b.points) * 2)
            weight = _BASE - _GAP * gap * gap + _seat_term(a, b) - (_BASE // 2 if clash else 0)
            edges.append((i, j, weight))
    graph.add_edges_from(edges)
    matching = rx.max_weight_matching(graph, max_cardinality=True, weight_fn=lambda w: w)
    pairs = [_seated(entrants[x], entrants[y]) for x, y in matching]
    by_name = {e.name: e for e in entrants}
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
