"""The rating arithmetic as pure functions (server/ratings/model.py): finishing places, win /
draw / loss from payoffs, the conservative rating, and models equal when their settings are."""

from __future__ import annotations

import pytest

from ply_arena.server.ratings.model import RatingModel, conservative, outcome, places


def test_places_share_the_better_place_when_level() -> None:
    assert places([1.0, -1.0]) == [1, 2]
    assert places([0.0, 0.0]) == [1, 1]
    assert places([-1.0, 0.5, 0.5]) == [3, 1, 1]
    assert places([0.5, 0.5, -1.0]) == [1, 1, 3]


@pytest.mark.parametrize(
    ("payoffs", "seat", "expected"),
    [
        ([1.0, -1.0], 0, "win"),
        ([1.0, -1.0], 1, "loss"),
        ([0.0, 0.0], 0, "draw"),
        ([1.0, 0.0, -1.0], 1, "loss"),  # second of three: someone finished above
        ([0.5, 0.5, -1.0], 0, "draw"),  # level for first place
        ([0.5, 0.5, -1.0], 2, "loss"),
        ([-1.0, 0.5, 0.5], 1, "draw"),
        ([2.0, 1.0, 1.0], 0, "win"),
    ],
)
def test_win_draw_or_loss(payoffs: list[float], seat: int, expected: str) -> None:
    assert outcome(payoffs, seat) == expected


def test_the_conservative_rating_is_mu_minus_three_sigma() -> None:
    assert conservative(25.0, 25.0 / 3.0) == pytest.approx(0.0)
    assert conservative(30.0, 2.0) == 24.0
    assert conservative(10.0, 5.0) == -5.0


def test_models_with_the_same_settings_are_equal() -> None:
    assert RatingModel() == RatingModel()
    assert RatingModel(tau=0.5) != RatingModel()
    assert RatingModel().initial() == (25.0, 25.0 / 3.0)
