"""ply_arena.protocol.verify on records built here: a match of the legacy dice scheme (stored before
commitments) still verifies, with a note; forfeits and the move limit pay what the rules say."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ply_arena import games
from ply_arena.games.tic_tac_toe import TicTacToe, TicTacToeState
from ply_arena.protocol import dice
from ply_arena.protocol.outcomes import forfeit_payoffs
from ply_arena.protocol.verify import (
    check_events,
    parse_event,
    report,
    same_position,
    verify_record,
)


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


# --- each check of check_events, with the exact problem and where the replay stopped ---------


def test_the_replay_keeps_every_position_in_order() -> None:
    game = games.get("tic_tac_toe")
    found = check_events(game, "m", X_WINS, seed=None)
    assert found.dice == 0 and not found.dice_checked
    assert len(found.states) == 5 and found.states[-1] == found.state
    state = game.initial_state()
    for event, after in zip(X_WINS, found.states, strict=True):
        state = state.result(game.parse_move(state, event["move"]))
        assert after == state


def test_the_replay_stops_at_the_first_problem() -> None:
    # After a renumbered ply, a move by the wrong seat or a move after the end, nothing counts:
    # the moves and positions are those before it.
    game = games.get("tic_tac_toe")
    renumbered = [dict(e) for e in X_WINS]
    renumbered[2]["ply"] = 3
    found = check_events(game, "m", renumbered, seed=None)
    assert found.moves == 2 and len(found.states) == 2
    wrong_seat = [*events((0, "a3"), (0, "a1")), *X_WINS[2:]]
    found = check_events(game, "m", wrong_seat, seed=None)
    assert found.problems == ["ply 1 ('a1'): played by seat 0, but it was seat 1's turn"]
    assert found.moves == 1 and len(found.states) == 1
    assert found.state == found.states[0]
    longer = [*X_WINS, {"ply": 5, "seat": 1, "move": "c1"}, {"ply": 6, "seat": 0, "move": "c2"}]
    found = check_events(game, "m", longer, seed=None)
    assert found.problems == ["ply 5 ('c1'): the game was already over"]
    assert found.moves == 5 and len(found.states) == 5


def backgammon_events(seed: str, match_id: str, plies: int) -> list[dict[str, Any]]:
    return simulate("backgammon", seed, match_id, legacy=False, plies=plies)["moves"]


def test_every_die_is_counted_and_checked_against_the_seed() -> None:
    game = games.get("backgammon")
    moves = backgammon_events("77", "bg", 30)
    rolls = sum(m["seat"] is None for m in moves)
    assert rolls >= 5
    found = check_events(game, "bg", moves, seed="77")
    assert found.problems == [] and found.dice_checked
    assert found.dice == rolls and found.moves == len(moves) - rolls
    assert len(found.states) == len(moves)
    # Without the seed the rolls are read, not re-derived.
    found = check_events(game, "bg", moves, seed=None)
    assert found.problems == [] and not found.dice_checked and found.dice == rolls


def test_a_wrong_die_fails_and_stops_the_replay() -> None:
    game = games.get("backgammon")
    moves = backgammon_events("77", "bg", 30)
    rolled = moves[0]["move"]
    wrong = "2-1" if rolled != "2-1" else "3-1"
    changed = [{**moves[0], "move": wrong}, *moves[1:]]
    found = check_events(game, "bg", changed, seed="77")
    assert found.problems == [
        f"ply 0 ({wrong!r}): the seed gives the roll {rolled!r}, not {wrong!r}"
    ]
    assert found.dice == 0 and found.moves == 0 and found.states == []
    assert found.state == game.initial_state()


def test_a_roll_that_is_no_outcome_fails_without_a_seed() -> None:
    game = games.get("backgammon")
    found = check_events(game, "m", events((None, "7-7"), (0, "8/5 6/5")), seed=None)
    assert found.problems == ["ply 0 ('7-7'): '7-7' is not a chance outcome here"]
    assert found.dice == 0 and found.moves == 0 and found.states == []


#: Seat 0 plays a3, seat 1 a1, then seat 0 plays a3 again (taken): refused.
REFUSED = events((0, "a3"), (1, "a1"), (0, "a3"))
ILLEGAL_A3 = "illegal move 'a3' in tic_tac_toe: legal moves are b3, c3, a2, b2, c2, b1, c1"


def test_a_refused_move_may_end_a_forfeit_for_an_illegal_move() -> None:
    game = games.get("tic_tac_toe")
    found = check_events(game, "m", REFUSED, seed=None, last_may_be_refused=0)
    assert found.problems == []
    assert found.notes == ["ply 2 ('a3'): the refused move that lost the match"]
    assert found.moves == 2 and len(found.states) == 2 and found.state == found.states[-1]
    assert found.state is not None and found.state.player == 0
    # Not when another seat was at fault, nor without a forfeit.
    for refused in (1, None):
        found = check_events(game, "m", REFUSED, seed=None, last_may_be_refused=refused)
        assert found.problems == [f"ply 2 ('a3'): {ILLEGAL_A3}"] and found.notes == []
    # Only the last event may be the refused move: one before it is a problem.
    earlier = [*REFUSED, {"ply": 3, "seat": 1, "move": "b2"}]
    found = check_events(game, "m", earlier, seed=None, last_may_be_refused=0)
    assert found.problems == [f"ply 2 ('a3'): {ILLEGAL_A3}"] and found.notes == []
    assert found.moves == 2


def test_parse_event_reads_moves_and_chance_outcomes() -> None:
    ttt = games.get("tic_tac_toe")
    start = ttt.initial_state()
    assert parse_event(ttt, start, "b2") == ttt.parse_move(start, "b2")
    with pytest.raises(ValueError, match=r"^cannot parse tic-tac-toe move 'zz'"):
        parse_event(ttt, start, "zz")
    backgammon = games.get("backgammon")
    opening = backgammon.initial_state()
    assert parse_event(backgammon, opening, "3-1") == (3, 1)
    # No doubles at the opening: not an outcome, though it reads as dice.
    with pytest.raises(ValueError, match=r"^'3-3' is not a chance outcome here$"):
        parse_event(backgammon, opening, "3-3")


class OpaqueTicTacToe(TicTacToe):
    """A game that cannot read its positions back: same_position compares their JSON."""

    def state_from_json(self, data: dict[str, Any]) -> TicTacToeState:
        raise ValueError("cannot read positions")


def test_same_position_compares_the_json_when_the_game_cannot_read_it() -> None:
    ttt = games.get("tic_tac_toe")
    opaque = OpaqueTicTacToe()
    state = ttt.initial_state().result(ttt.parse_move(ttt.initial_state(), "b2"))
    stored = ttt.state_to_json(state)
    assert same_position(ttt, state, stored) and same_position(opaque, state, stored)
    reordered = dict(reversed(list(stored.items())))
    assert list(reordered) != list(stored)
    assert same_position(opaque, state, reordered)  # the order of the keys does not matter
    assert not same_position(opaque, state, {**stored, "player": 0})
    assert not same_position(ttt, state, {**stored, "player": 0})


# --- verify_record: each check of a whole record, with the exact problem --------------------


def ttt_record(moves: list[dict[str, Any]] = X_WINS, **result: Any) -> dict[str, Any]:
    """A finished tic-tac-toe record of ``moves`` (X wins by default) that verifies; ``result``
    replaces fields of its result (the copies at the top follow)."""
    game = games.get("tic_tac_toe")
    state = game.initial_state()
    for event in moves:
        state = state.result(game.parse_move(state, event["move"]))
    stored: dict[str, Any] = {
        "termination": "normal",
        "at_fault": None,
        "payoffs": [float(x) for x in state.returns()],
        "final_position": game.state_to_json(state),
        **result,
    }
    payoffs = stored["payoffs"] or [None, None]
    return {
        "record_version": 1,
        "id": "m",
        "game": "tic_tac_toe",
        "status": "aborted" if stored["termination"] == "aborted" else "finished",
        "seats": [{"seat": seat, "payoff": payoffs[seat]} for seat in (0, 1)],
        "dice": {"scheme": dice.SCHEME, "commitment": dice.commitment("s", "m"), "seed": "s"},
        "seed": "s",
        "termination": stored["termination"],
        "at_fault": stored["at_fault"],
        "plies": len(moves),
        "moves": [dict(e) for e in moves],
        "result": stored,
    }


def test_a_whole_record_holds() -> None:
    found = verify_record(ttt_record())
    assert found.problems == [] and found.notes == []
    assert (found.match_id, found.game, found.status) == ("m", "tic_tac_toe", "finished")
    assert found.moves == 5 and found.dice == 0 and found.dice_checked
    assert report(found) == ["match m (tic_tac_toe, finished): 5 moves", "  OK: the record holds"]


def test_a_running_record_holds_with_a_note() -> None:
    record = ttt_record(X_WINS[:1])
    record.update(status="running", result=None, seats=[{"seat": 0}, {"seat": 1}])
    record["dice"]["seed"] = None
    for key in ("seed", "termination", "at_fault"):
        del record[key]
    found = verify_record(record)
    note = "the match is still running: its seed is secret, dice not checked"
    assert found.problems == [] and found.notes == [note]
    assert found.moves == 1 and not found.dice_checked
    assert report(found) == [
        "match m (tic_tac_toe, running): 1 move",
        f"  note: {note}",
        "  OK: the record holds",
    ]
    # A running match has no result yet.
    del record["seats"]
    record["result"] = ttt_record()["result"]
    assert verify_record(record).problems == ["status is 'running' but the record has a result"]


def test_a_finished_record_without_its_seed_has_no_running_note() -> None:
    record = ttt_record()
    record["dice"]["seed"] = None
    del record["seed"]
    found = verify_record(record)
    assert found.problems == [] and found.notes == [] and not found.dice_checked


def test_an_aborted_record_pays_nothing() -> None:
    record = ttt_record(X_WINS[:3], termination="aborted", payoffs=None)
    found = verify_record(record)
    assert found.problems == [] and found.status == "aborted" and found.moves == 3
    record["status"] = "finished"
    assert verify_record(record).problems == [
        "status is 'finished' but the result's termination is 'aborted'"
    ]


@pytest.mark.parametrize(
    ("change", "problems"),
    [
        (
            lambda r: r.update(record_version=2),
            ["the record cannot be read: ValueError: record_version 2: this version reads 1"],
        ),
        (lambda r: r["dice"].update(scheme="xyz"), ["unknown dice scheme 'xyz'"]),
        (
            lambda r: r["dice"].update(commitment="bad"),
            ["the seed 's' does not match the commitment 'bad' sent before the first roll"],
        ),
        (
            lambda r: r.update(result=None),
            [
                "the match is over but has no stored result",
                "status is 'finished' but the result's termination is None",
            ],
        ),
        (lambda r: r.update(status="paused"), ["unknown status 'paused'"]),
        (
            lambda r: r.update(status="aborted"),
            ["status is 'aborted' but the result's termination is 'normal'"],
        ),
        (
            lambda r: r["seats"].reverse(),
            ["seats: tic_tac_toe has seats 0..1, in order"],
        ),
        (
            lambda r: r["seats"].append({"seat": 2, "payoff": 0.0}),
            ["seats: tic_tac_toe has seats 0..1, in order"],
        ),
        (
            lambda r: r["seats"][1].update(payoff=None),
            ["the seats' payoffs [1.0, None] are not the result's [1.0, -1.0]"],
        ),
        (
            lambda r: r["seats"][1].update(payoff=1.0),
            ["the seats' payoffs [1.0, 1.0] are not the result's [1.0, -1.0]"],
        ),
        (
            lambda r: r.update(termination="resign"),
            ["termination 'resign' is not the result's 'normal'"],
        ),
        (lambda r: r.update(at_fault=1), ["at_fault 1 is not the result's None"]),
        (lambda r: r.update(seed="t"), ["seed 't' is not the dice's seed 's'"]),
        (lambda r: r.update(plies=4), ["plies is 4 but the record holds 5"]),
        (
            lambda r: r["result"]["final_position"].update(player=0),
            ["the re-derived final position differs from the stored one"],
        ),
        (
            lambda r: r["result"].update(payoffs=[-1.0, 1.0]),
            [
                "the stored payoffs [-1.0, 1.0] are not the [1.0, -1.0] a 'normal' end pays",
                "the seats' payoffs [1.0, -1.0] are not the result's [-1.0, 1.0]",
            ],
        ),
        (
            # A wrong move: the result is not checked against a replay that stopped.
            lambda r: r["moves"][4].update(move="a3"),
            ["ply 4 ('a3'): illegal move 'a3' in tic_tac_toe: legal moves are c3, a2, b2, c2, c1"],
        ),
    ],
)
def test_one_change_to_a_record_gives_its_problem(change: Any, problems: list[str]) -> None:
    record = ttt_record()
    change(record)
    found = verify_record(record)
    assert found.problems == problems
    assert (found.match_id, found.game) == ("m", "tic_tac_toe")


def test_an_unknown_dice_scheme_checks_nothing_else() -> None:
    record = ttt_record()
    record["dice"]["scheme"] = "xyz"
    found = verify_record(record)
    assert not found.dice_checked and found.moves == 0 and found.state is None
    assert report(found) == [
        "match m (tic_tac_toe, finished): 0 moves",
        "  FAIL: unknown dice scheme 'xyz'",
    ]


def test_what_cannot_be_read_is_named_with_what_could() -> None:
    found = verify_record({"id": "x", "game": "chess", "status": "finished", "moves": []})
    assert (found.match_id, found.game, found.status) == ("x", "chess", "?")
    assert found.problems == ["the record cannot be read: ValueError: " + unknown_game("chess")]
    listed = verify_record([])  # type: ignore[arg-type]
    assert (listed.match_id, listed.game, listed.status) == ("?", "?", "?")
    assert listed.problems == [
        "the record cannot be read: AttributeError: 'list' object has no attribute 'get'"
    ]


def unknown_game(name: str) -> str:
    with pytest.raises(ValueError) as caught:
        games.get(name)
    return str(caught.value)


def test_normal_needs_the_end_of_the_game() -> None:
    record = ttt_record(X_WINS[:4], termination="normal", payoffs=[0.0, 0.0])
    assert verify_record(record).problems == [
        "termination is 'normal' but the re-derived position is not over"
    ]


def test_a_forfeit_names_a_seat_of_the_game() -> None:
    # Seat 0 is to move after four plies; either seat may be at fault (a disconnect).
    for seat, payoffs in ((0, [-1.0, 1.0]), (1, [1.0, -1.0])):
        record = ttt_record(X_WINS[:4], termination="timeout", at_fault=seat, payoffs=payoffs)
        assert verify_record(record).problems == [], seat
    for bad in (2, -1, None, "0"):
        record = ttt_record(X_WINS[:4], termination="timeout", at_fault=bad, payoffs=[0.0, 0.0])
        assert verify_record(record).problems == [
            f"termination 'timeout' names no seat at fault ({bad})"
        ]


def test_only_a_resignation_may_come_after_the_end() -> None:
    record = ttt_record(termination="resign", at_fault=1, payoffs=[1.0, -1.0])
    assert verify_record(record).problems == []
    record = ttt_record(termination="timeout", at_fault=1, payoffs=[1.0, -1.0])
    assert verify_record(record).problems == [
        "termination is 'timeout' but the game had already ended"
    ]


def test_a_move_limit_shares_the_payoffs() -> None:
    record = ttt_record(X_WINS[:4], termination="move_limit", payoffs=[0.0, 0.0])
    assert verify_record(record).problems == []
    record = ttt_record(X_WINS[:4], termination="move_limit", payoffs=[1.0, -1.0])
    assert verify_record(record).problems == [
        "the stored payoffs [1.0, -1.0] are not the [0.0, 0.0] a 'move_limit' end pays"
    ]
    record = ttt_record(X_WINS[:4], termination="draw", payoffs=[0.0, 0.0])
    assert verify_record(record).problems == ["unknown termination 'draw'"]


def test_a_forfeit_for_an_illegal_move_may_end_on_the_refused_move() -> None:
    record = ttt_record(REFUSED[:2], termination="illegal_move", at_fault=0, payoffs=[-1.0, 1.0])
    record["moves"] = [dict(e) for e in REFUSED]
    record["plies"] = 3
    found = verify_record(record)
    assert found.problems == [] and found.moves == 2
    assert found.notes == ["ply 2 ('a3'): the refused move that lost the match"]
    # The same moves ending in a timeout: the refused move is a problem.
    record["result"]["termination"] = record["termination"] = "timeout"
    assert verify_record(record).problems == [f"ply 2 ('a3'): {ILLEGAL_A3}"]


def test_the_report_counts_in_words() -> None:
    found = check_events(games.get("backgammon"), "m", events((None, "3-1")), seed=None)
    assert (
        report(found)[0]
        == "match m (backgammon, ?): 0 moves, 1 dice roll (not re-derived: no seed)"
    )
    two = check_events(games.get("tic_tac_toe"), "m", X_WINS[:2], seed=None)
    assert report(two)[0] == "match m (tic_tac_toe, ?): 2 moves"
