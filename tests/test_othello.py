"""Othello rules against the perft counts of shared/data/oracles.md and a plain reference."""

from __future__ import annotations

import random

import pytest

from ply_arena import games
from ply_arena.games import IllegalMoveError, InvalidMoveError
from ply_arena.games.othello import (
    CORNERS,
    PASS,
    SQUARE_NAMES,
    OthelloState,
    legal_moves_bitboard,
)

GAME = games.get("othello")
PERFT = [1, 4, 12, 56, 244, 1396, 8200, 55_092, 390_216, 3_005_288, 24_571_056]


def _state(board: list[str], player: int) -> OthelloState:
    return GAME.state_from_json({"board": board, "player": player})


def _perft(s: OthelloState, depth: int) -> int:
    """Leaves at exactly ``depth`` plies; a pass is a ply and a finished game has no children."""
    if depth == 1:
        return len(s.actions())
    return sum(_perft(s.result(m), depth - 1) for m in s.actions())


def _perft_full(s: OthelloState, depth: int) -> int:
    """The same count, building every leaf state too (exercises result() at the last ply)."""
    if depth == 0:
        return 1
    return sum(_perft_full(s.result(m), depth - 1) for m in s.actions())


# A plain mailbox implementation of the rules, to check the bitboard one position by position.
_DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]


def _reference_flips(own: int, opp: int, sq: int) -> int:
    if (own | opp) >> sq & 1:
        return 0
    flips = 0
    row, col = divmod(sq, 8)
    for dr, dc in _DIRECTIONS:
        run = 0
        r, c = row + dr, col + dc
        while 0 <= r < 8 and 0 <= c < 8 and opp >> (8 * r + c) & 1:
            run |= 1 << (8 * r + c)
            r, c = r + dr, c + dc
        if run and 0 <= r < 8 and 0 <= c < 8 and own >> (8 * r + c) & 1:
            flips |= run
    return flips


def _reference_moves(own: int, opp: int) -> list[int]:
    return [sq for sq in range(64) if _reference_flips(own, opp, sq)]


def test_start_position() -> None:
    s = GAME.initial_state()
    assert s.player == 0
    assert [GAME.format_move(s, m) for m in s.actions()] == ["d3", "c4", "f5", "e6"]
    assert s.actions() == (19, 26, 37, 44)
    assert GAME.state_to_json(s) == {
        "board": [
            "........",
            "........",
            "........",
            "...WB...",
            "...BW...",
            "........",
            "........",
            "........",
        ],
        "player": 0,
    }
    assert s.black == 1 << 28 | 1 << 35 and s.white == 1 << 27 | 1 << 36
    assert (s.own, s.opp) == (s.black, s.white)
    assert not s.is_terminal() and s.returns() == (0.0, 0.0)


@pytest.mark.parametrize("depth", range(1, 9))
def test_perft_to_ply_8(depth: int) -> None:
    assert _perft(GAME.initial_state(), depth) == PERFT[depth]


def test_perft_building_every_state_to_ply_7() -> None:
    assert [_perft_full(GAME.initial_state(), d) for d in range(8)] == PERFT[:8]


@pytest.mark.slow
def test_perft_ply_9_and_10() -> None:
    # Ply 10 also checks the end rule: in tables where a finished game may still pass, it is
    # 24,571,284; here the game ends as soon as neither side can move.
    s = GAME.initial_state()
    assert _perft(s, 9) == PERFT[9]
    assert _perft(s, 10) == PERFT[10]


def test_random_games_agree_with_the_reference() -> None:
    rng = random.Random(7)
    for _ in range(40):
        s = GAME.initial_state()
        passes = 0
        while not s.is_terminal():
            own, opp = s.own, s.opp
            expected = _reference_moves(own, opp)
            assert s.moves == sum(1 << m for m in expected)
            assert legal_moves_bitboard(own, opp) == s.moves
            theirs = sum(1 << m for m in _reference_moves(opp, own))
            assert legal_moves_bitboard(opp, own) == theirs == s.opp_moves
            if not expected:
                assert s.actions() == (PASS,)
                passes += 1
                child = s.result(PASS)
                assert (child.own, child.opp, child.player) == (opp, own, 1 - s.player)
                assert child.moves, "a pass is only forced when the other side can move"
            else:
                assert list(s.actions()) == expected
                move = rng.choice(expected)
                flips = _reference_flips(own, opp, move)
                child = s.result(move)
                assert child.own == opp & ~flips
                assert child.opp == own | flips | 1 << move
                assert child.player == 1 - s.player
            s = child
        # Game over: nobody can move, the board may or may not be full.
        assert not _reference_moves(s.own, s.opp) and not _reference_moves(s.opp, s.own)
        assert s.actions() == () and s.moves == 0
        b, w = s.black.bit_count(), s.white.bit_count()
        assert s.returns() == ((1.0, -1.0) if b > w else (-1.0, 1.0) if w > b else (0.0, 0.0))


def test_forced_pass_then_game_over_before_the_board_is_full() -> None:
    # Black's only disc b1 sits next to White's corner: Black cannot move, White can (c1).
    board = [
        "WB......",
        "........",
        "........",
        "...WW...",
        "...WW...",
        "........",
        "........",
        "........",
    ]
    s = _state(board, 0)
    assert not s.is_terminal()
    assert s.actions() == (PASS,)
    assert GAME.format_move(s, PASS) == "pass"
    assert GAME.parse_move(s, " PASS ") == PASS
    with pytest.raises(IllegalMoveError, match="legal moves are pass"):
        GAME.parse_move(s, "c1")
    with pytest.raises(ValueError):
        s.result(2)
    s = s.result(PASS)
    assert s.player == 1 and [GAME.format_move(s, m) for m in s.actions()] == ["c1"]
    with pytest.raises(IllegalMoveError, match="legal moves are c1"):
        GAME.parse_move(s, "pass")
    with pytest.raises(ValueError):
        s.result(PASS)
    s = s.result(GAME.parse_move(s, "c1"))
    # Black has no disc left: neither side can move, so the game is over with 57 empty squares.
    assert s.is_terminal() and s.actions() == ()
    assert s.black == 0 and s.white.bit_count() == 7
    assert s.returns() == (-1.0, 1.0) and s.utility(1) == 1.0
    with pytest.raises(ValueError):
        s.result(PASS)
    assert "game over: Black 0, White 7" in GAME.render(s)


def test_full_boards_score_by_disc_count() -> None:
    draw = ["BBBBBBBB", "WWWWWWWW"] * 4
    for player in (0, 1):
        s = _state(draw, player)
        assert s.is_terminal() and s.actions() == () and s.returns() == (0.0, 0.0)
    black_wins = ["BBBBBBBB", "WWWWWWWW"] * 3 + ["BBBBBBBB", "BWWWWWWW"]
    for player in (0, 1):
        s = _state(black_wins, player)
        assert s.black.bit_count() == 33
        assert s.is_terminal() and s.returns() == (1.0, -1.0)
        assert s.utility(0) == 1.0 and s.utility(1) == -1.0


def test_notation() -> None:
    s = GAME.initial_state()
    assert SQUARE_NAMES[0] == "a1" and SQUARE_NAMES[7] == "h1"
    assert SQUARE_NAMES[56] == "a8" and SQUARE_NAMES[63] == "h8"
    assert sum(1 << SQUARE_NAMES.index(n) for n in ("a1", "h1", "a8", "h8")) == CORNERS
    for move in s.actions():
        text = GAME.format_move(s, move)
        assert GAME.parse_move(s, text) == move
        assert GAME.parse_move(s, text.upper()) == move
    s2 = s.result(GAME.parse_move(s, "D3"))
    assert s2.black.bit_count() == 4 and s2.white.bit_count() == 1
    assert [GAME.format_move(s2, m) for m in s2.actions()] == ["c3", "e3", "c5"]


def test_move_errors() -> None:
    s = GAME.initial_state()
    for text in ["i1", "a0", "a9", "", "d 3", "d33", "33", "pas"]:
        with pytest.raises(InvalidMoveError, match=r"expected a square a1\.\.h8"):
            GAME.parse_move(s, text)
    with pytest.raises(IllegalMoveError, match="legal moves are d3, c4, f5, e6"):
        GAME.parse_move(s, "a1")
    with pytest.raises(IllegalMoveError):
        GAME.parse_move(s, "d4")  # occupied
    with pytest.raises(IllegalMoveError, match="legal moves are d3"):
        GAME.parse_move(s, "pass")  # passing is only allowed without a move
    for bad in (0, 27, -1, 64, PASS, 65, "d3", 19.0, None):
        with pytest.raises(ValueError):
            s.result(bad)


def test_json_round_trip_and_validation() -> None:
    rng = random.Random(3)
    s = GAME.initial_state()
    while not s.is_terminal():
        data = GAME.state_to_json(s)
        again = GAME.state_from_json(data)
        assert again == s and hash(again) == hash(s) and again.moves == s.moves
        assert GAME.state_to_json(again) == data
        s = s.result(rng.choice(s.actions()))
    assert GAME.state_from_json(GAME.state_to_json(s)).is_terminal()
    start = GAME.state_to_json(GAME.initial_state())
    bad_inputs = [
        ([], "eight strings"),
        ({}, "eight strings"),
        ({"board": start["board"][:7], "player": 0}, "eight strings"),
        ({"board": [*start["board"][:7], "......."], "player": 0}, "eight strings"),
        ({"board": [*start["board"][:7], 12345678], "player": 0}, "eight strings"),
        ({"board": start["board"]}, '"player": 0'),
        ({"board": start["board"], "player": 2}, '"player": 0'),
        ({"board": start["board"], "player": True}, '"player": 0'),
        ({"board": start["board"], "player": "0"}, '"player": 0'),
        ({"board": [*start["board"][:7], ".......x"], "player": 0}, "h8 is 'x'"),
        ({"board": [*start["board"][:7], ".......b"], "player": 0}, "expected B, W or ."),
        ({"board": ["." * 8] * 8, "player": 0}, "centre"),
    ]
    for data, message in bad_inputs:
        with pytest.raises(ValueError, match=message):
            GAME.state_from_json(data)  # type: ignore[arg-type]


def test_states_are_values() -> None:
    s = GAME.initial_state()
    # d3 c3 and c4 e3 ... two orders reaching one position are equal and hash alike.
    a = s.result(19).result(18).result(26)
    b = s.result(26).result(18).result(19)
    assert GAME.state_to_json(a) == GAME.state_to_json(b)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    same_board_other_player = GAME.state_from_json({**GAME.state_to_json(a), "player": 0})
    assert same_board_other_player != a
    before = GAME.state_to_json(s)
    s.result(19)
    assert GAME.state_to_json(s) == before
    assert s != "not a state"


def test_opening_positions_are_interned_and_behave_like_any_other() -> None:
    # The first plies are precomputed at import; results must not depend on the path taken.
    s = GAME.initial_state()
    for _ in range(7):
        move = s.actions()[-1]
        plain = OthelloState.result(s, move)  # the general code path, not the table
        s = s.result(move)
        assert s == plain and hash(s) == hash(plain) and s.moves == plain.moves
        assert s.actions() == plain.actions() and type(plain) is OthelloState
        assert GAME.state_from_json(GAME.state_to_json(s)) == s
    assert GAME.state_from_json(GAME.state_to_json(GAME.initial_state())) is GAME.initial_state()
    with pytest.raises(ValueError):
        GAME.initial_state().result(20)


def test_render() -> None:
    text = GAME.render(GAME.initial_state())
    assert text.splitlines()[0] == "  a b c d e f g h"
    assert text.splitlines()[4] == "4 . . . W B . . ."
    assert "Black to move; Black 2, White 2" in text


def test_metadata() -> None:
    assert GAME.name == "othello" and GAME.num_players == 2 and not GAME.has_chance
    assert GAME.seat_names == ("Black", "White")
    assert (GAME.min_utility, GAME.max_utility, GAME.constant_sum) == (-1.0, 1.0, 0.0)
