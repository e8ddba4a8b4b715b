"""Round robin and gauntlet: every match of the tournament, in rounds, fixed in advance.

A **cycle** of a round robin plays every group of entrants in **every seat order**: two
players meet twice (each once in the first seat), three play six times (each seat order of
the triple once), so that no seat's advantage favours anyone. Two-player rounds follow the
circle method (Berger tables): with an even number of entrants everyone plays in every round,
with an odd one each round gives one entrant a bye. Larger groups are packed into rounds so
that nobody plays twice in a round.

A **gauntlet** plays each challenger against each bot of a pool (reference agents, say), in
both seats, ``cycles`` times; challengers never meet one another.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations, permutations

#: One match: the bots in seat order.
Pairing = tuple[str, ...]
#: The matches of one round (nobody plays twice in it).
Round = list[Pairing]


def round_robin(entrants: Sequence[str], *, players: int = 2, cycles: int = 1) -> list[Round]:
    """Every round of a ``cycles``-cycle round robin of ``entrants`` for a ``players``-player
    game; ValueError if there are fewer entrants than seats or the names repeat."""
    _check(entrants, players, cycles)
    rounds = _circle(list(entrants)) if players == 2 else _packed(list(entrants), players)
    return [list(r) for _ in range(cycles) for r in rounds]


def gauntlet(challengers: Sequence[str], pool: Sequence[str], *, cycles: int = 1) -> list[Round]:
    """Each challenger against each bot of ``pool``, in both seats, ``cycles`` times."""
    if not challengers or not pool:
        raise ValueError("a gauntlet needs at least one challenger and one bot in its pool")
    if set(challengers) & set(pool) or len(set(challengers)) < len(challengers):
        raise ValueError("the challengers must be different bots, none of them in the pool")
    if cycles < 1:
        raise ValueError("cycles must be at least 1")
    rounds: list[Round] = []
    for _ in range(cycles):
        # Round k: challenger i meets pool bot (i + k) mod len(pool), so that the pool's bots
        # are shared out over the rounds; then the same with the seats swapped.
        for swap in (False, True):
            for k in range(len(pool)):
                games: Round = []
                for i, bot in enumerate(challengers):
                    other = pool[(i + k) % len(pool)]
                    games.append((other, bot) if swap else (bot, other))
                rounds.append(games)
    return rounds


def _check(entrants: Sequence[str], players: int, cycles: int) -> None:
    if players < 2:
        raise ValueError("a match has at least two seats")
    if len(entrants) < players:
        raise ValueError(f"a round robin of a {players}-player game needs {players} entrants")
    if len(set(entrants)) < len(entrants):
        raise ValueError("an entrant is listed twice")
    if cycles < 1:
        raise ValueError("cycles must be at least 1")


def _circle(entrants: list[str]) -> list[Round]:
    """Berger tables: n - 1 rounds in which each pair meets once (a bye when n is odd), then
    the same rounds with the seats swapped."""
    ring: list[str | None] = list(entrants) + ([None] if len(entrants) % 2 else [])
    n = len(ring)
    first_half: list[Round] = []
    for r in range(n - 1):
        games: Round = []
        for i in range(n // 2):
            a, b = ring[i], ring[n - 1 - i]
            if a is None or b is None:
                continue
            # Alternate who sits first, so that over the first half seats are already even.
            games.append((a, b) if (r + i) % 2 == 0 else (b, a))
        first_half.append(games)
        ring = [ring[0], ring[-1], *ring[1:-1]]  # rotate all but the first
    second_half: list[Round] = [[(b, a) for a, b in games] for games in first_half]
    return first_half + second_half


def _packed(entrants: list[str], players: int) -> list[Round]:
    """Every seat order of every group of ``players`` entrants, packed into rounds greedily
    (first round that has room, nobody twice in a round)."""
    rounds: list[Round] = []
    busy: list[set[str]] = []
    for group in combinations(entrants, players):
        for order in permutations(group):
            for games, taken in zip(rounds, busy, strict=True):
                if taken.isdisjoint(order):
                    games.append(order)
                    taken.update(order)
                    break
            else:
                rounds.append([order])
                busy.append(set(order))
    return rounds
