"""Othello (Reversi) on the 8x8 board from the standard start.

Seats: 0 is Black (moves first), 1 is White. A move is a square index 0..63: ``a1`` = 0 is the
top-left corner, ``h8`` = 63 the bottom-right one; columns ``a``-``h`` run left to right and rows
``1``-``8`` top to bottom (the usual Othello diagram), so ``square = 8 * (row - 1) + column``.
Notation is the square name, e.g. ``d3`` (any case on input). At the start White has d4 and e5,
Black d5 and e4, and Black's legal moves are d3, c4, f5 and e6.

A player with no legal move must pass: then, and only then, ``actions() == (PASS,)`` with
``PASS = 64`` (notation ``pass``). The game ends as soon as neither side can move, so two passes
in a row never happen. The side with more discs wins: payoffs +1 / -1, 0 for equal counts.

For evaluation functions a state exposes read-only bitboards (bit ``i`` = square ``i``):
``own`` and ``opp`` (discs of the side to move and of the other side), ``black``, ``white`` and
``moves`` (the legal squares of the side to move), plus ``player``; ``moves`` and ``player`` are
slots, the others cheap properties. ``opp_moves`` is the other side's mobility (computed on each
use, faster than ``legal_moves_bitboard(opp, own)``, which takes any two bitboards).
``int.bit_count()`` counts discs or moves; ``CORNERS``, ``X_SQUARES`` and ``C_SQUARES`` are the
usual masks::

    >>> from ply_arena import games
    >>> g = games.get("othello")
    >>> s = g.initial_state()
    >>> [g.format_move(s, m) for m in s.actions()]
    ['d3', 'c4', 'f5', 'e6']
    >>> s2 = s.result(g.parse_move(s, "D3"))
    >>> s2.player, s2.white.bit_count(), s2.black.bit_count()
    (1, 1, 4)
    >>> [g.format_move(s2, m) for m in s2.actions()]
    ['c3', 'e3', 'c5']
    >>> s2.moves == legal_moves_bitboard(s2.own, s2.opp)
    True
    >>> s2.opp_moves == legal_moves_bitboard(s2.opp, s2.own)   # Black's, were it to move
    True

How it is fast in pure Python. Legal moves come from bit-parallel fills over all squares at once,
and each board is kept twice in one int: as is (bits 0..63) and rotated by 180 degrees (bits
82..145). A left shift then moves the first copy one way and the second copy the opposite way, so
four fills cover the eight directions; the east/west pair needs no fill at all, because adding a
disc bit to a run of opponent bits carries through the run to the square just past it. Flips of
one move walk only the precomputed rays that start on an opponent disc; every ray points up
(towards higher bits) in one of the two copies, so ``x & -x`` finds its first non-opponent
square, and a table gives the flipped discs already in both copies. The positions of the first
five plies are built at import, so from them ``actions`` and ``result`` are lookups.
"""

from __future__ import annotations

from typing import Any

from ply_arena.games._api import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    State,
    illegal_move_message,
)

Square = int
Bitboard = int  # bit i set = square i occupied (a1 = bit 0, h8 = bit 63)
Packed = int  # a bitboard in the low 64 bits plus its 180-degree rotation at bit _OFF

#: The move of a player who has no legal move (legal only then).
PASS = 64

SQUARE_NAMES = [f"{'abcdefgh'[sq % 8]}{sq // 8 + 1}" for sq in range(64)]
_SQUARE_BY_NAME = {name: sq for sq, name in enumerate(SQUARE_NAMES)}

FULL: Bitboard = (1 << 64) - 1
CORNERS: Bitboard = 1 << 0 | 1 << 7 | 1 << 56 | 1 << 63
#: Diagonal neighbours of the corners (b2, g2, b7, g7).
X_SQUARES: Bitboard = 1 << 9 | 1 << 14 | 1 << 49 | 1 << 54
#: Edge neighbours of the corners (b1, a2, g1, h2, a7, b8, h7, g8).
C_SQUARES: Bitboard = 1 << 1 | 1 << 8 | 1 << 6 | 1 << 15 | 1 << 48 | 1 << 57 | 1 << 55 | 1 << 62
_NOT_EDGE_COLUMNS: Bitboard = 0x7E7E7E7E7E7E7E7E  # columns b..g: runs must not wrap a row

# The rotated copy starts at bit 82: fills shift by up to 18 bits, so a gap of 18 zero bits (never
# opponent squares) keeps the copies apart, and the packed int still fits in five 30-bit digits.
_OFF = 82
_P_FULL: Packed = FULL | FULL << _OFF
_P_INNER: Packed = _NOT_EDGE_COLUMNS | _NOT_EDGE_COLUMNS << _OFF
_REVERSE_BITS = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def _rotate180(bb: Bitboard) -> Bitboard:
    """Square i -> square 63 - i: the bytes reversed and each byte's bits reversed, in C."""
    return int.from_bytes(bb.to_bytes(8, "little").translate(_REVERSE_BITS), "big")


def _pack(bb: Bitboard) -> Packed:
    return bb | _rotate180(bb) << _OFF


def _mobility(own: Packed, opp: Packed) -> Bitboard:
    """The legal squares of ``own`` (both packed) as a plain bitboard."""
    oh = opp & _P_INNER
    # East in the first copy, west in the rotated one: the carry runs through the opponent run.
    moves = oh + ((own << 1) & oh)
    # South/north, then the two diagonal pairs: fills doubling their reach (1, 2, 4, 6 squares).
    t = opp & (own << 8)
    t |= opp & (t << 8)
    p = opp & (opp << 8)
    t |= p & (t << 16)
    t |= p & (t << 16)
    moves |= t << 8
    t = oh & (own << 7)
    t |= oh & (t << 7)
    p = oh & (oh << 7)
    t |= p & (t << 14)
    t |= p & (t << 14)
    moves |= t << 7
    t = oh & (own << 9)
    t |= oh & (t << 9)
    p = oh & (oh << 9)
    t |= p & (t << 18)
    t |= p & (t << 18)
    moves |= t << 9
    moves &= _P_FULL ^ (own | opp)
    return moves & FULL | _rotate180(moves >> _OFF)


def legal_moves_bitboard(own: Bitboard, opp: Bitboard) -> Bitboard:
    """The squares where the side with discs ``own`` may play against ``opp`` (mobility)."""
    return _mobility(_pack(own), _pack(opp))


def _build_rays() -> tuple[
    list[Packed], list[dict[Packed, tuple[Packed, ...]]], list[dict[Packed, Packed]]
]:
    """Per square, in whichever copy each ray points up: the neighbours that start a ray; the
    rays to walk, keyed by which of those neighbours are opponent discs (only those rays can
    flip); and a table from a ray's end square (an own disc) to the discs flipped, in both
    copies."""
    neighbours: list[Packed] = []
    rays_by_neighbours: list[dict[Packed, tuple[Packed, ...]]] = []
    flips: list[dict[Packed, Packed]] = []
    for sq in range(64):
        row, col = divmod(sq, 8)
        square_rays: list[tuple[Packed, Packed]] = []
        table: dict[Packed, Packed] = {}
        for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1), (0, -1), (-1, 1), (-1, 0), (-1, -1)):
            line = []
            r, c = row + dr, col + dc
            while 0 <= r < 8 and 0 <= c < 8:
                line.append(8 * r + c)
                r, c = r + dr, c + dc
            if len(line) < 2:  # a flip needs an opponent disc and an own disc beyond it
                continue
            offset = 0 if line[0] > sq else _OFF  # pointing down here = pointing up rotated

            def bit(s: Square, offset: int = offset) -> Packed:
                return 1 << (s if offset == 0 else offset + 63 - s)

            square_rays.append((bit(line[0]), sum(bit(s) for s in line)))
            for k in range(1, len(line)):
                table[bit(line[k])] = _pack(sum(1 << s for s in line[:k]))
        neighbours.append(sum(first for first, _ in square_rays))
        by_subset: dict[Packed, tuple[Packed, ...]] = {}
        for mask in range(1 << len(square_rays)):
            chosen = [square_rays[i] for i in range(len(square_rays)) if mask >> i & 1]
            by_subset[sum(first for first, _ in chosen)] = tuple(ray for _, ray in chosen)
        rays_by_neighbours.append(by_subset)
        flips.append(table)
    return neighbours, rays_by_neighbours, flips


_NEIGHBOURS, _RAYS, _FLIPS = _build_rays()
_P_SQUARE: list[Packed] = [_pack(1 << sq) for sq in range(64)]
# Move lists from a mobility bitboard, one byte (board row) at a time.
_ROW_SQUARES = [
    [tuple(8 * row + col for col in range(8) if byte >> col & 1) for byte in range(256)]
    for row in range(8)
]
_R0, _R1, _R2, _R3, _R4, _R5, _R6, _R7 = _ROW_SQUARES
_PASS_ONLY = (PASS,)
_NO_RETURNS = (0.0, 0.0)
_new = object.__new__


class OthelloState(State):
    """A position: the discs of the side to move (``own``) and of the other side (``opp``)."""

    __slots__ = ("_opp2", "_own2", "_terminal", "moves", "player")

    player: int
    #: The legal squares of the side to move (0 when it must pass or the game is over).
    moves: Bitboard
    _own2: Packed
    _opp2: Packed
    _terminal: bool

    # own/opp are derived, not stored: a playout builds far more states than it evaluates.
    @property
    def own(self) -> Bitboard:
        """The discs of the side to move."""
        return self._own2 & FULL

    @property
    def opp(self) -> Bitboard:
        """The discs of the other side."""
        return self._opp2 & FULL

    @property
    def opp_moves(self) -> Bitboard:
        """The squares where the other side could play (its mobility); computed on each use."""
        return _mobility(self._opp2, self._own2)

    @property
    def black(self) -> Bitboard:
        return (self._opp2 if self.player else self._own2) & FULL

    @property
    def white(self) -> Bitboard:
        return (self._own2 if self.player else self._opp2) & FULL

    def actions(self) -> tuple[int, ...]:
        m = self.moves
        if m:
            b = m.to_bytes(8, "little")  # indexing bytes beats shifting and masking the int
            return (
                _R0[b[0]] + _R1[b[1]] + _R2[b[2]] + _R3[b[3]]
                + _R4[b[4]] + _R5[b[5]] + _R6[b[6]] + _R7[b[7]]
            )  # fmt: skip
        return () if self._terminal else _PASS_ONLY

    def result(self, move: Move) -> OthelloState:
        try:
            legal = self.moves >> move & 1  # type: ignore[operator]
        except (TypeError, ValueError):  # not an int, or negative
            legal = 0
        if not legal:
            if move == PASS and not self.moves and not self._terminal:
                return _make(self._opp2, self._own2, 1 - self.player)
            raise ValueError(f"move {move!r} is not legal in this position")
        sq: Square = move  # type: ignore[assignment]  # a legal square, checked just above
        own = self._own2
        opp = self._opp2
        table = _FLIPS[sq]
        flipped = 0
        for ray in _RAYS[sq][_NEIGHBOURS[sq] & opp]:
            x = ray & ~opp
            end = x & -x & own  # the first square past the opponent run, if it is ours
            if end:
                flipped |= table[end]
        # The opponent moves next: its discs become "own". What follows is _make and _mobility
        # written out, because this is the hot path of every search and playout.
        own, opp = opp ^ flipped, own | flipped | _P_SQUARE[sq]
        s = _new(OthelloState)
        s._own2 = own
        s._opp2 = opp
        s.player = 1 - self.player
        oh = opp & _P_INNER
        moves = oh + ((own << 1) & oh)
        t = opp & (own << 8)
        t |= opp & (t << 8)
        p = opp & (opp << 8)
        t |= p & (t << 16)
        t |= p & (t << 16)
        moves |= t << 8
        t = oh & (own << 7)
        t |= oh & (t << 7)
        p = oh & (oh << 7)
        t |= p & (t << 14)
        t |= p & (t << 14)
        moves |= t << 7
        t = oh & (own << 9)
        t |= oh & (t << 9)
        p = oh & (oh << 9)
        t |= p & (t << 18)
        t |= p & (t << 18)
        moves |= t << 9
        moves &= _P_FULL ^ (own | opp)
        if moves:
            s.moves = moves & FULL | int.from_bytes(
                (moves >> _OFF).to_bytes(8, "little").translate(_REVERSE_BITS), "big"
            )
            s._terminal = False
        else:
            s.moves = 0
            s._terminal = not _mobility(opp, own)
        return s

    def is_terminal(self) -> bool:
        return self._terminal

    def returns(self) -> tuple[float, float]:
        if not self._terminal:
            return _NO_RETURNS
        diff = self.own.bit_count() - self.opp.bit_count()
        if diff == 0:
            return _NO_RETURNS
        mover_wins = diff > 0
        return (1.0, -1.0) if mover_wins == (self.player == 0) else (-1.0, 1.0)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, OthelloState)
            and self._own2 == other._own2
            and self._opp2 == other._opp2
            and self.player == other.player
        )

    def __hash__(self) -> int:
        return hash((self._own2, self._opp2, self.player))

    def __repr__(self) -> str:
        black, white = self.black, self.white
        return f"OthelloState(black={black:#018x}, white={white:#018x}, player={self.player})"


def _make(own: Packed, opp: Packed, player: int) -> OthelloState:
    s = _new(OthelloState)
    s._own2 = own
    s._opp2 = opp
    s.player = player
    s.moves = moves = _mobility(own, opp)
    s._terminal = not moves and not _mobility(opp, own)
    return s


def _from_bitboards(black: Bitboard, white: Bitboard, player: int) -> OthelloState:
    own, opp = (black, white) if player == 0 else (white, black)
    return _make(_pack(own), _pack(opp), player)


class _OpeningState(OthelloState):
    """A position of the first plies, built at import with its moves and successors, so that
    every playout and search starts with table lookups (as tic-tac-toe does for the whole game)."""

    __slots__ = ("_actions", "_children")

    _actions: tuple[int, ...]
    _children: dict[int, OthelloState]

    def actions(self) -> tuple[int, ...]:
        return self._actions

    def result(self, move: Move) -> OthelloState:
        child = self._children.get(move) if type(move) is int else None  # 19.0 == 19
        return OthelloState.result(self, move) if child is None else child


#: Positions fewer plies than this from the start are interned _OpeningStates (307 of them).
_OPENING_PLIES = 5


def _build_opening() -> dict[OthelloState, OthelloState]:
    def intern(s: OthelloState) -> OthelloState:
        known = table.get(s)
        if known is None:
            known = _new(_OpeningState)
            known._own2, known._opp2, known.player = s._own2, s._opp2, s.player
            known.moves, known._terminal = s.moves, s._terminal
            known._actions, known._children = s.actions(), {}
            table[known] = known
        return known

    table: dict[OthelloState, OthelloState] = {}
    layer = [intern(_from_bitboards(1 << 35 | 1 << 28, 1 << 27 | 1 << 36, 0))]
    for ply in range(_OPENING_PLIES):
        next_layer: dict[OthelloState, None] = {}
        for s in layer:
            assert isinstance(s, _OpeningState)
            for move in s.actions():
                child = OthelloState.result(s, move)
                if ply + 1 < _OPENING_PLIES:
                    child = intern(child)
                    next_layer[child] = None
                s._children[move] = child
        layer = list(next_layer)
    return table


_OPENING = _build_opening()
_INITIAL = _OPENING[_from_bitboards(1 << 35 | 1 << 28, 1 << 27 | 1 << 36, 0)]
_CENTRE: Bitboard = 1 << 27 | 1 << 28 | 1 << 35 | 1 << 36


class Othello(Game):
    name = "othello"
    num_players = 2
    summary = "8x8 Reversi: outflank to flip discs, pass only when stuck; most discs wins."
    seat_names = ("Black", "White")

    def initial_state(self) -> OthelloState:
        return _INITIAL

    def format_move(self, state: State, move: Move) -> str:
        return "pass" if move == PASS else SQUARE_NAMES[move]  # type: ignore[call-overload]

    def parse_move(self, state: State, text: str) -> int:
        word = text.strip().lower()
        move = PASS if word == "pass" else _SQUARE_BY_NAME.get(word)
        if move is None:
            raise InvalidMoveError(
                f"cannot parse othello move {text!r}: expected a square a1..h8 (column a-h left "
                "to right, row 1-8 top to bottom) or 'pass'"
            )
        if move not in state.actions():
            raise IllegalMoveError(illegal_move_message(self, state, text))
        return move

    def state_to_json(self, state: State) -> dict[str, Any]:
        assert isinstance(state, OthelloState)
        return {"board": self._rows(state), "player": state.player}

    def state_from_json(self, data: dict[str, Any]) -> OthelloState:
        rows = data.get("board") if isinstance(data, dict) else None
        if (
            not isinstance(rows, list)
            or len(rows) != 8
            or not all(isinstance(r, str) and len(r) == 8 for r in rows)
        ):
            raise ValueError(
                'othello JSON needs "board": eight strings of eight of "B", "W", "." (row 1 first)'
            )
        player = data.get("player")
        if type(player) is not int or player not in (0, 1):
            raise ValueError(f'othello JSON needs "player": 0 (Black) or 1 (White), not {player!r}')
        black = white = 0
        for sq, ch in enumerate("".join(rows)):
            if ch == "B":
                black |= 1 << sq
            elif ch == "W":
                white |= 1 << sq
            elif ch != ".":
                raise ValueError(
                    f"othello board square {SQUARE_NAMES[sq]} is {ch!r}: expected B, W or ."
                )
        if (black | white) & _CENTRE != _CENTRE:
            raise ValueError(
                "othello board has an empty centre square (d4, e4, d5, e5 are never empty)"
            )
        state = _from_bitboards(black, white, player)
        return _OPENING.get(state, state)

    def render(self, state: State) -> str:
        assert isinstance(state, OthelloState)
        lines = ["  a b c d e f g h"]
        lines += [f"{r + 1} " + " ".join(row) for r, row in enumerate(self._rows(state))]
        b, w = state.black.bit_count(), state.white.bit_count()
        if state.is_terminal():
            lines.append(f"game over: Black {b}, White {w}")
        else:
            lines.append(f"{self.seat_names[state.player]} to move; Black {b}, White {w}")
        return "\n".join(lines)

    @staticmethod
    def _rows(state: OthelloState) -> list[str]:
        black, white = state.black, state.white
        cells = ["B" if black >> sq & 1 else "W" if white >> sq & 1 else "." for sq in range(64)]
        return ["".join(cells[r * 8 : r * 8 + 8]) for r in range(8)]
