"""What every board module returns, and the small pieces they share."""

from __future__ import annotations

from typing import NamedTuple

from ply_arena.games import State
from ply_arena.server.pages.svg.markup import element

#: Colour of the text around the boards (coordinates, point numbers, status lines).
INK = "#333333"


class Drawing(NamedTuple):
    """A board drawn in a ``width`` x ``height`` user space; ``boards`` wraps it in ``<svg>``."""

    width: float
    height: float
    body: str
    #: A short text summary for screen readers, e.g. "Connect Four, Red to move".
    summary: str


def two_player_status(labels: tuple[str, ...], state: State) -> str:
    """ "X to move", "X won" or "draw"; payoffs decide, as the referee's result does."""
    if not state.is_terminal():
        return f"{labels[state.player]} to move"
    first, second = state.returns()[:2]
    if first == second:
        return "draw"
    return f"{labels[0 if first > second else 1]} won"


def last_move_ring(cx: float, cy: float, r: float, colour: str) -> str:
    """The ring that marks where the last move went (class ``last-move``)."""
    return element(
        "circle",
        class_="last-move",
        cx=cx,
        cy=cy,
        r=r,
        fill="none",
        stroke=colour,
        stroke_width=max(2.0, r / 5),
    )
