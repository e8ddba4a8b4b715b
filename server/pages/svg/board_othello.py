"""Othello: a green 8x8 board with black (seat 0) and white (seat 1) discs, columns a-h from the
left and rows 1-8 from the top, as ``ply_arena.games.othello`` names the squares. Under the board,
the disc count (``disc-count seat-N``, each with ``data-count``), the score an Othello player
reads first."""

from __future__ import annotations

from typing import Any

from ply_arena.games import State
from ply_arena.games.othello import PASS, SQUARE_NAMES
from ply_arena.server.pages.svg.board_parts import INK, Drawing, last_move_ring, two_player_status
from ply_arena.server.pages.svg.markup import element, label
from ply_arena.server.pages.svg.palette import SEAT_COLOURS, SEAT_LABELS

CELL = 50
MARGIN = 26  # room for the coordinates above and on the left
RIGHT = 8
COUNT_ROW = 34  # the disc count under the board
DISC_R = 21
BOARD = "#2E7D4F"
LINES = "#0B3D1F"
RING = "#D55E00"  # Okabe-Ito vermillion: visible on black and on white discs
# Outlines keep a white disc visible on a white page and a black one on a dark page.
_OUTLINES = ("#000000", "#555555")

_COLOURS = SEAT_COLOURS["othello"]
_LABELS = SEAT_LABELS["othello"]
_SEAT_OF_MARK = {"B": 0, "W": 1}


def draw(position: dict[str, Any], state: State, highlight: str | None) -> Drawing:
    """The board of ``position`` (the JSON of ``state``); ``highlight`` names the last square."""
    rows: list[str] = position["board"]  # row 1 (the top) first
    last = (highlight or "").strip().lower()
    size = 8 * CELL
    grid = "".join(
        f"M{MARGIN + i * CELL} {MARGIN}v{size}M{MARGIN} {MARGIN + i * CELL}h{size}"
        for i in range(9)
    )
    parts = [
        element("rect", class_="bed", x=MARGIN, y=MARGIN, width=size, height=size, fill=BOARD),
        element("path", class_="grid", d=grid, stroke=LINES, stroke_width=2),
    ]
    # The four dots that printed boards put between c3/d4, f3/e4, c6/d5 and f6/e5.
    for i, j in ((2, 2), (6, 2), (2, 6), (6, 6)):
        parts.append(element("circle", cx=MARGIN + i * CELL, cy=MARGIN + j * CELL, r=4, fill=LINES))
    counts = [0, 0]
    for square, name in enumerate(SQUARE_NAMES):
        row, column = divmod(square, 8)
        seat = _SEAT_OF_MARK.get(rows[row][column])
        if seat is None:
            continue
        counts[seat] += 1
        cx, cy = MARGIN + column * CELL + CELL / 2, MARGIN + row * CELL + CELL / 2
        parts.append(
            element(
                "circle",
                class_=f"piece seat-{seat}",
                cx=cx,
                cy=cy,
                r=DISC_R,
                data_cell=name,
                fill=_COLOURS[seat],
                stroke=_OUTLINES[seat],
                stroke_width=1.5,
            )
        )
        if name == last:
            parts.append(last_move_ring(cx, cy, DISC_R * 0.45, RING))
    for i in range(8):
        middle = MARGIN + i * CELL + CELL / 2
        parts.append(label(middle, MARGIN / 2, "abcdefgh"[i], size=16, class_="coord", fill=INK))
        parts.append(label(MARGIN / 2, middle, str(i + 1), size=16, class_="coord", fill=INK))
    parts += _disc_count(counts, MARGIN + size + RIGHT + COUNT_ROW / 2)
    return Drawing(
        width=MARGIN + size + RIGHT,
        height=MARGIN + size + RIGHT + COUNT_ROW,
        body="".join(parts),
        summary=f"Othello, {_status(state)}; Black {counts[0]}, White {counts[1]}",
    )


def _disc_count(counts: list[int], y: float) -> list[str]:
    """ "● Black 12   ○ White 10": a disc of each colour with its count, centred under the board."""
    out = []
    for seat, cx in ((0, MARGIN + 2 * CELL), (1, MARGIN + 6 * CELL)):
        out.append(
            element(
                "circle",
                cx=cx - 48,
                cy=y,
                r=10,
                fill=_COLOURS[seat],
                stroke=_OUTLINES[seat],
                stroke_width=1.5,
            )
        )
        out.append(
            label(
                cx + 8,
                y,
                f"{_LABELS[seat]} {counts[seat]}",
                size=18,
                fill=INK,
                class_=f"disc-count seat-{seat}",
                data_count=counts[seat],
            )
        )
    return out


def _status(state: State) -> str:
    status = two_player_status(_LABELS, state)
    if not state.is_terminal() and tuple(state.actions()) == (PASS,):
        status += " (must pass)"
    return status


def targets() -> dict[str, tuple[float, float, float, float]]:
    """Each square's box (x, y, width, height) by its name: where a click plays there."""
    return {
        name: (MARGIN + (i % 8) * CELL, MARGIN + (i // 8) * CELL, CELL, CELL)
        for i, name in enumerate(SQUARE_NAMES)
    }
