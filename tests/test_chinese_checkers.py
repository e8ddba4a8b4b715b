"""Chinese checkers rules against the known counts (shared/data/oracles.md) and a plain search."""

from __future__ import annotations

import json
import random

import pytest

from ply_arena import games
from ply_arena.games import IllegalMoveError, InvalidMoveError
from ply_arena.games.chinese_checkers import (
    DIRECTION_NAMES,
    DIRECTIONS,
    DISTANCE,
    HOLE_NAMES,
    HOLES,
    HOME,
    JUMPS,
    MAX_PLIES,
    NEIGHBOURS,
    PASS,
    POINTS,
    STAR,
    TARGET,
    ChineseCheckers,
    ChineseCheckersState,
    distance_to_goal,
)

_registered = games.get("chinese_checkers")
assert isinstance(_registered, ChineseCheckers)
GAME: ChineseCheckers = _registered
HOLE = {name: h for h, name in HOLE_NAMES.items()}


def names(bits: int) -> list[str]:
    return sorted(HOLE_NAMES[h] for h in HOLES if bits >> h & 1)


def go(name: str, direction: str, steps: int = 1) -> str:
    """The hole ``steps`` holes from ``name`` in ``direction`` (E, W, SE, NW, SW, NE)."""
    h = HOLE[name] + steps * DIRECTIONS[DIRECTION_NAMES.index(direction)]
    assert STAR >> h & 1, "walked off the board"
    return HOLE_NAMES[h]


def position(
    seats: list[list[str]], player: int = 0, ply: int = 0, game: ChineseCheckers = GAME
) -> ChineseCheckersState:
    """A state with the given pieces; seats with fewer than ten are topped up from their home."""
    taken = {h for seat in seats for h in seat}
    full = []
    for seat, given in enumerate(seats):
        spare = [n for n in names(HOME[seat]) if n not in taken]
        full.append(given + spare[: 10 - len(given)])
        taken.update(full[-1])
    return game.state_from_json({"pieces": full, "player": player, "ply": ply})


def moves_of(state: ChineseCheckersState, origin: str) -> set[str]:
    texts = [GAME.format_move(state, m) for m in state.actions()]
    return {t.split("-")[1] for t in texts if t.startswith(origin + "-")}


def plain_moves(state: ChineseCheckersState) -> set[tuple[str, str]]:
    """The rules read literally: steps, and depth-first jump chains over simple paths."""
    mine, occ = state.pieces(state.player), state.occupied
    found: set[tuple[str, str]] = set()
    for origin in HOLES:
        if not mine >> origin & 1:
            continue
        for n in NEIGHBOURS[origin]:
            if n is not None and not occ >> n & 1:
                found.add((HOLE_NAMES[origin], HOLE_NAMES[n]))
        lifted = occ ^ (1 << origin)

        def chain(
            here: int, visited: frozenset[int], origin: int = origin, lifted: int = lifted
        ) -> None:
            for over, land in JUMPS[here]:
                if lifted >> over & 1 and not lifted >> land & 1 and land not in visited:
                    found.add((HOLE_NAMES[origin], HOLE_NAMES[land]))
                    chain(land, visited | {land})

        chain(origin, frozenset({origin}))
    return found


# --- the board --------------------------------------------------------------------------------


def test_board_has_121_holes_six_points_of_ten_and_symmetric_neighbours() -> None:
    assert len(HOLES) == 121 == STAR.bit_count()
    assert all(p.bit_count() == 10 for p in POINTS)
    assert sum(POINTS).bit_count() == 60  # disjoint
    assert (STAR & ~sum(POINTS)).bit_count() == 61  # the central hexagon
    for h in HOLES:
        for n in NEIGHBOURS[h]:
            if n is not None:
                assert h in NEIGHBOURS[n]
    assert sum(n is not None for h in HOLES for n in NEIGHBOURS[h]) == 2 * 312
    assert names(HOME[0]) == sorted(["a1", "b1", "b2", "c1", "c2", "c3", "d1", "d2", "d3", "d4"])
    assert names(TARGET[0]) == sorted(["n1", "n2", "n3", "n4", "o1", "o2", "o3", "p1", "p2", "q1"])
    assert "e1" in names(TARGET[1]) and "m13" in names(HOME[1])
    assert "e13" in names(TARGET[2]) and "m1" in names(HOME[2])
    assert go("i5", "E") == "i6" and go("i5", "SE") == "j6" and go("i5", "NW") == "h5"


def test_distance_tables_make_the_target_the_ten_nearest_holes() -> None:
    for seat in range(3):
        at_target = sorted(DISTANCE[seat][h] for h in HOLES if TARGET[seat] >> h & 1)
        assert at_target == [0, 1, 1, 2, 2, 2, 3, 3, 3, 3]
        assert min(DISTANCE[seat][h] for h in HOLES if not TARGET[seat] >> h & 1) == 4
    assert distance_to_goal(GAME.initial_state()) == (120, 120, 120)


# --- move generation ----------------------------------------------------------------------------


def test_14_opening_moves() -> None:
    s = GAME.initial_state()
    texts = [GAME.format_move(s, m) for m in s.actions()]
    assert len(texts) == len(set(texts)) == 14
    assert sorted(texts) == sorted(
        ["d1-e5", "d1-e6", "d2-e6", "d2-e7", "d3-e7", "d3-e8", "d4-e8", "d4-e9",
         "c1-e5", "c1-e7", "c2-e6", "c2-e8", "c3-e7", "c3-e9"]
    )  # fmt: skip


def test_distinct_positions_after_1_2_3_turns() -> None:
    layer = {GAME.initial_state()}
    counts = []
    for _ in range(3):
        layer = {s.result(m) for s in layer for m in s.actions()}
        counts.append(len(layer))
    assert counts == [14, 196, 2744]


def test_moves_match_the_rules_read_literally_over_random_games() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(4):
        s = GAME.initial_state()
        for _ in range(250):
            moves = s.actions()
            texts = [GAME.format_move(s, m) for m in moves]
            assert len(set(texts)) == len(texts), "a move is listed once, however many chains"
            assert {tuple(t.split("-")) for t in texts} == plain_moves(s)
            checked += 1
            s = s.result(rng.choice(moves))
    assert checked == 1000


def test_moves_match_the_rules_read_literally_on_random_boards() -> None:
    # Boards no game reaches quickly: the pieces anywhere on the star, so every hole (the rim
    # included) is met with crowded and sparse surroundings, and long, branching chains occur.
    rng = random.Random(13)
    longest = 0
    for _ in range(300):
        holes = [HOLE_NAMES[h] for h in rng.sample(HOLES, 30)]
        s = GAME.state_from_json(
            {"pieces": [holes[:10], holes[10:20], holes[20:]], "player": rng.randrange(3)}
        )
        moves = s.actions()
        texts = [GAME.format_move(s, m) for m in moves]
        assert len(set(moves)) == len(moves)
        assert {tuple(t.split("-")) for t in texts} == plain_moves(s)
        longest = max(longest, len(texts))
    assert longest > 60


def test_a_chain_of_jumps_is_one_move_and_may_stop_after_any_jump() -> None:
    x = "i5"
    a = go(x, "E", 2)  # over i6
    c = go(a, "NE", 2)  # then over a+NE
    d = go(c, "W", 2)  # then over c+W
    s = position([[x], [go(x, "E"), go(a, "NE")], [go(c, "W")]])
    reach = moves_of(s, x)
    assert {a, c, d} <= reach
    steps = {HOLE_NAMES[h] for h in NEIGHBOURS[HOLE[x]] if h is not None} - {go(x, "E")}
    assert reach - {a, c, d} == steps
    assert GAME.parse_move(s, f"{x}-{a}-{c}-{d}") == GAME.parse_move(s, f"{x}-{d}")
    child = s.result(GAME.parse_move(s, f"{x}-{c}"))  # stopping halfway
    assert HOLE[c] in [h for h in HOLES if child.pieces(0) >> h & 1]
    assert child.player == 1 and child.ply == 1


def test_the_documented_jump_path() -> None:
    s = position([[], ["f5", "f6"], []])
    move = GAME.parse_move(s, "c1-e5-g5-e7")
    assert move == GAME.parse_move(s, "c1-e7") and GAME.format_move(s, move) == "c1-e7"
    assert GAME.parse_move(s, "c1-e5-g5") == GAME.parse_move(s, "C1 - G5")
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(GAME.initial_state(), "c1-e5-g5-e7")  # no piece on f5 yet


def test_a_chain_never_revisits_a_hole_nor_its_start() -> None:
    # Three jumps round a triangle lead back to the start: E, then SW, then NW.
    x = "i5"
    a = go(x, "E", 2)
    b = go(a, "SW", 2)
    assert go(b, "NW", 2) == x
    s = position([[x], [go(x, "E"), go(a, "SW")], [go(b, "NW")]])
    reach = moves_of(s, x)
    assert a in reach and b in reach and x not in reach
    assert GAME.parse_move(s, f"{x}-{a}-{b}") == GAME.parse_move(s, f"{x}-{b}")
    for text in (f"{x}-{a}-{b}-{x}", f"{x}-{a}-{x}-{b}"):
        with pytest.raises(IllegalMoveError):
            GAME.parse_move(s, text)


def test_no_jump_over_an_empty_hole_or_two_pieces() -> None:
    x = "i5"
    s = position([[x, go(x, "E"), go(x, "E", 2)], [], []])
    reach = moves_of(s, x)
    assert go(x, "E", 3) not in reach and go(x, "E", 2) not in reach  # two in a row: no jump
    assert go(x, "W", 2) not in reach  # nothing to jump over
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(s, f"{x}-{go(x, 'W', 2)}")


def test_a_seat_with_no_move_passes() -> None:
    home = HOME[0]
    around = set()
    for h in HOLES:
        if home >> h & 1:
            around |= {n for n in NEIGHBOURS[h] if n is not None and not home >> n & 1}
            around |= {land for _, land in JUMPS[h] if not home >> land & 1}
    blockers = sorted(HOLE_NAMES[h] for h in around)
    assert len(blockers) <= 20
    s = position([names(home), blockers[:10], blockers[10:]])
    assert s.actions() == [PASS]
    assert GAME.format_move(s, PASS) == "pass" and GAME.parse_move(s, " Pass ") == PASS
    after = s.result(PASS)
    assert after.player == 1 and after.ply == 1 and after.occupied == s.occupied
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(GAME.initial_state(), "pass")


# --- the end: wins and the move cap ----------------------------------------------------------


def test_filling_the_target_wins() -> None:
    target = names(TARGET[0])
    s = position([[*[n for n in target if n != "n1"], "m5"], [], []])
    assert not s.is_terminal() and s.returns() == (0.0, 0.0, 0.0)
    won = s.result(GAME.parse_move(s, "m5-n1"))
    assert won.is_terminal() and won.actions() == [] and won.winner() == 0
    assert distance_to_goal(won)[0] == 0
    assert won.returns() == (1.0, -0.5, -0.5)  # the others tie at 120 to go
    assert sum(won.returns()) == GAME.constant_sum
    assert "Red wins" in GAME.render(won)


def test_an_opponent_parked_in_the_target_blocks_the_win() -> None:
    target = names(TARGET[0])
    s = position([[*target[1:], "m5"], [target[0]], []])
    assert not s.is_terminal() and s.winner() is None


def test_move_cap_scores_by_distance_with_ties_shared() -> None:
    game = ChineseCheckers(max_plies=12)
    assert ChineseCheckers().max_plies == MAX_PLIES == 1000
    # Everyone at home at the cap: a three-way tie.
    tied = position([[], [], []], ply=12, game=game)
    assert tied.is_terminal() and tied.actions() == [] and tied.returns() == (0.0, 0.0, 0.0)
    # Blue two steps on, Red one step on, Green at home: Blue first, Red second, Green last.
    s = position([["e5", "a1", "b1", "b2", "c1", "c2", "c3", "d2", "d3", "d4"], [],
                  ["i2", "j1", "l1", "l2", "l3", "k1", "k2", "m1", "m2", "m3"]],
                 ply=12, game=game)  # fmt: skip
    assert distance_to_goal(s) == (119, 120, 118)
    assert s.returns() == (0.0, -1.0, 1.0)
    assert s.utility(2) == 1.0
    assert "move cap" in game.render(s)
    # Two seats tied ahead of the third share first and second place.
    red = ["e5", *(n for n in names(HOME[0]) if n != "d1")]
    blue = ["l4", *(n for n in names(HOME[2]) if n != "m4")]
    s = position([red, [], blue], ply=12, game=game)
    assert distance_to_goal(s) == (119, 120, 119)
    assert s.returns() == (0.5, -1.0, 0.5)


def test_random_games_end_at_the_cap_with_constant_sum_payoffs() -> None:
    game = ChineseCheckers(max_plies=60)
    rng = random.Random(3)
    for _ in range(5):
        s = game.initial_state()
        while not s.is_terminal():
            assert s.returns() == (0.0, 0.0, 0.0)
            s = s.result(rng.choice(s.actions()))
        assert s.ply == 60 and s.winner() is None
        assert sum(s.returns()) == 0.0
        assert sorted(s.returns()) in ([-1.0, 0.0, 1.0], [-1.0, 0.5, 0.5], [-0.5, -0.5, 1.0],
                                       [0.0, 0.0, 0.0])  # fmt: skip


def test_the_cap_is_part_of_the_game_and_of_equality() -> None:
    for bad in (0, -5, True, 10.0):
        with pytest.raises(ValueError, match="max_plies"):
            ChineseCheckers(max_plies=bad)  # type: ignore[arg-type]
    assert ChineseCheckers.MAX_PLIES == 1000
    a = position([[], [], []], ply=3)
    assert a != position([[], [], []], ply=4)
    assert a == position([[], [], []], ply=3) and hash(a) == hash(position([[], [], []], ply=3))
    assert a != position([[], [], []], ply=3, game=ChineseCheckers(max_plies=50))


def test_result_never_changes_the_state() -> None:
    s = GAME.initial_state()
    before = json.dumps(GAME.state_to_json(s))
    for m in s.actions():
        child = s.result(m)
        assert child.player == 1 and child is not s
    assert json.dumps(GAME.state_to_json(s)) == before


# --- notation -----------------------------------------------------------------------------


def test_notation_round_trips_over_random_games() -> None:
    rng = random.Random(11)
    s = GAME.initial_state()
    for _ in range(300):
        for m in s.actions():
            assert GAME.parse_move(s, GAME.format_move(s, m)) == m
        s = s.result(rng.choice(s.actions()))


@pytest.mark.parametrize(
    "text", ["", "d1", "d1-", "-e5", "d1e5", "r1-e5", "d1-e14", "d1-e14x", "d1 to e5"]
)
def test_unparsable_moves(text: str) -> None:
    with pytest.raises(InvalidMoveError, match="expected 'from-to'"):
        GAME.parse_move(GAME.initial_state(), text)


@pytest.mark.parametrize("text", ["d1-e4", "e5-f5", "d1-d1", "a1-b1", "c1-e5-e7"])
def test_illegal_moves_list_the_legal_ones(text: str) -> None:
    with pytest.raises(IllegalMoveError, match=r"legal moves are .*d1-e5"):
        GAME.parse_move(GAME.initial_state(), text)


def test_notation_is_forgiving_about_case_and_spaces() -> None:
    s = GAME.initial_state()
    assert GAME.parse_move(s, " D1 - E5 ") == GAME.parse_move(s, "d1-e5")


# --- JSON and rendering -----------------------------------------------------------------------


def test_json_form_and_round_trip() -> None:
    s = GAME.initial_state()
    data = GAME.state_to_json(s)
    homes = [names(HOME[0]), names(HOME[1]), names(HOME[2])]
    assert data == {"pieces": homes, "player": 0, "ply": 0}
    rng = random.Random(5)
    for _ in range(40):
        s = s.result(rng.choice(s.actions()))
        again = GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(s))))
        assert again == s and hash(again) == hash(s) and again.actions() == s.actions()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pieces": None}, "three lists"),
        ({"pieces": [[], []]}, "three lists"),
        ({"player": 3}, "'player' must be 0, 1 or 2"),
        ({"player": True}, "'player'"),
        ({"ply": -1}, "'ply' must be an int"),
        ({"ply": 1001}, "'ply' must be an int"),
        ({"pieces": [["a1"] * 10, [], []]}, "holds two pieces"),
        ({"pieces": [["a1", "b1"], [], []]}, "10 holes"),
        ({"pieces": [["z9", *names(HOME[0])[1:]], names(HOME[1]), names(HOME[2])]}, "z9"),
        ({"pieces": [names(HOME[0]), names(HOME[0]), names(HOME[2])]}, "two pieces"),
        ({"pieces": [names(TARGET[0]), names(TARGET[1]), names(HOME[2])]}, "both"),
    ],
)
def test_malformed_json_is_refused_clearly(change: dict[str, object], message: str) -> None:
    data = {**GAME.state_to_json(GAME.initial_state()), **change}
    with pytest.raises(ValueError, match=message):
        GAME.state_from_json(data)
    with pytest.raises(ValueError, match="Chinese checkers JSON"):
        GAME.state_from_json([])  # type: ignore[arg-type]


def test_render_draws_the_star() -> None:
    text = GAME.render(GAME.initial_state())
    lines = text.splitlines()
    assert len(lines) == 18
    assert lines[0].split() == ["a", "R"] and lines[16].split() == ["q", "."]
    assert lines[12].split() == ["m", *"BBBB", *"." * 5, *"GGGG"]
    assert lines[17] == "ply 0/1000: Red (R) to move"
    board = "\n".join(lines[:17])
    assert board.count("R") == board.count("G") == board.count("B") == 10


def test_metadata() -> None:
    assert (GAME.name, GAME.num_players, GAME.has_chance) == ("chinese_checkers", 3, False)
    assert GAME.seat_names == ("Red", "Green", "Blue")
    assert (GAME.min_utility, GAME.max_utility, GAME.constant_sum) == (-1.0, 1.0, 0.0)
