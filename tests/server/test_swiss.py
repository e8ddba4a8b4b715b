"""``ply_arena.server.tournaments.swiss``: one Swiss round at a time, on small fields worked out
by hand - score groups, squared gaps, no rematches, seat balance, the bye, the order of the
boards, and how much of the field the matching looks at."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from ply_arena.server.tournaments import swiss
from ply_arena.server.tournaments.swiss import SwissEntrant, SwissError, pair_round, seats_clash

pytestmark = pytest.mark.timeout(30)


def field(*specs: tuple[str, float], **balances: int) -> list[SwissEntrant]:
    """Entrants (name, points), seeded in the order given, with first-seat balances by name."""
    return [
        SwissEntrant(name, points=points, seed=i, first_seat_balance=balances.get(name, 0))
        for i, (name, points) in enumerate(specs)
    ]


def met(entrants: Iterable[SwissEntrant], *pairs: str) -> None:
    """Record that the two entrants of each ``"ab"`` have played each other."""
    by_name = {e.name: e for e in entrants}
    for a, b in pairs:
        by_name[a].opponents.add(b)
        by_name[b].opponents.add(a)


def unordered(pairs: list[tuple[str, str]]) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairs}


def test_a_new_entrant_has_nothing_yet() -> None:
    e = SwissEntrant("x")
    assert (e.points, e.seed, e.opponents, e.first_seat_balance) == (0.0, 0, set(), 0)
    assert (e.last_seat, e.had_bye) == (None, False)
    assert SwissEntrant("y").opponents is not e.opponents
    assert issubclass(SwissError, ValueError)


# --- score groups and squared gaps ---------------------------------------------------------------


def test_entrants_meet_their_own_score_group_top_board_first() -> None:
    entrants = field(("d", 0.0), ("a", 1.0), ("c", 0.0), ("b", 1.0))
    assert pair_round(entrants) == ([("a", "b"), ("d", "c")], None)


def test_the_sum_of_the_squared_gaps_is_the_least_not_the_sum_of_the_gaps() -> None:
    # a 3, b 2, c 0.5, d 0 points; a-b and c-d have met. In half points, a-c and b-d are 5 and
    # 4 apart (25 + 16 = 41), a-d and b-c 6 and 3 (36 + 9 = 45): the same total gap (9), fewer
    # squared. (Counted in thirds of a point, rounded half to even, it would be the other way:
    # 8 and 6, 64 + 36 = 100, against 9 and 4, 81 + 16 = 97.)
    entrants = field(("a", 3.0), ("b", 2.0), ("c", 0.5), ("d", 0.0))
    met(entrants, "ab", "cd")
    pairs, bye = pair_round(entrants)
    assert unordered(pairs) == {frozenset("ac"), frozenset("bd")}
    assert bye is None


def test_entrants_any_number_of_points_apart_are_still_paired() -> None:
    # 20 points apart: a squared gap of 40 half points outweighs the edge's base weight; the
    # matching still pairs everyone.
    assert pair_round(field(("a", 20.0), ("b", 0.0))) == ([("a", "b")], None)
    entrants = field(("a", 30.0), ("b", 30.0), ("c", 0.0), ("d", 0.0))
    met(entrants, "ab", "cd")
    pairs, _ = pair_round(entrants)
    assert len(pairs) == 2
    assert unordered(pairs) in (
        {frozenset("ac"), frozenset("bd")},
        {frozenset("ad"), frozenset("bc")},
    )


def test_a_round_that_needs_a_rematch_is_refused() -> None:
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0))
    met(entrants, "ab", "ac", "ad")
    with pytest.raises(SwissError, match=r"^this round cannot be paired without a rematch: play"):
        pair_round(entrants)


# --- seats ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "clash"),
    [
        (2, 2, True),
        (-2, -2, True),
        (2, 5, True),
        (-4, -3, True),
        (1, 2, False),
        (2, 1, False),
        (-1, -2, False),
        (1, 1, False),
        (2, -2, False),
        (-3, 3, False),
        (0, 3, False),
        (3, 0, False),
        (0, 0, False),
    ],
)
def test_two_entrants_clash_when_both_are_owed_the_same_seat_by_two_games(
    x: int, y: int, clash: bool
) -> None:
    a = SwissEntrant("a", first_seat_balance=x)
    b = SwissEntrant("b", first_seat_balance=y)
    assert seats_clash(a, b) is clash
    assert seats_clash(b, a) is clash


@pytest.mark.parametrize(
    ("x", "y", "term"),
    [
        (1, 1, -10),
        (-1, -1, -10),
        (1, 3, -10),
        (2, 3, -20),
        (-5, -4, -40),
        (1, -1, 0),
        (-3, 2, 0),
        (0, 2, 0),
        (3, 0, 0),
        (0, 0, 0),
    ],
)
def test_the_seat_term_costs_ten_per_game_both_are_owed_the_same_seat(
    x: int, y: int, term: int
) -> None:
    # Ten per game of the smaller debt: a hundredth of one squared half point of score gap.
    a = SwissEntrant("a", first_seat_balance=x)
    b = SwissEntrant("b", first_seat_balance=y)
    assert swiss._seat_term(a, b) == swiss._seat_term(b, a) == term


def test_entrants_owed_opposite_seats_meet_when_the_scores_allow() -> None:
    # All level; a and b sat first once more than second, c and d once less: a-b and c-d would
    # each leave one of them without the seat owed.
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0), a=1, b=1, c=-1, d=-1)
    pairs, _ = pair_round(entrants)
    assert len(pairs) == 2
    for first, second in pairs:
        assert first in "cd"
        assert second in "ab"


def test_nobody_goes_three_games_off_seat_balance_even_for_a_closer_score() -> None:
    # a and b are owed the second seat twice, c and d the first seat twice: a-b (level on
    # points) would put one of them three off. The pairing takes 12-point gaps instead.
    entrants = field(("c", 12.0), ("d", 12.0), ("a", 0.0), ("b", 0.0), a=2, b=2, c=-2, d=-2)
    pairs, _ = pair_round(entrants)
    assert len(pairs) == 2
    for first, second in pairs:
        assert first in "cd"
        assert second in "ab"


def test_when_a_clash_cannot_be_avoided_the_pairing_still_happens() -> None:
    entrants = field(("a", 0.0), ("b", 0.0), a=2, b=3)
    assert pair_round(entrants) == ([("a", "b")], None)


@pytest.mark.parametrize(("debt", "together"), [(1801, True), (1803, False)])
def test_a_seat_debt_weighs_ten_per_game_against_a_thousand_per_squared_half_point(
    debt: int, together: bool
) -> None:
    # The exchange rate of seats against scores, at its crossover (debts far beyond any
    # tournament's, to reach it): everyone is owed the second seat, so every pair clashes and
    # each pairing holds two clashes. a and b (1.5 points) are owed it ``debt`` times, c and d
    # (0 points) twice. a-b with c-d: no score gap; seat terms 10 * debt + 10 * 2. a-c with
    # b-d (or a-d with b-c): two gaps of 3 half points, 2 * 9 * 1000 = 18000; seat terms
    # 2 * 10 * 2 = 40. So a-b meet while 10 * (debt - 2) < 18000, at a debt of 1801 (17990),
    # not at 1803 (18010).
    entrants = field(("a", 1.5), ("b", 1.5), ("c", 0.0), ("d", 0.0), a=debt, b=debt, c=2, d=2)
    pairs, _ = pair_round(entrants)
    assert len(pairs) == 2
    assert (frozenset("ab") in unordered(pairs)) is together


def clash_field(top: float) -> list[SwissEntrant]:
    """Four entrants owed the second seat twice (0 points), two owed the first seat twice
    (``top`` points): someone must clash (the four cannot all meet the two)."""
    return field(
        ("d", top), ("e", top), ("a", 0.0), ("b", 0.0), ("c", 0.0), ("f", 0.0),
        a=2, b=2, c=2, f=2, d=-2, e=-2,
    )  # fmt: skip


def test_an_unavoidable_clash_is_one_clash_when_the_score_gaps_are_moderate() -> None:
    # d and e 10 points (20 half points) above: d and e against two of the four (one clash
    # among the other two) costs 2 * 20 ** 2 = 800 squared half points; d-e with the four
    # among themselves is three clashes: two more, each weighing 500 squared half points.
    pairs, _ = pair_round(clash_field(10.0))
    assert len(pairs) == 3
    assert frozenset("de") not in unordered(pairs)
    assert sum(seats_clash(*(e for e in clash_field(10.0) if e.name in p)) for p in pairs) == 1


def test_an_unavoidable_clash_is_three_clashes_when_the_score_gaps_are_too_wide() -> None:
    # 12 points above: 2 * 24 ** 2 = 1152 squared half points against two more clashes (1000):
    # d meets e and the four meet among themselves.
    pairs, _ = pair_round(clash_field(12.0))
    assert len(pairs) == 3
    assert frozenset("de") in unordered(pairs)


# --- who sits first -------------------------------------------------------------------------------


def seated(a: SwissEntrant, b: SwissEntrant) -> tuple[str, str]:
    pairs, bye = pair_round([a, b])
    assert bye is None
    assert len(pairs) == 1
    return pairs[0]


@pytest.mark.parametrize("x_seed", [0, 1])
def test_the_entrant_that_sat_first_less_often_sits_first(x_seed: int) -> None:
    x = SwissEntrant("x", seed=x_seed, first_seat_balance=1)
    y = SwissEntrant("y", seed=1 - x_seed, first_seat_balance=0)
    assert seated(x, y) == ("y", "x")
    x = SwissEntrant("x", seed=x_seed, first_seat_balance=-1)
    assert seated(x, y) == ("x", "y")
    # The balance before the last seat: x sat first last time, but second more often overall.
    x = SwissEntrant("x", seed=x_seed, first_seat_balance=-1, last_seat=0)
    y = SwissEntrant("y", seed=1 - x_seed, first_seat_balance=1, last_seat=1)
    assert seated(x, y) == ("x", "y")


@pytest.mark.parametrize("x_seed", [0, 1])
@pytest.mark.parametrize(
    ("x_last", "y_last", "x_first"),
    [
        (1, 0, True),  # x sat second last time, y first
        (1, None, True),  # x sat second; y has not played
        (None, 0, True),  # y sat first; x has not played
        (0, 1, False),
        (0, None, False),
        (None, 1, False),
    ],
)
def test_on_equal_balance_the_entrant_that_sat_second_last_time_sits_first(
    x_seed: int, x_last: int | None, y_last: int | None, x_first: bool
) -> None:
    x = SwissEntrant("x", seed=x_seed, last_seat=x_last)
    y = SwissEntrant("y", seed=1 - x_seed, last_seat=y_last)
    assert seated(x, y) == (("x", "y") if x_first else ("y", "x"))


def test_otherwise_the_better_seed_then_the_name_sits_first() -> None:
    for last in (None, 0, 1):
        x = SwissEntrant("x", seed=1, first_seat_balance=1, last_seat=last)
        y = SwissEntrant("y", seed=0, first_seat_balance=1, last_seat=last)
        assert seated(x, y) == ("y", "x")
        assert seated(y, x) == ("y", "x")
        a = SwissEntrant("b", seed=3, last_seat=last)
        b = SwissEntrant("a", seed=3, last_seat=last)
        assert seated(a, b) == ("a", "b")


# --- the order of the boards ---------------------------------------------------------------------


def test_boards_go_by_the_better_score_of_the_pair_then_the_better_seed() -> None:
    # a (2 points, the worst seed) has met b and c, so meets d (1 point); a is owed the first
    # seat. Board 1 is a-d (best score 2) though b-c holds the better seeds.
    entrants = [
        SwissEntrant("a", points=2.0, seed=3, first_seat_balance=-1),
        SwissEntrant("b", points=1.0, seed=0),
        SwissEntrant("c", points=1.0, seed=1),
        SwissEntrant("d", points=1.0, seed=2, first_seat_balance=1),
    ]
    met(entrants, "ab", "ac")
    assert pair_round(entrants) == ([("a", "d"), ("b", "c")], None)


def test_boards_of_the_same_score_go_by_the_best_seed_of_the_pair() -> None:
    # All level; a (seed 0) has met b and c, so meets d (seed 3): a-d holds seed 0, b-c seed 1.
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0))
    met(entrants, "ab", "ac")
    assert pair_round(entrants) == ([("a", "d"), ("b", "c")], None)
    # The same with the second seats holding the better seeds of their pairs.
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0), a=1, b=1)
    met(entrants, "ab", "ac")
    assert pair_round(entrants) == ([("d", "a"), ("c", "b")], None)


def test_eight_boards_in_order() -> None:
    names = "abcdefghijklmnop"
    # Scores 7, 7, 6, 6, ..., 0, 0; the better seed is the lower score, so the boards' order
    # cannot follow the seeds.
    entrants = [
        SwissEntrant(n, points=float(7 - i // 2), seed=len(names) - i) for i, n in enumerate(names)
    ]
    pairs, bye = pair_round(entrants)
    assert bye is None
    assert [set(p) for p in pairs] == [set(names[i : i + 2]) for i in range(0, 16, 2)]
    for first, second in pairs:  # equal balances and no last seats: the better seed first
        assert names.index(first) > names.index(second)


# --- the bye ----------------------------------------------------------------------------------


def test_the_bye_goes_to_the_lowest_placed() -> None:
    entrants = field(("a", 1.0), ("b", 1.0), ("c", 0.0), ("d", 0.0), ("e", 0.0))
    pairs, bye = pair_round(entrants)
    assert bye == "e"  # least points, then the worst seed
    assert pairs == [("a", "b"), ("c", "d")]
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 1.0))
    assert pair_round(entrants) == ([("a", "c")], "b")


def test_the_bye_skips_those_who_had_one() -> None:
    entrants = field(("a", 1.0), ("b", 1.0), ("c", 0.0), ("d", 0.0), ("e", 0.0))
    entrants[4].had_bye = True
    entrants[3].had_bye = True
    pairs, bye = pair_round(entrants)
    assert bye == "c"
    assert unordered(pairs) == {frozenset("ab"), frozenset("de")}


def test_the_bye_skips_one_whose_absence_would_force_a_rematch() -> None:
    # c is lowest; without c, a and b would meet again: b (next lowest) sits out.
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 0.0))
    met(entrants, "ab")
    assert pair_round(entrants) == ([("a", "c")], "b")


@pytest.mark.parametrize("case", ["everyone met", "everyone had a bye"])
def test_no_bye_is_possible(case: str) -> None:
    entrants = field(("a", 0.0), ("b", 0.0), ("c", 0.0))
    if case == "everyone met":
        met(entrants, "ab", "ac", "bc")
    else:
        for e in entrants:
            e.had_bye = True
    with pytest.raises(SwissError, match=r"^no entrant can take the bye and leave the others"):
        pair_round(entrants)


def test_an_absent_entrant_takes_the_bye_before_a_present_one_who_cannot() -> None:
    # c and d present but had a bye; a absent: a sits out though it leads.
    entrants = field(("a", 2.0), ("b", 1.0), ("c", 0.0), ("d", 0.0), ("e", 0.0))
    entrants[2].had_bye = entrants[3].had_bye = entrants[4].had_bye = True
    entrants[1].had_bye = True
    pairs, bye = pair_round(entrants, absent={"a"})
    assert bye == "a"
    assert len(pairs) == 2


# --- how much of the field the matching looks at --------------------------------------------------


def level(n: int) -> list[SwissEntrant]:
    """``n`` entrants on 0 points, e0 the best seed."""
    return [SwissEntrant(f"e{i}", seed=i) for i in range(n)]


def only_unplayed(entrants: list[SwissEntrant], i: int, *others: int) -> None:
    """Entrant ``i`` has met everyone but ``others``."""
    for j, e in enumerate(entrants):
        if j != i and j not in others:
            entrants[i].opponents.add(e.name)
            e.opponents.add(entrants[i].name)


def test_the_window_reaches_32_places_down_and_no_further() -> None:
    entrants = level(40)
    only_unplayed(entrants, 0, 32)
    pairs = swiss._matching(entrants, True, 32)
    assert len(pairs) == 20
    assert ("e0", "e32") in pairs
    entrants = level(40)
    only_unplayed(entrants, 0, 33)
    pairs = swiss._matching(entrants, True, 32)
    assert len(pairs) == 19  # e0 cannot be paired within the window: someone is left over
    assert all("e0" not in p for p in pairs)
    assert len(swiss._matching(entrants, True, None)) == 20


def test_a_pairing_of_everyone_within_the_nearest_32_stands() -> None:
    # e0 has met all but e1 and e33; e0 and e1 both sat first once more than second, e33 once
    # less. Over the whole field e0-e33 would suit the seats better; within the nearest 32 (e33
    # is the 33rd below e0) only e0-e1 is possible, and it pairs everyone: it stands.
    entrants = level(34)
    only_unplayed(entrants, 0, 1, 33)
    entrants[0].first_seat_balance = entrants[1].first_seat_balance = 1
    entrants[33].first_seat_balance = -1
    pairs, bye = pair_round(entrants)
    assert bye is None
    assert pairs[0] == ("e0", "e1")
    assert len(pairs) == 17


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int | None]]:
    """Every matching drawn, as (strict, window)."""
    drawn: list[tuple[bool, int | None]] = []
    matching = swiss._matching

    def spy(
        entrants: list[SwissEntrant], strict: bool, window: int | None = None
    ) -> list[tuple[str, str]]:
        drawn.append((strict, window))
        return matching(entrants, strict, window)

    monkeypatch.setattr(swiss, "_matching", spy)
    return drawn


def test_a_field_of_32_is_drawn_whole_at_once(calls: list[tuple[bool, int | None]]) -> None:
    pairs, _ = pair_round(level(32))
    assert len(pairs) == 16
    assert calls == [(True, None)]


def test_a_field_of_34_is_drawn_within_the_window(calls: list[tuple[bool, int | None]]) -> None:
    pairs, _ = pair_round(level(34))
    assert len(pairs) == 17
    assert calls == [(True, 32)]


def test_a_field_of_35_draws_34_within_the_window(calls: list[tuple[bool, int | None]]) -> None:
    pairs, bye = pair_round(level(35))
    assert (len(pairs), bye) == (17, "e34")
    assert calls == [(True, 32)]


def test_the_whole_field_is_drawn_when_the_window_leaves_someone_over(
    calls: list[tuple[bool, int | None]],
) -> None:
    entrants = level(34)
    only_unplayed(entrants, 0, 33)
    pairs, _ = pair_round(entrants)
    assert ("e0", "e33") in pairs
    assert len(pairs) == 17
    assert calls == [(True, 32), (True, None)]


def test_seat_clashes_are_allowed_only_after_the_whole_field(
    calls: list[tuple[bool, int | None]],
) -> None:
    entrants = level(2)
    entrants[0].first_seat_balance = entrants[1].first_seat_balance = 2
    assert pair_round(entrants) == ([("e0", "e1")], None)
    assert calls == [(True, None), (False, None)]


@pytest.mark.parametrize(
    ("n", "drawn"),
    [
        (4, [(True, None), (False, None)]),
        (32, [(True, None), (False, None)]),
        (34, [(True, 32), (True, None), (False, 32), (False, None)]),
    ],
)
def test_an_impossible_round_is_drawn_once_per_graph_before_it_is_refused(
    calls: list[tuple[bool, int | None]], n: int, drawn: list[tuple[bool, int | None]]
) -> None:
    entrants = level(n)
    only_unplayed(entrants, 0)  # e0 has met everyone
    with pytest.raises(SwissError, match="rematch"):
        pair_round(entrants)
    assert calls == drawn
