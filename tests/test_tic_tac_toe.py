"""Tic-tac-toe rules against the known counts (shared/data/oracles.md)."""

from __future__ import annotations

from collections import Counter

import pytest

from ply_arena import games
from ply_arena.games import IllegalMoveError, InvalidMoveError, State
from ply_arena.games.tic_tac_toe import TicTacToeState

GAME = games.get("tic_tac_toe")


def _games_by_outcome(s: State, tally: Counter[str]) -> None:
    if s.is_terminal():
        tally[{1.0: "x", -1.0: "o", 0.0: "draw"}[s.utility(0)]] += 1
        return
    for move in s.actions():
        _games_by_outcome(s.result(move), tally)


def test_all_255168_games() -> None:
    tally: Counter[str] = Counter()
    _games_by_outcome(GAME.initial_state(), tally)
    assert sum(tally.values()) == 255_168
    assert tally == {"x": 131_184, "o": 77_904, "draw": 46_080}


def test_sequences_by_ply() -> None:
    layer = [GAME.initial_state()]
    counts = []
    for _ in range(10):
        counts.append(len(layer))
        layer = [s.result(m) for s in layer for m in s.actions()]
    assert counts == [1, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872]


def test_5478_positions_958_terminal() -> None:
    seen: set[State] = set()
    stack: list[State] = [GAME.initial_state()]
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        stack.extend(s.result(m) for m in s.actions())
    assert len(seen) == 5478
    assert sum(s.is_terminal() for s in seen) == 958


def test_notation_and_errors() -> None:
    s = GAME.initial_state()
    assert GAME.format_move(s, 0) == "a3" and GAME.format_move(s, 8) == "c1"
    s = s.result(GAME.parse_move(s, "B2"))
    with pytest.raises(IllegalMoveError, match="legal moves are a3"):
        GAME.parse_move(s, "b2")
    with pytest.raises(InvalidMoveError, match=r"a1\.\.c3"):
        GAME.parse_move(s, "d4")
    with pytest.raises(ValueError):
        s.result(4)


def test_win_and_json() -> None:
    s = GAME.initial_state()
    for text in ["a1", "a2", "b1", "b2", "c1"]:
        s = s.result(GAME.parse_move(s, text))
    assert s.is_terminal() and s.returns() == (1.0, -1.0)
    data = GAME.state_to_json(s)
    assert data == {"board": ["...", "OO.", "XXX"], "player": 1}
    assert GAME.state_from_json(data) is s
    with pytest.raises(ValueError, match="reachable"):
        GAME.state_from_json({"board": ["XXX", "XXX", "..."]})
    with pytest.raises(ValueError, match=r"expected X, O or \."):
        GAME.state_from_json({"board": ["XX?", "...", "..."]})


def test_states_are_immutable_values() -> None:
    s = GAME.initial_state()
    assert isinstance(s, TicTacToeState)
    child = s.result(4)
    assert s.x == 0 and s.o == 0 and child.x == 1 << 4
    assert len({s, GAME.initial_state(), child}) == 2
