"""Tic-tac-toe: a 3x3 grid of X and O marks, columns a-c from the left and rows 1-3 from the
bottom (row 3 on top), as ``ply_arena.games.tic_tac_toe`` names the cells."""

from __future__ import annotations

from typing import Any

from ply_arena.games import State
from ply_arena.games.tic_tac_toe import CELL_NAMES
from ply_arena.server.pages.svg.board_parts import INK, Drawing, two_player_status
from ply_arena.server.pages.svg.markup import element, label
from ply_arena.server.pages.svg.palette import SEAT_COLOURS, SEAT_LABELS

CELL = 100
LEFT = 30  # room for the row numbers
TOP = 10
BOTTOM = 30  # room for the column letters
RIGHT = 10
MARK_INSET = 22  # the gap between a mark and its cell's edges
LAST_MOVE_FILL = "#FFF2AE"  # a pale yellow behind the last mark, dark enough on white pages

_COLOURS = SEAT_COLOURS["tic_tac_toe"]
_LABELS = SEAT_LABELS["tic_tac_toe"]


def draw(position: dict[str, Any], state: State, highlight: str | None) -> Drawing:
    """The board of ``position`` (the JSON of ``state``); ``highlight`` names the last cell."""
    rows: list[str] = position["board"]  # the top row (row 3) first, as CELL_NAMES counts
    last = (highlight or "").strip().lower()
    under: list[str] = []  # drawn first: the last move's background
    parts = [_grid()]
    for index, name in enumerate(CELL_NAMES):
        row, column = divmod(index, 3)
        x, y = LEFT + column * CELL, TOP + row * CELL
        if name == last:
            under.append(_last_move_background(x, y))
        mark = rows[row][column]
        if mark == "X":
            parts.append(_cross(x, y, name))
        elif mark == "O":
            parts.append(_nought(x, y, name))
    for i in range(3):
        middle = TOP + i * CELL + CELL / 2
        parts.append(label(LEFT / 2, middle, str(3 - i), size=20, class_="coord", fill=INK))
        centre = LEFT + i * CELL + CELL / 2
        parts.append(
            label(centre, TOP + 3 * CELL + BOTTOM / 2, "abc"[i], size=20, class_="coord", fill=INK)
        )
    return Drawing(
        width=LEFT + 3 * CELL + RIGHT,
        height=TOP + 3 * CELL + BOTTOM,
        body="".join(under + parts),
        summary=f"Tic-tac-toe, {two_player_status(_LABELS, state)}",
    )


def _grid() -> str:
    size = 3 * CELL
    lines = []
    for i in (1, 2):
        lines.append(f"M{LEFT + i * CELL} {TOP}v{size}")
        lines.append(f"M{LEFT} {TOP + i * CELL}h{size}")
    return element(
        "path", class_="grid", d="".join(lines), stroke=INK, stroke_width=4, stroke_linecap="round"
    )


def _last_move_background(x: float, y: float) -> str:
    return element(
        "rect",
        class_="last-move",
        x=x + 4,
        y=y + 4,
        width=CELL - 8,
        height=CELL - 8,
        fill=LAST_MOVE_FILL,
    )


def _cross(x: float, y: float, name: str) -> str:
    near, far = MARK_INSET, CELL - MARK_INSET
    d = f"M{x + near} {y + near}L{x + far} {y + far}M{x + far} {y + near}L{x + near} {y + far}"
    return element(
        "path",
        class_="piece seat-0",
        d=d,
        data_cell=name,
        fill="none",
        stroke=_COLOURS[0],
        stroke_width=12,
        stroke_linecap="round",
    )


def _nought(x: float, y: float, name: str) -> str:
    return element(
        "circle",
        class_="piece seat-1",
        cx=x + CELL / 2,
        cy=y + CELL / 2,
        r=CELL / 2 - MARK_INSET,
        data_cell=name,
        fill="none",
        stroke=_COLOURS[1],
        stroke_width=12,
    )


def targets() -> dict[str, tuple[float, float, float, float]]:
    """Each cell's box (x, y, width, height) by its name: where a click plays there."""
    return {
        name: (LEFT + (i % 3) * CELL, TOP + (i // 3) * CELL, CELL, CELL)
        for i, name in enumerate(CELL_NAMES)
    }
