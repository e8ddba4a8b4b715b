"""Connect Four ("cuatro en raya") on the standard board of 7 columns and 6 rows.

Seats: 0 is X (red, moves first), 1 is O (yellow). A move is a column index 0..6; a disc
dropped there lands on the lowest empty cell. Whoever first gets four of their discs in a row,
a column or a diagonal wins (+1, the other -1); a full board without one is a draw (0 each).
Notation is Pascal Pons': the 1-based column digit, ``"1"`` .. ``"7"`` from the left, so a
game is a digit string such as ``"4453"``.

Bitboards follow Pons' solver (http://blog.gamesolver.org), so a solver can work on raw ints:
bit ``7 * col + row`` is the cell of column ``col`` (0 = left) and row ``row`` (0 = bottom);
row 6 of every column is an always-empty sentinel, which keeps shifts from wrapping from one
column into the next. A state exposes three read-only slots:

- ``current``: the discs of the player to move,
- ``mask``: every disc on the board,
- ``moves``: how many discs have been played (``player == moves % 2``).

The discs of the player who just moved are ``current ^ mask``. Playing column ``c`` is
``current, mask = current ^ mask, mask | (mask + BOTTOM[c])``, and ``current + mask``
identifies the position uniquely (Pons' key, also the hash). The module-level tables and
functions (``BOTTOM``, ``TOP``, ``COLUMN``, ``BOTTOM_ROW``, ``BOARD``, ``has_four``,
``possible``, ``winning_cells``, ``key``, ``CENTRE_FIRST``, ``state_from_bitboards``) are the
solver's toolkit.

    >>> from ply_arena import games
    >>> g = games.get("connect_four")
    >>> s = state_from_moves("4453")
    >>> s.moves, s.player, s.actions()
    (4, 0, (0, 1, 2, 3, 4, 5, 6))
    >>> g.format_move(s, 6), g.parse_move(s, "7")
    ('7', 6)
    >>> s.current == BOTTOM[3] | BOTTOM[4], s.mask == BOTTOM[3] * 3 | BOTTOM[4] | BOTTOM[2]
    (True, True)
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

Bitboard = int  # Pons layout: bit 7 * column + row, row 0 at the bottom, row 6 a sentinel
Column = int  # 0..6 from the left

WIDTH = 7
HEIGHT = 6
#: Bits per column: the six rows plus the sentinel.
COLUMN_BITS = HEIGHT + 1

#: ``BOTTOM[c]``: the lowest cell of column ``c``; ``TOP[c]``: its highest playable cell.
BOTTOM: tuple[Bitboard, ...] = tuple(1 << COLUMN_BITS * c for c in range(WIDTH))
TOP: tuple[Bitboard, ...] = tuple(1 << HEIGHT - 1 + COLUMN_BITS * c for c in range(WIDTH))
#: ``COLUMN[c]``: the six playable cells of column ``c``.
COLUMN: tuple[Bitboard, ...] = tuple(((1 << HEIGHT) - 1) << COLUMN_BITS * c for c in range(WIDTH))
#: The bottom row, the top row and the whole playable board.
BOTTOM_ROW: Bitboard = sum(BOTTOM)
TOP_ROW: Bitboard = sum(TOP)
BOARD: Bitboard = BOTTOM_ROW * ((1 << HEIGHT) - 1)
#: Columns from the centre outwards: the usual move order of a Connect Four search.
CENTRE_FIRST: tuple[Column, ...] = (3, 2, 4, 1, 5, 0, 6)
#: Column digits of the notation, index = column.
COLUMN_DIGITS = "1234567"

_NO_RETURNS = (0.0, 0.0)
_WIN_FOR = ((1.0, -1.0), (-1.0, 1.0))
_DRAW = (0.0, 0.0)
_MARKS = ("X", "O")


def has_four(bits: Bitboard) -> bool:
    """Do the discs ``bits`` (one player's) hold four in a row in any direction?"""
    m = bits & (bits >> 7)
    if m & (m >> 14):
        return True
    m = bits & (bits >> 6)
    if m & (m >> 12):
        return True
    m = bits & (bits >> 8)
    if m & (m >> 16):
        return True
    m = bits & (bits >> 1)
    return bool(m & (m >> 2))


def possible(mask: Bitboard) -> Bitboard:
    """The cells where a disc can be dropped now (one per non-full column)."""
    return (mask + BOTTOM_ROW) & BOARD


def winning_cells(bits: Bitboard, mask: Bitboard) -> Bitboard:
    """Empty cells (anywhere, not only playable now) that would complete a four for ``bits``.

    Pons' ``compute_winning_position``: ``winning_cells(s.current, s.mask) & possible(s.mask)``
    are the immediately winning drops of the player to move.
    """
    # vertical: three discs right below
    r = (bits << 1) & (bits << 2) & (bits << 3)
    for d in (COLUMN_BITS, COLUMN_BITS - 1, COLUMN_BITS + 1):
        p = (bits << d) & (bits << 2 * d)
        r |= p & (bits << 3 * d)
        r |= p & (bits >> d)
        p = (bits >> d) & (bits >> 2 * d)
        r |= p & (bits << d)
        r |= p & (bits >> 3 * d)
    return r & (BOARD ^ mask)


def key(current: Bitboard, mask: Bitboard) -> int:
    """Pons' unique key of a position, fitting in 49 bits (the same number for equal states)."""
    return current + mask + BOTTOM_ROW


# The legal moves depend only on which columns are full, i.e. on ``mask & TOP_ROW``: one shared
# tuple per pattern, so actions() never builds a list.
_ACTIONS_BY_FULL: dict[Bitboard, tuple[Column, ...]] = {
    full: tuple(c for c in range(WIDTH) if not full & TOP[c])
    for full in (
        sum(TOP[c] for c in range(WIDTH) if pattern >> c & 1) for pattern in range(1 << WIDTH)
    )
}
# Legal column -> its bottom cell (one dict per pattern): result() checks and plays in one lookup.
_BOTTOM_BY_FULL: dict[Bitboard, dict[Column, Bitboard]] = {
    full: {c: BOTTOM[c] for c in acts} for full, acts in _ACTIONS_BY_FULL.items()
}
_TABLE: dict[Bitboard, tuple[tuple[Column, ...], dict[Column, Bitboard]]] = {
    full: (acts, _BOTTOM_BY_FULL[full]) for full, acts in _ACTIONS_BY_FULL.items()
}
_OVER: tuple[tuple[Column, ...], dict[Column, Bitboard]] = ((), {})


class ConnectFourState(State):
    """A position. ``current``, ``mask`` and ``moves`` are public and never change."""

    __slots__ = ("_actions", "_bottoms", "current", "mask", "moves", "player")

    current: Bitboard
    mask: Bitboard
    moves: int
    _actions: tuple[Column, ...]
    _bottoms: dict[Column, Bitboard]

    def actions(self) -> tuple[Column, ...]:
        return self._actions

    def result(self, move: Move) -> ConnectFourState:
        try:
            bottom = self._bottoms.get(move)  # type: ignore[call-overload]
        except TypeError:  # unhashable; the try costs nothing on Python 3.11+
            bottom = None
        if bottom is None:
            raise IllegalMoveError(f"move {move!r} is not legal in this position")
        mask = self.mask
        # Calling the class (no __init__ anywhere) is faster than object.__new__(cls).
        s = ConnectFourState()
        s.current = opponent = self.current ^ mask
        s.mask = mask = mask | (mask + bottom)
        moves = s.moves = self.moves + 1
        s.player = moves & 1
        # Nobody has four discs before the 7th; after that only the mover can have made a line.
        if moves > 6:
            bits = opponent ^ mask
            m = bits & (bits >> 7)
            if m & (m >> 14):
                s._actions, s._bottoms = _OVER
                return s
            m = bits & (bits >> 6)
            if m & (m >> 12):
                s._actions, s._bottoms = _OVER
                return s
            m = bits & (bits >> 8)
            if m & (m >> 16):
                s._actions, s._bottoms = _OVER
                return s
            m = bits & (bits >> 1)
            if m & (m >> 2):
                s._actions, s._bottoms = _OVER
                return s
        s._actions, s._bottoms = _TABLE[mask & TOP_ROW]
        return s

    def is_terminal(self) -> bool:
        return not self._actions

    def returns(self) -> tuple[float, float]:
        if self._actions:
            return _NO_RETURNS
        # Only the player who just moved can have four in a row.
        if has_four(self.current ^ self.mask):
            return _WIN_FOR[self.player ^ 1]
        return _DRAW

    def winner(self) -> int | None:
        """The seat that made four in a row, or None (game on, or a draw)."""
        if not self._actions and has_four(self.current ^ self.mask):
            return self.player ^ 1
        return None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ConnectFourState)
            and self.mask == other.mask
            and self.current == other.current
        )

    def __hash__(self) -> int:
        return hash(self.current + self.mask)

    def __repr__(self) -> str:
        return (
            f"ConnectFourState(current={self.current:#x}, mask={self.mask:#x}, moves={self.moves})"
        )


def state_from_bitboards(current: Bitboard, mask: Bitboard) -> ConnectFourState:
    """The state with these raw bitboards (a solver's way back to the API).

    Not validated: ``current`` and ``mask`` must come from a reachable position, as they do when
    a solver plays from a state's own ``current`` and ``mask``; ``state_from_json`` validates.
    """
    moves = mask.bit_count()
    s = ConnectFourState()
    s.current, s.mask, s.moves, s.player = current, mask, moves, moves & 1
    if has_four(current ^ mask):
        s._actions, s._bottoms = _OVER
    else:
        s._actions, s._bottoms = _TABLE[mask & TOP_ROW]
    return s


INITIAL_STATE = state_from_bitboards(0, 0)


def state_from_moves(text: str) -> ConnectFourState:
    """The position after Pons' move string, 1-based column digits from the empty board.

    ``state_from_moves("4453")``. InvalidMoveError for a character that is not a digit 1-7,
    IllegalMoveError for a drop into a full column or a move after the game has ended.
    """
    s = INITIAL_STATE
    for i, ch in enumerate(text):
        col = COLUMN_DIGITS.find(ch)
        if col < 0:
            raise InvalidMoveError(
                f"cannot parse Connect Four move {ch!r} at index {i} of {text!r}: "
                "expected column digits 1-7"
            )
        if col not in s._bottoms:
            why = "the game is already over" if not s._actions else f"column {ch} is full"
            raise IllegalMoveError(f"move {i + 1} of {text!r} ({ch}) is illegal: {why}")
        s = s.result(col)
    return s


def _cell_mark(state: ConnectFourState, bit: Bitboard) -> str:
    if not state.mask & bit:
        return "."
    mine = bool(state.current & bit)  # the player to move's disc?
    return _MARKS[state.player if mine else state.player ^ 1]


def _board_rows(state: ConnectFourState) -> list[str]:
    return [
        "".join(_cell_mark(state, BOTTOM[c] << row) for c in range(WIDTH))
        for row in range(HEIGHT - 1, -1, -1)
    ]


def _reachable(current: Bitboard, mask: Bitboard) -> bool:
    """Can alternate drops from the empty board reach this four-free position?

    Undo moves in reverse: the player who just moved must own the top disc of some column.
    Positions that fail are remembered, so each set of column heights is visited at most once.
    """
    dead: set[Bitboard] = set()

    def undo(current: Bitboard, mask: Bitboard) -> bool:
        if not mask:
            return True
        if mask in dead:
            return False
        last = current ^ mask
        for c in CENTRE_FIRST:
            column = mask & COLUMN[c]
            if column:
                top = 1 << column.bit_length() - 1
                if last & top and undo(last ^ top, mask ^ top):
                    return True
        dead.add(mask)
        return False

    return undo(current, mask)


class ConnectFour(Game):
    name = "connect_four"
    num_players = 2
    summary = "7 columns x 6 rows, drop discs, four in a row wins; X moves first."
    seat_names = ("X", "O")

    def initial_state(self) -> ConnectFourState:
        return INITIAL_STATE

    @staticmethod
    def from_moves(text: str) -> ConnectFourState:
        """The position after Pons' move string (see ``state_from_moves``)."""
        return state_from_moves(text)

    def format_move(self, state: State, move: Move) -> str:
        return COLUMN_DIGITS[move]  # type: ignore[index]

    def parse_move(self, state: State, text: str) -> Column:
        assert isinstance(state, ConnectFourState)
        t = text.strip()
        col = COLUMN_DIGITS.find(t) if len(t) == 1 else -1
        if col < 0:
            raise InvalidMoveError(
                f"cannot parse Connect Four move {text!r}: expected a column number 1-7 "
                "(1 is the leftmost column)"
            )
        if col not in state._bottoms:
            raise IllegalMoveError(illegal_move_message(self, state, text))
        return col

    def state_to_json(self, state: State) -> dict[str, Any]:
        assert isinstance(state, ConnectFourState)
        return {"board": _board_rows(state), "player": state.player}

    def state_from_json(self, data: dict[str, Any]) -> ConnectFourState:
        if not isinstance(data, dict):
            raise ValueError('Connect Four JSON must be an object with "board" (or "moves")')
        from_moves: ConnectFourState | None = None
        if "moves" in data:
            if not isinstance(data["moves"], str):
                raise ValueError('Connect Four JSON "moves" must be a string of column digits 1-7')
            try:
                from_moves = state_from_moves(data["moves"])
            except ValueError as e:
                raise ValueError(f'Connect Four JSON "moves": {e}') from None
        if "board" in data:
            state = self._board_from_json(data["board"])
            if from_moves is not None and from_moves != state:
                raise ValueError(
                    'Connect Four JSON "board" and "moves" describe different positions'
                )
        elif from_moves is not None:
            state = from_moves
        else:
            raise ValueError('Connect Four JSON needs "board" (six rows, top first) or "moves"')
        if "player" in data and data["player"] != state.player:
            raise ValueError(
                f"Connect Four board has seat {state.player} to move, not {data['player']!r}"
            )
        return state

    @staticmethod
    def _board_from_json(rows: Any) -> ConnectFourState:
        if (
            not isinstance(rows, list)
            or len(rows) != HEIGHT
            or not all(isinstance(r, str) and len(r) == WIDTH for r in rows)
        ):
            raise ValueError(
                'Connect Four JSON "board" must be six strings of seven "X", "O" or "." '
                "(top row first)"
            )
        x = o = 0
        for i, row in enumerate(rows):
            for c, ch in enumerate(row):
                bit = BOTTOM[c] << HEIGHT - 1 - i
                if ch == "X":
                    x |= bit
                elif ch == "O":
                    o |= bit
                elif ch != ".":
                    raise ValueError(f"Connect Four board cell {ch!r}: expected X, O or .")
        mask = x | o
        # Gravity: within each column the discs fill the rows from the bottom without a gap,
        # i.e. every column's discs plus one is a power of two times its bottom cell.
        for c in range(WIDTH):
            column = (mask & COLUMN[c]) >> COLUMN_BITS * c
            if column & (column + 1):
                raise ValueError(
                    f"Connect Four board column {c + 1} has a disc floating above an empty cell"
                )
        nx, no = x.bit_count(), o.bit_count()
        if nx not in (no, no + 1):
            raise ValueError(
                f"Connect Four board has {nx} X and {no} O discs: X moves first, so X must have "
                "as many discs as O or one more"
            )
        moves = nx + no
        current, last = (x, o) if moves % 2 == 0 else (o, x)
        if has_four(current):
            raise ValueError(
                "Connect Four board is unreachable: the player to move already has four in a row"
            )
        if has_four(last):
            # The game ended with the last disc: removing one top disc must undo every line.
            ends = [
                top
                for c in range(WIDTH)
                if (column := mask & COLUMN[c])
                and last & (top := 1 << column.bit_length() - 1)
                and not has_four(last ^ top)
            ]
            if not any(_reachable(last ^ top, mask ^ top) for top in ends):
                raise ValueError(
                    "Connect Four board is unreachable: no last move leads to these lines of four"
                )
        elif not _reachable(current, mask):
            raise ValueError(
                "Connect Four board is unreachable by alternate moves from the empty board"
            )
        return state_from_bitboards(current, mask)

    def render(self, state: State) -> str:
        assert isinstance(state, ConnectFourState)
        lines = [" ".join(row) for row in _board_rows(state)]
        return "\n".join([*lines, " ".join(COLUMN_DIGITS)])
