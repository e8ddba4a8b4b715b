"""``ply_arena.server.referee.pairing.pair``: the lobby's decisions as a pure function, without a
server."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from _pairing_reference import reference_pair

from ply_arena.server.referee import pairing
from ply_arena.server.referee.pairing import (
    Group,
    HouseSeat,
    Params,
    Player,
    Roster,
    Waiter,
    Waiters,
    first_come,
    pair,
)

TWO = Params(group_size=2, window=3.0, widen_per_s=1.0, max_wait_s=10.0, candidates=3)
THREE = Params(group_size=3, window=3.0, widen_per_s=1.0, max_wait_s=10.0, candidates=3)


def waiters(*mus: float, joined: float = 0.0) -> list[Waiter]:
    """Bots 1, 2, ... with these ratings, joined in that order (1 ms apart) at ``joined``."""
    return [Waiter(i + 1, joined + i / 1000, mu) for i, mu in enumerate(mus)]


def groups_of(result: list[Group]) -> list[tuple[int, ...]]:
    return [tuple(sorted(g.bot_ids)) for g in result]


# --- rating, randomness, windows ------------------------------------------------------------


def test_a_bot_meets_one_of_the_closest_in_rating_chosen_at_random() -> None:
    # Bot 1 (mu 20) waited longest; 2, 3, 4 are within its window (3), 5 is not.
    bots = waiters(20, 21, 22.5, 18.5, 40)
    chosen: Counter[int] = Counter()
    for seed in range(200):
        result = pair(bots, now=0.01, rng=random.Random(seed), params=TWO)
        first = result[0]
        assert first.reason == "rating" and 1 in first.bot_ids
        chosen[next(b for b in first.bot_ids if b != 1)] += 1
    assert set(chosen) == {2, 3, 4}  # all three candidates, never the one outside the window
    assert min(chosen.values()) > 30
    # pairing_candidates=1: always the closest.
    one = Params(group_size=2, window=3.0, candidates=1)
    for seed in range(20):
        result = pair(bots, now=0.01, rng=random.Random(seed), params=one)
        assert groups_of(result)[0] == (1, 2)


def test_only_the_k_closest_are_candidates() -> None:
    bots = waiters(20, 20.5, 21, 21.5, 22, 22.5)  # all within the window of bot 1
    chosen = set()
    for seed in range(100):
        result = pair(bots, now=0.01, rng=random.Random(seed), params=TWO)
        chosen.add(next(b for b in result[0].bot_ids if b != 1))
    assert chosen == {2, 3, 4}


def test_the_same_rng_state_gives_the_same_groups() -> None:
    rng = random.Random(7)
    bots = [Waiter(i, rng.uniform(0, 5), rng.gauss(25, 6)) for i in range(1, 60)]
    last = {b.bot_id: frozenset({rng.randrange(1, 60)}) for b in bots}
    playing = [Player(100 + i, rng.gauss(25, 6)) for i in range(10)]
    runs = [
        pair(bots, now=6.0, rng=random.Random(3), params=TWO, playing=playing, last_opponents=last)
        for _ in range(3)
    ]
    assert runs[0] == runs[1] == runs[2]
    # The order of the input does not matter either.
    shuffled = list(reversed(bots))
    again = pair(
        shuffled, now=6.0, rng=random.Random(3), params=TWO, playing=playing, last_opponents=last
    )
    assert again == runs[0]
    other_seeds = {
        tuple(groups_of(pair(bots, now=6.0, rng=random.Random(s), params=TWO, playing=playing)))
        for s in range(10)
    }
    assert len(other_seeds) > 1  # the seed does matter


def test_the_window_widens_with_the_wait() -> None:
    # Three waiting, 8 and 12 apart; a fourth bot near each is playing in the queue, so each has
    # a reason to wait for a better opponent: nobody meets until the window reaches 8.
    bots = waiters(20, 28, 40)
    playing = [Player(10, 21), Player(11, 27), Player(12, 39)]

    def at(now: float) -> list[tuple[int, ...]]:
        return groups_of(pair(bots, now=now, rng=random.Random(1), params=TWO, playing=playing))

    assert at(0.0) == []
    assert at(4.9) == []  # window 7.9 < 8
    assert at(5.1) == [(1, 2)]  # window 8.1: bot 1 and bot 2 (both waited 5.1 s)
    slow = Params(group_size=2, window=3.0, widen_per_s=0.5, max_wait_s=60.0)
    assert groups_of(pair(bots, now=9.9, rng=random.Random(1), params=slow, playing=playing)) == []
    assert groups_of(pair(bots, now=10.1, rng=random.Random(1), params=slow, playing=playing)) == [
        (1, 2)
    ]


def test_the_longer_wait_sets_the_window() -> None:
    # Bot 1 waited 10 s (window 13 with a slow widening), bot 2 just came: 12 apart.
    params = Params(group_size=2, window=3.0, widen_per_s=1.0, max_wait_s=60.0)
    bots = [Waiter(1, 0.0, 20), Waiter(2, 9.99, 32), Waiter(3, 9.99, 60)]
    playing = [Player(10, 33), Player(11, 21), Player(12, 59)]
    result = pair(bots, now=10.0, rng=random.Random(1), params=params, playing=playing)
    assert groups_of(result) == [(1, 2)] and result[0].reason == "rating"


def test_a_bot_that_waited_max_wait_meets_whoever_is_there() -> None:
    bots = [Waiter(1, 0.0, 0.0), Waiter(2, 5.0, 50.0), Waiter(3, 5.0, 100.0)]
    playing = [Player(10, 1.0), Player(11, 51.0), Player(12, 99.0)]  # everyone has hope
    assert pair(bots, now=9.9, rng=random.Random(1), params=TWO, playing=playing) == []
    result = pair(bots, now=10.0, rng=random.Random(1), params=TWO, playing=playing)
    assert result == [Group((1, 2), "overdue")]  # the closest of those there
    # The overdue bot chooses: bot 2 (waited 5 s, hoping for bot 11) has no say.


def test_two_waiting_meet_at_once_whatever_their_ratings() -> None:
    # Nobody else waits or plays in the queue: no better opponent can come.
    bots = waiters(0, 100)
    assert pair(bots, now=0.0, rng=random.Random(1), params=TWO) == [Group((1, 2), "no_better")]
    # Even when they just played each other (two kit bots playing 1,000 matches).
    last = {1: frozenset({2}), 2: frozenset({1})}
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, last_opponents=last)
    assert result == [Group((1, 2), "rematch")]
    same = waiters(25, 25)
    result = pair(same, now=0.0, rng=random.Random(1), params=TWO, last_opponents=last)
    assert result == [Group((1, 2), "rematch")]


def test_a_bot_waits_while_a_better_opponent_plays_in_the_queue() -> None:
    # 1 and 2 are far apart; 10 (close to 1) and 11 (close to 2) play a match from this queue.
    bots = waiters(10, 40)
    playing = [Player(10, 11), Player(11, 41)]
    assert pair(bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing) == []
    # Only one of them has a reason to wait: it still waits (both must agree).
    assert pair(bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing[:1]) == []
    # Players far from both give no reason to wait.
    far = [Player(10, 70)]
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, playing=far)
    assert result == [Group((1, 2), "no_better")]
    # A player that just played bot 1 is no reason for bot 1 to wait.
    last = {1: frozenset({10}), 10: frozenset({1})}
    result = pair(
        bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing[:1], last_opponents=last
    )
    assert result == [Group((1, 2), "no_better")]


# --- rematches ------------------------------------------------------------------------------


def test_no_immediate_rematch_while_another_bot_waits() -> None:
    bots = waiters(25, 25.5, 30)  # 1 and 2 just played; 3 is 5 away (outside the window)
    last = {1: frozenset({2}), 2: frozenset({1}), 3: frozenset({9})}
    for seed in range(50):
        result = pair(bots, now=0.0, rng=random.Random(seed), params=TWO, last_opponents=last)
        assert groups_of(result) == [(1, 3)]  # nobody else could come: 1 meets 3, not 2 again
    # While 3 waits with a reason to wait (a bot near it plays), 1 and 2 do not meet again
    # either: they wait too.
    playing = [Player(20, 30.5)]
    result = pair(
        bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing, last_opponents=last
    )
    assert result == []
    # ... until one has waited max_wait_s: then it meets whoever is there, but not its last
    # opponent while someone else is.
    fixed = Params(group_size=2, window=3.0, widen_per_s=0.0, max_wait_s=10.0)
    result = pair(
        bots, now=10.0, rng=random.Random(1), params=fixed, playing=playing, last_opponents=last
    )
    assert groups_of(result) == [(1, 3)] and result[0].reason == "overdue"


def test_a_rematch_counts_both_ways() -> None:
    # Bot 2's last opponent was 1, but 1 has played someone else since (concurrent matches).
    bots = waiters(25, 25, 26)
    last = {2: frozenset({1})}
    for seed in range(20):
        result = pair(bots, now=0.0, rng=random.Random(seed), params=TWO, last_opponents=last)
        assert (1, 2) not in groups_of(result)


def test_round_robin_of_three() -> None:
    # Three bots in a two-player queue: each time, the one that waited meets the one that did
    # not just play it.
    bots = waiters(25, 25, 25)
    last = {1: frozenset({2}), 2: frozenset({1}), 3: frozenset({1})}
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, last_opponents=last)
    assert groups_of(result) == [(2, 3)]


# --- three players --------------------------------------------------------------------------


def test_three_players_fill_three_seats_by_rating() -> None:
    bots = waiters(10, 30, 11, 31, 12, 32)
    result = pair(bots, now=0.0, rng=random.Random(1), params=THREE)
    assert sorted(groups_of(result)) == [(1, 3, 5), (2, 4, 6)]
    assert all(len(g.bot_ids) == 3 and g.reason == "rating" for g in result)


def test_three_players_need_three() -> None:
    assert pair(waiters(25, 25), now=100.0, rng=random.Random(1), params=THREE) == []
    result = pair(waiters(0, 50, 100), now=0.0, rng=random.Random(1), params=THREE)
    assert groups_of(result) == [(1, 2, 3)]  # nobody better can come


def test_three_players_avoid_the_last_table_while_others_wait() -> None:
    # 1, 2, 3 just played together; 4 and 5 wait too: 1 meets 4 and 5.
    bots = waiters(25, 25, 25, 25, 25)
    table = frozenset({1, 2, 3})
    last = {b: table - {b} for b in (1, 2, 3)}
    for seed in range(20):
        result = pair(bots, now=0.0, rng=random.Random(seed), params=THREE, last_opponents=last)
        assert groups_of(result) == [(1, 4, 5)]
    # With only 1, 2, 3 and 4 waiting, one seat must go to a bot of the last table.
    result = pair(bots[:4], now=0.0, rng=random.Random(1), params=THREE, last_opponents=last)
    (group,) = result
    assert 1 in group.bot_ids and 4 in group.bot_ids and group.reason == "rematch"


# --- house bots -----------------------------------------------------------------------------


def test_a_lone_bot_meets_a_house_bot_with_room_after_house_wait() -> None:
    params = Params(group_size=2, house_wait_s=2.0)
    lone = [Waiter(1, 0.0, 28.0)]
    house = [HouseSeat(100, 10.0, 8), HouseSeat(101, 30.0, 8), HouseSeat(102, 27.0, 0)]
    assert pair(lone, now=1.9, rng=random.Random(1), params=params, house=house) == []
    met: Counter[int] = Counter()
    for seed in range(200):
        result = pair(lone, now=2.0, rng=random.Random(seed), params=params, house=house)
        assert len(result) == 1 and result[0].reason == "house"
        assert result[0].bot_ids[0] == 1
        met[result[0].bot_ids[1]] += 1
    # At random, not by rating: the far weaker 100 as often as 101; 102 has no room.
    assert set(met) == {100, 101} and min(met.values()) > 60, met
    assert pair(lone, now=9.0, rng=random.Random(1), params=params, house=[]) == []


def test_a_bot_meets_another_house_bot_than_its_latest_opponent_when_one_has_room() -> None:
    params = Params(group_size=2, house_wait_s=0.0)
    lone = [Waiter(1, 0.0, 25.0)]
    house = [HouseSeat(100, 25.0, 8), HouseSeat(101, 25.0, 8)]
    last = {1: frozenset({100})}
    for seed in range(50):
        result = pair(lone, now=1.0, rng=random.Random(seed), params=params, house=house,
                      last_opponents=last)  # fmt: skip
        assert result == [Group((1, 101), "house")]
    # The only house bot with room is the latest opponent: they meet again.
    house = [HouseSeat(100, 25.0, 8), HouseSeat(101, 25.0, 0)]
    result = pair(lone, now=1.0, rng=random.Random(0), params=params, house=house,
                  last_opponents=last)  # fmt: skip
    assert result == [Group((1, 100), "house")]


def test_house_bots_fill_the_missing_seats_of_a_three_player_queue() -> None:
    params = Params(group_size=3, house_wait_s=2.0)
    house = [HouseSeat(100, 10.0, 1), HouseSeat(101, 30.0, 1), HouseSeat(102, 26.0, 0)]
    result = pair(waiters(25), now=3.0, rng=random.Random(1), params=params, house=house)
    assert len(result) == 1 and result[0].reason == "house"
    assert result[0].bot_ids[0] == 1 and sorted(result[0].bot_ids[1:]) == [100, 101]
    two = waiters(25, 40, joined=0.0)
    seen = set()
    for seed in range(50):
        result = pair(two, now=3.0, rng=random.Random(seed), params=params, house=house)
        assert len(result) == 1 and result[0].bot_ids[:2] == (1, 2), result
        seen.add(result[0].bot_ids[2])
    assert seen == {100, 101}


def test_house_bots_do_not_call_house_bots() -> None:
    # A house bot waiting in a queue (self-play) is not completed by other house bots.
    params = Params(group_size=2, house_wait_s=0.0)
    waiting = [Waiter(100, 0.0, 25.0, house=True)]
    assert pair(waiting, now=60.0, rng=random.Random(1), params=params,
                house=[HouseSeat(101, 25.0, 8)]) == []  # fmt: skip
    # Two waiting house bots (self-play on) meet as any bots do.
    waiting.append(Waiter(101, 0.1, 25.0, house=True))
    assert groups_of(pair(waiting, now=0.2, rng=random.Random(1), params=params)) == [(100, 101)]


def test_no_house_bot_while_a_group_can_still_form() -> None:
    # Two bots wait, each for a better opponent playing in the queue: no house bot is called.
    params = Params(group_size=2, house_wait_s=0.0, max_wait_s=60.0)
    bots = waiters(10, 40)
    playing = [Player(10, 11), Player(11, 41)]
    result = pair(bots, now=5.0, rng=random.Random(1), params=params, playing=playing,
                  house=[HouseSeat(100, 25.0, 8)])  # fmt: skip
    assert result == []


# --- properties -----------------------------------------------------------------------------


def random_lobby(
    rng: random.Random,
) -> tuple[list[Waiter], list[Player], dict[int, frozenset[int]], int]:
    n = rng.randrange(26)
    bots = [
        Waiter(
            i + 1, rng.uniform(0, 20), rng.uniform(0, 50), house=i % 5 == 0 and rng.random() < 0.5
        )
        for i in range(n)
    ]
    playing = [Player(100 + i, rng.uniform(0, 50)) for i in range(rng.randrange(6))]
    ids = [b.bot_id for b in bots] + [p.bot_id for p in playing]
    last = {
        b: frozenset(rng.sample(ids, min(len(ids), rng.randrange(3)))) - {b}
        for b in ids
        if rng.random() < 0.5
    }
    return bots, playing, last, rng.choice([2, 3])


def test_groups_are_disjoint_and_whole_over_random_lobbies() -> None:
    house = [HouseSeat(1000, 25.0, 1), HouseSeat(1001, 10.0, 2)]
    for case in range(300):
        rng = random.Random(case)
        bots, playing, last, size = random_lobby(rng)
        params = Params(group_size=size, house_wait_s=5.0)
        now = rng.uniform(0, 30)

        def decide(
            bots: list[Waiter] = bots,
            now: float = now,
            case: int = case,
            params: Params = params,
            playing: list[Player] = playing,
            last: dict[int, frozenset[int]] = last,
        ) -> list[Group]:
            return pair(
                bots, now=now, rng=random.Random(case), params=params, playing=playing,
                last_opponents=last, house=house,
            )  # fmt: skip

        result = decide()
        seen = [b for g in result for b in g.bot_ids]
        assert len(seen) == len(set(seen)), case
        waiting_ids = {b.bot_id for b in bots}
        for g in result:
            assert len(g.bot_ids) == size, case
            assert all(b in waiting_ids or b in (1000, 1001) for b in g.bot_ids), case
            if g.reason != "house":
                assert all(b in waiting_ids for b in g.bot_ids), case
        house_used = Counter(b for b in seen if b in (1000, 1001))
        assert house_used[1000] <= 1 and house_used[1001] <= 2, case
        # Once every bot has waited max_wait_s, fewer than a group stay unpaired.
        if all(now - b.joined_at >= params.max_wait_s for b in bots):
            assert len(waiting_ids - set(seen)) < size, case
        assert decide() == result, case  # same inputs, same rng: same answer


def test_first_come_pairs_in_arrival_order() -> None:
    bots = [Waiter(3, 0.2, 1), Waiter(1, 0.0, 2), Waiter(2, 0.1, 3), Waiter(4, 0.3, 4)]
    assert groups_of(first_come(bots, 2)) == [(1, 2), (3, 4)]
    assert groups_of(first_come(bots, 3)) == [(1, 2, 3)]


def test_no_rematch_while_another_bot_is_coming_back_whatever_its_rating() -> None:
    """Three bots taking turns: the one that waited alone while the other two played meets the
    first to come back; if that is its latest opponent, it waits for the other one, still
    playing, however far in rating, rather than meet the same bot again (until max wait)."""
    last = {1: frozenset({2}), 2: frozenset({1, 3}), 3: frozenset({2})}
    waiting = [Waiter(1, 0.0, 25.0), Waiter(2, 0.5, 26.0)]
    coming = [Player(3, 40.0)]
    params = Params()
    assert pair(waiting, now=0.6, rng=random.Random(1), params=params,
                playing=coming, last_opponents=last) == []  # fmt: skip
    # Nobody coming back: the rematch is allowed (nobody else to meet).
    again = pair(waiting, now=0.6, rng=random.Random(1), params=params, last_opponents=last)
    assert [g.reason for g in again] == ["rematch"]
    # Overdue: no more waiting for anyone.
    late = pair(waiting, now=params.max_wait_s + 0.1, rng=random.Random(1), params=params,
                playing=coming, last_opponents=last)  # fmt: skip
    assert [g.reason for g in late] == ["rematch"]


def test_the_pure_functions_defaults_are_the_servers() -> None:
    # Params() as the tests write it and Params.from_settings as the server builds it agree.
    from ply_arena.server.settings import Settings

    assert Params.from_settings(Settings(), group_size=2) == Params(group_size=2)
    assert Params.from_settings(Settings(), group_size=3) == Params(group_size=3)
    assert Params() == Params(group_size=2)
    custom = Settings(pairing_candidates=1, pairing_window=5.0, house_wait_s=7.0)
    assert Params.from_settings(custom, group_size=2) == Params(
        group_size=2, window=5.0, candidates=1, house_wait_s=7.0
    )


# --- edges of the rules, hand-checked -------------------------------------------------------


def test_a_waiting_bot_is_counted_once_and_is_not_coming_back_as_well() -> None:
    # Bot 1 also listed as playing in the queue (it is back): no reason for it to wait.
    bots = waiters(10, 40)
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, playing=[Player(1, 11)])
    assert result == [Group((1, 2), "no_better")]
    # The same bot twice in the queue: it meets once, as its earlier entry.
    twice = [Waiter(1, 0.0, 20.0), Waiter(1, 0.5, 20.0), Waiter(2, 1.0, 21.0)]
    assert pair(twice, now=1.0, rng=random.Random(1), params=TWO) == [Group((1, 2), "rating")]


def test_the_window_is_exactly_window_before_any_wait() -> None:
    # Joined just now (or, by the clock, a moment after now): the window is 3.0, not more.
    for joined in (0.0, 5.0):
        exactly = [Waiter(1, joined, 20.0), Waiter(2, joined, 23.0)]
        result = pair(exactly, now=0.0, rng=random.Random(1), params=TWO)
        assert result == [Group((1, 2), "rating")]  # 3.0 apart: within the window
        beyond = [Waiter(1, joined, 20.0), Waiter(2, joined, 23.5)]
        result = pair(beyond, now=0.0, rng=random.Random(1), params=TWO)
        assert result == [Group((1, 2), "no_better")]  # 3.5 apart: nobody better comes


def test_both_bots_at_the_edge_of_the_window_are_candidates() -> None:
    # 17 and 23 are both exactly 3.0 from bot 1 (window 3.0): either may be chosen.
    bots = [Waiter(1, 0.0, 20.0), Waiter(2, 0.0, 23.0), Waiter(3, 0.0, 17.0)]
    chosen = set()
    for seed in range(30):
        (group,) = pair(bots, now=0.0, rng=random.Random(seed), params=TWO)
        assert group.bot_ids[0] == 1 and group.reason == "rating"
        chosen.add(group.bot_ids[1])
    assert chosen == {2, 3}
    # One candidate: at the same distance, the walk looks down the ratings first.
    one = Params(group_size=2, candidates=1)
    assert pair(bots, now=0.0, rng=random.Random(1), params=one) == [Group((1, 3), "rating")]


def test_no_chance_when_there_is_no_choice() -> None:
    # Exactly two good opponents for two seats: the same group whatever the seed, closest first.
    bots = waiters(20, 22, 21)
    for seed in range(20):
        result = pair(bots, now=0.0, rng=random.Random(seed), params=THREE)
        assert result == [Group((1, 3, 2), "rating")]


def test_the_anchor_walks_down_to_the_lowest_rating() -> None:
    # Bot 1 (the highest) just played 2 (between): it meets 3, the lowest, nobody else waiting.
    bots = waiters(30, 20, 10)
    last = {1: frozenset({2}), 2: frozenset({1})}
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, last_opponents=last)
    assert result == [Group((1, 3), "no_better")]


def test_a_group_formed_leaves_the_others_to_meet_again() -> None:
    # 1 and 2 meet; then 3 and 4, who just played each other, have nobody else: a rematch.
    bots = waiters(20, 20.5, 40, 40.5)
    last = {3: frozenset({4}), 4: frozenset({3})}
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, last_opponents=last)
    assert result == [Group((1, 2), "rating"), Group((3, 4), "rematch")]


def test_a_skipped_anchor_s_wider_window_counts_for_later_anchors() -> None:
    # Three seats. Bot 1 (mu 20) has waited 5 s (window 8), 2 (mu 26) and 3 (mu 29) just came
    # (window 3); each has a reason to wait (a bot near it is playing). Bot 1 finds only bot 2
    # (3 is 9 away) and stays. Bot 2 then looks as far as 8: 3 (3 away, its own window) and 1
    # (6 away, within 1's window) are good opponents.
    params = Params(group_size=3, window=3.0, widen_per_s=1.0, max_wait_s=60.0)
    bots = [Waiter(1, 0.0, 20.0), Waiter(2, 5.0, 26.0), Waiter(3, 5.0, 29.0)]
    playing = [Player(10, 15.0), Player(11, 24.0), Player(12, 31.0)]
    result = pair(bots, now=5.0, rng=random.Random(1), params=params, playing=playing)
    assert result == [Group((2, 3, 1), "rating")]
    # 3 at 31 instead: 5 from bot 2, within the wider window but within neither one's own.
    bots[2] = Waiter(3, 5.0, 31.0)
    assert pair(bots, now=5.0, rng=random.Random(1), params=params, playing=playing) == []


def test_a_later_anchor_looks_past_its_window_for_a_skipped_overdue_bot() -> None:
    # Three seats. Bot 1 (mu 0) is overdue but stays: 3 and 4 just played with it (and each has
    # another bot to meet), so only 2 is left for it. Bot 2 (mu 50, with a reason to wait) has
    # one good opponent (3); past its window, it walks on to the overdue bot 1 (not to 4, which
    # has a reason to wait, too).
    params = Params(group_size=3, window=3.0, widen_per_s=0.0, max_wait_s=10.0)
    bots = [Waiter(1, 0.0, 0.0), Waiter(2, 9.9, 50.0), Waiter(3, 9.9, 51.0), Waiter(4, 9.9, 80.0)]
    last = {1: frozenset({3, 4})}
    playing = [Player(10, 50.5), Player(11, 80.5)]
    result = pair(
        bots, now=10.0, rng=random.Random(1), params=params, playing=playing, last_opponents=last
    )
    assert result == [Group((2, 3, 1), "overdue")]


def test_no_rematch_while_another_waiting_bot_could_take_a_seat() -> None:
    # 1 and 2 just played; 2 has nobody else (3 named it too), but 1 has 3, who waits for a
    # better opponent (10 is playing near it): 1 does not meet 2 again, it waits. Bot 10 played
    # 1 and 2 as well, so it is no reason for them to wait (rule 4's "coming back").
    bots = waiters(25, 25.5, 30)
    last = {1: frozenset({2}), 2: frozenset({3}), 3: frozenset({2}), 10: frozenset({1, 2})}
    playing = [Player(10, 30.5)]
    # The same whether 2 names 1 among its latest opponents as well (both ways: still one
    # rematch for 1, and 3 besides it).
    for both_ways in (last, {**last, 2: frozenset({1, 3})}):
        result = pair(
            bots,
            now=0.0,
            rng=random.Random(1),
            params=TWO,
            playing=playing,
            last_opponents=both_ways,
        )
        assert result == [], both_ways


def test_a_player_that_just_played_both_is_no_reason_to_avoid_a_rematch() -> None:
    # 1 and 2 just played each other; 3, coming back, just played both (either way round).
    bots = waiters(25, 26)
    playing = [Player(3, 40.0)]
    for last in (
        {1: frozenset({2}), 2: frozenset({1}), 3: frozenset({1, 2})},
        {1: frozenset({2, 3}), 2: frozenset({1, 3})},
    ):
        result = pair(
            bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing, last_opponents=last
        )
        assert result == [Group((1, 2), "rematch")], last


def test_a_latest_opponent_either_way_is_no_reason_to_wait() -> None:
    # Bot 10, playing near bot 1, met it last: either one naming the other is enough.
    bots = waiters(10, 40)
    playing = [Player(10, 11)]
    for last in ({1: frozenset({10})}, {10: frozenset({1})}):
        result = pair(
            bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing, last_opponents=last
        )
        assert result == [Group((1, 2), "no_better")], last


def test_the_closest_rematch_is_the_one_played_again() -> None:
    # Bot 1 played 2 and 3 (a bot may name several); each of them has nobody else either.
    bots = waiters(25, 26, 20)
    last = {1: frozenset({2, 3}), 2: frozenset({3})}
    result = pair(bots, now=0.0, rng=random.Random(1), params=TWO, last_opponents=last)
    assert result == [Group((1, 2), "rematch")]  # 26 is 1 away, 20 is 5 away


def test_a_rematch_fills_only_the_missing_seat() -> None:
    # 1, 2, 3 just played together; 4 is new: 1 meets 4 and one of its last table, the closest
    # (ids break the tie), not both.
    bots = waiters(25, 25, 25, 25)
    table = frozenset({1, 2, 3})
    last = {b: table - {b} for b in (1, 2, 3)}
    result = pair(bots, now=0.0, rng=random.Random(1), params=THREE, last_opponents=last)
    assert result == [Group((1, 4, 2), "rematch")]


def test_a_bot_named_among_its_own_latest_opponents_changes_nothing() -> None:
    # The latest table may be given whole (the bot with its opponents): the same decisions.
    house = [HouseSeat(1000, 25.0, 1)]
    differs = 0
    for case in range(300):
        rng = random.Random(case)
        bots, playing, last, size = random_lobby(rng)
        params = Params(group_size=size, house_wait_s=5.0)
        now = rng.uniform(0, 30)
        whole = {b: opponents | {b} for b, opponents in last.items()}
        for b in bots:
            whole.setdefault(b.bot_id, frozenset({b.bot_id}))
        results = [
            pair(bots, now=now, rng=random.Random(case), params=params, playing=playing,
                 last_opponents=given, house=house)
            for given in (last, whole)
        ]  # fmt: skip
        assert results[0] == results[1], case
        differs += results[0] != pair(
            bots, now=now, rng=random.Random(case), params=params, playing=playing, house=house
        )
    assert differs > 20  # the latest opponents did matter in many of these lobbies


def test_first_come_forms_only_whole_groups() -> None:
    bots = [Waiter(i, i / 10, 25.0) for i in range(1, 6)]
    assert groups_of(first_come(bots[:3], 2)) == [(1, 2)]
    assert groups_of(first_come(bots, 3)) == [(1, 2, 3)]
    assert groups_of(first_come(bots, 2)) == [(1, 2), (3, 4)]


# --- the work of a decision -----------------------------------------------------------------


class _CountingReads(list[int]):
    """A list that counts its reads by index into the last of ``counts``."""

    def __init__(self, items: list[int], counts: list[int]) -> None:
        super().__init__(items)
        self.counts = counts

    def __getitem__(self, i: Any) -> Any:
        self.counts[-1] += 1
        return super().__getitem__(i)


def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many bots each anchor's walk outwards visits, in order (the module's "Cost"): the
    walk reads the rating order (``by_mu``) once per bot it visits, and nothing else does."""
    counts: list[int] = []
    init, partners = pairing._Pairing.__init__, pairing._Pairing._partners

    def counting_init(self: pairing._Pairing, *args: Any) -> None:
        init(self, *args)
        self.by_mu = _CountingReads(self.by_mu, counts)

    def counting_partners(self: pairing._Pairing, a: int, need: int, k: int) -> Any:
        counts.append(0)
        return partners(self, a, need, k)

    monkeypatch.setattr(pairing._Pairing, "__init__", counting_init)
    monkeypatch.setattr(pairing._Pairing, "_partners", counting_partners)
    return counts


def test_an_anchor_stops_at_its_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    # All six within the window of bot 1: its walk stops at the three closest (candidates).
    counts = walks(monkeypatch)
    result = pair(waiters(20, 20.5, 21, 21.5, 22, 22.5), now=0.0, rng=random.Random(1), params=TWO)
    assert result[0].bot_ids[0] == 1 and result[0].bot_ids[1] in (2, 3, 4)
    assert counts[0] == 3


def test_an_anchor_stops_past_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ten apart, each with a reason to wait: each walk ends at the first bot past the window.
    counts = walks(monkeypatch)
    bots = waiters(0, 10, 20, 30, 40)
    playing = [Player(100 + i, mu + 1) for i, mu in enumerate((0, 10, 20, 30, 40))]
    assert pair(bots, now=0.0, rng=random.Random(1), params=TWO, playing=playing) == []
    assert counts == [1, 1, 1, 1, 1]
    # Nobody has a reason to wait: each walk ends at the first bot past the window, who fills
    # the seat.
    counts.clear()
    result = pair(waiters(0, 10, 20, 30), now=0.0, rng=random.Random(1), params=TWO)
    assert result == [Group((1, 2), "no_better"), Group((3, 4), "no_better")]
    assert counts == [1, 1]


def test_the_walk_measures_each_step_down_from_the_anchor_to_the_lowest() -> None:
    # Bot 1 (20) is the highest; 19, 18.5 and 18 are all within its window, two and three steps
    # down: each is a candidate, the lowest (position 0) as well.
    bots = waiters(20, 19, 18.5, 18)
    chosen = set()
    for seed in range(40):
        group = pair(bots, now=0.0, rng=random.Random(seed), params=TWO)[0]
        assert group.bot_ids[0] == 1 and group.reason == "rating"
        chosen.add(group.bot_ids[1])
    assert chosen == {2, 3, 4}


def test_the_anchors_own_window_counts_to_its_very_edge() -> None:
    # Bot 1 waited 1 s (window 4.0), bot 2 just joined (window 3.0), 4.0 apart: good opponents
    # by the longer waiter's window, not left to "nobody better".
    bots = [Waiter(1, 0.0, 20.0), Waiter(2, 1.0, 24.0)]
    assert pair(bots, now=1.0, rng=random.Random(1), params=TWO) == [Group((1, 2), "rating")]


def test_a_missing_seat_is_filled_from_the_band_of_a_skipped_anchors_wider_window() -> None:
    # Three players. Bot 1 (mu 0, waited 4 s: window 7) hopes for bot 100 coming back and
    # waits; bot 2 (mu 20, waited 2 s: window 5) then looks as far as 7. It has one good
    # opponent (3, at 4) and two bots in the band past its own window (4 at 6 and 5 at 6.5,
    # with nothing to wait for): the closest of those fills the missing seat, and the rest wait.
    bots = [
        Waiter(1, 6.0, 0.0),
        Waiter(2, 8.0, 20.0),
        Waiter(3, 10.0, 24.0),
        Waiter(4, 10.0, 26.0),
        Waiter(5, 10.0, 26.5),
    ]
    result = pair(bots, now=10.0, rng=random.Random(1), params=THREE, playing=[Player(100, 1.0)])
    assert result == [Group((2, 3, 4), "no_better")]


# --- the same decisions as the former walk --------------------------------------------------


def reference_lobby(
    rng: random.Random,
) -> tuple[list[Waiter], list[Player], dict[int, frozenset[int]], list[HouseSeat], Params, float]:
    """A lobby of up to 150 waiting bots, some of it on a grid (ties in rating and in arrival),
    sometimes with bots listed twice, bots coming back (some of them waiting too), latest
    opponents both ways and house bots; parameters drawn among the edge cases."""
    n = rng.choice([rng.randrange(8), rng.randrange(40), rng.randrange(150)])
    grid = rng.random() < 0.3

    def mu() -> float:
        return 2.0 * rng.randrange(12) if grid else rng.uniform(0, 50)

    def joined() -> float:
        return float(rng.randrange(5)) if grid else rng.uniform(0, 20)

    bots = [Waiter(i + 1, joined(), mu(), i % 5 == 0 and rng.random() < 0.5) for i in range(n)]
    if bots and rng.random() < 0.2:
        bots += [Waiter(rng.choice(bots).bot_id, joined(), mu()) for _ in range(3)]
    rng.shuffle(bots)
    playing = [Player(100 + i, mu()) for i in range(rng.randrange(12))]
    playing += [Player(w.bot_id, w.mu) for w in bots if rng.random() < 0.1]
    ids = [w.bot_id for w in bots] + [p.bot_id for p in playing] + [1000, 1001]
    share = rng.random()
    last = {
        b: frozenset(rng.sample(ids, min(len(ids), rng.randrange(4))))
        for b in ids
        if rng.random() < share
    }
    house = (
        [HouseSeat(1000, 25.0, rng.randrange(3)), HouseSeat(1001, 10.0, rng.randrange(3))]
        if rng.random() < 0.5
        else []
    )
    params = Params(
        group_size=rng.choice([2, 2, 3, 4]),
        window=rng.choice([0.0, 1.0, 3.0, 6.0]),
        widen_per_s=rng.choice([0.0, 0.5, 1.0]),
        max_wait_s=rng.choice([3.0, 10.0]),
        candidates=rng.choice([1, 2, 3, 4]),
        house_wait_s=rng.choice([0.0, 2.0, 5.0]),
    )
    return bots, playing, last, house, params, rng.uniform(0, 25)


def test_the_decisions_are_the_former_walks_over_random_lobbies() -> None:
    # The walk was rewritten for speed (2026-11-27): it must decide exactly as before, groups,
    # reasons, order and draws from the rng alike, whether the bots come as a list or as the
    # referee keeps them (Waiters, Roster).
    reasons: Counter[str] = Counter()
    for case in range(1500):
        bots, playing, last, house, params, now = reference_lobby(random.Random(case))

        def decided(
            decide: Any,
            waiting: Any,
            coming: Any,
            case: int = case,
            now: float = now,
            params: Params = params,
            last: dict[int, frozenset[int]] = last,
            house: list[HouseSeat] = house,
        ) -> tuple[list[Group], float]:
            """The groups, and the rng's next draw (the decision drew as much as before)."""
            rng = random.Random(case)
            result = decide(
                waiting,
                now=now,
                rng=rng,
                params=params,
                playing=coming,
                last_opponents=last,
                house=house,
            )
            return result, rng.random()

        expected = decided(reference_pair, bots, playing)
        assert decided(pair, bots, playing) == expected, case
        assert decided(pair, bots, Roster(playing)) == expected, case
        # A bot listed twice: its first place in arrival order counts, as Waiters keeps it.
        kept = Waiters(sorted(bots, key=lambda w: (w.joined_at, w.bot_id)))
        assert decided(pair, kept, Roster(playing)) == expected, case
        reasons.update(g.reason for g in expected[0])
    # Every rule decided some of them.
    assert set(reasons) == {"rating", "no_better", "overdue", "rematch", "house"}, reasons


def test_waiters_keep_arrival_and_rating_order_over_random_changes() -> None:
    rng = random.Random(11)
    kept = Waiters()
    model: dict[int, Waiter] = {}
    for _ in range(3000):
        bot = rng.randrange(40)
        roll = rng.random()
        if roll < 0.3:
            assert kept.remove(bot) == (model.pop(bot, None) is not None)
        elif roll < 0.5:
            mu = float(rng.randrange(10))  # few values: many ties
            kept.rerate(bot, mu)
            if bot in model:
                old = model[bot]
                model[bot] = Waiter(bot, old.joined_at, mu, old.house)
        else:
            w = Waiter(bot, float(rng.randrange(10)), float(rng.randrange(10)), rng.random() < 0.1)
            assert kept.add(w) == (bot not in model)
            model.setdefault(bot, w)  # already waiting: it keeps its place and rating
        assert list(kept) == sorted(model.values(), key=lambda w: (w.joined_at, w.bot_id))
        assert kept.by_rating() == sorted(model, key=lambda b: (model[b].mu, b))
        assert len(kept) == len(model) and all(kept.get(b) == model[b] for b in model)
        assert (bot in kept) == (bot in model)
