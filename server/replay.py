"""Re-derive a stored match through ``games``: every position after every move, and the check
of :mod:`ply_arena.protocol.verify` (dice, moves, result) that the stored record holds."""

from __future__ import annotations

from typing import Any

from ply_arena import games
from ply_arena.protocol.verify import parse_event, verify_record


def replay_match(record: dict[str, Any], *, boards: bool = True) -> dict[str, Any]:
    """The replay of a match record (as returned by ``repositories.matches.get_match``).

    ``verified`` is True when the record holds (the dice are the seed's, every stored move was
    legal where it was played and the end re-derived from them agrees with the stored result),
    False with ``problems`` otherwise, and None while the match is still running.
    ``boards=False`` leaves out each position's text board (the pages draw their own).
    """
    game = games.get(record["game"])
    check = verify_record(record)

    def _board(state: games.State) -> str | None:
        return game.render(state) if boards else None

    result = record.get("result")
    state = game.initial_state()
    steps: list[dict[str, Any]] = []
    events = record["moves"]
    for index, event in enumerate(events):
        if state.is_terminal():
            break
        if index < len(check.states):
            # The check has derived this position already.
            state = check.states[index]
            steps.append({**event, "position": game.state_to_json(state), "board": _board(state)})
            continue
        try:
            move = parse_event(game, state, event["move"])
        except ValueError:
            # A forfeit for an illegal move may keep the rejected move as the last event.
            rejected = (
                index == len(events) - 1
                and result is not None
                and result["termination"] == "illegal_move"
                and result["at_fault"] == event["seat"]
            )
            if rejected:
                steps.append({**event, "rejected": True, "position": None, "board": None})
            break
        state = state.result(move)
        steps.append({**event, "position": game.state_to_json(state), "board": _board(state)})
    terminal = state.is_terminal()
    derived = {
        "terminal": terminal,
        "payoffs": [float(x) for x in state.returns()] if terminal else None,
        "final_position": game.state_to_json(state),
    }
    problems = check.problems
    verified = (None if not problems else False) if record["status"] == "running" else not problems
    initial = game.initial_state()
    return {
        "match_id": record["id"],
        "game": record["game"],
        "status": record["status"],
        "seats": record["seats"],
        "time_control": record["time_control"],
        "result": result,
        #: The restarts the match lived through (``ply``, ``at``), as in the record.
        "resumed": record.get("resumed", []),
        "initial": {"position": game.state_to_json(initial), "board": _board(initial)},
        "plies": steps,
        "derived": derived,
        "verified": verified,
        "problems": problems,
    }
