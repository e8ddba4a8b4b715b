"""The ratings of a set of bots, moved by one rated result after another (pure, in memory).

The incremental update (a result stored by the recorder) and ``arena ratings rebuild`` both run
results through a :class:`Ledger`, in the order they were rated: the same arithmetic in the same
order gives the same floats, which is what makes a rebuild equal to the incremental ratings.

    >>> ledger = Ledger(RatingModel())
    >>> changes = ledger.record(RatedResult("m1", "tic_tac_toe", (1, 2), (1.0, -1.0), "normal",
    ...                                     None, datetime(2026, 11, 23)))
    >>> [(c.bot_id, c.rank, round(c.mu, 3)) for c in changes]
    [(1, 1, 27.635), (2, 2, 22.365)]
    >>> ledger.states[(2, "tic_tac_toe")].losses
    1

An anchor (server/ratings/anchors.py) is given by its bot id: its rating stays pinned, and its
opponents are rated against the pinned value (here bot 3 at 0, sigma 0):

    >>> anchored = Ledger(RatingModel(), anchors={(3, "tic_tac_toe"): 0.0})
    >>> changes = anchored.record(RatedResult("m2", "tic_tac_toe", (1, 3), (-1.0, 1.0), "normal",
    ...                                       None, datetime(2026, 11, 23)))
    >>> [(c.bot_id, round(c.mu_before, 3), round(c.mu, 3), round(c.sigma, 3)) for c in changes]
    [(1, 25.0, 18.736, 8.166), (3, 0.0, 0.0, 0.0)]
    >>> anchored.states[(3, "tic_tac_toe")].wins
    1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ply_arena.server.ratings.anchors import pinned
from ply_arena.server.ratings.model import RatingModel, conservative, outcome, places


@dataclass(frozen=True, slots=True)
class RatedResult:
    """What rating a finished match needs: its seats' bots and payoffs, and how it ended."""

    match_id: str
    game: str
    bot_ids: tuple[int, ...]
    payoffs: tuple[float, ...]
    termination: str
    at_fault: int | None
    at: datetime


@dataclass(slots=True)
class RatingState:
    """A bot's rating and record in one game (a row of the ``ratings`` table)."""

    bot_id: int
    game: str
    mu: float
    sigma: float
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    timeouts: int = 0
    illegal_moves: int = 0
    disconnects: int = 0
    last_played_at: datetime | None = None

    @property
    def conservative(self) -> float:
        return conservative(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One seat of one rated result (a row of ``rating_history``)."""

    match_id: str
    bot_id: int
    game: str
    seat: int
    rank: int
    mu_before: float
    sigma_before: float
    mu: float
    sigma: float
    conservative: float
    at: datetime


#: The faults a bot's record counts, by termination.
_FAULTS = {"timeout": "timeouts", "illegal_move": "illegal_moves", "disconnect": "disconnects"}


class Ledger:
    """Rating states by (bot id, game); ``record`` applies one rated result to them.

    ``anchors``: the pinned rating (mu) of each anchor, by (bot id, game)
    (``ply_arena.server.repositories.ratings.anchor_ids`` finds them): such a bot's rating is
    ``(pinned, 0)`` before and after every result, whatever its stored state held (ratings
    made before it was an anchor), so that the incremental updates and a rebuild agree.
    """

    def __init__(
        self,
        model: RatingModel,
        states: Sequence[RatingState] = (),
        anchors: Mapping[tuple[int, str], float] | None = None,
    ) -> None:
        self.model = model
        self.states: dict[tuple[int, str], RatingState] = {(s.bot_id, s.game): s for s in states}
        self.anchors: Mapping[tuple[int, str], float] = anchors or {}

    def state(self, bot_id: int, game: str) -> RatingState:
        key = (bot_id, game)
        found = self.states.get(key)
        if found is None:
            mu, sigma = self._pinned(key) or self.model.initial()
            found = self.states[key] = RatingState(bot_id, game, mu, sigma)
        return found

    def _pinned(self, key: tuple[int, str]) -> tuple[float, float] | None:
        rating = self.anchors.get(key)
        return None if rating is None else pinned(rating)

    def record(self, result: RatedResult) -> list[RatingChange]:
        """Move the seats' ratings and records by ``result``; the history row of each seat.
        An anchor's rating stays pinned; the others are rated against its pinned value."""
        seats = [self.state(bot_id, result.game) for bot_id in result.bot_ids]
        pins = [self._pinned((s.bot_id, s.game)) for s in seats]
        before = [pin or (s.mu, s.sigma) for s, pin in zip(seats, pins, strict=True)]
        rated = self.model.rate(before, result.payoffs)
        after = [pin or moved for pin, moved in zip(pins, rated, strict=True)]
        ranks = places(result.payoffs)
        fault = _FAULTS.get(result.termination)
        changes = []
        for seat, (state, (mu0, sigma0), (mu, sigma)) in enumerate(
            zip(seats, before, after, strict=True)
        ):
            state.mu, state.sigma = mu, sigma
            state.matches += 1
            won = outcome(result.payoffs, seat)
            if won == "win":
                state.wins += 1
            elif won == "draw":
                state.draws += 1
            else:
                state.losses += 1
            if fault is not None and result.at_fault == seat:
                setattr(state, fault, getattr(state, fault) + 1)
            state.last_played_at = result.at
            changes.append(
                RatingChange(
                    result.match_id,
                    state.bot_id,
                    result.game,
                    seat,
                    ranks[seat],
                    mu0,
                    sigma0,
                    mu,
                    sigma,
                    state.conservative,
                    result.at,
                )
            )
        return changes
