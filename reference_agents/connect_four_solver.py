"""A Connect Four solver: alpha-beta specialised to one game, after Pascal Pons' tutorial.

The ``alphabeta`` agent hands Connect Four positions to this module whenever the position can be
solved within the agent's budget (``solve`` with a node limit), and falls back to its generic
depth-limited search otherwise. It is the same ALPHA-BETA of the notes in its negamax form
(notes 003: negate the value and swap alpha and beta at each level), plus the techniques that make
a pure-Python solver practical:

- bitboards: a position is three ints ``current`` (stones of the side to move), ``mask`` (all
  stones) and ``moves`` (plies played); column ``c`` occupies bits ``7c .. 7c+5`` with a spare
  bit on top so that shifts never wrap from one column into the next;
- score bounds: a win for the side to move scores ``22 - stones it played``, a loss the negative,
  a draw 0 (the score of the test data); the window is narrowed with the best and worst score
  still possible at this ply;
- null-window search: ``solve`` finds the exact score by a sequence of searches with windows
  ``[med, med+1]``, each one only answering "above or below med?" (cheap, many cut-offs);
- a transposition table keyed by ``current + mask`` storing a lower or an upper bound;
- pruning of losing moves: moves that let the opponent win at once, or that ignore an opponent
  threat, are never searched; two opponent threats mean the position is lost;
- anticipating wins: a position where the side to move can connect four is scored without search;
- move ordering by threats: moves that create more of our own "winning cells" first, then by
  closeness to the centre.

    >>> solve_moves("2252576253462244111563365343671351441")  # first line of Test_L3_R1
    -1
"""

from __future__ import annotations

import math
import time

WIDTH = 7
HEIGHT = 6
H1 = HEIGHT + 1
Bitboard = int

#: Bit 0 of every column.
BOTTOM_MASK: Bitboard = sum(1 << (c * H1) for c in range(WIDTH))
#: Every playable cell.
BOARD_MASK: Bitboard = BOTTOM_MASK * ((1 << HEIGHT) - 1)
#: All cells of column c, the top cell of column c, the bottom cell of column c.
COLUMN_MASK: tuple[Bitboard, ...] = tuple(((1 << HEIGHT) - 1) << (c * H1) for c in range(WIDTH))
TOP_MASK: tuple[Bitboard, ...] = tuple(1 << (HEIGHT - 1 + c * H1) for c in range(WIDTH))
BOTTOM_CELL: tuple[Bitboard, ...] = tuple(1 << (c * H1) for c in range(WIDTH))
#: Columns from the centre outwards: central columns take part in more lines.
COLUMN_ORDER: tuple[int, ...] = (3, 2, 4, 1, 5, 0, 6)
CELLS = WIDTH * HEIGHT
MIN_SCORE = -(CELLS // 2) + 3
MAX_SCORE = (CELLS + 1) // 2 - 3


def winning_cells(position: Bitboard, mask: Bitboard) -> Bitboard:
    """Empty cells (reachable or not) that would complete four for the owner of ``position``."""
    # vertical: three stones right below
    r = (position << 1) & (position << 2) & (position << 3)
    # horizontal (shift H1), and the two diagonals (shift HEIGHT and HEIGHT + 2)
    for s in (H1, HEIGHT, HEIGHT + 2):
        p = (position << s) & (position << 2 * s)
        r |= p & (position << 3 * s)
        r |= p & (position >> s)
        p = (position >> s) & (position >> 2 * s)
        r |= p & (position << s)
        r |= p & (position >> 3 * s)
    return r & (BOARD_MASK ^ mask)


def play_moves(moves: str) -> tuple[Bitboard, Bitboard, int]:
    """``(current, mask, moves)`` after a Pons move string ("4453", 1-based columns).

    ValueError if a column is out of range or full, or a move is played after four in a row.
    """
    current = mask = 0
    n = 0
    for ch in moves.strip():
        col = ord(ch) - 49
        if not 0 <= col < WIDTH:
            raise ValueError(f"bad column {ch!r} in {moves!r}: expected digits 1-{WIDTH}")
        if mask & TOP_MASK[col]:
            raise ValueError(f"column {ch} is full in {moves!r}")
        move = (mask + BOTTOM_CELL[col]) & COLUMN_MASK[col]
        if winning_cells(current, mask) & move:
            raise ValueError(f"move {n + 1} of {moves!r} ends the game; no position to solve")
        current ^= mask
        mask |= move
        n += 1
    return current, mask, n


class SolveTimeout(Exception):
    """The solver's deadline passed before the score was known."""


class Solver:
    """Exact scores of Connect Four positions; keeps its transposition table between calls
    unless ``reset()`` is called. ``nodes`` counts calls of the inner search."""

    def __init__(self, deadline: float = math.inf) -> None:
        self.table: dict[int, int] = {}
        self.nodes = 0
        #: time.monotonic() after which the search raises SolveTimeout (checked every 1024 nodes)
        self.deadline = deadline

    def reset(self) -> None:
        self.table.clear()
        self.nodes = 0

    def solve(self, current: Bitboard, mask: Bitboard, moves: int, weak: bool = False) -> int:
        """The exact score for the side to move (``weak``: only its sign, -1/0/1).

        Follows the iterative null-window idea: keep an interval [lo, hi] that contains the
        score and halve it with searches whose window is [med, med + 1].
        """
        possible = (mask + BOTTOM_MASK) & BOARD_MASK
        if winning_cells(current, mask) & possible:
            return (CELLS + 1 - moves) // 2 if not weak else 1
        negamax = self._negamax
        if weak:
            # two null windows answer "win?" and then "loss?"
            if negamax(current, mask, moves, 0, 1) > 0:
                return 1
            return -1 if negamax(current, mask, moves, -1, 0) < 0 else 0
        lo, hi = -((CELLS - moves) // 2), (CELLS + 1 - moves) // 2
        while lo < hi:
            med = lo + (hi - lo) // 2  # lo <= med < hi
            # probe near zero first: most positions are decided, and small windows cut more
            if med <= 0 and -(-lo // 2) < med:
                med = -(-lo // 2)
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = negamax(current, mask, moves, med, med + 1)
            if r <= med:
                hi = r
            else:
                lo = r
        return lo

    def _negamax(self, current: Bitboard, mask: Bitboard, moves: int, alpha: int, beta: int) -> int:
        """NEGAMAX(node, alpha, beta) of the notes, fail-soft inside the score bounds.

        Precondition: the side to move cannot win with its next stone (the caller checked).
        """
        self.nodes += 1
        if not self.nodes & 1023 and time.monotonic() > self.deadline:
            raise SolveTimeout
        possible = (mask + BOTTOM_MASK) & BOARD_MASK
        opponent = current ^ mask
        # opponent's winning cells, inlined winning_cells() (the hot path of the whole solver)
        r = (opponent << 1) & (opponent << 2) & (opponent << 3)
        p = (opponent << 7) & (opponent << 14)
        r |= p & (opponent << 21)
        r |= p & (opponent >> 7)
        p = (opponent >> 7) & (opponent >> 14)
        r |= p & (opponent << 7)
        r |= p & (opponent >> 21)
        p = (opponent << 6) & (opponent << 12)
        r |= p & (opponent << 18)
        r |= p & (opponent >> 6)
        p = (opponent >> 6) & (opponent >> 12)
        r |= p & (opponent << 6)
        r |= p & (opponent >> 18)
        p = (opponent << 8) & (opponent << 16)
        r |= p & (opponent << 24)
        r |= p & (opponent >> 8)
        p = (opponent >> 8) & (opponent >> 16)
        r |= p & (opponent << 8)
        r |= p & (opponent >> 24)
        opp_win = r & (BOARD_MASK ^ mask)
        forced = possible & opp_win
        if forced:
            if forced & (forced - 1):
                return -((CELLS - moves) // 2)  # two threats at once: lost
            possible = forced
        # never play right under an opponent's winning cell
        nxt = possible & ~(opp_win >> 1)
        if not nxt:
            return -((CELLS - moves) // 2)
        if moves >= CELLS - 2:
            return 0  # no win left for either side in the last two stones
        lower = -((CELLS - 2 - moves) // 2)  # the opponent cannot win on its next stone
        if alpha < lower:
            alpha = lower
            if alpha >= beta:
                return alpha
        upper = (CELLS - 1 - moves) // 2  # we cannot win on this stone
        key = current + mask
        val = self.table.get(key)
        if val is not None:
            if val > MAX_SCORE - MIN_SCORE + 1:  # stored a lower bound
                lb = val + 2 * MIN_SCORE - MAX_SCORE - 2
                if alpha < lb:
                    alpha = lb
                    if alpha >= beta:
                        return alpha
            else:  # stored an upper bound
                ub = val + MIN_SCORE - 1
                if upper > ub:
                    upper = ub
        if beta > upper:
            beta = upper
            if alpha >= beta:
                return beta
        # order the moves by the number of winning cells they give us (threats), centre first
        scored: list[tuple[int, int, int]] = []
        for col in COLUMN_ORDER:
            move = nxt & COLUMN_MASK[col]
            if move:
                pos = current | move
                m2 = mask | move
                r = (pos << 1) & (pos << 2) & (pos << 3)
                p = (pos << 7) & (pos << 14)
                r |= p & (pos << 21)
                r |= p & (pos >> 7)
                p = (pos >> 7) & (pos >> 14)
                r |= p & (pos << 7)
                r |= p & (pos >> 21)
                p = (pos << 6) & (pos << 12)
                r |= p & (pos << 18)
                r |= p & (pos >> 6)
                p = (pos >> 6) & (pos >> 12)
                r |= p & (pos << 6)
                r |= p & (pos >> 18)
                p = (pos << 8) & (pos << 16)
                r |= p & (pos << 24)
                r |= p & (pos >> 8)
                p = (pos >> 8) & (pos >> 16)
                r |= p & (pos << 8)
                r |= p & (pos >> 24)
                # -threats first; the insertion index keeps centre-first among equals
                scored.append((-(r & (BOARD_MASK ^ m2)).bit_count(), len(scored), move))
        if len(scored) > 1:
            scored.sort()
        negamax = self._negamax
        table = self.table
        opponent_moves = moves + 1
        for _, _, move in scored:
            # the child's side to move is the opponent: its stones are opponent, ours join mask
            score = -negamax(opponent, mask | move, opponent_moves, -beta, -alpha)
            if score >= beta:
                table[key] = score + MAX_SCORE - 2 * MIN_SCORE + 2
                return score
            if score > alpha:
                alpha = score
        table[key] = alpha - MIN_SCORE + 1
        return alpha

    def best_move(
        self, current: Bitboard, mask: Bitboard, moves: int, order: tuple[int, ...] = COLUMN_ORDER
    ) -> tuple[int, int]:
        """``(column, score)``: a column that keeps the exact score of the position, trying the
        columns in ``order``. One full solve, then one null-window test per column tried."""
        score = self.solve(current, mask, moves)
        possible = (mask + BOTTOM_MASK) & BOARD_MASK
        wins = winning_cells(current, mask) & possible
        candidates = [c for c in order if not mask & TOP_MASK[c]]
        for col in candidates:
            move = (mask + BOTTOM_CELL[col]) & COLUMN_MASK[col]
            if wins:
                if wins & move:
                    return col, score
                continue
            if moves + 1 == CELLS:
                return col, 0
            child_current, child_mask = current ^ mask, mask | move
            child_possible = (child_mask + BOTTOM_MASK) & BOARD_MASK
            if winning_cells(child_current, child_mask) & child_possible:
                continue  # the opponent connects at once: only right if every move loses so
            # the child's value is at most -score exactly when this move keeps the score
            if self._negamax(child_current, child_mask, moves + 1, -score, -score + 1) <= -score:
                return col, score
        # every move lets the opponent connect at once: any column, the loss is the same
        return candidates[0], score

    def best_moves(self, current: Bitboard, mask: Bitboard, moves: int) -> list[tuple[int, int]]:
        """``[(column, score), ...]`` for every legal column, the score for the side to move."""
        out: list[tuple[int, int]] = []
        for col in range(WIDTH):
            if mask & TOP_MASK[col]:
                continue
            move = (mask + BOTTOM_CELL[col]) & COLUMN_MASK[col]
            if winning_cells(current, mask) & move:
                out.append((col, (CELLS + 1 - moves) // 2))
            elif moves + 1 == CELLS:
                out.append((col, 0))
            else:
                out.append((col, -self.solve(current ^ mask, mask | move, moves + 1)))
        return out


def solve_moves(moves: str, weak: bool = False) -> int:
    """The score of the position after a Pons move string, for the side to move."""
    return Solver().solve(*play_moves(moves), weak=weak)
