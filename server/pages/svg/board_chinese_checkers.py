"""Chinese checkers: the 121-hole star with its holes on their real hexagonal lattice, the three
seats' pieces (``piece seat-N``), each seat's home point tinted with its colour (``home seat-N``)
and the point it must reach outlined, dashed, in the same colour (``target seat-N``), and below
the star a legend of the seats (the one to move in bold), how holes are named and a status line.

Holes are named as moves write them (``m2-m3``): a row letter, a to q from the top, and the
hole's place in its row from the left. Each row's letter stands left of the row
(``row-label``), and each hole (``hole``, ``data-cell``) and piece carries its name as a
tooltip (``<title>``).

Geometry: ``ply_arena.games.chinese_checkers`` centres every row of ``ROW_LENGTHS`` on doubled
column 12, so the hole at position k (from 0) of a row of n holes sits at doubled column ``12 - (n -
1) + 2k`` (0..24). Neighbours in a row are two doubled columns apart and rows are a hole spacing
times sqrt(3)/2 apart: the six neighbours of a hole are then all one spacing away.
"""

from __future__ import annotations

import math
from typing import Any

from ply_arena.games import State
from ply_arena.games.chinese_checkers import ROW_LENGTHS, ROW_LETTERS, ChineseCheckersState
from ply_arena.server.pages.svg.board_parts import INK, Drawing, last_move_ring
from ply_arena.server.pages.svg.markup import element, label, points_attribute, text
from ply_arena.server.pages.svg.palette import SEAT_COLOURS, SEAT_LABELS

SPACING = 22  # between neighbouring holes
ROW_HEIGHT = SPACING * math.sqrt(3) / 2
MARGIN = 22
PIECE_R = 8.5
HOLE_R = 3
STAR_PAD = 0.75 * SPACING  # the star's edge beyond the outermost holes
LEGEND_H = 76  # the legend line, the naming line and the status line below the star
WIDTH = 2 * MARGIN + 24 * SPACING / 2
STAR_HEIGHT = 2 * MARGIN + 16 * ROW_HEIGHT
CENTRE = (MARGIN + 12 * SPACING / 2, MARGIN + 8 * ROW_HEIGHT)  # hole i5, the middle row's

STAR_FILL = "#F3EAD7"
STAR_EDGE = "#C9B79C"
HOLE_FILL = "#A89880"
ROW_INK = "#6B5E4B"
RING = "#1A1A1A"
_COLOURS = SEAT_COLOURS["chinese_checkers"]
_LABELS = SEAT_LABELS["chinese_checkers"]
#: The star point each seat starts on, counted clockwise from the top (as games' ``POINTS``).
HOME_CORNERS = (0, 2, 4)


def _hole_centres() -> dict[str, tuple[float, float]]:
    centres = {}
    for row, length in enumerate(ROW_LENGTHS):
        for k in range(length):
            doubled_column = 12 - (length - 1) + 2 * k
            x = MARGIN + doubled_column * SPACING / 2
            centres[f"{ROW_LETTERS[row]}{k + 1}"] = (x, MARGIN + row * ROW_HEIGHT)
    return centres


#: Hole name -> its centre, in reading order (the names of ``ply_arena.games.chinese_checkers``).
HOLE_CENTRES = _hole_centres()


def draw(position: dict[str, Any], state: State, highlight: str | None) -> Drawing:
    """The board of ``position`` (the JSON of ``state``); ``highlight`` is the last move
    (``c2-e6``, or a jump path): its origin and destination holes get rings."""
    pieces: list[list[str]] = position["pieces"]
    parts = [_star()]
    parts += [
        element(
            "circle",
            element("title", text(name)),
            class_="hole",
            cx=x,
            cy=y,
            r=HOLE_R,
            data_cell=name,
            fill=HOLE_FILL,
        )
        for name, (x, y) in HOLE_CENTRES.items()
    ]
    parts += _row_labels()
    for seat, names in enumerate(pieces):
        for name in names:
            x, y = HOLE_CENTRES[name]
            parts.append(
                element(
                    "circle",
                    element("title", text(f"{_LABELS[seat]} on {name}")),
                    class_=f"piece seat-{seat}",
                    cx=x,
                    cy=y,
                    r=PIECE_R,
                    data_cell=name,
                    fill=_COLOURS[seat],
                    stroke=INK,
                    stroke_width=1,
                )
            )
    path = (highlight or "").strip().lower().replace(" ", "").split("-")
    if len(path) >= 2 and path[0] in HOLE_CENTRES and path[-1] in HOLE_CENTRES:
        x, y = HOLE_CENTRES[path[0]]
        parts.append(
            element(
                "circle",
                class_="last-move-from",
                cx=x,
                cy=y,
                r=PIECE_R,
                fill="none",
                stroke=RING,
                stroke_width=1.5,
                stroke_dasharray="3 2",
            )
        )
        parts.append(last_move_ring(*HOLE_CENTRES[path[-1]], PIECE_R + 3, RING))
    status = _status(position, state)
    parts += _legend(position["player"], state.is_terminal())
    parts.append(
        label(
            WIDTH / 2,
            STAR_HEIGHT + 38,
            "Holes: row a-q from the top, then 1, 2, … from the left",
            size=11,
            class_="naming",
            fill=INK,
        )
    )
    parts.append(label(WIDTH / 2, STAR_HEIGHT + 60, status, size=13, class_="status", fill=INK))
    return Drawing(
        width=WIDTH,
        height=STAR_HEIGHT + LEGEND_H,
        body="".join(parts),
        summary=f"Chinese checkers, {status}",
    )


def _row_labels() -> list[str]:
    """Each row's letter, left of its first hole (in the star's padding)."""
    out = []
    for letter in ROW_LETTERS:
        x, y = HOLE_CENTRES[f"{letter}1"]
        out.append(label(x - 0.72 * SPACING, y, letter, size=10, class_="row-label", fill=ROW_INK))
    return out


def _corner(index: int, radius: float) -> tuple[float, float]:
    """The point at ``radius`` from the centre in direction ``index`` * 30 degrees clockwise
    from straight up."""
    angle = math.radians(-90 + 30 * index)
    return CENTRE[0] + radius * math.cos(angle), CENTRE[1] + radius * math.sin(angle)


def _star() -> str:
    """The star as two padded equilateral triangles: tips at the outer radius on the even
    directions, the inner hexagon's corners at outer / sqrt(3) on the odd ones."""
    # The tip hole a1 is 8 rows above the centre; padding an equilateral triangle's sides by d
    # moves its corners 2d further out.
    outer = 8 * ROW_HEIGHT + 2 * STAR_PAD
    inner = outer / math.sqrt(3)
    outline = [_corner(i, outer if i % 2 == 0 else inner) for i in range(12)]
    parts = [
        element(
            "polygon",
            class_="star",
            points=points_attribute(outline),
            fill=STAR_FILL,
            stroke=STAR_EDGE,
            stroke_width=1.5,
            stroke_linejoin="round",
        )
    ]
    for seat, point in enumerate(HOME_CORNERS):
        tip = 2 * point  # star points are every 60 degrees
        corner = [_corner(tip, outer), _corner(tip + 1, inner), _corner(tip - 1, inner)]
        parts.append(
            element(
                "polygon",
                element("title", text(f"{_LABELS[seat]}'s home")),
                class_=f"home seat-{seat}",
                points=points_attribute(corner),
                fill=_COLOURS[seat],
                fill_opacity=0.22,
            )
        )
        # The opposite point: where the seat's pieces must all go.
        goal = tip + 6
        inset = outer - 0.5 * STAR_PAD, inner - 0.3 * STAR_PAD
        corner = [_corner(goal, inset[0]), _corner(goal + 1, inset[1]), _corner(goal - 1, inset[1])]
        parts.append(
            element(
                "polygon",
                element("title", text(f"{_LABELS[seat]}'s goal")),
                class_=f"target seat-{seat}",
                points=points_attribute(corner),
                fill="none",
                stroke=_COLOURS[seat],
                stroke_width=2.5,
                stroke_dasharray="6 4",
                stroke_linejoin="round",
            )
        )
    return "".join(parts)


def _legend(player: int, over: bool) -> list[str]:
    """A swatch and a name per seat; the seat to move in bold."""
    out = []
    y = STAR_HEIGHT + 14
    for seat, name in enumerate(_LABELS):
        x = WIDTH * (seat + 0.5) / 3 - 18
        on_turn = seat == player and not over
        out.append(
            element(
                "circle",
                class_=f"legend seat-{seat}",
                cx=x,
                cy=y,
                r=PIECE_R,
                fill=_COLOURS[seat],
                stroke=INK,
                stroke_width=1,
            )
        )
        out.append(
            label(
                x + 14,
                y,
                name,
                size=14,
                class_="legend-label",
                fill=INK,
                text_anchor="start",
                font_weight="bold" if on_turn else None,
            )
        )
    return out


def _status(position: dict[str, Any], state: State) -> str:
    ply = position["ply"]
    if not state.is_terminal():
        return f"{_LABELS[position['player']]} to move, ply {ply}"
    assert isinstance(state, ChineseCheckersState)
    winner = state.winner()
    if winner is not None:
        return f"{_LABELS[winner]} won at ply {ply}"
    return f"move cap reached at ply {ply}"
