"""A director's picture of its tournament's games: which are pending, how many are playing, and
which to consider starting now (which bots are busy, in this tournament or another, the
director knows). Pure bookkeeping, no I/O: the director (server/tournaments/director.py) stores
every change and keeps this in step.

Looking for games to start after one ends costs only that game's bots' pending games (indexed
by bot), not the whole schedule: with 32 bots a round robin has 992 games, and the director
looks after each of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ply_arena.server.db.models import TournamentGame
from ply_arena.server.repositories.tournaments import DONE


@dataclass(slots=True)
class BoardGame:
    """A game as its director sees it (a copy of the stored row, kept in step)."""

    id: int
    round: int
    board: int
    bot_ids: list[int]
    status: str
    match_id: str | None

    @classmethod
    def of(cls, game: TournamentGame) -> BoardGame:
        return cls(game.id, game.round, game.board, list(game.bot_ids), game.status, game.match_id)

    @property
    def order(self) -> tuple[int, int]:
        return (self.round, self.board)


class Board:
    def __init__(self, games: Iterable[BoardGame]) -> None:
        self.games = list(games)
        self._by_id = {g.id: g for g in self.games}
        #: bot -> its pending games, in schedule order
        self._pending_of: dict[int, list[BoardGame]] = {}
        #: bot -> how many pending games it has
        self.left: Counter[int] = Counter()
        self.playing = 0
        # Bots freed since the last look (None: look at every pending game).
        self._freed: set[int] | None = None
        for game in self.games:
            if game.status == "pending":
                self._add_pending(game)
            elif game.status == "playing":
                self.playing += 1

    def get(self, game_id: int) -> BoardGame | None:
        return self._by_id.get(game_id)

    def all_decided(self) -> bool:
        return self.playing == 0 and not any(self.left.values())

    def candidates(self, everything: bool) -> list[BoardGame]:
        """Pending games to consider, best first: all of them (``everything``, or nothing was
        noted since the last look) or those of the bots freed since then. The games of the bots
        with the most games left come first (then the schedule's order): such a bot is the
        tournament's longest path, and leaving it idle is what keeps the last games waiting
        while the others are done."""
        if everything or self._freed is None:
            found = [g for g in self.games if g.status == "pending"]
        else:
            seen: dict[int, BoardGame] = {}
            for bot in self._freed:
                for game in self._pending_of.get(bot, ()):
                    seen[game.id] = game
            found = list(seen.values())
        self._freed = set()
        found.sort(key=lambda g: (-sum(self.left[b] for b in g.bot_ids), g.order))
        return found

    def started(self, game: BoardGame, match_id: str) -> None:
        self._remove_pending(game)
        game.status, game.match_id = "playing", match_id
        self.playing += 1

    def ended(self, game: BoardGame, status: str) -> None:
        """A game being played is over (``finished``), or to be played again (``pending``)."""
        if game.status != "playing":
            return
        self.playing -= 1
        game.status = status
        if status == "pending":
            game.match_id = None
            self._add_pending(game)
        if self._freed is not None:
            self._freed.update(game.bot_ids)

    def freed_elsewhere(self, bot_ids: Iterable[int]) -> None:
        """These bots ended a game of another tournament: their games here may start now."""
        if self._freed is not None:
            self._freed.update(bot_ids)

    def not_looked_at(self, games: Iterable[BoardGame]) -> None:
        """Candidates passed over because the concurrency was reached: the next game to end
        frees a place, and they are looked at again then (whoever's bots it frees)."""
        self.freed_elsewhere(bot for game in games for bot in game.bot_ids)

    def decided_without_playing(self, game: BoardGame, status: str) -> None:
        """A pending game decided without a match (``no_show``)."""
        self._remove_pending(game)
        game.status = status

    def _add_pending(self, game: BoardGame) -> None:
        for bot in game.bot_ids:
            queue = self._pending_of.setdefault(bot, [])
            queue.append(game)
            queue.sort(key=lambda g: g.order)
            self.left[bot] += 1

    def _remove_pending(self, game: BoardGame) -> None:
        for bot in game.bot_ids:
            queue = self._pending_of.get(bot, [])
            if game in queue:
                queue.remove(game)
                self.left[bot] -= 1


__all__ = ["DONE", "Board", "BoardGame"]
