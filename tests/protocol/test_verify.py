"""ply_arena.protocol.verify on records built here: a match of the legacy dice scheme (stored before
commitments) still verifies, with a note; forfeits and the move limit pay what the rules say."""

from __future__ import annotations

import random
from typing import Any

from ply_arena import games
from ply_arena.protocol import dice
from ply_arena.protocol.outcomes import forfeit_payoffs
from ply_arena.protocol.verify import check_events, report, verify_record


def simulate(
    game_name: str, seed: str, match_id: str, *, legacy: bool, plies: int
) -> dict[str, Any]:
    game = games.get(game_name)
    rng = random.Random(1)
    roller = dice.LegacyDice(seed) if legacy else None
    state = game.initial_state()
    moves = []
    ply = 0
    # Up to ``plies`` events, then on to a seat's turn (a timeout needs a seat to blame).
    while not state.is_terminal() and (ply < plies or state.is_chance_node()):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            move = roller.roll(outcomes) if roller else dice.roll(seed, match_id, ply, outcomes)
            seat = None
        else:
            move = rng.choice(list(state.actions()))
            seat = state.player
        moves.append({"ply": ply, "seat": seat, "move": game.format_move(state, move)})
        state = state.result(move)
        ply += 1
    return {
        "record_version": 1,
        "id": match_id,
        "game": game_name,
        "status": "finished",
        "seed": seed,
        "dice": {
            "scheme": dice.LEGACY_SCHEME if legacy else dice.SCHEME,
            "commitment": None if legacy else dice.commitment(seed, match_id),
            "seed": seed,
        },
        "moves": moves,
        "result": {
            "termination": "normal" if state.is_terminal() else "timeout",
            "at_fault": None if state.is_terminal() else state.player,
            "payoffs": [float(x) for x in state.returns()]
            if state.is_terminal()
            else forfeit_payoffs(game, state.player),
            "final_position": game.state_to_json(state),
        },
    }


def test_a_legacy_record_verifies_with_a_note() -> None:
    record = simulate("backgammon", "12345", "old", legacy=True, plies=120)
    found = verify_record(record)
    assert found.ok, found.problems
    assert found.dice > 10 and found.dice_checked
    assert any("legacy dice" in note for note in found.notes)
    # The same moves read as the new scheme: the dice disagree.
    record["dice"]["scheme"] = dice.SCHEME
    record["dice"]["commitment"] = dice.commitment("12345", "old")
    assert not verify_record(record).ok


def test_a_timeout_pays_the_forfeit_and_nothing_else() -> None:
    record = simulate("connect_four", "5", "m", legacy=False, plies=9)
    assert verify_record(record).ok
    record["result"]["payoffs"] = [0.0, 0.0]
    found = verify_record(record)
    assert not found.ok and "a 'timeout' end pays" in found.problems[0]
    record["result"]["at_fault"] = 7
    assert "names no seat at fault" in verify_record(record).problems[0]


def test_a_record_that_cannot_be_read_is_said_so() -> None:
    found = verify_record({"id": "x", "game": "chess", "status": "finished", "moves": []})
    assert not found.ok and "cannot be read" in found.problems[0]
    lines = report(found)
    assert lines[-1].startswith("  FAIL: the record cannot be read")


def events(*moves: tuple[int | None, str]) -> list[dict[str, Any]]:
    return [{"ply": ply, "seat": seat, "move": move} for ply, (seat, move) in enumerate(moves)]


#: X takes the top row: a whole game of tic-tac-toe, five moves.
X_WINS = events((0, "a3"), (1, "a1"), (0, "b3"), (1, "b1"), (0, "c3"))


def test_the_events_of_a_whole_game_replay() -> None:
    found = check_events(games.get("tic_tac_toe"), "m", X_WINS, seed=None)
    assert found.problems == []
    assert found.state is not None and found.state.is_terminal() and found.moves == 5


def test_a_renumbered_ply_fails() -> None:
    renumbered = [dict(e) for e in X_WINS]
    renumbered[2]["ply"] = 3
    found = check_events(games.get("tic_tac_toe"), "m", renumbered, seed=None)
    assert found.problems == ["ply 3 ('b3'): the event at place 2 says ply 3"]


def test_a_move_after_the_game_is_over_fails() -> None:
    longer = [*X_WINS, {"ply": 5, "seat": 1, "move": "c1"}]
    found = check_events(games.get("tic_tac_toe"), "m", longer, seed=None)
    assert found.problems == ["ply 5 ('c1'): the game was already over"]


def test_a_move_by_the_wrong_seat_fails() -> None:
    swapped = events((0, "a3"), (0, "a1"))
    found = check_events(games.get("tic_tac_toe"), "m", swapped, seed=None)
    assert found.problems == ["ply 1 ('a1'): played by seat 0, but it was seat 1's turn"]
    # A seat's move where the dice were due, and a roll where a seat was to move.
    backgammon = games.get("backgammon")
    seat_at_roll = events((0, "3-1"))
    found = check_events(backgammon, "m", seat_at_roll, seed=None)
    assert found.problems == ["ply 0 ('3-1'): played by seat 0, but it was the dice's turn"]
    roll_at_seat = events((None, "3-1"), (None, "8/5 6/5"))
    found = check_events(backgammon, "m", roll_at_seat, seed=None)
    assert found.problems == ["ply 1 ('8/5 6/5'): played by seat None, but it was seat 0's turn"]
