"""The ratings the referee pairs by, kept in memory.

Loaded from the ``ratings`` table when the referee starts and updated whenever a rated result
is stored (by :mod:`server.ratings.service`, in the recorder's write). The database stays the
truth: the book only has to be close enough to pair bots of similar strength.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import Rating, Result
from server.ratings.model import Rating as MuSigma
from server.ratings.model import RatingModel


async def last_rated_seq(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.max(Result.rated_seq))) or 0)


class RatingBook:
    def __init__(self, model: RatingModel) -> None:
        self.model = model
        self._ratings: dict[tuple[int, str], MuSigma] = {}
        self._last_seq: int | None = None

    async def load(self, session: AsyncSession) -> None:
        """Every stored rating (replacing what the book held)."""
        rows = await session.execute(select(Rating.bot_id, Rating.game, Rating.mu, Rating.sigma))
        self._ratings = {(bot_id, game): (mu, sigma) for bot_id, game, mu, sigma in rows}

    def get(self, bot_id: int, game: str) -> MuSigma:
        """The bot's (mu, sigma) in ``game``; a new bot's when it has no rated match there."""
        return self._ratings.get((bot_id, game), self.model.initial())

    def mu(self, bot_id: int, game: str) -> float:
        return self.get(bot_id, game)[0]

    def set(self, bot_id: int, game: str, rating: MuSigma) -> None:
        self._ratings[(bot_id, game)] = rating

    async def next_rated_seq(self, session: AsyncSession) -> int:
        """The place of the next rated result in the order of rating (``results.rated_seq``).

        Counted here rather than read for every result: only the recorder, one writer, stores
        results. A transaction that fails after taking a number leaves a gap, which is harmless
        (a rebuild follows the order, not the numbers).
        """
        if self._last_seq is None:
            self._last_seq = await last_rated_seq(session)
        self._last_seq += 1
        return self._last_seq

    def __len__(self) -> int:
        return len(self._ratings)
