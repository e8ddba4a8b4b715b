"""The rating arithmetic: openskill's Weng-Lin model (Plackett-Luce) over finishing places.

A match's payoffs give each seat its place (1 = first; seats level on payoff share the better
place, so a draw is a tie and a three-player result is a finishing order). A forfeit is rated as
stored: the faulty seat has the game's minimum payoff, so it finishes last.

    >>> model = RatingModel()
    >>> [round(mu, 3) for mu, _ in model.rate([model.initial(), model.initial()], [1.0, -1.0])]
    [27.635, 22.365]
    >>> places([1.0, -0.5, -0.5]), places([0.0, 0.0])
    ([1, 2, 2], [1, 1])
    >>> round(conservative(25.0, 25 / 3), 6)
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from openskill.models import PlackettLuce

from ply_arena.server.ratings.anchors import Anchor, default_anchors, parse_anchors

Rating = tuple[float, float]
"""(mu, sigma)."""

Outcome = Literal["win", "draw", "loss"]


@dataclass(frozen=True)
class RatingModel:
    """The model's parameters (server settings ``rating_*``) and openskill's model built on them.

    ``tau`` adds uncertainty before every update, so that a rating keeps moving over a semester.
    ``anchors``: the bot of each game whose rating is pinned (server/ratings/anchors.py), by
    name; the same as the settings' default unless given.
    """

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    anchors: tuple[Anchor, ...] = field(default_factory=default_anchors)
    _model: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        model = PlackettLuce(mu=self.mu, sigma=self.sigma, beta=self.beta, tau=self.tau)
        object.__setattr__(self, "_model", model)

    @classmethod
    def from_settings(cls, settings: Any) -> RatingModel:
        return cls(
            mu=settings.rating_mu,
            sigma=settings.rating_sigma,
            beta=settings.rating_beta,
            tau=settings.rating_tau,
            anchors=parse_anchors(settings.rating_anchors),
        )

    def initial(self) -> Rating:
        """A bot's rating before its first rated match in a game."""
        return self.mu, self.sigma

    def rate(self, before: Sequence[Rating], payoffs: Sequence[float]) -> list[Rating]:
        """The seats' ratings after a match with these ``payoffs``, from their ratings before."""
        teams = [[self._model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
        rated = self._model.rate(teams, ranks=places(payoffs))
        return [(team[0].mu, team[0].sigma) for team in rated]


def places(payoffs: Sequence[float]) -> list[int]:
    """Finishing place per seat, 1 for first; seats level on payoff share the better place."""
    return [1 + sum(other > mine for other in payoffs) for mine in payoffs]


def outcome(payoffs: Sequence[float], seat: int) -> Outcome:
    """A win when the seat's payoff is above every other seat's, a loss when some other seat's is
    above it, a draw otherwise (level for first place)."""
    mine = payoffs[seat]
    others = [p for i, p in enumerate(payoffs) if i != seat]
    if any(p > mine for p in others):
        return "loss"
    if all(p < mine for p in others):
        return "win"
    return "draw"


def conservative(mu: float, sigma: float) -> float:
    """mu - 3 sigma: a rating the bot very probably has at least (what leaderboards rank by)."""
    return mu - 3.0 * sigma
