"""Provably fair dice: how the server rolls from a secret seed, so that anyone can check it.

Each match has a secret seed (a decimal string). ``match_start`` carries a *commitment* to it,
``sha256("<seed>:<match_id>")`` in hex, and ``match_end`` and the stored record reveal the seed.
Every chance event is then derived from the seed alone, in a way any language can redo:

1. ``h = sha256("<seed>:<match_id>:<ply>")``, the ply being the event's place in the match
   (moves and dice counted from 0), as UTF-8 bytes; take its first 8 bytes as a big-endian
   unsigned integer ``x``.
2. The position's chance outcomes, in the game's order (``state.chance_outcomes()``; backgammon:
   the 21 rolls as docs/games.md lists them), have probabilities that are fractions with a common
   denominator ``D`` (36 for two dice): weights ``w_i = p_i * D``, whole numbers.
3. ``r = x mod D``; the outcome is the first ``i`` with ``r < w_0 + ... + w_i``.

(The modulo bias is below 2^-58.) A bot cannot predict a roll before the server reveals the seed,
and the server cannot change a roll afterwards without breaking the commitment it sent first.

Matches stored before this scheme (``scheme`` ``python-random-v0``) rolled with CPython's
``random.Random(int(seed)).choices(outcomes, probabilities)``, one call per roll in order; they
can be checked with this package (``reroll_v0``) but carry no commitment.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

#: The scheme of every new match.
SCHEME = "sha256-v1"
#: The scheme of matches stored before commitments existed.
LEGACY_SCHEME = "python-random-v0"

#: The largest denominator a chance probability may have (games' probabilities are exact
#: fractions such as 1/36; floats are read back to them).
_MAX_DENOMINATOR = 1 << 20


def commitment(seed: str, match_id: str) -> str:
    """``sha256("<seed>:<match_id>")`` in hex: what ``match_start`` says before any roll."""
    return hashlib.sha256(f"{seed}:{match_id}".encode()).hexdigest()


def weights(probabilities: Sequence[float]) -> tuple[list[int], int]:
    """Whole-number weights for ``probabilities`` and their common denominator."""
    found, denominator = _weights(tuple(probabilities))
    return list(found), denominator


@functools.lru_cache(maxsize=256)
def _weights(probabilities: tuple[float, ...]) -> tuple[tuple[int, ...], int]:
    # Cached: a game has a handful of chance distributions (backgammon: one), and the exact
    # fractions cost more than the rest of a roll (verifying a record re-rolls every die).
    fractions = [Fraction(p).limit_denominator(_MAX_DENOMINATOR) for p in probabilities]
    denominator = math.lcm(*(f.denominator for f in fractions))
    found = tuple(int(f * denominator) for f in fractions)
    if sum(found) != denominator:
        raise ValueError(f"chance probabilities {list(probabilities)} do not sum to 1")
    return found, denominator


def pick(seed: str, match_id: str, ply: int, probabilities: Sequence[float]) -> int:
    """The index of the outcome rolled at ``ply`` (see the module docstring)."""
    found, denominator = weights(probabilities)
    digest = hashlib.sha256(f"{seed}:{match_id}:{ply}".encode()).digest()
    r = int.from_bytes(digest[:8], "big") % denominator
    total = 0
    for i, w in enumerate(found):
        total += w
        if r < total:
            return i
    raise AssertionError("unreachable: the weights sum to the denominator")


def roll(seed: str, match_id: str, ply: int, outcomes: Sequence[tuple[Any, float]]) -> Any:
    """The outcome rolled at ``ply`` among ``outcomes`` (``state.chance_outcomes()``)."""
    return outcomes[pick(seed, match_id, ply, [p for _, p in outcomes])][0]


class LegacyDice:
    """The rolls of a ``python-random-v0`` match, in order (one instance per match)."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(int(seed))

    def roll(self, outcomes: Sequence[tuple[Any, float]]) -> Any:
        values, probabilities = zip(*outcomes, strict=True)
        return self._rng.choices(values, probabilities)[0]
