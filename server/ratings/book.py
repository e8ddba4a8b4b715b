"""Every bot's rating and record per game, in memory, exactly as stored.

Loaded from the ``ratings`` table when the referee starts; then every rated result updates it
right after its transaction commits (``ply_arena.server.ratings.service``, through the database's
after-commit callbacks), so it never holds what the database does not. The lobby pairs by it,
and the rating service starts from it instead of reading each seat's rating again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from sqlalchemy import Connection, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.models import Result
from ply_arena.server.ratings.ledger import RatingState
from ply_arena.server.ratings.model import Rating as MuSigma
from ply_arena.server.ratings.model import RatingModel
from ply_arena.server.repositories import ratings as rating_repo

#: The highest ``results.rated_seq`` stored (null: none).
LAST_RATED_SEQ = select(func.max(Result.rated_seq))


async def last_rated_seq(session: AsyncSession) -> int:
    return int(await session.scalar(LAST_RATED_SEQ) or 0)


class RatingBook:
    def __init__(self, model: RatingModel) -> None:
        self.model = model
        self._states: dict[tuple[int, str], RatingState] = {}
        #: Whether the book holds every stored rating (after ``load``): a bot missing from it
        #: then has none stored either.
        self.complete = False
        self._last_seq: int | None = None
        self._watchers: list[Callable[[int, str, float], None]] = []
        #: Called with the states this process stored, once committed (several processes:
        #: the others hear of them, server/cluster/directory.py); not for ``set``.
        self.on_confirmed: Callable[[list[RatingState]], None] | None = None
        #: The rating anchors' pins by (bot id, game), and every bot whose name was looked at
        #: for them (server/ratings/service.py, the writer's thread only).
        self.anchor_pins: dict[tuple[int, str], float] = {}
        self.anchor_checked: set[int] = set()

    def watch(self, watcher: Callable[[int, str, float], None]) -> None:
        """Call ``watcher(bot_id, game, mu)`` whenever a bot's rating changes (after ``set`` and
        ``confirm``; ``load`` replaces the book and calls nobody: it comes before any match)."""
        self._watchers.append(watcher)

    def _changed(self, state: RatingState) -> None:
        for watcher in self._watchers:
            watcher(state.bot_id, state.game, state.mu)

    async def load(self, session: AsyncSession) -> None:
        """Every stored rating (replacing what the book held)."""
        states = await rating_repo.all_states(session)
        self._states = {(s.bot_id, s.game): s for s in states}
        self._last_seq = await last_rated_seq(session)
        self.complete = True

    def get(self, bot_id: int, game: str) -> MuSigma:
        """The bot's (mu, sigma) in ``game``; a new bot's when it has no rated match there."""
        state = self._states.get((bot_id, game))
        return self.model.initial() if state is None else (state.mu, state.sigma)

    def mu(self, bot_id: int, game: str) -> float:
        return self.get(bot_id, game)[0]

    def set(self, bot_id: int, game: str, rating: MuSigma) -> None:
        """Set a bot's rating by hand (tests of the pairing, benchmarks), or as another
        process stored it."""
        state = self._states.get((bot_id, game)) or RatingState(bot_id, game, *rating)
        state.mu, state.sigma = rating
        self._states[(bot_id, game)] = state
        self._changed(state)

    def states(self, keys: Iterable[tuple[int, str]]) -> dict[tuple[int, str], RatingState]:
        """Copies of the stored states of these keys that the book holds."""
        return {key: replace(self._states[key]) for key in keys if key in self._states}

    def confirm(self, states: Iterable[RatingState]) -> None:
        """These states are now stored (called once their transaction has committed)."""
        confirmed = list(states)
        for state in confirmed:
            self._states[(state.bot_id, state.game)] = replace(state)
            self._changed(state)
        if self.on_confirmed is not None and confirmed:
            self.on_confirmed(confirmed)

    def next_rated_seq(self, connection: Connection) -> int:
        """The place of the next rated result in the order of rating (``results.rated_seq``).

        Counted here rather than read for every result: only the recorder, one writer, stores
        results. A transaction that fails after taking a number leaves a gap, which is harmless
        (a rebuild follows the order, not the numbers).
        """
        if self._last_seq is None:
            self._last_seq = int(connection.scalar(LAST_RATED_SEQ) or 0)
        self._last_seq += 1
        return self._last_seq

    def __len__(self) -> int:
        return len(self._states)
