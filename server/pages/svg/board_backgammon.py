"""Backgammon from white's side, as ``Backgammon.render`` prints it: points 13-24 along the top
from left to right, 12-1 along the bottom, so white's home board (points 1-6) is bottom right and
white bears off into the tray on the right. Each point carries both numberings, since each side's
moves are written in its own: white's (the JSON's) on the outer row, black's (25 - p) on the inner
row, each row named at its end over the tray (``point-number seat-N``); the row of the seat on turn
is dark and bold, the other grey.

Checkers on the points are ``piece seat-N`` (one element per checker; a stack taller than five
is squeezed onto the point and shows its count). Checkers on the bar are ``bar-piece seat-N``
(white's in the top half of the bar, nearer the points where it enters), borne-off checkers
``off-piece seat-N`` slabs in the tray (black's at the top, white's at the bottom) with their
counts (``off-count``). The dice of a decision node are two ``die`` groups with ``data-value``,
in the right half; the left half says whose turn it is.
"""

from __future__ import annotations

import re
from typing import Any

from ply_arena.games import CHANCE, State
from ply_arena.server.pages.svg.board_parts import Drawing
from ply_arena.server.pages.svg.markup import element, label, points_attribute
from ply_arena.server.pages.svg.palette import SEAT_COLOURS, SEAT_LABELS

WHITE, BLACK = 0, 1

# Sizes, in user units: five checkers fill a point.
CHECKER_R = 15
STACK = 5
POINT_W = 32
POINT_H = STACK * 2 * CHECKER_R
GAP = 50  # between the points' tips: the turn and the dice
BAR_W = 40
FRAME = 12
TRAY_W = 44
NUMBERS = 34  # the two rows of point numbers (white's, black's) above and below the board
SLAB_H = 8  # a borne-off checker seen edge on: fifteen fit in a point's height
DIE = 32

LEFT_X = FRAME  # the left half of the bed
BAR_X = LEFT_X + 6 * POINT_W
RIGHT_X = BAR_X + BAR_W  # the right half
TRAY_X = RIGHT_X + 6 * POINT_W + FRAME
WIDTH = TRAY_X + TRAY_W + FRAME
BED_TOP = NUMBERS + FRAME
MIDDLE = BED_TOP + POINT_H + GAP / 2
BED_BOTTOM = BED_TOP + 2 * POINT_H + GAP
HEIGHT = BED_BOTTOM + FRAME + NUMBERS

WOOD = "#6B4226"
TRAY = "#4E2F1B"
BED = "#2F6B4F"
POINT_COLOURS = ("#E8D8B0", "#B0483A")  # odd points cream, even points brick
INK = "#333333"
MUTED = "#8A8F98"  # the numbering of the seat not on turn
LIGHT_INK = "#F5F1E6"  # text on the green bed and in the dark tray
RING = "#0072B2"
_COLOURS = SEAT_COLOURS["backgammon"]
_LABELS = SEAT_LABELS["backgammon"]
# The outline and the text on a checker are the other seat's colour, so both show on any point.
_CONTRAST = (_COLOURS[BLACK], "#BBBBBB")
_TEXT_ON = (_COLOURS[BLACK], _COLOURS[WHITE])

# Pip positions on a die face, as fractions of its side, for the values 1..6.
_PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.5), (0.75, 0.5), (0.25, 0.75), (0.75, 0.75)),
}
_POINT_NUMBER = re.compile(r"[0-9]{1,2}")


def draw(position: dict[str, Any], state: State, highlight: str | None) -> Drawing:
    """The board of ``position`` (the JSON of ``state``); ``highlight`` is the last play in
    gnubg notation from its mover's side (``24/18* 13/11``): the points it names are outlined."""
    signed: list[int] = position["points"]
    bar: list[int] = position["bar"]
    off: list[int] = position["off"]
    turn: int | None = position["turn"]
    # The last play was made by the seat that is not on turn now (none before the opening roll).
    marked = set() if turn is None or not highlight else _named_points(highlight, 1 - turn)
    parts = [_frame()]
    for p in range(1, 25):
        parts.append(_point(p, p in marked))
        count = signed[p - 1]
        if count:
            seat = WHITE if count > 0 else BLACK
            top = p >= 13
            base, direction = (BED_TOP, 1) if top else (BED_BOTTOM, -1)
            parts += _stack(_point_x(p), base, direction, abs(count), seat, "piece", str(p))
    bar_x = BAR_X + BAR_W / 2
    parts += _stack(bar_x, MIDDLE - 4, -1, bar[WHITE], WHITE, "bar-piece", "bar")
    parts += _stack(bar_x, MIDDLE + 4, 1, bar[BLACK], BLACK, "bar-piece", "bar")
    parts += _tray(off)
    parts += _numbers(turn)
    status = _status(position, state)
    shown = status[0].upper() + status[1:]
    parts.append(
        label(LEFT_X + 3 * POINT_W, MIDDLE, shown, size=15, class_="status", fill=LIGHT_INK)
    )
    if position["dice"] is not None:
        assert turn is not None  # the JSON has dice only at a decision node
        high, low = position["dice"]
        centre = RIGHT_X + 3 * POINT_W
        parts.append(_die(centre - DIE / 2 - 5, high, turn))
        parts.append(_die(centre + DIE / 2 + 5, low, turn))
    summary = (
        f"Backgammon, {status}; on the bar White {bar[WHITE]}, Black {bar[BLACK]}; "
        f"borne off White {off[WHITE]}, Black {off[BLACK]}"
    )
    return Drawing(width=WIDTH, height=HEIGHT, body="".join(parts), summary=summary)


def _point_x(p: int) -> float:
    """The centre x of white's point ``p``: 1 is bottom right, 12 bottom left, 13 top left."""
    if p <= 6:
        return RIGHT_X + (6 - p) * POINT_W + POINT_W / 2
    if p <= 12:
        return LEFT_X + (12 - p) * POINT_W + POINT_W / 2
    if p <= 18:
        return LEFT_X + (p - 13) * POINT_W + POINT_W / 2
    return RIGHT_X + (p - 19) * POINT_W + POINT_W / 2


def _frame() -> str:
    """The wooden frame, the two halves of the green bed, and the tray for borne-off checkers."""
    bed_height = BED_BOTTOM - BED_TOP
    rects = [
        ("frame", 0, NUMBERS, WIDTH, HEIGHT - 2 * NUMBERS, WOOD),
        ("bed", LEFT_X, BED_TOP, 6 * POINT_W, bed_height, BED),
        ("bed", RIGHT_X, BED_TOP, 6 * POINT_W, bed_height, BED),
        ("tray", TRAY_X, BED_TOP, TRAY_W, bed_height, TRAY),
    ]
    return "".join(
        element("rect", class_=kind, x=x, y=y, width=w, height=h, fill=fill)
        for kind, x, y, w, h, fill in rects
    )


def _point(p: int, marked: bool) -> str:
    """White's point ``p`` as a triangle from its side of the board towards the middle."""
    x = _point_x(p)
    base, tip = (BED_TOP, BED_TOP + POINT_H) if p >= 13 else (BED_BOTTOM, BED_BOTTOM - POINT_H)
    xy = points_attribute([(x - POINT_W / 2, base), (x + POINT_W / 2, base), (x, tip)])
    if marked:
        return element(
            "polygon",
            class_="point last-move",
            points=xy,
            data_point=p,
            fill=POINT_COLOURS[(p + 1) % 2],
            stroke=RING,
            stroke_width=3,
            stroke_linejoin="round",
        )
    return element(
        "polygon", class_="point", points=xy, data_point=p, fill=POINT_COLOURS[(p + 1) % 2]
    )


def _stack(
    x: float, base: float, direction: int, count: int, seat: int, kind: str, where: str
) -> list[str]:
    """``count`` checkers from ``base`` towards ``direction`` (+1 down, -1 up). Beyond five they
    overlap to stay within a point's length, and the outermost one shows the count."""
    if not count:
        return []
    step = 2 * CHECKER_R if count <= STACK else (POINT_H - 2 * CHECKER_R) / (count - 1)
    out = []
    for i in range(count):
        y = base + direction * (CHECKER_R + i * step)
        out.append(
            element(
                "circle",
                class_=f"{kind} seat-{seat}",
                cx=x,
                cy=y,
                r=CHECKER_R - 0.5,
                data_point=where,
                fill=_COLOURS[seat],
                stroke=_CONTRAST[seat],
                stroke_width=1.5,
            )
        )
    if count > STACK:
        out.append(
            label(
                x, y, str(count), size=15, class_="count", fill=_TEXT_ON[seat], font_weight="bold"
            )
        )
    return out


def _tray(off: list[int]) -> list[str]:
    """Borne-off checkers as slabs, black's from the top and white's from the bottom."""
    out = []
    x = TRAY_X + 5
    for seat, base, direction in ((BLACK, BED_TOP, 1), (WHITE, BED_BOTTOM, -1)):
        for i in range(off[seat]):
            y = base + 1 + i * SLAB_H if direction > 0 else base - (i + 1) * SLAB_H - 1
            out.append(
                element(
                    "rect",
                    class_=f"off-piece seat-{seat}",
                    x=x,
                    y=y,
                    width=TRAY_W - 10,
                    height=SLAB_H - 1,
                    rx=2,
                    fill=_COLOURS[seat],
                    stroke=_CONTRAST[seat],
                    stroke_width=0.75,
                )
            )
        out.append(
            label(
                TRAY_X + TRAY_W / 2,
                MIDDLE - 14 * direction,
                str(off[seat]),
                size=14,
                class_=f"off-count seat-{seat}",
                fill=LIGHT_INK,
            )
        )
    return out


def _numbers(turn: int | None) -> list[str]:
    """White's numbers on the outer rows, black's on the inner ones; ``turn``'s row stands out."""
    out = []
    outer, inner = 9, NUMBERS - 8  # from the edge of the drawing
    for seat, offset in ((WHITE, outer), (BLACK, inner)):
        strong = turn is None or seat == turn
        style = {"fill": INK if strong else MUTED, "font_weight": "bold" if strong else None}
        for p in range(1, 25):
            number = p if seat == WHITE else 25 - p
            y = offset if p >= 13 else HEIGHT - offset
            out.append(
                label(
                    _point_x(p),
                    y,
                    str(number),
                    size=12,
                    class_=f"point-number seat-{seat}",
                    **style,
                )
            )
        for y in (offset, HEIGHT - offset):
            out.append(
                label(
                    TRAY_X + TRAY_W / 2,
                    y,
                    _LABELS[seat].lower(),
                    size=12,
                    class_=f"numbering seat-{seat}",
                    **style,
                )
            )
    return out


def _die(cx: float, value: int, seat: int) -> str:
    x, y = cx - DIE / 2, MIDDLE - DIE / 2
    face = element(
        "rect",
        x=x,
        y=y,
        width=DIE,
        height=DIE,
        rx=5,
        fill=_COLOURS[seat],
        stroke=_CONTRAST[seat],
        stroke_width=1.5,
    )
    pips = [
        element(
            "circle", class_="pip", cx=x + fx * DIE, cy=y + fy * DIE, r=3.2, fill=_TEXT_ON[seat]
        )
        for fx, fy in _PIPS[value]
    ]
    return element("g", face, *pips, class_=f"die seat-{seat}", data_value=value)


def _status(position: dict[str, Any], state: State) -> str:
    """As ``Backgammon.render`` says it: the opening roll, who rolls or plays, or who won."""
    if state.is_terminal():
        payoff = state.returns()[WHITE]
        winner = WHITE if payoff > 0 else BLACK
        kind = {2: " a gammon", 3: " a backgammon"}.get(round(abs(payoff)), "")
        return f"{_LABELS[winner]} won{kind}"
    if position["opening"]:
        return "opening roll"
    turn = position["turn"]
    if state.player == CHANCE:
        return f"{_LABELS[turn]} to roll"
    high, low = position["dice"]
    return f"{_LABELS[turn]} to play {high}-{low}"


def _named_points(play: str, mover: int) -> set[int]:
    """White's numbers of the points that a play's notation moves to or hits on, e.g. {18, 11}
    for white's ``24/18* 13/11(2)``; notation it cannot read marks nothing."""
    found = set()
    for word in play.lower().replace(",", " ").split():
        for hop in word.split("(")[0].split("/")[1:]:
            name = hop.rstrip("*")
            if _POINT_NUMBER.fullmatch(name) and 1 <= int(name) <= 24:
                found.add(int(name) if mover == WHITE else 25 - int(name))
    return found
