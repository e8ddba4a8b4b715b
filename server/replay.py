"""Re-derive a stored match through ``games``: every position after every move, and a check
that the re-derived end agrees with the stored result."""

from __future__ import annotations

import json
import math
from typing import Any

import games
from games import Game, Move, State

_CLOSE = 1e-9


def replay_match(record: dict[str, Any]) -> dict[str, Any]:
    """The replay of a match record (as returned by ``repositories.matches.get_match``).

    ``verified`` is True when every stored move was legal where it was played and the end
    re-derived from them agrees with the stored result, False with ``problems`` otherwise, and
    None while the match is still running.
    """
    game = games.get(record["game"])
    state = game.initial_state()
    result = record.get("result")
    problems: list[str] = []
    steps: list[dict[str, Any]] = []
    events = record["moves"]
    for index, event in enumerate(events):
        label = f"ply {event['ply']} ({event['move']!r})"
        if state.is_terminal():
            problems.append(f"{label}: the game was already over")
            break
        expected_seat = None if state.is_chance_node() else state.player
        if event["seat"] != expected_seat:
            problems.append(f"{label}: played by seat {event['seat']}, expected {expected_seat}")
            break
        try:
            move = _parse(game, state, event["move"])
        except ValueError as exc:
            # A forfeit for an illegal move may keep the rejected move as the last event.
            rejected = (
                index == len(events) - 1
                and result is not None
                and result["termination"] == "illegal_move"
                and result["at_fault"] == event["seat"]
            )
            if rejected:
                steps.append({**event, "rejected": True, "position": None, "board": None})
            else:
                problems.append(f"{label}: {exc}")
            break
        state = state.result(move)
        steps.append({**event, "position": game.state_to_json(state), "board": game.render(state)})
    terminal = state.is_terminal()
    derived = {
        "terminal": terminal,
        "payoffs": [float(x) for x in state.returns()] if terminal else None,
        "final_position": game.state_to_json(state),
    }
    if record["status"] == "running":
        verified: bool | None = None if not problems else False
    else:
        problems.extend(_compare(game, state, derived, result))
        verified = not problems
    initial = game.initial_state()
    return {
        "match_id": record["id"],
        "game": record["game"],
        "status": record["status"],
        "seats": record["seats"],
        "time_control": record["time_control"],
        "result": result,
        "initial": {"position": game.state_to_json(initial), "board": game.render(initial)},
        "plies": steps,
        "derived": derived,
        "verified": verified,
        "problems": problems,
    }


def _parse(game: Game, state: State, text: str) -> Move:
    try:
        return game.parse_move(state, text)
    except ValueError:
        if not state.is_chance_node():
            raise
    # Chance outcomes are stored in their formatted notation; not every game parses them.
    for outcome in state.actions():
        if game.format_move(state, outcome) == text:
            return outcome
    raise ValueError(f"{text!r} is not a chance outcome here")


def _compare(
    game: Game, state: State, derived: dict[str, Any], result: dict[str, Any] | None
) -> list[str]:
    if result is None:
        return ["the match is over but has no stored result"]
    problems: list[str] = []
    stored_position = result.get("final_position")
    if stored_position is not None and not _same_position(game, state, stored_position):
        problems.append("the re-derived final position differs from the stored one")
    termination = result["termination"]
    payoffs = result.get("payoffs")
    if termination == "normal":
        if not derived["terminal"]:
            problems.append("termination is 'normal' but the re-derived position is not terminal")
        elif payoffs is None or not _close(payoffs, derived["payoffs"]):
            problems.append(
                f"stored payoffs {payoffs} differ from the re-derived {derived['payoffs']}"
            )
    elif derived["terminal"] and termination not in ("aborted", "resign"):
        problems.append(f"termination is {termination!r} but the game had already ended by rule")
    return problems


def _same_position(game: Game, state: State, stored: dict[str, Any]) -> bool:
    try:
        return game.state_from_json(stored) == state
    except ValueError:
        return _normal(stored) == _normal(game.state_to_json(state))


def _normal(data: Any) -> str:
    return json.dumps(data, sort_keys=True)


def _close(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, abs_tol=_CLOSE) for x, y in zip(a, b, strict=True)
    )
