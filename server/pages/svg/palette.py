"""Seat colours and seat labels of every game, shared by the boards and by the pages that show a
bot's name next to the colour it plays.

Colours come from colour-blind-safe schemes: Paul Tol's "vibrant" blue and orange for the
noughts and crosses (distinct shapes too), Tol's "bright" red, green and blue for the three
Chinese checkers seats (the usual pure red and green look alike to most colour-blind readers),
and a dark red against a light yellow for Connect Four, which differ in lightness as well as in
hue. Othello and backgammon use their natural black and white.

Labels follow each game's seat order in ``games/``: seat 0 first. Connect Four's seat names are
"X" and "O" in ``ply_arena.games.connect_four``; its docstring gives their colours, red and yellow,
which are what a reader sees on the board.
"""

from __future__ import annotations

from types import MappingProxyType

from ply_arena import games

#: Fill colour of each seat's pieces, seat 0 first, per game.
SEAT_COLOURS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "backgammon": ("#F5F1E6", "#262626"),  # white, black
        "chinese_checkers": ("#EE6677", "#228833", "#4477AA"),  # Tol bright red, green, blue
        "connect_four": ("#CC3311", "#F0E442"),  # Tol vibrant red, Okabe-Ito yellow
        "othello": ("#1B1B1B", "#F5F5F5"),
        "tic_tac_toe": ("#0077BB", "#EE7733"),  # Tol vibrant blue, orange
    }
)

#: The name of each seat as a reader knows it, seat 0 first, per game.
SEAT_LABELS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "backgammon": ("White", "Black"),
        "chinese_checkers": ("Red", "Green", "Blue"),
        "connect_four": ("Red", "Yellow"),
        "othello": ("Black", "White"),
        "tic_tac_toe": ("X", "O"),
    }
)


def _known(game: str) -> str:
    if game not in SEAT_COLOURS:
        games.get(game)  # an unknown game: its ValueError names the known ones
        raise ValueError(f"no seat colours for game {game!r}")
    return game


def seat_colours(game: str) -> list[str]:
    """The fill colour of each seat of ``game`` (``#rrggbb``), seat 0 first."""
    return list(SEAT_COLOURS[_known(game)])


def seat_labels(game: str) -> list[str]:
    """The name of each seat of ``game`` (e.g. ``["Red", "Yellow"]``), seat 0 first."""
    return list(SEAT_LABELS[_known(game)])
