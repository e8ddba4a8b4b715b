"""Connect Four: a blue frame of 7 columns and 6 rows with red (seat 0, X) and yellow (seat 1, O)
discs, and the column numbers 1-7 of the notation below it."""

from __future__ import annotations

from typing import Any

from ply_arena.games import State
from ply_arena.games.connect_four import COLUMN_DIGITS, HEIGHT, WIDTH
from ply_arena.server.pages.svg.board_parts import INK, Drawing, last_move_ring, two_player_status
from ply_arena.server.pages.svg.markup import element, label
from ply_arena.server.pages.svg.palette import SEAT_COLOURS, SEAT_LABELS

CELL = 60
MARGIN = 10
NUMBERS = 36  # room for the column numbers below the frame
DISC_R = 24
FRAME = "#0072B2"  # Okabe-Ito blue: both disc colours stand out against it
HOLE = "#F8F8F8"
RING = "#1A1A1A"

_COLOURS = SEAT_COLOURS["connect_four"]
_LABELS = SEAT_LABELS["connect_four"]
_SEAT_OF_MARK = {"X": 0, "O": 1}


def draw(position: dict[str, Any], state: State, highlight: str | None) -> Drawing:
    """The board of ``position`` (the JSON of ``state``); ``highlight`` names the last column."""
    rows: list[str] = position["board"]  # the top row first
    last_column = COLUMN_DIGITS.find((highlight or "").strip()) if highlight else -1
    parts = [
        element(
            "rect",
            class_="frame",
            x=MARGIN,
            y=MARGIN,
            width=WIDTH * CELL,
            height=HEIGHT * CELL,
            rx=12,
            fill=FRAME,
        )
    ]
    for column in range(WIDTH):
        cx = MARGIN + column * CELL + CELL / 2
        # The last disc dropped into a column is its highest one.
        top_disc = next((r for r in range(HEIGHT) if rows[r][column] != "."), None)
        for r in range(HEIGHT):
            cy = MARGIN + r * CELL + CELL / 2
            seat = _SEAT_OF_MARK.get(rows[r][column])
            if seat is None:
                parts.append(element("circle", class_="hole", cx=cx, cy=cy, r=DISC_R, fill=HOLE))
                continue
            parts.append(
                element(
                    "circle",
                    class_=f"piece seat-{seat}",
                    cx=cx,
                    cy=cy,
                    r=DISC_R,
                    data_column=COLUMN_DIGITS[column],
                    data_row=HEIGHT - r,  # counted from the bottom, as players count
                    fill=_COLOURS[seat],
                )
            )
            if column == last_column and r == top_disc:
                parts.append(last_move_ring(cx, cy, DISC_R * 0.6, RING))
        parts.append(
            label(
                cx,
                MARGIN + HEIGHT * CELL + NUMBERS / 2,
                COLUMN_DIGITS[column],
                size=20,
                class_="coord",
                fill=INK,
            )
        )
    return Drawing(
        width=2 * MARGIN + WIDTH * CELL,
        height=MARGIN + HEIGHT * CELL + NUMBERS,
        body="".join(parts),
        summary=f"Connect Four, {two_player_status(_LABELS, state)}",
    )


def targets() -> dict[str, tuple[float, float, float, float]]:
    """Each column's box (x, y, width, height) by its digit: where a click drops a disc."""
    return {
        digit: (MARGIN + i * CELL, MARGIN, CELL, HEIGHT * CELL)
        for i, digit in enumerate(COLUMN_DIGITS)
    }
