"""The snapshot of a match that is over, from its stored record (its runner is gone)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ply_arena import games
from ply_arena.protocol.messages import SeatInfo, TimeControl
from ply_arena.protocol.spectator import (
    SPECTATOR_STREAM_VERSION,
    WatchedMove,
    WatchResult,
    WatchStart,
)
from ply_arena.protocol.verify import parse_event


def snapshot_from_record(record: dict[str, Any]) -> WatchStart:
    """``watch_start`` for a stored match (``repositories.matches.get_match``'s record).

    The clocks are not stored: ``clocks_ms`` is null, as for every match that is over. A match
    a server crash left running has no final position stored: it is re-derived from the moves
    (CPU work for a long match: call this in a worker thread).
    """
    game = games.get(record["game"])
    moves = record["moves"]
    result = record["result"]
    position = result["final_position"] if result is not None else None
    if position is None:
        position = _position_after(game, moves)
    return WatchStart(
        stream_version=SPECTATOR_STREAM_VERSION,
        match_id=record["id"],
        game=record["game"],
        seats=[SeatInfo(seat=s["seat"], bot=s["bot"]) for s in record["seats"]],
        time_control=TimeControl(**record["time_control"]),
        policy=record["policy"],
        rated=record["rated"],
        status=record["status"],
        position=position,
        ply=len(moves),
        moves=[
            WatchedMove(ply=m["ply"], seat=m["seat"], move=m["move"], forced=m["forced"])
            for m in moves
        ],
        clocks_ms=None,
        to_move=None,
        move_ms=None,
        dice_commitment=record["dice"]["commitment"],
        result=(
            None
            if result is None
            else WatchResult(
                payoffs=result["payoffs"],
                termination=result["termination"],
                at_fault=result["at_fault"],
                plies=len(moves),
                seed=record["seed"],
            )
        ),
    )


def _position_after(game: games.Game, moves: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The position the stored events lead to (up to the first that does not apply: a forfeit
    for an illegal move may keep the rejected move as the last event)."""
    state = game.initial_state()
    for event in moves:
        if state.is_terminal():
            break
        try:
            state = state.result(parse_event(game, state, event["move"]))
        except ValueError:
            break
    return game.state_to_json(state)
