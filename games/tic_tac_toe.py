"""Tic-tac-toe ("tres en raya"), the running example of the lecture notes.

Seats: 0 is X (moves first), 1 is O. A move is a cell index 0..8, row-major from the top-left.
Notation is a column letter and a row number, as on the rendered board: ``a3 b3 c3`` is the top
row, ``a1 b1 c1`` the bottom one. Payoff +1 / -1 for a win / loss, 0 for a draw.

The whole game has only 5,478 reachable positions, so every one of them is built once at import
with its legal moves and successors; ``result`` is then a table lookup. That is the "tables
precomputed at import" idea of python-chess taken to its end, and it keeps random playouts
faster than OpenSpiel's C++ implementation driven from Python.

    >>> from ply_arena import games
    >>> g = games.get("tic_tac_toe")
    >>> s = g.initial_state().result(4)
    >>> g.format_move(s, 0), g.parse_move(s, "a3")
    ('a3', 0)
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

Bitboard = int  # bit i set = cell i occupied

CELL_NAMES = [f"{'abc'[i % 3]}{3 - i // 3}" for i in range(9)]
_CELL_BY_NAME = {name: i for i, name in enumerate(CELL_NAMES)}
WIN_LINES: tuple[Bitboard, ...] = tuple(
    sum(1 << c for c in line)
    for line in (
        (0, 1, 2),
        (3, 4, 5),
        (6, 7, 8),  # rows
        (0, 3, 6),
        (1, 4, 7),
        (2, 5, 8),  # columns
        (0, 4, 8),
        (2, 4, 6),  # diagonals
    )
)
_NO_RETURNS = (0.0, 0.0)


def _has_line(bits: Bitboard) -> bool:
    return any(bits & line == line for line in WIN_LINES)


class TicTacToeState(State):
    """A position; instances are interned, one per reachable position."""

    __slots__ = ("_actions", "_children", "_returns", "_terminal", "o", "player", "x")

    x: Bitboard
    o: Bitboard
    _actions: tuple[int, ...]
    _children: list[TicTacToeState | None]
    _returns: tuple[float, float]
    _terminal: bool

    def actions(self) -> tuple[int, ...]:
        return self._actions

    def result(self, move: Move) -> TicTacToeState:
        child = self._children[move] if type(move) is int and 0 <= move < 9 else None
        if child is None:
            raise ValueError(f"move {move!r} is not legal in this position")
        return child

    def is_terminal(self) -> bool:
        return self._terminal

    def returns(self) -> tuple[float, float]:
        return self._returns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TicTacToeState) and self.x == other.x and self.o == other.o

    def __hash__(self) -> int:
        return hash((self.x, self.o))

    def __repr__(self) -> str:
        return f"TicTacToeState(x={self.x:#011b}, o={self.o:#011b})"


def _build_positions() -> dict[tuple[Bitboard, Bitboard], TicTacToeState]:
    """Every reachable position, keyed by (x, o), linked to its successors."""
    table: dict[tuple[Bitboard, Bitboard], TicTacToeState] = {}

    def visit(x: Bitboard, o: Bitboard) -> TicTacToeState:
        known = table.get((x, o))
        if known is not None:
            return known
        s = object.__new__(TicTacToeState)
        s.x, s.o = x, o
        s.player = bin(x | o).count("1") % 2
        if _has_line(x):
            s._returns, s._terminal = (1.0, -1.0), True
        elif _has_line(o):
            s._returns, s._terminal = (-1.0, 1.0), True
        else:
            s._returns, s._terminal = _NO_RETURNS, (x | o) == 0b111111111
        table[(x, o)] = s
        s._children = [None] * 9
        s._actions = ()
        if not s._terminal:
            s._actions = tuple(c for c in range(9) if not (x | o) >> c & 1)
            for c in s._actions:
                s._children[c] = visit(x | 1 << c, o) if s.player == 0 else visit(x, o | 1 << c)
        return s

    visit(0, 0)
    return table


_POSITIONS = _build_positions()


class TicTacToe(Game):
    name = "tic_tac_toe"
    num_players = 2
    summary = "3x3 board, three in a row wins; X moves first."
    seat_names = ("X", "O")

    def initial_state(self) -> TicTacToeState:
        return _POSITIONS[(0, 0)]

    def format_move(self, state: State, move: Move) -> str:
        return CELL_NAMES[move]  # type: ignore[call-overload]

    def parse_move(self, state: State, text: str) -> int:
        cell = _CELL_BY_NAME.get(text.strip().lower())
        if cell is None:
            raise InvalidMoveError(
                f"cannot parse tic-tac-toe move {text!r}: expected a cell a1..c3 "
                "(column a-c, row 1-3 counted from the bottom)"
            )
        if cell not in state.actions():
            raise IllegalMoveError(illegal_move_message(self, state, text))
        return cell

    def state_to_json(self, state: State) -> dict[str, Any]:
        assert isinstance(state, TicTacToeState)
        rows = ["".join(self._mark(state, r * 3 + c) for c in range(3)) for r in range(3)]
        return {"board": rows, "player": state.player}

    def state_from_json(self, data: dict[str, Any]) -> TicTacToeState:
        rows = data.get("board") if isinstance(data, dict) else None
        if (
            not isinstance(rows, list)
            or len(rows) != 3
            or not all(isinstance(r, str) and len(r) == 3 for r in rows)
        ):
            raise ValueError(
                'tic-tac-toe JSON needs "board": three strings of three of "X", "O", "."'
            )
        x = o = 0
        for i, ch in enumerate("".join(rows)):
            if ch == "X":
                x |= 1 << i
            elif ch == "O":
                o |= 1 << i
            elif ch != ".":
                raise ValueError(f"tic-tac-toe board cell {ch!r}: expected X, O or .")
        state = _POSITIONS.get((x, o))
        if state is None:
            raise ValueError("tic-tac-toe board is not reachable from the empty board")
        if "player" in data and data["player"] != state.player:
            raise ValueError(
                f"tic-tac-toe board has seat {state.player} to move, not {data['player']}"
            )
        return state

    def render(self, state: State) -> str:
        assert isinstance(state, TicTacToeState)
        lines = [
            f"{3 - r} " + " ".join(self._mark(state, r * 3 + c) for c in range(3)) for r in range(3)
        ]
        return "\n".join([*lines, "  a b c"])

    @staticmethod
    def _mark(state: TicTacToeState, cell: int) -> str:
        if state.x >> cell & 1:
            return "X"
        return "O" if state.o >> cell & 1 else "."
