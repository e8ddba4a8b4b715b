"""The bots coming back to a lobby queue, kept between decisions: ``pairing.Roster`` (bots in
rating order) and ``coming_back.ComingBack`` (which bots, updated as matches start and end, bots
join, disconnect and are rated), each checked against the plain computation it replaced."""

from __future__ import annotations

import random
from collections import Counter
from functools import partial

from ply_arena.server.ratings import RatingBook, RatingModel
from ply_arena.server.ratings.ledger import RatingState
from ply_arena.server.referee.coming_back import REJOIN_GRACE_S, ComingBack
from ply_arena.server.referee.lobby import QueueKey
from ply_arena.server.referee.pairing import Params, Player, Roster, Waiter, pair

KEY = QueueKey("tic_tac_toe", 1000, 0, "rated")
OTHER = QueueKey("tic_tac_toe", 5000, 0, "rated")
C4 = QueueKey("connect_four", 1000, 0, "rated")


# --- Roster ------------------------------------------------------------------------------------


def test_a_roster_keeps_bots_in_rating_order_ids_breaking_ties() -> None:
    roster = Roster([Player(3, 20.0), Player(1, 25.0), Player(2, 20.0)])
    assert list(roster) == [2, 3, 1]
    roster.add(2, 30.0)  # re-rated: moves, still once
    assert list(roster) == [3, 1, 2] and len(roster) == 3 and roster.mu(2) == 30.0
    assert roster.remove(3) and not roster.remove(3)
    assert list(roster) == [1, 2] and 3 not in roster and 1 in roster


def test_within_includes_both_ends() -> None:
    roster = Roster([Player(1, 10.0), Player(2, 13.0), Player(3, 16.0), Player(4, 16.0)])
    assert roster.within(13.0, 16.0) == [(13.0, 2), (16.0, 3), (16.0, 4)]
    assert roster.within(13.5, 15.9) == []
    assert roster.within(0.0, 10.0) == [(10.0, 1)]
    assert roster.within(16.0, 99.0) == [(16.0, 3), (16.0, 4)]


def test_a_roster_matches_a_sorted_list_over_random_changes() -> None:
    rng = random.Random(5)
    roster = Roster()
    model: dict[int, float] = {}
    for _ in range(3000):
        bot = rng.randrange(40)
        if rng.random() < 0.3:
            assert roster.remove(bot) == (model.pop(bot, None) is not None)
        else:
            mu = float(rng.randrange(10))  # few values: many ties
            roster.add(bot, mu)
            model[bot] = mu
        ordered = sorted(model, key=lambda b: (model[b], b))
        assert list(roster) == ordered
        lo = rng.uniform(-1, 10)
        hi = lo + rng.uniform(0, 4)
        assert roster.within(lo, hi) == [(model[b], b) for b in ordered if lo <= model[b] <= hi]


def test_pair_decides_the_same_from_a_roster_as_from_a_list() -> None:
    for case in range(200):
        rng = random.Random(case)
        waiting = [
            Waiter(i, rng.uniform(0, 12), rng.uniform(0, 40)) for i in range(rng.randrange(20))
        ]
        playing = [Player(100 + i, rng.uniform(0, 40)) for i in range(rng.randrange(12))]
        # Some of the bots coming back are waiting already (pair skips those).
        playing += [Player(w.bot_id, w.mu) for w in waiting if rng.random() < 0.2]
        last = {w.bot_id: frozenset({rng.randrange(120)}) for w in waiting if rng.random() < 0.5}
        params = Params(group_size=rng.choice([2, 3]))
        now = rng.uniform(0, 15)

        decide = partial(pair, waiting, now=now, params=params, last_opponents=last)
        roster = Roster(playing)
        before = list(roster)
        from_roster = decide(rng=random.Random(case), playing=roster)
        assert from_roster == decide(rng=random.Random(case), playing=playing), case
        assert list(roster) == before  # read, never changed


# --- ComingBack --------------------------------------------------------------------------------


def test_a_bot_comes_back_while_it_plays_and_for_the_grace_after() -> None:
    assert REJOIN_GRACE_S == 1.0  # docs/server.md: "ended in the last second"
    mu = {1: 20.0, 2: 30.0}
    back = ComingBack(lambda b, g: mu[b])
    back.started(KEY, (1, 2))
    assert list(back.roster(KEY, 0.0)) == [1, 2]
    assert back.bots(OTHER) == set()
    back.ended(KEY, (1, 2), at=10.0)
    assert back.bots(KEY) == {1, 2}
    back.joined(KEY, 1)  # back in the queue: waiting, not coming
    assert list(back.roster(KEY, 10.5)) == [2]
    assert list(back.roster(KEY, 10.0 + REJOIN_GRACE_S)) == []  # the grace is over
    assert back._rosters == {} and back._returning == {} and back._playing == {}


def test_a_bot_playing_two_matches_from_a_queue_comes_back_until_both_end() -> None:
    back = ComingBack(lambda b, g: 25.0)
    back.started(KEY, (1, 2))
    back.started(KEY, (1, 3))
    back.ended(KEY, (1, 2), at=0.0)
    back.joined(KEY, 1)  # it joins again while its other match goes on
    assert back.bots(KEY) == {1, 2, 3}  # 1 still plays, 2 is on its way back
    assert set(back.roster(KEY, 5.0)) == {1, 3}  # 2's grace is over
    back.ended(KEY, (1, 3), at=6.0)
    assert set(back.roster(KEY, 6.5)) == {1, 3}


def test_a_disconnected_bot_is_not_on_its_way_back_but_a_playing_one_still_is() -> None:
    back = ComingBack(lambda b, g: 25.0)
    back.started(KEY, (1, 2))
    back.started(OTHER, (3, 4))
    back.ended(KEY, (1, 2), at=0.0)
    back.disconnected(1)  # returning: gone
    back.disconnected(3)  # playing: may reconnect to its match
    assert set(back.roster(KEY, 0.1)) == {2}
    assert set(back.roster(OTHER, 0.1)) == {3, 4}


def test_a_rating_change_moves_the_bot_in_every_queue_of_that_game_only() -> None:
    book = RatingBook(RatingModel())
    book.set(1, "tic_tac_toe", (20.0, 5.0))
    book.set(2, "tic_tac_toe", (30.0, 5.0))
    book.set(1, "connect_four", (10.0, 5.0))
    back = ComingBack(book.mu)
    book.watch(back.rerated)
    back.started(KEY, (1, 2))
    back.started(OTHER, (1,))
    back.started(C4, (1,))
    assert list(back.roster(KEY, 0.0)) == [1, 2]
    book.confirm([RatingState(1, "tic_tac_toe", 35.0, 4.0)])  # rated after a commit
    assert list(back.roster(KEY, 0.0)) == [2, 1] and back.roster(KEY, 0.0).mu(1) == 35.0
    assert back.roster(OTHER, 0.0).mu(1) == 35.0
    assert back.roster(C4, 0.0).mu(1) == 10.0
    book.set(2, "tic_tac_toe", (40.0, 5.0))
    assert list(back.roster(KEY, 0.0)) == [1, 2]


def test_the_roster_matches_the_plain_computation_over_random_events() -> None:
    """The roster against what each decision used to compute from scratch: every bot playing a
    match from the queue, and every bot whose match from it ended within the grace, is still
    connected and is not waiting, each at its current rating."""
    rng = random.Random(11)
    mu: dict[int, float] = {}
    book = RatingBook(RatingModel())
    back = ComingBack(book.mu)
    book.watch(back.rerated)
    playing: dict[QueueKey, Counter[int]] = {}
    ended_at: dict[QueueKey, dict[int, float]] = {}
    matches: list[tuple[QueueKey, tuple[int, ...]]] = []
    now = 0.0
    for step in range(4000):
        now += rng.uniform(0, 0.3)
        event = rng.random()
        key = rng.choice([KEY, OTHER, C4])
        bot = rng.randrange(1, 25)
        if event < 0.3:
            bots = tuple(rng.sample(range(1, 25), 2))
            back.started(key, bots)
            playing.setdefault(key, Counter()).update(bots)
            matches.append((key, bots))
        elif event < 0.55 and matches:
            key, bots = matches.pop(rng.randrange(len(matches)))
            back.ended(key, bots, now)
            playing[key].subtract(bots)
            ended_at.setdefault(key, {}).update((b, now) for b in bots)
        elif event < 0.7:
            back.joined(key, bot)
            ended_at.get(key, {}).pop(bot, None)
        elif event < 0.8:
            back.disconnected(bot)
            for returning in ended_at.values():
                returning.pop(bot, None)
        else:
            mu[bot] = rng.uniform(0, 50)
            book.set(bot, key.game, (mu[bot], 5.0))
        for q in (KEY, OTHER, C4):
            expected = {b for b, n in playing.get(q, Counter()).items() if n > 0}
            expected |= {b for b, t in ended_at.get(q, {}).items() if now - t < REJOIN_GRACE_S}
            roster = back.roster(q, now)
            assert set(roster) == expected, step
            assert all(roster.mu(b) == book.mu(b, q.game) for b in roster), step
    assert len(matches) > 10  # the walk reached a steady state with matches running
