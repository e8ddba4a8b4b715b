"""``board_svg(game, position)``: one ``<svg>`` element drawing a position of any game.

The position is the game's JSON (``games.get(game).state_to_json``). It is parsed, and so
validated, by the game itself, and the drawing comes from the parsed state's own JSON, never from
the raw input: a malformed or hostile position raises ValueError before anything is drawn.

The root element carries ``class="board board-{game}"``, ``role="img"``, an ``aria-label``
summary, ``data-game`` and ``data-position`` (the canonical JSON, compact), so a browser test can
check that the board drawn is the position stored. No width or height: the page's CSS sizes it.

Classes for the page's stylesheet (colours are also set as presentation attributes):

- every game: ``piece seat-N`` on each piece of seat N (one element per piece), ``coord`` or
  ``point-number`` on coordinate labels, ``last-move`` (and ``last-move-from``) on the marks of
  the highlighted move, ``status`` on a status line;
- tic_tac_toe: ``grid``; X is a ``path`` and O a ``circle``, each with ``data-cell`` (``a3``);
- connect_four: ``frame``, ``hole`` (empty cells); discs have ``data-column`` (1-7) and
  ``data-row`` (1-6 from the bottom);
- othello: ``bed``, ``grid``; discs have ``data-cell`` (``d5``);
- backgammon: ``frame``, ``bed``, ``tray``, ``point`` (triangles, ``data-point`` 1-24 in white's
  numbering), ``count`` (on stacks of more than five), ``bar-piece seat-N``, ``off-piece seat-N``,
  ``off-count seat-N``, ``die seat-N`` groups (``data-value``) with ``pip`` circles; checkers on
  points have ``data-point``;
- chinese_checkers: ``star``, ``home seat-N`` (tinted start points), ``hole``, ``legend seat-N``,
  ``legend-label``; pieces have ``data-cell`` (``e5``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ply_arena import games
from ply_arena.games import State
from ply_arena.server.pages.svg import (
    board_backgammon,
    board_chinese_checkers,
    board_connect_four,
    board_othello,
    board_tic_tac_toe,
)
from ply_arena.server.pages.svg.board_parts import Drawing
from ply_arena.server.pages.svg.markup import SVG_NAMESPACE, element, num, text
from ply_arena.server.pages.svg.palette import SEAT_COLOURS, SEAT_LABELS, seat_colours, seat_labels

__all__ = ["SEAT_COLOURS", "SEAT_LABELS", "board_svg", "seat_colours", "seat_labels"]

#: draw(canonical JSON, parsed state, highlight) per game.
_DRAW: dict[str, Callable[[dict[str, Any], State, str | None], Drawing]] = {
    "backgammon": board_backgammon.draw,
    "chinese_checkers": board_chinese_checkers.draw,
    "connect_four": board_connect_four.draw,
    "othello": board_othello.draw,
    "tic_tac_toe": board_tic_tac_toe.draw,
}

#: Where a click plays each move, in the games whose moves are one place: move -> box.
_TARGETS: dict[str, Callable[[], dict[str, tuple[float, float, float, float]]]] = {
    "connect_four": board_connect_four.targets,
    "othello": board_othello.targets,
    "tic_tac_toe": board_tic_tac_toe.targets,
}


def board_svg(
    game: str,
    position: dict[str, Any],
    *,
    highlight: str | None = None,
    links: dict[str, str] | None = None,
) -> str:
    """The ``<svg>`` of ``position`` in ``game``; ValueError for an unknown game or a position
    the game rejects.

    ``highlight`` is the last move in the game's notation (as stored with the match); the cell,
    column, points or holes it names are marked. Text that names nothing marks nothing, and it
    is never written into the drawing.

    ``links`` (move in notation -> URL) makes the place of each of those moves a link, in the
    games whose moves are one place (tic-tac-toe, Connect Four, Othello): ``<a class="move-link"
    data-move=...>`` over the cell, column or square.
    """
    rules = games.get(game)  # ValueError naming the known games
    draw = _DRAW.get(game)
    if draw is None:
        raise ValueError(f"no board drawing for game {game!r}")
    try:
        state = rules.state_from_json(position)
    except (TypeError, KeyError, IndexError, AttributeError) as e:
        # The games' checks raise ValueError; anything else is a shape they did not foresee.
        raise ValueError(f"malformed {game} position: {e!r}") from e
    canonical = rules.state_to_json(state)
    drawing = draw(canonical, state, highlight)
    body = drawing.body
    if links and game in _TARGETS:
        body += _link_layer(_TARGETS[game](), links)
    return element(
        "svg",
        body,
        xmlns=SVG_NAMESPACE,
        viewBox=f"0 0 {num(drawing.width)} {num(drawing.height)}",
        class_=f"board board-{game}",
        role="img",
        aria_label=drawing.summary,
        data_game=game,
        data_position=json.dumps(canonical, separators=(",", ":")),
        font_family="sans-serif",
    )


def _link_layer(boxes: dict[str, tuple[float, float, float, float]], links: dict[str, str]) -> str:
    """A transparent box over the place of each linked move, on top of the drawing."""
    parts = []
    for move, url in links.items():
        box = boxes.get(move)
        if box is None:
            continue
        x, y, width, height = box
        parts.append(
            element(
                "a",
                element("title", text(f"Play {move}")),
                element("rect", x=x, y=y, width=width, height=height, fill="transparent"),
                href=url,
                class_="move-link",
                data_move=move,
                aria_label=f"Play {move}",
            )
        )
    return "".join(parts)
