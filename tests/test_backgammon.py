"""Backgammon rules: the opening counts of oracles.md, every special rule, notation and JSON."""

from __future__ import annotations

import json
import math
import random
from typing import Any, cast

import pytest

from ply_arena import games
from ply_arena.games import CHANCE, IllegalMoveError, InvalidMoveError
from ply_arena.games.backgammon import (
    BAR,
    OFF,
    OPENING_ROLLS,
    ROLLS,
    START,
    Backgammon,
    BackgammonState,
    Board,
    _position_after,
)

GAME = cast(Backgammon, games.get("backgammon"))

# oracles.md: distinct resulting positions for each opening roll, and doubles from the start.
OPENING_PLAYS = {
    (2, 1): 15, (3, 1): 16, (4, 1): 14, (5, 1): 8, (6, 1): 10, (3, 2): 17, (4, 2): 18,
    (5, 2): 8, (6, 2): 14, (4, 3): 17, (5, 3): 9, (6, 3): 14, (5, 4): 9, (6, 4): 14, (6, 5): 7,
}  # fmt: skip
DOUBLES_FROM_START = {1: 42, 2: 75, 3: 73, 4: 52, 5: 4, 6: 11}


def position(
    mover: dict[Any, int],
    other: dict[Any, int],
    dice: tuple[int, int] | None,
    turn: int = 0,
) -> BackgammonState:
    """A state from both sides' checkers in their own numbering ({point or 'bar': count})."""
    boards = []
    for side in (mover, other):
        b = [0] * 26
        for p, n in side.items():
            b[BAR if p == "bar" else p] += n
        b[OFF] = 15 - sum(b)
        boards.append(b)
    white, black = boards if turn == 0 else boards[::-1]
    data = {
        "points": [white[p] - black[25 - p] for p in range(1, 25)],
        "bar": [white[BAR], black[BAR]],
        "off": [white[OFF], black[OFF]],
        "player": turn if dice is not None else CHANCE,
        "turn": turn,
        "dice": None if dice is None else list(dice),
        "opening": False,
    }
    return GAME.state_from_json(data)


def texts(s: BackgammonState) -> set[str]:
    return {GAME.format_move(s, m) for m in s.actions()}


def after(s: BackgammonState, text: str) -> BackgammonState:
    return s.result(GAME.parse_move(s, text))


# --- brute force: every order of every die, positions compared, the rules written out again ---


def brute_force_positions(me: Board, op: Board, hi: int, lo: int) -> set[tuple[Board, Board]]:
    orders = [(hi,) * 4] if hi == lo else [(hi, lo), (lo, hi)]
    found: dict[tuple[Board, Board], tuple[int, set[int]]] = {}

    def target(m: list[int], o: list[int], f: int, d: int) -> int | None:
        if m[BAR] and f != BAR:
            return None
        t = f - d
        if t >= 1:
            return t if o[25 - t] < 2 else None
        if any(m[7:26]):
            return None  # bearing off needs all fifteen at home
        return OFF if t == 0 or not any(m[f + 1 : 7]) else None

    def walk(m: list[int], o: list[int], dice: tuple[int, ...], used: tuple[int, ...]) -> None:
        key = (tuple(m), tuple(o))
        n, firsts = found.get(key, (-1, set()))
        if len(used) > n:
            found[key] = (len(used), {used[0]} if used else set())
        elif len(used) == n and used:
            firsts.add(used[0])
        if not dice:
            return
        for f in range(25, 0, -1):
            t = target(m, o, f, dice[0]) if m[f] else None
            if t is not None:
                m2, o2 = list(m), list(o)
                m2[f] -= 1
                m2[t] += 1
                if t and o2[25 - t] == 1:
                    o2[25 - t], o2[BAR] = 0, o2[BAR] + 1
                walk(m2, o2, dice[1:], (*used, dice[0]))

    for dice in orders:
        walk(list(me), list(op), dice, ())
    most = max(n for n, _ in found.values())
    best = {k: firsts for k, (n, firsts) in found.items() if n == most}
    if most == 1 and hi != lo and any(hi in f for f in best.values()):
        best = {k: f for k, f in best.items() if hi in f}  # the larger die when only one fits
    return set(best)


def positions_of(s: BackgammonState) -> list[tuple[Board, Board]]:
    return [_position_after(s.me, s.op, p) for p in s.actions()]


def random_states(seed: int, games_: int) -> list[BackgammonState]:
    rng = random.Random(seed)
    out = []
    for _ in range(games_):
        s = GAME.initial_state()
        while not s.is_terminal():
            if s.player == CHANCE:
                outcomes, probs = zip(*s.chance_outcomes(), strict=True)
                s = s.result(rng.choices(outcomes, probs)[0])
            else:
                out.append(s)
                s = s.result(rng.choice(s.actions()))
    return out


# --- the oracle counts ------------------------------------------------------------------------


@pytest.mark.parametrize("roll", sorted(OPENING_PLAYS))
def test_opening_roll_counts(roll: tuple[int, int]) -> None:
    hi, lo = roll
    for outcome, seat in (((hi, lo), 0), ((lo, hi), 1)):  # white's die first
        s = GAME.initial_state().result(outcome)
        assert s.player == seat and s.dice == roll
        assert len(s.actions()) == OPENING_PLAYS[roll]
        assert len(set(positions_of(s))) == OPENING_PLAYS[roll]


@pytest.mark.parametrize("die", sorted(DOUBLES_FROM_START))
def test_doubles_from_the_start(die: int) -> None:
    s = position(dict(enumerate(START)), dict(enumerate(START)), (die, die))
    assert len(s.actions()) == DOUBLES_FROM_START[die]
    assert len(set(positions_of(s))) == DOUBLES_FROM_START[die]


def test_plays_match_a_brute_force_enumeration_on_random_positions() -> None:
    """One play per distinct position, and exactly the positions the rules allow, for every roll."""
    states = random_states(seed=11, games_=6)[::2]
    assert len(states) > 60
    for s in states:
        for hi, lo in ROLLS:
            t = GAME.state_from_json({**GAME.state_to_json(s), "dice": [hi, lo]})
            got = positions_of(t)
            assert len(got) == len(set(got)), (GAME.render(t), t.actions())
            assert set(got) == brute_force_positions(t.me, t.op, hi, lo), GAME.render(t)


# --- chance nodes -----------------------------------------------------------------------------


def test_opening_chance_node() -> None:
    s = GAME.initial_state()
    assert s.player == CHANCE and s.opening and not s.is_terminal()
    outcomes = s.chance_outcomes()
    assert len(outcomes) == 30 and tuple(o for o, _ in outcomes) == s.actions()
    assert all(o[0] != o[1] for o, _ in outcomes)  # type: ignore[index]
    assert math.isclose(sum(p for _, p in outcomes), 1.0)
    assert all(math.isclose(p, 1 / 30) for _, p in outcomes)
    assert set(OPENING_ROLLS) == {o for o, _ in outcomes}
    black_starts = s.result((2, 6))  # white rolled 2, black 6: black plays 6-2
    assert black_starts.player == 1 and black_starts.dice == (6, 2)
    with pytest.raises(ValueError):
        s.result((3, 3))


def test_roll_chance_node() -> None:
    s = after(GAME.initial_state().result((3, 1)), "8/5 6/5")
    assert s.player == CHANCE and s.mover == 1 and not s.opening
    outcomes = dict(s.chance_outcomes())
    assert len(outcomes) == 21 and list(outcomes) == list(ROLLS) == list(s.actions())
    assert math.isclose(sum(outcomes.values()), 1.0)
    assert math.isclose(outcomes[(4, 4)], 1 / 36) and math.isclose(outcomes[(4, 2)], 2 / 36)
    rolled = s.result((5, 2))
    assert rolled.player == 1 and rolled.dice == (5, 2) and rolled.chance_outcomes() == []


# --- the rules --------------------------------------------------------------------------------


def test_checkers_on_the_bar_enter_first() -> None:
    s = position({"bar": 1, 13: 5, 6: 9}, {5: 15}, (4, 2))  # their 5 = our 20
    assert all(play[0][0] == BAR for play in s.actions())
    assert texts(s) == {"bar/21 13/11", "bar/21 6/4", "bar/19", "bar/23 13/9", "bar/23 6/2"}
    # Two on the bar with both points open: both dice enter, nothing else.
    s = position({"bar": 2, 13: 5, 6: 8}, {5: 15}, (4, 2))
    assert texts(s) == {"bar/23 bar/21"}
    # One entry point blocked: only the open one, and the other die is lost.
    s = position({"bar": 2, 13: 5, 6: 8}, {4: 2, 5: 13}, (4, 2))  # their 4 = our 21
    assert texts(s) == {"bar/23"}
    # Both blocked: the player passes.
    s = position({"bar": 1, 13: 5, 6: 9}, {4: 2, 2: 2, 5: 11}, (4, 2))
    assert s.actions() == ((),) and texts(s) == {"pass"}
    # Doubles: enter as many as there are on the bar, then move on.
    s = position({"bar": 3, 13: 5, 6: 7}, {5: 15}, (3, 3))
    assert all(p[:3] == ((BAR, 22),) * 3 for p in s.actions())
    assert texts(s) == {"bar/22(3) 6/3", "bar/22(3) 13/10", "bar/22(2) bar/19"}
    s = position({"bar": 3, 13: 5, 6: 7}, {3: 2, 5: 13}, (3, 3))  # our 22 blocked
    assert s.actions() == ((),)


def test_a_blot_is_hit_and_goes_to_the_bar() -> None:
    s = position({13: 5, 6: 10}, {20: 1, 6: 14}, (6, 1))  # their 20 = our 5
    assert "13/7 6/5*" in texts(s) and "13/7*" not in texts(s)
    child = after(s, "13/7 6/5")  # the star is optional on input
    assert child.player == CHANCE and child.mover == 1
    assert child.checkers(1)[BAR] == 1 and child.checkers(1)[20] == 0
    assert child.checkers(0)[5] == 1 and child.checkers(0)[7] == 1
    assert s.checkers(1)[BAR] == 0  # s itself is unchanged
    # Made points (two or more) cannot be landed on.
    s = position({13: 5, 6: 10}, {20: 2, 6: 13}, (1, 1))
    assert all(t != 5 for play in s.actions() for _, t in play)


def test_a_hit_on_the_way_is_a_different_play() -> None:
    # 6-5 from our 24 through 18 (their 7, a blot) or through 19 (empty): two positions.
    s = position({24: 1, 6: 14}, {7: 1, 2: 14}, (6, 5))
    assert {"24/18*/13", "24/13"} <= texts(s)
    assert GAME.format_move(s, GAME.parse_move(s, "24/19/13")) == "24/13"
    assert GAME.format_move(s, GAME.parse_move(s, "24/13")) == "24/13"
    assert GAME.format_move(s, GAME.parse_move(s, "24/18/13")) == "24/18*/13"
    assert GAME.format_move(s, GAME.parse_move(s, "24/18 18/13")) == "24/18*/13"


def test_bearing_off() -> None:
    far = {12: 15}  # the opponent, out of the way on our 13
    s = position({6: 2, 4: 3, 1: 10}, far, (6, 4))
    assert texts(s) == {"6/off 4/off", "6/2 6/off"}
    # A higher die bears off from the highest occupied point only.
    s = position({4: 1, 2: 1}, far, (6, 5))
    assert texts(s) == {"4/off 2/off"}
    s = position({5: 1, 3: 1}, far, (6, 2))
    assert texts(s) == {"5/off 3/1", "5/off"}  # the second: 5/3 3/off, one left on 3
    assert after(s, "5/3 3/off").checkers(0)[3] == 1
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(s, "5/off 3/off")  # the 2 cannot bear off from 3
    s = position({5: 2, 3: 1}, far, (4, 4))
    assert texts(s) == {"5/1 5/off 3/off"}  # 5/1 5/1, then 3/off and 1/off with the 4
    # No bearing off while a checker is outside the home board.
    s = position({7: 1, 6: 2, 1: 12}, far, (6, 1))
    assert texts(s) == {"7/1 6/5", "7/off"}  # 7/off = 7/6 6/off = 7/1 1/off


def test_must_play_both_dice_when_possible() -> None:
    # Our 11 blocked: 13/11 fails, 13/9 alone would waste the 2; 13/9/7 plays both.
    s = position({13: 1, 1: 14}, {14: 2, 6: 13}, (4, 2))
    assert texts(s) == {"13/7"}
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(s, "13/9")


def test_only_one_die_fits_the_larger_is_played() -> None:
    s = position({13: 1, 1: 14}, {18: 2, 6: 13}, (4, 2))  # our 7 blocked: no 13/7
    assert texts(s) == {"13/9"}
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(s, "13/11")
    # The larger cannot be played at all: the smaller one is.
    s = position({13: 1, 1: 14}, {18: 2, 16: 2, 6: 11}, (4, 2))  # our 7 and 9 blocked
    assert texts(s) == {"13/11"}


def test_doubles_play_as_many_as_possible() -> None:
    s = position({13: 1, 2: 14}, {24: 2, 6: 13}, (4, 4))  # our 1 blocked: 13/9/5 and stop
    assert texts(s) == {"13/5"}
    assert all(len(p) == 2 for p in s.actions())


def test_pass_when_nothing_can_move() -> None:
    s = position({"bar": 1, 6: 14}, {6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 5}, (3, 3))
    assert s.actions() == ((),) and GAME.format_move(s, ()) == "pass"
    assert GAME.parse_move(s, "pass") == ()
    child = s.result(())
    assert child.player == CHANCE and child.mover == 1 and child.me == s.op
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(GAME.initial_state().result((3, 1)), "pass")


@pytest.mark.parametrize(
    ("loser", "payoff"),
    [
        ({6: 10, 1: 4}, 1.0),  # bore off one: single game
        ({6: 15}, 2.0),  # none off: gammon
        ({6: 14, 20: 1}, 3.0),  # none off and one in the winner's home board: backgammon
        ({6: 14, "bar": 1}, 3.0),  # ... or on the bar
        ({6: 14, 18: 1}, 2.0),  # just outside the winner's home board: gammon
    ],
)
def test_payoffs(loser: dict[Any, int], payoff: float) -> None:
    for turn in (0, 1):
        s = position({2: 1}, loser, (2, 1), turn=turn)
        end = after(s, "2/off")
        assert end.is_terminal() and end.actions() == () and end.chance_outcomes() == []
        expected = (payoff, -payoff) if turn == 0 else (-payoff, payoff)
        assert end.returns() == expected
        assert end.utility(turn) == payoff and end.utility(1 - turn) == -payoff
        again = GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(end))))
        assert again == end and again.returns() == expected


def test_random_playouts_end_with_a_legal_payoff() -> None:
    rng = random.Random(5)
    for _ in range(20):
        s = GAME.initial_state()
        while not s.is_terminal():
            if s.player == CHANCE:
                outcomes, probs = zip(*s.chance_outcomes(), strict=True)
                s = s.result(rng.choices(outcomes, probs)[0])
            else:
                s = s.result(rng.choice(s.actions()))
        r = s.returns()
        assert r[0] == -r[1] and abs(r[0]) in (1, 2, 3)
        winner = 0 if r[0] > 0 else 1
        assert s.checkers(winner)[OFF] == 15 and s.checkers(1 - winner)[OFF] < 15


# --- notation ---------------------------------------------------------------------------------


def test_every_legal_play_round_trips_through_notation() -> None:
    for s in random_states(seed=3, games_=3):
        for move in s.actions():
            text = GAME.format_move(s, move)
            assert GAME.parse_move(s, text) == move, text


def test_other_spellings_of_a_play() -> None:
    s = GAME.initial_state().result((3, 1))
    play = GAME.parse_move(s, "8/5 6/5")
    for text in ("6/5 8/5", "8/5* 6/5", " 8/5  6/5 ", "8/5,6/5"):
        assert GAME.parse_move(s, text) == play
    s = GAME.initial_state().result((6, 5))
    run = GAME.parse_move(s, "24/13")
    assert GAME.format_move(s, run) == "24/13"
    for text in ("24/18/13", "24/18 18/13", "18/13 24/18"):
        assert GAME.parse_move(s, text) == run
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(s, "24/19/13")  # their 6-point blocks our 19
    s = position(dict(enumerate(START)), dict(enumerate(START)), (3, 3))
    two = GAME.parse_move(s, "8/5(2) 6/3(2)")
    assert two == GAME.parse_move(s, "8/5 8/5 6/3 6/3") == GAME.parse_move(s, "6/3(2) 8/5(2)")
    assert GAME.format_move(s, two) == "8/5(2) 6/3(2)"
    assert GAME.parse_move(s, "24/21/18/15 13/10") == GAME.parse_move(s, "24/15 13/10")
    s = position({"bar": 1, 6: 14}, {5: 15}, (6, 3))
    assert GAME.format_move(s, GAME.parse_move(s, "bar/19 19/16")) == "bar/16"
    assert GAME.format_move(s, GAME.parse_move(s, "BAR/22 22/16")) == "bar/16"
    s = position({6: 2, 4: 3, 1: 10}, {12: 15}, (6, 4))
    assert GAME.format_move(s, GAME.parse_move(s, "6/OFF 4/off")) == "6/off 4/off"


def test_canonical_format() -> None:
    s = GAME.initial_state().result((6, 5))
    assert texts(s) == {"8/3 8/2", "13/7 8/3", "13/8 13/7", "24/18 8/3", "24/18 13/8", "13/2",
                        "24/13"}  # fmt: skip
    s = position(dict(enumerate(START)), dict(enumerate(START)), (6, 6))
    assert "24/18(2) 13/7(2)" in texts(s)
    # A play is a tuple of single-die steps, descending, from the mover's point of view.
    play = GAME.parse_move(s, "13/7(2) 24/18(2)")
    assert play == ((24, 18), (24, 18), (13, 7), (13, 7))


def test_unparsable_text_is_an_invalid_move() -> None:
    s = GAME.initial_state().result((3, 1))
    for bad in ("", "hello", "8-5 6-5", "25/22", "8/5 6/7", "off/3", "3/bar", "8/5(9)", "24/0"):
        with pytest.raises(InvalidMoveError) as info:
            GAME.parse_move(s, bad)
        assert "expected" in str(info.value)


def test_illegal_plays_list_the_legal_ones() -> None:
    s = GAME.initial_state().result((3, 1))
    for bad in ("8/5", "24/21 24/21", "8/5 6/5 13/10", "6/3 6/5 6/4", "13/8"):
        with pytest.raises(IllegalMoveError) as info:
            GAME.parse_move(s, bad)
        assert "8/5 6/5" in str(info.value)
    with pytest.raises(ValueError, match="not a legal"):
        s.result(((8, 5),))


def test_ambiguous_route_asks_for_the_intermediate_point() -> None:
    # Both routes hit a blot (their 7 and 6 = our 18 and 19): "24/13" could be either.
    s = position({24: 1, 6: 14}, {7: 1, 6: 1, 5: 13}, (6, 5))
    assert {"24/18*/13", "24/19*/13"} <= texts(s)
    with pytest.raises(IllegalMoveError, match="ambiguous"):
        GAME.parse_move(s, "24/13")


def test_chance_outcomes_have_notation() -> None:
    s = GAME.initial_state()
    assert GAME.format_move(s, (2, 6)) == "2-6"
    assert GAME.parse_move(s, "2-6") == (2, 6)
    s = after(GAME.initial_state().result((3, 1)), "8/5 6/5")
    assert GAME.parse_move(s, "2-6") == (6, 2) and GAME.format_move(s, (6, 2)) == "6-2"
    with pytest.raises(InvalidMoveError):
        GAME.parse_move(s, "7-1")


# --- state, JSON, helpers ---------------------------------------------------------------------


def test_json_round_trip_and_shape() -> None:
    s0 = GAME.initial_state()
    data = GAME.state_to_json(s0)
    assert data == {
        "points": [-2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2],
        "bar": [0, 0], "off": [0, 0], "player": -1, "turn": None, "dice": None, "opening": True,
    }  # fmt: skip
    for s in random_states(seed=9, games_=2):
        for t in (s, s.result(s.actions()[0])):
            d = json.loads(json.dumps(GAME.state_to_json(t)))
            again = GAME.state_from_json(d)
            assert again == t and hash(again) == hash(t) and again.actions() == t.actions()


def test_malformed_json_is_refused() -> None:
    good = GAME.state_to_json(GAME.initial_state().result((3, 1)))
    bad_cases: list[dict[str, Any]] = [
        {},
        {**good, "points": [0] * 24},  # checkers missing
        {**good, "points": good["points"][:23]},
        {**good, "bar": [1, 0]},  # 16 white checkers
        {**good, "off": [-1, 1]},
        {**good, "dice": [1, 3]},  # [high, low]
        {**good, "dice": [7, 1]},
        {**good, "player": 2},
        {**good, "player": 1},  # player must equal turn at a decision node
        {**good, "player": -1},  # a chance node has no dice
        {**good, "turn": "white"},
        {**good, "opening": "no"},
        {**good, "opening": True},
    ]
    for bad in bad_cases:
        with pytest.raises(ValueError, match="backgammon JSON"):
            GAME.state_from_json(bad)


def test_equality_and_immutability() -> None:
    a = GAME.initial_state().result((3, 1))
    b = GAME.initial_state().result((3, 1))
    assert a == b and hash(a) == hash(b) and a != GAME.initial_state().result((1, 3))
    assert a != GAME.state_from_json({**GAME.state_to_json(a), "dice": [3, 2]})
    before = GAME.state_to_json(a)
    for m in a.actions():
        a.result(m)
    assert GAME.state_to_json(a) == before


def test_evaluation_helpers() -> None:
    s = GAME.initial_state()
    for seat in (0, 1):
        assert s.checkers(seat) == START
        assert s.pip_count(seat) == 167 and s.blots(seat) == 0 and s.made_points(seat) == 4
    t = after(s.result((3, 1)), "24/21 6/5")
    assert t.pip_count(0) == 163 and t.blots(0) == 3 and t.made_points(0) == 3
    assert t.pip_count(1) == 167
    assert sum(t.points()) == 0  # both sides 15 on the board, opposite signs


def test_render() -> None:
    s = GAME.initial_state().result((3, 1))
    text = GAME.render(s)
    assert "white to play 3-1" in text and "2X" in text and "5O" in text
    assert "opening" in GAME.render(GAME.initial_state())


def test_play_values_are_canonical_tuples() -> None:
    s = GAME.initial_state().result((4, 2))
    for play in s.actions():
        assert isinstance(play, tuple) and all(isinstance(st, tuple) for st in play)
        assert list(play) == sorted(play, reverse=True)
    assert len({p for p in s.actions()}) == len(s.actions())
