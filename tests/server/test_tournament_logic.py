"""The tournaments' decisions on their own: schedules, Swiss pairings and standings."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, permutations

import pytest

from ply_arena.server.tournaments import swiss
from ply_arena.server.tournaments.schedule import gauntlet, round_robin
from ply_arena.server.tournaments.standings import GameResult, crosstable, game_points, standings
from ply_arena.server.tournaments.swiss import SwissEntrant, SwissError, pair_round, seats_clash


@pytest.mark.parametrize("n", range(2, 10))
@pytest.mark.parametrize("cycles", [1, 2])
def test_round_robin_plays_every_pair_in_both_seats(n: int, cycles: int) -> None:
    names = [f"b{i}" for i in range(n)]
    rounds = round_robin(names, cycles=cycles)
    games = [g for r in rounds for g in r]
    assert Counter(games) == {(a, b): cycles for a in names for b in names if a != b}
    for r in rounds:
        seated = [bot for g in r for bot in g]
        assert len(seated) == len(set(seated))  # nobody twice in a round
        assert len(r) == n // 2
    firsts = Counter(g[0] for g in games)
    seconds = Counter(g[1] for g in games)
    assert all(firsts[b] == seconds[b] == cycles * (n - 1) for b in names)
    assert len(rounds) == cycles * 2 * (n - 1 if n % 2 == 0 else n)


def test_a_three_player_round_robin_plays_every_seat_order_of_every_triple() -> None:
    names = ["a", "b", "c", "d"]
    games = [g for r in round_robin(names, players=3, cycles=2) for g in r]
    expected = Counter(p for t in combinations(names, 3) for p in permutations(t))
    assert Counter(games) == Counter({k: 2 * v for k, v in expected.items()})
    for seat in range(3):
        assert set(Counter(g[seat] for g in games).values()) == {12}


def test_a_gauntlet_meets_the_pool_in_both_seats_and_never_itself() -> None:
    rounds = gauntlet(["x", "y", "z"], ["p", "q"], cycles=2)
    games = Counter(g for r in rounds for g in r)
    for c in "xyz":
        for p in "pq":
            assert games[(c, p)] == games[(p, c)] == 2
    assert all({"x", "y", "z"} & set(g) and {"p", "q"} & set(g) for g in games)
    with pytest.raises(ValueError, match="none of them in the pool"):
        gauntlet(["x", "p"], ["p"])


def _pairings(players: list[SwissEntrant]) -> list[list[tuple[str, str]]]:
    """Every way to pair ``players`` with no rematch and nobody three games off seat balance."""
    if not players:
        return [[]]
    first, rest = players[0], players[1:]
    found = []
    for i, other in enumerate(rest):
        if other.name not in first.opponents and not seats_clash(first, other):
            for tail in _pairings(rest[:i] + rest[i + 1 :]):
                found.append([(first.name, other.name), *tail])
    return found


def _gaps(pairs: list[tuple[str, str]], entrants: dict[str, SwissEntrant]) -> float:
    return sum((entrants[a].points - entrants[b].points) ** 2 for a, b in pairs)


def _swiss(names: list[str], rounds: int, seed: int) -> list[GameResult]:
    """A Swiss tournament with results drawn by hidden strengths; checks each round as paired."""
    rng = random.Random(seed)
    strength = {n: rng.random() for n in names}
    entrants = {n: SwissEntrant(n, seed=i) for i, n in enumerate(names)}
    results: list[GameResult] = []
    for r in range(1, rounds + 1):
        pairs, bye = pair_round(list(entrants.values()))
        playing = [b for p in pairs for b in p] + ([bye] if bye else [])
        assert sorted(playing) == sorted(names)  # everyone plays once, or sits out
        for a, b in pairs:
            assert b not in entrants[a].opponents, f"rematch {a}-{b} in round {r}"
        # Score groups: no pairing of these entrants without rematches has closer scores
        # (the sum of the squared gaps, found here by trying every pairing).
        paired = [entrants[b] for p in pairs for b in p]
        assert _gaps(pairs, entrants) == min(_gaps(m, entrants) for m in _pairings(paired))
        if bye:
            assert not entrants[bye].had_bye
            below = [e for e in entrants.values() if e.points < entrants[bye].points]
            assert all(e.had_bye for e in below)  # the lowest without a bye gets it
            entrants[bye].had_bye = True
            entrants[bye].points += 1
            results.append(GameResult(r, (bye,), None, "bye"))
        for a, b in pairs:
            p = rng.random() * (strength[a] + strength[b])
            payoffs = (1.0, -1.0) if p < strength[a] else (-1.0, 1.0)
            if rng.random() < 0.15:
                payoffs = (0.0, 0.0)
            results.append(GameResult(r, (a, b), payoffs))
            points = game_points(results[-1])
            for seat, bot in enumerate((a, b)):
                e = entrants[bot]
                e.points += points[seat]
                e.opponents.add((b, a)[seat])
                e.first_seat_balance += 1 if seat == 0 else -1
                e.last_seat = seat
    for e in entrants.values():
        assert abs(e.first_seat_balance) <= 2, e
    return results


@pytest.mark.parametrize("seed", range(20))
def test_swiss_pairs_without_rematches_by_score_with_seats_balanced(seed: int) -> None:
    _swiss([f"b{i}" for i in range(8)], rounds=5, seed=seed)
    _swiss([f"b{i}" for i in range(7)], rounds=5, seed=seed)  # a bye each round


def test_swiss_refuses_a_round_that_needs_a_rematch() -> None:
    a = SwissEntrant("a", opponents={"b"})
    b = SwissEntrant("b", opponents={"a"})
    with pytest.raises(SwissError, match="rematch"):
        pair_round([a, b])


def test_points_of_two_and_three_player_games() -> None:
    assert game_points(GameResult(1, ("a", "b"), (1.0, -1.0))) == (1.0, 0.0)
    assert game_points(GameResult(1, ("a", "b"), (0.0, 0.0))) == (0.5, 0.5)
    assert game_points(GameResult(1, ("a", "b", "c"), (-3.0, 3.0, 0.0))) == (0.0, 1.0, 0.5)
    assert game_points(GameResult(1, ("a", "b", "c"), (1.0, 1.0, -2.0))) == (0.75, 0.75, 0.0)
    assert game_points(GameResult(1, ("a", "b"), None, "no_show", absent=(1,))) == (1.0, 0.0)


def test_standings_and_tiebreaks_of_a_worked_example() -> None:
    # Worked by hand: A 2.5, B 1.5, C 1.5, D 0.5.
    results = [
        GameResult(1, ("A", "B"), (1.0, -1.0)),
        GameResult(1, ("C", "D"), (0.0, 0.0)),
        GameResult(2, ("A", "C"), (0.0, 0.0)),
        GameResult(2, ("B", "D"), (1.0, -1.0)),
        GameResult(3, ("D", "A"), (-1.0, 1.0)),
        GameResult(3, ("B", "C"), (0.0, 0.0)),
    ]
    rr = {s.bot: s for s in standings("ABCD", results)}
    assert {b: s.points for b, s in rr.items()} == {"A": 2.5, "B": 1.5, "C": 1.5, "D": 0.5}
    assert {b: s.buchholz for b, s in rr.items()} == {"A": 3.5, "B": 4.5, "C": 4.5, "D": 5.5}
    sb = {b: s.sonneborn_berger for b, s in rr.items()}
    assert sb == {"A": 2.75, "B": 1.25, "C": 2.25, "D": 0.75}
    assert rr["B"].head_to_head == rr["C"].head_to_head == 0.5  # their draw
    assert [s.bot for s in standings("ABCD", results)] == ["A", "C", "B", "D"]  # SB splits
    assert [s.bot for s in standings("ABCD", results, swiss=True)] == ["A", "C", "B", "D"]
    assert (rr["A"].wins, rr["A"].draws, rr["A"].losses) == (2, 1, 0)
    table = crosstable(standings("ABCD", results), results)
    assert table[0] == {"bot": "A", "rank": 1, "points": 2.5,
                        "against": {"B": [1.0], "C": [0.5], "D": [1.0]}}  # fmt: skip


def test_head_to_head_breaks_a_tie_that_sonneborn_berger_leaves() -> None:
    # B and D: 1.5 points each and the same Sonneborn-Berger (1.75); B beat D.
    games = [("A", "B", 1.0), ("A", "C", 1.0), ("A", "D", 0.0), ("B", "C", 0.0),
             ("B", "D", 1.0), ("C", "D", -1.0)]  # fmt: skip
    results = [GameResult(1, (a, b), (x, -x)) for a, b, x in games]
    ordered = standings("ABCD", results)
    rows = {s.bot: s for s in ordered}
    assert rows["B"].points == rows["D"].points == 1.5
    assert rows["B"].sonneborn_berger == rows["D"].sonneborn_berger == 1.75
    assert (rows["B"].head_to_head, rows["D"].head_to_head) == (1.0, 0.0)
    assert [s.bot for s in ordered] == ["A", "B", "D", "C"]


def test_the_nearest_candidates_pair_as_well_as_everyone() -> None:
    # Beyond 65 entrants a round is paired among each entrant's 32 nearest first: on simulated
    # tournaments that must cost no more, in squared score gaps, than the whole graph's best.
    rng = random.Random(7)
    for size in (66, 120, 257):
        entrants = [swiss.SwissEntrant(f"e{i}", seed=i) for i in range(size)]
        for _ in range(5):
            ordered = sorted(entrants, key=lambda e: (-e.points, e.seed, e.name))
            by = {e.name: e for e in entrants}

            def cost(pairs: list[tuple[str, str]], by: dict[str, swiss.SwissEntrant] = by) -> float:
                return sum((by[a].points - by[b].points) ** 2 for a, b in pairs)

            near = swiss._matching(ordered, True, swiss.WINDOWS[0])
            whole = swiss._matching(ordered, True, None)
            assert 2 * len(whole) == size - size % 2
            if 2 * len(near) == 2 * len(whole):
                assert cost(near) <= cost(whole)
            pairs, bye = swiss.pair_round(entrants)
            for a, b in pairs:
                x = rng.random()
                by[a].points += 1.0 if x < 0.45 else 0.0 if x < 0.9 else 0.5
                by[b].points += 0.0 if x < 0.45 else 1.0 if x < 0.9 else 0.5
                by[a].opponents.add(b)
                by[b].opponents.add(a)
                by[a].first_seat_balance += 1
                by[b].first_seat_balance -= 1
            if bye is not None:
                by[bye].points += 1.0
                by[bye].had_bye = True


def test_an_absent_entrant_takes_the_bye_only_if_nobody_present_can() -> None:
    field = [SwissEntrant(n, points=p, seed=i) for i, (n, p) in enumerate(
        [("a", 1.0), ("b", 1.0), ("c", 0.0), ("d", 0.0), ("gone", 0.0)])]  # fmt: skip
    _, bye = pair_round(field)
    assert bye == "gone"  # the lowest placed
    _, bye = pair_round(field, absent={"gone"})
    assert bye == "d"  # the lowest placed of those present
    for e in field:
        e.had_bye = e.name != "gone"
    _, bye = pair_round(field, absent={"gone"})
    assert bye == "gone"  # nobody present can take it any more
