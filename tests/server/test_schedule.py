"""``ply_arena.server.tournaments.schedule``: round robin (Berger tables, every seat order of
every group) and gauntlet schedules, round by round, worked out by hand."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, permutations

import pytest

from ply_arena.server.tournaments.schedule import gauntlet, round_robin

pytestmark = pytest.mark.timeout(30)


# --- two-player round robin: Berger tables ---------------------------------------------------


def test_two_entrants_play_one_cycle_by_default_once_in_each_seat() -> None:
    assert round_robin(["a", "b"]) == [[("a", "b")], [("b", "a")]]


def test_the_berger_table_of_four_entrants() -> None:
    # Ring a b c d; round r pairs ring[i] with ring[3 - i], first seat to ring[i] when r + i is
    # even; then every entrant but the first moves one place round (the last to second place).
    #   r0: ring a b c d: (a, d), (c, b)
    #   r1: ring a d b c: (c, a), (d, b)
    #   r2: ring a c d b: (a, b), (d, c)
    # and the same three rounds with the seats swapped.
    assert round_robin(["a", "b", "c", "d"]) == [
        [("a", "d"), ("c", "b")],
        [("c", "a"), ("d", "b")],
        [("a", "b"), ("d", "c")],
        [("d", "a"), ("b", "c")],
        [("a", "c"), ("b", "d")],
        [("b", "a"), ("c", "d")],
    ]


def test_an_odd_field_gives_each_entrant_one_bye_per_half() -> None:
    # Ring a b c and an empty place; whoever meets the empty place sits out:
    #   r0: ring a b c -: a sits out, (c, b)     r1: ring a - b c: b sits out, (c, a)
    #   r2: ring a c - b: c sits out, (a, b)
    assert round_robin(["a", "b", "c"]) == [
        [("c", "b")],
        [("c", "a")],
        [("a", "b")],
        [("b", "c")],
        [("a", "c")],
        [("b", "a")],
    ]


def test_more_cycles_repeat_the_first_cycle_round_for_round() -> None:
    one = round_robin(["a", "b", "c", "d", "e"])
    assert len(one) == 10  # 5 rounds (a bye each), twice
    assert round_robin(["a", "b", "c", "d", "e"], cycles=3) == one + one + one
    # The rounds are fresh lists: changing one does not change another.
    rounds = round_robin(["a", "b"], cycles=2)
    rounds[0].append(("x", "y"))
    assert rounds[2] == [("a", "b")]


# --- groups of three or more: every seat order, packed into rounds ---------------------------


def test_three_entrants_of_a_three_player_game_play_each_seat_order_in_its_own_round() -> None:
    assert round_robin(["a", "b", "c"], players=3) == [
        [("a", "b", "c")],
        [("a", "c", "b")],
        [("b", "a", "c")],
        [("b", "c", "a")],
        [("c", "a", "b")],
        [("c", "b", "a")],
    ]


def test_six_entrants_of_a_three_player_game_share_each_round_between_complementary_triples() -> (
    None
):
    # Packed greedily in the order of the triples (a b c, a b d, ...): the ten triples with ``a``
    # each open six rounds (every one of them holds ``a``); a triple without ``a`` fits only the
    # rounds of its complement, its k-th seat order in the complement's k-th round (the earlier
    # ones are taken by then).
    names = ["a", "b", "c", "d", "e", "f"]
    rounds = round_robin(names, players=3)
    assert len(rounds) == 60
    assert rounds[0] == [("a", "b", "c"), ("d", "e", "f")]
    assert rounds[1] == [("a", "c", "b"), ("d", "f", "e")]
    assert rounds[6] == [("a", "b", "d"), ("c", "e", "f")]
    assert rounds[59] == [("f", "e", "a"), ("d", "c", "b")]
    with_a = [t for t in combinations(names, 3) if "a" in t]
    for g, triple in enumerate(with_a):
        rest = tuple(n for n in names if n not in triple)
        for k, (order, other) in enumerate(
            zip(permutations(triple), permutations(rest), strict=True)
        ):
            assert rounds[6 * g + k] == [order, other]


def test_four_entrants_of_a_three_player_game_cannot_share_a_round() -> None:
    # Any two triples of four entrants share two of them: one game per round, 4 * 6 rounds.
    rounds = round_robin(["a", "b", "c", "d"], players=3)
    assert len(rounds) == 24
    assert all(len(r) == 1 for r in rounds)
    assert Counter(g for r in rounds for g in r) == Counter(
        p for t in combinations("abcd", 3) for p in permutations(t)
    )


# --- what a round robin refuses ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("entrants", "players", "cycles", "message"),
    [
        (["a", "b"], 1, 1, "a match has at least two seats"),
        (["a", "b"], 0, 1, "a match has at least two seats"),
        (["a"], 2, 1, "a round robin of a 2-player game needs 2 entrants"),
        (["a", "b"], 3, 1, "a round robin of a 3-player game needs 3 entrants"),
        (["a", "b", "a"], 2, 1, "an entrant is listed twice"),
        (["a", "b", "c", "b"], 3, 1, "an entrant is listed twice"),
        (["a", "b"], 2, 0, "cycles must be at least 1"),
        (["a", "b", "c"], 3, -1, "cycles must be at least 1"),
    ],
)
def test_a_round_robin_refuses(
    entrants: list[str], players: int, cycles: int, message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        round_robin(entrants, players=players, cycles=cycles)


def test_a_round_robin_takes_exactly_as_many_entrants_as_seats_and_one_cycle() -> None:
    assert round_robin(["a", "b"], players=2, cycles=1) == [[("a", "b")], [("b", "a")]]
    assert len(round_robin(["a", "b", "c"], players=3, cycles=1)) == 6


# --- gauntlet ------------------------------------------------------------------------------------


def test_a_gauntlet_shares_the_pool_out_over_the_rounds_then_swaps_the_seats() -> None:
    # Round k: challenger i meets pool bot (i + k) mod 3; then the same with the pool seated first.
    assert gauntlet(["x", "y"], ["p", "q", "r"]) == [
        [("x", "p"), ("y", "q")],
        [("x", "q"), ("y", "r")],
        [("x", "r"), ("y", "p")],
        [("p", "x"), ("q", "y")],
        [("q", "x"), ("r", "y")],
        [("r", "x"), ("p", "y")],
    ]


def test_a_gauntlet_plays_one_cycle_by_default_and_repeats_it_for_more() -> None:
    one = gauntlet(["x"], ["p"])
    assert one == [[("x", "p")], [("p", "x")]]
    assert gauntlet(["x"], ["p"], cycles=3) == one * 3
    assert len(gauntlet(["x", "y", "z"], ["p", "q"], cycles=2)) == 2 * 2 * 2


EMPTY = "a gauntlet needs at least one challenger and one bot in its pool"
OVERLAP = "the challengers must be different bots, none of them in the pool"


@pytest.mark.parametrize(
    ("challengers", "pool", "cycles", "message"),
    [
        ([], ["p"], 1, EMPTY),
        (["x"], [], 1, EMPTY),
        ([], [], 1, EMPTY),
        (["x", "x"], ["p"], 1, OVERLAP),
        (["x", "p"], ["p", "q"], 1, OVERLAP),
        (["x"], ["p"], 0, "cycles must be at least 1"),
    ],
)
def test_a_gauntlet_refuses(
    challengers: list[str], pool: list[str], cycles: int, message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        gauntlet(challengers, pool, cycles=cycles)
