"""Connect Four evaluation: open lines and threats, on the game's bitboards.

- open lines: windows of four cells (in any of the four directions) that hold none of the
  opponent's discs, the Connect Four analogue of the notes' X(n); a window counts once if it
  holds one of the player's discs and twice if it holds two or more;
- threats: empty cells that would complete four for the player (``winning_cells``), worth
  ``THREAT`` open lines each, because a threat constrains the opponent for the rest of the game;
  ``GOOD_THREAT`` on the row parity that wins the zugzwang when the columns fill up (odd rows for
  the first player, even rows for the second), nothing right above an opponent threat.

The difference d = (lines(X) - lines(O)) + (weighted threats(X) - threats(O)) is mapped into
(-1, 1) by d / (|d| + SCALE), which keeps the order of d and stays strictly inside the utility
range so that a real four in a row always outweighs it.

    >>> from ply_arena.games.connect_four import state_from_moves
    >>> v = evaluate(state_from_moves("4444"))   # two X and two O stacked in the centre
    >>> v[0] == -v[1]
    True
"""

from __future__ import annotations

from ply_arena.games import State
from ply_arena.games.connect_four import BOARD, ConnectFourState

THREAT = 4
#: A threat on its owner's parity row (odd rows for the first player, even for the second).
GOOD_THREAT = 8
SCALE = 20.0
#: Rows 1, 3, 5 (bit rows 0, 2, 4 of each column) and rows 2, 4, 6.
ODD_ROWS = sum(1 << (7 * c + r) for c in range(7) for r in (0, 2, 4))
EVEN_ROWS = sum(1 << (7 * c + r) for c in range(7) for r in (1, 3, 5))


def _lines(mine: int, opponent: int) -> int:
    """Windows of four without an opponent disc: one point for each that holds one of our
    discs, one more if it holds two (a window is named by its lowest-index cell)."""
    free = BOARD & ~opponent  # sentinel bits are outside BOARD, so windows never wrap
    # the four directions written out (shift 1: vertical, 7: horizontal, 6 and 8: diagonals)
    b, c, e = mine >> 1, mine >> 2, mine >> 3
    w = free & (free >> 1) & (free >> 2) & (free >> 3)
    n = (w & (mine | b | c | e)).bit_count() + (
        w & ((mine & (b | c | e)) | (b & (c | e)) | (c & e))
    ).bit_count()
    b, c, e = mine >> 7, mine >> 14, mine >> 21
    w = free & (free >> 7) & (free >> 14) & (free >> 21)
    n += (w & (mine | b | c | e)).bit_count() + (
        w & ((mine & (b | c | e)) | (b & (c | e)) | (c & e))
    ).bit_count()
    b, c, e = mine >> 6, mine >> 12, mine >> 18
    w = free & (free >> 6) & (free >> 12) & (free >> 18)
    n += (w & (mine | b | c | e)).bit_count() + (
        w & ((mine & (b | c | e)) | (b & (c | e)) | (c & e))
    ).bit_count()
    b, c, e = mine >> 8, mine >> 16, mine >> 24
    w = free & (free >> 8) & (free >> 16) & (free >> 24)
    n += (w & (mine | b | c | e)).bit_count() + (
        w & ((mine & (b | c | e)) | (b & (c | e)) | (c & e))
    ).bit_count()
    return n


def _threat_cells(bits: int, mask: int) -> int:
    r = (bits << 1) & (bits << 2) & (bits << 3)
    p = (bits << 7) & (bits << 14)
    r |= p & (bits << 21)
    r |= p & (bits >> 7)
    p = (bits >> 7) & (bits >> 14)
    r |= p & (bits << 7)
    r |= p & (bits >> 21)
    p = (bits << 6) & (bits << 12)
    r |= p & (bits << 18)
    r |= p & (bits >> 6)
    p = (bits >> 6) & (bits >> 12)
    r |= p & (bits << 6)
    r |= p & (bits >> 18)
    p = (bits << 8) & (bits << 16)
    r |= p & (bits << 24)
    r |= p & (bits >> 8)
    p = (bits >> 8) & (bits >> 16)
    r |= p & (bits << 8)
    r |= p & (bits >> 24)
    return r & (BOARD ^ mask)


def score(current: int, mask: int) -> int:
    """The raw difference d for the player to move (owner of ``current``).

    Threats are weighed by row parity (the zugzwang rule of Connect Four: when the board fills
    up, the first player gets the odd rows 1, 3, 5 and the second player the even rows), so a
    threat on one's own parity counts ``GOOD_THREAT``, another ``THREAT``; a threat right
    above an opponent threat is never reached and counts nothing.
    """
    other = current ^ mask
    mine_t = _threat_cells(current, mask)
    other_t = _threat_cells(other, mask)
    # the cell above an opponent threat can only be played after the opponent declined it
    mine_live = mine_t & ~(other_t << 1)
    other_live = other_t & ~(mine_t << 1)
    # the side to move is the first player exactly when an even number of discs is down
    if mask.bit_count() & 1:
        mine_good, other_good = EVEN_ROWS, ODD_ROWS
    else:
        mine_good, other_good = ODD_ROWS, EVEN_ROWS
    return (
        _lines(current, other)
        - _lines(other, current)
        + THREAT * (mine_live.bit_count() - other_live.bit_count())
        + (GOOD_THREAT - THREAT)
        * ((mine_live & mine_good).bit_count() - (other_live & other_good).bit_count())
    )


# Searches reach the same position by different move orders all the time; the value depends
# only on the position, so it is remembered (Pons' key current + mask), up to a bound.
_MEMO: dict[int, tuple[float, float]] = {}
_MEMO_SIZE = 1 << 20


def evaluate(state: State) -> tuple[float, ...]:
    """(value for X, value for O), each in (-1, 1); the utility at a terminal state."""
    assert isinstance(state, ConnectFourState)
    if state.is_terminal():
        return state.returns()
    current = state.current
    mask = state.mask
    key = current + mask
    value = _MEMO.get(key)
    if value is None:
        d = score(current, mask)
        if state.player:
            d = -d
        v = d / (abs(d) + SCALE)
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        value = _MEMO[key] = (v, -v)
    return value
