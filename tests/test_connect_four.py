"""Connect Four rules: oracle counts, Pons' test positions, wins, full columns, notation, JSON.

The independent oracle for wins is a plain 2-D grid with a loop over every cell and direction,
driven move by move next to the bitboard state.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ply_arena import games
from ply_arena.games import IllegalMoveError, InvalidMoveError
from ply_arena.games.connect_four import (
    BOARD,
    BOTTOM,
    BOTTOM_ROW,
    COLUMN,
    TOP,
    ConnectFour,
    ConnectFourState,
    has_four,
    key,
    possible,
    state_from_bitboards,
    state_from_moves,
    winning_cells,
)

GAME = games.get("connect_four")
# Pons' test positions, copied into tests/data/connect_four/.
DATA = Path(__file__).resolve().parent / "data" / "connect_four"
DATA_FILES = ["Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2", "Test_L1_R3"]

# oracles.md: Connect Four move sequences and distinct positions (OEIS A212693) by ply.
SEQUENCES = [1, 7, 49, 343, 2401, 16807, 117649, 823536, 5673234, 39394572]
POSITIONS = [1, 7, 49, 238, 1120, 4263, 16422, 54859, 184275, 558186]

# A full board without four in a row (found by a seeded random playout; checked below by the grid).
DRAW_GAME = "472424756645422154157737216635626711335331"

Grid = list[list[str]]  # grid[row][col], row 0 at the bottom


class GridBoard:
    """A slow, obvious Connect Four board used as the oracle."""

    def __init__(self) -> None:
        self.grid: Grid = [["."] * 7 for _ in range(6)]
        self.turn = 0

    def drop(self, col: int) -> None:
        row = next(r for r in range(6) if self.grid[r][col] == ".")
        self.grid[row][col] = "XO"[self.turn]
        self.turn ^= 1

    def four(self, mark: str) -> bool:
        for r in range(6):
            for c in range(7):
                for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    cells = [(r + i * dr, c + i * dc) for i in range(4)]
                    if all(
                        0 <= rr < 6 and 0 <= cc < 7 and self.grid[rr][cc] == mark
                        for rr, cc in cells
                    ):
                        return True
        return False

    def rows_top_first(self) -> list[str]:
        return ["".join(self.grid[r]) for r in range(5, -1, -1)]

    def legal(self) -> list[int]:
        return [c for c in range(7) if self.grid[5][c] == "."]


def grid_of(moves: str) -> GridBoard:
    board = GridBoard()
    for ch in moves:
        board.drop(int(ch) - 1)
    return board


# ---------------------------------------------------------------------------------------------
# Counts


def perft(state: ConnectFourState, depth: int, bulk: bool) -> int:
    """Move sequences of length ``depth``; ``bulk`` counts the last ply with len(actions())."""
    if depth == 0:
        return 1
    if bulk and depth == 1:
        return len(state.actions())
    return sum(perft(state.result(m), depth - 1, bulk) for m in state.actions())


def positions_by_ply(plies: int) -> list[int]:
    layer = {GAME.initial_state()}
    counts = [1]
    for _ in range(plies):
        layer = {s.result(m) for s in layer for m in s.actions()}
        counts.append(len(layer))
    return counts


@pytest.mark.parametrize("ply", range(7))
def test_move_sequences_small(ply: int) -> None:
    assert perft(GAME.initial_state(), ply, bulk=False) == SEQUENCES[ply]


@pytest.mark.slow
def test_move_sequences_ply_7_every_result() -> None:
    # Every one of the 823,536 sequences is played with result(), none by counting actions().
    assert perft(GAME.initial_state(), 7, bulk=False) == SEQUENCES[7]


@pytest.mark.slow
@pytest.mark.parametrize("ply", [8, 9])
def test_move_sequences_deep(ply: int) -> None:
    assert perft(GAME.initial_state(), ply, bulk=True) == SEQUENCES[ply]


def test_distinct_positions_to_ply_6() -> None:
    assert positions_by_ply(6) == POSITIONS[:7]


@pytest.mark.slow
def test_distinct_positions_to_ply_9() -> None:
    assert positions_by_ply(9) == POSITIONS


# ---------------------------------------------------------------------------------------------
# Pons' benchmark positions


def read_positions(name: str) -> list[tuple[str, int]]:
    lines = (DATA / name).read_text().split("\n")
    return [
        (moves, int(score)) for moves, score in (line.split() for line in lines if line.strip())
    ]


@pytest.mark.parametrize("name", DATA_FILES)
def test_benchmark_positions_parse_and_are_legal(name: str) -> None:
    positions = read_positions(name)
    assert len(positions) == 1000
    for moves, score in positions:
        s = ConnectFour.from_moves(moves)
        assert s == state_from_moves(moves)
        assert s.moves == len(moves) and s.player == len(moves) % 2
        assert not s.is_terminal(), moves
        assert s.actions() and s.returns() == (0.0, 0.0)
        assert -21 <= score <= 21
        # the bitboards match a grid built independently
        assert GAME.state_to_json(s)["board"] == grid_of(moves).rows_top_first()
        assert s.mask == s.mask & BOARD and s.current & ~s.mask == 0
        assert s.mask.bit_count() == len(moves)
        assert s.current.bit_count() == len(moves) // 2


# ---------------------------------------------------------------------------------------------
# Wins and draws


@pytest.mark.parametrize(
    ("moves", "winner", "direction"),
    [
        ("4545454", 0, "vertical"),
        ("1122334", 0, "horizontal"),
        ("12234334454", 0, "diagonal /"),
        ("76654554434", 0, "diagonal \\"),
        ("12121272", 1, "vertical"),
        ("7172737", 0, "vertical, rightmost column"),
        ("3142516", 0, "horizontal, across the centre"),
    ],
)
def test_wins_in_every_direction(moves: str, winner: int, direction: str) -> None:
    before = state_from_moves(moves[:-1])
    assert not before.is_terminal()
    assert not grid_of(moves[:-1]).four("XO"[winner])
    s = before.result(int(moves[-1]) - 1)
    assert grid_of(moves).four("XO"[winner]), direction
    assert s.is_terminal() and s.actions() == ()
    assert s.winner() == winner
    assert s.returns() == ((1.0, -1.0) if winner == 0 else (-1.0, 1.0))
    assert s.utility(winner) == 1.0 and s.utility(1 - winner) == -1.0
    with pytest.raises(IllegalMoveError):
        s.result(0)
    with pytest.raises(IllegalMoveError, match="over"):
        state_from_moves(moves + "1")


def test_no_line_wraps_across_columns() -> None:
    # X on rows 5,6 of column 1 and rows 1,2 of column 2 are consecutive bits but for the
    # sentinel; three X at the right end of a row and one at the left end of the next.
    boards = [
        ["X......", "X......", "O......", "OO.....", "XX.....", "OX....."],
        ["......."] * 4 + ["X......", "OOO.XXX"],
    ]
    for rows in boards:
        s = GAME.state_from_json({"board": rows})
        assert not s.is_terminal(), rows
        assert not has_four(s.current) and not has_four(s.current ^ s.mask)


def test_draw() -> None:
    s = state_from_moves(DRAW_GAME)
    grid = grid_of(DRAW_GAME)
    assert not grid.four("X") and not grid.four("O")
    assert s.moves == 42 and s.mask == BOARD
    assert s.is_terminal() and s.actions() == ()
    assert s.returns() == (0.0, 0.0) and s.winner() is None


def test_random_playouts_agree_with_the_grid() -> None:
    rng = random.Random(2024)
    for _ in range(300):
        s = GAME.initial_state()
        grid = GridBoard()
        while True:
            x_four, o_four = grid.four("X"), grid.four("O")
            assert GAME.state_to_json(s)["board"] == grid.rows_top_first()
            assert s.is_terminal() == (x_four or o_four or s.moves == 42)
            if s.is_terminal():
                expected = (1.0, -1.0) if x_four else (-1.0, 1.0) if o_four else (0.0, 0.0)
                assert s.returns() == expected
                assert s.actions() == ()
                break
            assert list(s.actions()) == grid.legal()
            assert s.returns() == (0.0, 0.0)
            move = rng.choice(s.actions())
            snapshot = (s.current, s.mask, s.moves, s.player, s.actions())
            child = s.result(move)
            assert (s.current, s.mask, s.moves, s.player, s.actions()) == snapshot
            assert child.player == 1 - s.player and child.moves == s.moves + 1
            grid.drop(move)
            s = child


# ---------------------------------------------------------------------------------------------
# Full columns and errors


def test_full_column() -> None:
    s = state_from_moves("444444")
    assert s.actions() == (0, 1, 2, 4, 5, 6)
    assert s.mask & COLUMN[3] == COLUMN[3]
    with pytest.raises(IllegalMoveError):
        s.result(3)
    with pytest.raises(IllegalMoveError, match="legal moves are 1, 2, 3, 5, 6, 7"):
        GAME.parse_move(s, "4")
    with pytest.raises(IllegalMoveError, match="column 4 is full"):
        state_from_moves("4444444")
    full = state_from_moves("111111777777")
    assert full.actions() == (1, 2, 3, 4, 5)
    assert full.actions() is state_from_moves("777777111111").actions()  # shared table entry


def test_actions_are_shared_tuples() -> None:
    s = GAME.initial_state()
    assert s.actions() == (0, 1, 2, 3, 4, 5, 6)
    assert isinstance(s.actions(), tuple)
    assert s.result(0).actions() is s.actions()


def test_result_rejects_non_moves() -> None:
    s = GAME.initial_state()
    for move in (-1, 7, "4", None, 3.5):
        with pytest.raises(IllegalMoveError):
            s.result(move)


def test_from_moves_errors() -> None:
    with pytest.raises(InvalidMoveError, match="1-7"):
        state_from_moves("4480")
    with pytest.raises(InvalidMoveError):
        state_from_moves("4 4")
    assert state_from_moves("") == GAME.initial_state()


def test_notation_round_trip_and_errors() -> None:
    s = state_from_moves("4453")
    for m in s.actions():
        text = GAME.format_move(s, m)
        assert text == str(m + 1)
        assert GAME.parse_move(s, text) == m
        assert GAME.parse_move(s, f" {text}\n") == m
    for bad in ("0", "8", "a", "", "44", "-1", "1.0"):
        with pytest.raises(InvalidMoveError, match="column number 1-7"):
            GAME.parse_move(s, bad)
    over = state_from_moves("4545454")
    with pytest.raises(IllegalMoveError, match="none"):
        GAME.parse_move(over, "1")


# ---------------------------------------------------------------------------------------------
# Equality, JSON, rendering


def test_equality_and_hash_follow_the_stones() -> None:
    a, b, c = state_from_moves("1234"), state_from_moves("3214"), state_from_moves("2143")
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a != state_from_moves("123")
    assert len({a, b, c}) == 2
    assert key(a.current, a.mask) == key(b.current, b.mask) != key(c.current, c.mask)


def test_json_round_trip() -> None:
    rng = random.Random(7)
    states = [GAME.initial_state(), state_from_moves(DRAW_GAME), state_from_moves("4545454")]
    for _ in range(200):
        s = GAME.initial_state()
        while not s.is_terminal():
            states.append(s)
            s = s.result(rng.choice(s.actions()))
        states.append(s)
    for s in states:
        data = GAME.state_to_json(s)
        assert set(data) == {"board", "player"}
        assert data["player"] == s.player
        back = GAME.state_from_json(data)
        assert back == s
        assert (back.current, back.mask, back.moves, back.player) == (
            s.current,
            s.mask,
            s.moves,
            s.player,
        )
        assert back.actions() == s.actions() and back.returns() == s.returns()


def test_json_example_and_moves_form() -> None:
    s = state_from_moves("4453")
    data = GAME.state_to_json(s)
    assert data == {
        "board": [".......", ".......", ".......", ".......", "...O...", "..OXX.."],
        "player": 0,
    }
    assert GAME.state_from_json({"moves": "4453"}) == s
    assert GAME.state_from_json({"moves": "4453", **data}) == s
    with pytest.raises(ValueError, match="different positions"):
        GAME.state_from_json({"moves": "4435", **data})
    with pytest.raises(ValueError, match="full"):
        GAME.state_from_json({"moves": "1111111"})


BAD_JSON = [
    ([], "object"),
    ({}, "needs"),
    ({"board": ["......."] * 5}, "six strings"),
    ({"board": ["......"] * 6}, "six strings"),
    ({"board": ["......."] * 5 + ["...x..."]}, "cell 'x'"),
    ({"board": ["......."] * 4 + ["...X...", "......."]}, "floating"),
    ({"board": ["......."] * 5 + ["...O..."]}, "1 O"),
    ({"board": ["......."] * 5 + ["XX.X..."]}, "3 X"),
    ({"board": ["......."] * 5 + ["...X..."], "player": 0}, "seat 1 to move"),
    ({"moves": 4453}, "string"),
    # O to move with four on the bottom row: X cannot have moved after O's win
    ({"board": ["......."] * 4 + ["XXXX...", "OOOO..X"]}, "player to move"),
    # two separate fours of X: no single last disc made them both
    (
        {"board": ["......."] * 2 + ["X.....X", "X.....X", "XOO..OX", "XOO.OOX"]},
        "no last move",
    ),
    # O's only disc lies under X's: the second move cannot have been O's
    ({"board": ["......."] * 4 + ["X......", "O......"]}, "alternate"),
]


@pytest.mark.parametrize(("data", "message"), BAD_JSON)
def test_state_from_json_rejects(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GAME.state_from_json(data)  # type: ignore[arg-type]


def test_render() -> None:
    text = GAME.render(state_from_moves("4453"))
    assert text.splitlines()[-2:] == [". . O X X . .", "1 2 3 4 5 6 7"]
    assert len(text.splitlines()) == 7


# ---------------------------------------------------------------------------------------------
# The solver toolkit and the game metadata


def test_solver_toolkit_against_the_grid() -> None:
    rng = random.Random(11)
    for _ in range(60):
        s = GAME.initial_state()
        moves = ""
        while not s.is_terminal():
            playable = possible(s.mask)
            assert [c for c in range(7) if playable & COLUMN[c]] == list(s.actions())
            wins = winning_cells(s.current, s.mask) & playable
            for c in s.actions():
                grid = grid_of(moves + str(c + 1))
                assert bool(wins & COLUMN[c]) == grid.four("XO"[s.player]), (moves, c)
            assert has_four(s.current ^ s.mask) == grid_of(moves).four("XO"[1 - s.player])
            rebuilt = state_from_bitboards(s.current, s.mask)
            assert rebuilt == s and (rebuilt.moves, rebuilt.actions()) == (s.moves, s.actions())
            m = rng.choice(s.actions())
            moves += str(m + 1)
            s = s.result(m)
    assert sum(BOTTOM) == BOTTOM_ROW and all(TOP[c] == BOTTOM[c] << 5 for c in range(7))
    assert BOARD.bit_count() == 42
    won = state_from_moves("4545454")
    assert state_from_bitboards(won.current, won.mask).returns() == (1.0, -1.0)


def test_game_metadata() -> None:
    assert GAME.name == "connect_four" and isinstance(GAME, ConnectFour)
    assert GAME.num_players == 2 and not GAME.has_chance
    assert GAME.seat_names == ("X", "O")
    assert (GAME.min_utility, GAME.max_utility, GAME.constant_sum) == (-1.0, 1.0, 0.0)
    s = GAME.initial_state()
    assert s.player == 0 and s.moves == 0 and s.current == 0 and s.mask == 0
    assert s.chance_outcomes() == [] and not s.is_chance_node()
