"""Rating anchors: one bot per game whose rating is pinned (``settings.rating_anchors``,
``ARENA_RATING_ANCHORS``), so that a number means the same strength from one term to the next.

Ratings only say who beat whom: without a fixed point the whole scale drifts with who happens to
play (a strong class lifts everybody's numbers). An anchor is that fixed point. Its rating is
``(rating, 0)``: mu pinned, no uncertainty, so its conservative rating mu - 3 sigma is the pinned
number too; it never moves, and every opponent is rated against the pinned value, in the
incremental updates and in ``arena ratings rebuild`` alike (server/ratings/ledger.py).

The format: ``GAME=BOT[@RATING]; GAME=BOT[@RATING]; ...`` (one anchor per game at most; a game
not named has none; ``@RATING`` defaults to :data:`DEFAULT_RATING`). ``default``: the random
house bot, ``house-random``, of every game at 0 (see docs/server.md, "Rating anchors", for why);
``none``: no anchors.

    >>> parse_anchors("connect_four=house-alphabeta-d4@20; othello=house-random")
    (Anchor(game='connect_four', bot='house-alphabeta-d4', rating=20.0), \
Anchor(game='othello', bot='house-random', rating=0.0))
    >>> parse_anchors("none")
    ()
    >>> {a.game: (a.bot, a.rating) for a in parse_anchors("default")}["tic_tac_toe"]
    ('house-random', 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ply_arena import games
from ply_arena.server.repositories.bots import NAME_PATTERN

#: The anchors' bot by default: the random house bot. Its play is the same in every game, every
#: release and on every machine (it does not search, so load cannot weaken it).
DEFAULT_BOT = "house-random"
#: The pinned rating when an entry gives none, and the default anchors' rating: random play is
#: 0, and a new bot (mu 25, sigma 25/3) starts with the conservative rating 0, level with it.
DEFAULT_RATING = 0.0


class AnchorsError(ValueError):
    """``rating_anchors`` cannot be read; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """``bot``'s rating in ``game`` is pinned at ``rating`` (mu; sigma 0)."""

    game: str
    bot: str
    rating: float

    def describe(self) -> str:
        """``anchor, fixed at 0`` (what the pages and ``arena leaderboard`` show)."""
        return f"anchor, fixed at {self.rating:g}"


def pinned(rating: float) -> tuple[float, float]:
    """An anchor's (mu, sigma): the pinned mu and no uncertainty, so that its conservative
    rating mu - 3 sigma is the pinned number as well."""
    return rating, 0.0


def parse_anchors(text: str) -> tuple[Anchor, ...]:
    """The anchors ``text`` configures (see the module docstring); AnchorsError otherwise."""
    text = text.strip()
    if text.lower() in ("", "none", "off"):
        return ()
    if text.lower() == "default":
        return default_anchors()
    anchors: dict[str, Anchor] = {}
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        game_name, sep, rest = (p.strip() for p in entry.partition("="))
        bot, at, rating_text = (p.strip() for p in rest.partition("@"))
        if not sep or not bot:
            raise AnchorsError(f"entry {entry!r} names no game and bot")
        if game_name not in games.names():
            raise AnchorsError(
                f"entry {entry!r}: no game {game_name!r} (the games: {', '.join(games.names())})"
            )
        if not NAME_PATTERN.fullmatch(bot):
            raise AnchorsError(f"entry {entry!r}: {bot!r} is not a bot name")
        rating = DEFAULT_RATING
        if at:
            try:
                rating = float(rating_text)
            except ValueError:
                rating = math.nan
            if not math.isfinite(rating):
                raise AnchorsError(f"entry {entry!r}: {rating_text!r} is not a rating (a number)")
        if game_name in anchors:
            raise AnchorsError(f"two anchors for {game_name}: one bot per game is pinned")
        anchors[game_name] = Anchor(game_name, bot, rating)
    return tuple(anchors.values())


def default_anchors() -> tuple[Anchor, ...]:
    """What ``default`` stands for: :data:`DEFAULT_BOT` at :data:`DEFAULT_RATING`, every game."""
    return tuple(Anchor(name, DEFAULT_BOT, DEFAULT_RATING) for name in games.names())


def anchor_in(anchors: Iterable[Anchor], bot: str, game: str) -> Anchor | None:
    """The anchor of ``game`` if it is the bot named ``bot`` (names match whatever their case,
    as bot names do)."""
    key = bot.lower()
    return next((a for a in anchors if a.game == game and a.bot.lower() == key), None)
