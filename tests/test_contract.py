"""The game contract, checked over every registered game by random playouts."""

from __future__ import annotations

import json
import math
import random

import pytest

from ply_arena import games
from ply_arena.games import CHANCE, IllegalMoveError, InvalidMoveError, State

PLAYOUTS = 6
MAX_PLIES = 5000  # far above any game's own length or cap


def _playout(game: games.Game, seed: int) -> list[State]:
    rng = random.Random(seed)
    s = game.initial_state()
    states = [s]
    while not s.is_terminal():
        assert len(states) < MAX_PLIES, f"{game.name}: playout did not terminate"
        if s.player == CHANCE:
            outcomes, probs = zip(*s.chance_outcomes(), strict=True)
            s = s.result(rng.choices(outcomes, probs)[0])
        else:
            s = s.result(rng.choice(list(s.actions())))
        states.append(s)
    return states


@pytest.fixture(params=games.names())
def game(request: pytest.FixtureRequest) -> games.Game:
    return games.get(request.param)


def test_registry_lists_the_five_games() -> None:
    assert games.names() == [
        "backgammon",
        "chinese_checkers",
        "connect_four",
        "othello",
        "tic_tac_toe",
    ]


def test_unknown_game_lists_the_known_names() -> None:
    with pytest.raises(ValueError, match="connect_four") as info:
        games.get("chess")
    assert "chess" in str(info.value)


def test_metadata(game: games.Game) -> None:
    assert game.name in games.names()
    assert game.num_players in (2, 3)
    assert len(game.seat_names) == game.num_players
    assert game.summary
    assert game.min_utility < game.max_utility
    assert games.get(game.name) is game


def test_random_playouts_keep_the_contract(game: games.Game) -> None:
    for seed in range(PLAYOUTS):
        states = _playout(game, seed)
        for s in states:
            _check_state(game, s)
        final = states[-1]
        returns = final.returns()
        assert len(returns) == game.num_players
        for p, value in enumerate(returns):
            assert final.utility(p) == value
            assert game.min_utility <= value <= game.max_utility
        if game.constant_sum is not None:
            assert math.isclose(sum(returns), game.constant_sum, abs_tol=1e-9)


def _check_state(game: games.Game, s: State) -> None:
    hash(s)
    snapshot = json.dumps(game.state_to_json(s), sort_keys=True)
    # The JSON form round-trips to an equal state with an equal hash, and is plain JSON.
    again = game.state_from_json(json.loads(snapshot))
    assert again == s and hash(again) == hash(s)
    assert isinstance(game.render(s), str) and game.render(s)
    if s.is_terminal():
        assert not s.actions()
        return
    actions = list(s.actions())
    assert actions, "a non-terminal state has moves"
    assert list(s.actions()) == actions, "actions() is deterministic"
    if s.player == CHANCE:
        outcomes = s.chance_outcomes()
        assert [o for o, _ in outcomes] == actions
        assert math.isclose(sum(p for _, p in outcomes), 1.0)
        assert all(p > 0 for _, p in outcomes)
        children = [s.result(o) for o, _ in outcomes[:3]]
    else:
        assert 0 <= s.player < game.num_players
        assert s.chance_outcomes() == []
        for move in actions:
            text = game.format_move(s, move)
            assert game.parse_move(s, text) == move, (game.name, text)
        children = [s.result(m) for m in actions[:3]]
    # result() never mutates the state it was called on.
    assert json.dumps(game.state_to_json(s), sort_keys=True) == snapshot
    for child in children:
        assert child is not s


def test_move_errors_are_value_errors(game: games.Game) -> None:
    assert issubclass(InvalidMoveError, ValueError)
    assert issubclass(IllegalMoveError, ValueError)
    s = game.initial_state()
    while s.player == CHANCE:
        s = s.result(s.actions()[0])
    with pytest.raises(InvalidMoveError) as info:
        game.parse_move(s, "?? not a move ??")
    # The message quotes what was read and says what a move looks like, with an example form.
    message = str(info.value)
    assert message.startswith("cannot parse ") and "'?? not a move ??'" in message, message
    assert ": expected " in message, message


def test_bad_json_is_refused_clearly(game: games.Game) -> None:
    for bad in ({}, {"board": 7}, {"player": "x"}):
        with pytest.raises(ValueError):
            game.state_from_json(bad)
