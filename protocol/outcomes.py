"""What each way of ending a match pays, by seat: the referee's rule, and the check of a record.

- ``normal``: the game's own ``returns()`` at the terminal position.
- a forfeit (``timeout``, ``illegal_move``, ``disconnect``, ``resign``): the faulty seat gets the
  game's ``min_utility``; the other seats share what is left of ``constant_sum`` equally (for a
  two-player zero-sum game: -1 / +1); games without a constant sum pay them ``max_utility``.
- ``move_limit``: every seat gets ``constant_sum / n`` (0 without a constant sum).
- ``aborted``: nothing (the record stores no payoffs).
"""

from __future__ import annotations

from ply_arena.games import Game


def forfeit_payoffs(game: Game, at_fault: int) -> list[float]:
    """The faulty seat gets min_utility; the others share the rest of constant_sum."""
    n = game.num_players
    if game.constant_sum is not None:
        other = (game.constant_sum - game.min_utility) / (n - 1)
    else:
        other = game.max_utility
    return [game.min_utility if seat == at_fault else other for seat in range(n)]


def drawn_payoffs(game: Game) -> list[float]:
    """What a match cut by the move limit pays every seat."""
    n = game.num_players
    share = game.constant_sum / n if game.constant_sum is not None else 0.0
    return [share] * n


#: Terminations in which a seat's fault ended the match.
FORFEITS = frozenset({"timeout", "illegal_move", "disconnect", "resign"})
