"""Othello evaluation: mobility, corners and disc parity, on the game's bitboards.

The weighted linear evaluation of the notes (000, "función de evaluación lineal ponderada",
w1 f1 + w2 f2 + ...), with the three features every Othello program starts from:

- mobility: legal moves of the side to move against the other side's, as a relative difference
  100 (m1 - m2) / (m1 + m2); having moves is what keeps a player out of trouble;
- corners: a corner can never be flipped (CORNER points each), and an X-square (the diagonal
  neighbour of an empty corner) tends to give that corner away (X_SQUARE points against);
- disc parity: 100 (d1 - d2) / (d1 + d2), weighted by how full the board is, because the disc
  count is the utility at the end but a poor guide in the opening.

The sum is mapped into (-1, 1) by x / (|x| + SCALE): same order, strictly inside the utility
range, so a real win always counts more.

    >>> from ply_arena import games
    >>> evaluate(games.get("othello").initial_state())
    (0.0, 0.0)
    >>> s = games.get("othello").initial_state().result(19)  # Black d3: 4 discs to 1, 3 moves each
    >>> tuple(round(v, 3) for v in evaluate(s))
    (0.023, -0.023)
"""

from __future__ import annotations

from ply_arena.games import State
from ply_arena.games.othello import CORNERS, OthelloState, legal_moves_bitboard

MOBILITY = 0.5
CORNER = 30.0
X_SQUARE = 15.0
PARITY = 0.5
SCALE = 100.0

# (X-square, its corner) pairs: b2/a1, g2/h1, b7/a8, g7/h8
_X_PAIRS = ((1 << 9, 1 << 0), (1 << 14, 1 << 7), (1 << 49, 1 << 56), (1 << 54, 1 << 63))


def score(own: int, opp: int, own_moves: int) -> float:
    """The weighted sum for the side to move (``own``), before squashing."""
    m1 = own_moves.bit_count()
    m2 = legal_moves_bitboard(opp, own).bit_count()
    x = MOBILITY * 100.0 * (m1 - m2) / (m1 + m2) if m1 + m2 else 0.0
    x += CORNER * ((own & CORNERS).bit_count() - (opp & CORNERS).bit_count())
    empty_corners = CORNERS & ~(own | opp)
    if empty_corners:
        for xsq, corner in _X_PAIRS:
            if empty_corners & corner:
                if own & xsq:
                    x -= X_SQUARE
                elif opp & xsq:
                    x += X_SQUARE
    d1 = own.bit_count()
    d2 = opp.bit_count()
    x += PARITY * (d1 + d2) / 64.0 * 100.0 * (d1 - d2) / (d1 + d2)
    return x


# Transpositions are frequent in a search; the value depends only on the position, so it is
# remembered (one int key: both bitboards and the side to move), up to a bound.
_MEMO: dict[int, tuple[float, float]] = {}
_MEMO_SIZE = 1 << 20


def evaluate(state: State) -> tuple[float, ...]:
    """(value for Black, value for White), each in (-1, 1); the utility at a terminal state."""
    assert isinstance(state, OthelloState)
    if state.is_terminal():
        return state.returns()
    own = state.own
    opp = state.opp
    key = (own << 65) | (opp << 1) | state.player
    value = _MEMO.get(key)
    if value is None:
        x = score(own, opp, state.moves)
        if state.player:
            x = -x
        v = x / (abs(x) + SCALE)
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        value = _MEMO[key] = (v, -v) if v else (0.0, 0.0)
    return value
