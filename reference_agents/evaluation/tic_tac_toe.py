"""Tic-tac-toe evaluation E(n) = X(n) - O(n), from the notes (004, "TIC-TAC-TOE (2-ply)").

X(n) is the number of lines (rows, columns, diagonals) still open for MAX = X, i.e. without an O;
O(n) the same for O. Empty lines count for both, as in the notes ("contando vacías"). The
difference lies in [-8, 8]; ``evaluate`` divides it by ``NOTES_SCALE`` (10) so the value stays
strictly inside the utility range (-1, 1) and a real three-in-a-row always counts more. Dividing
by a positive constant changes no decision of any search; traces multiply back and show E(n) as
the notes write it (``open_lines`` gives the two terms).

    >>> from ply_arena import games
    >>> g = games.get("tic_tac_toe")
    >>> s = g.initial_state().result(4).result(0)   # X centre, O corner: X(n)=5, O(n)=4
    >>> evaluate(s)
    (0.1, -0.1)
    >>> open_lines(s, 0)                            # (lines open for X, lines open for O)
    (5, 4)
"""

from __future__ import annotations

from ply_arena.games import State
from ply_arena.games.tic_tac_toe import WIN_LINES, TicTacToeState
from ply_arena.reference_agents.evaluation import NotesForm

#: eval(n) = E(n) / NOTES_SCALE.
NOTES_SCALE = 10.0


def _open_lines(opponent: int) -> int:
    return sum(1 for line in WIN_LINES if not opponent & line)


# The value depends only on the two bitboards, so it is computed once per (x, o) position.
_CACHE: dict[tuple[int, int], tuple[float, float]] = {}


def evaluate(state: State) -> tuple[float, ...]:
    """(E(n), -E(n)) scaled into (-1, 1): X's value first, O's second."""
    assert isinstance(state, TicTacToeState)
    if state.is_terminal():
        return state.returns()
    key = (state.x, state.o)
    value = _CACHE.get(key)
    if value is None:
        e = (_open_lines(state.o) - _open_lines(state.x)) / NOTES_SCALE
        value = _CACHE[key] = (e, -e)
    return value


def open_lines(state: State, seat: int) -> tuple[int, int]:
    """The notes' two terms with MAX = ``seat``: (lines open for ``seat``, lines open for the
    other player). Their difference is E(n) for ``seat``."""
    assert isinstance(state, TicTacToeState)
    x_lines, o_lines = _open_lines(state.o), _open_lines(state.x)
    return (x_lines, o_lines) if seat == 0 else (o_lines, x_lines)


NOTES_FORM = NotesForm(
    formula="E(n) = X(n) - O(n)",
    scale=NOTES_SCALE,
    terms=open_lines,
    source='notes 004, "TIC-TAC-TOE (2-ply)": lines open for MAX minus lines open for MIN',
)
