"""The spectator stream's messages as JSON text, from pieces the match runner already has.

The runner publishes a ``move`` and a ``turn`` for every move of a watched match; going through
the pydantic models (protocol/spectator.py) each time would cost more than the rest of the move.
These functions write the same bytes ``model_dump_json()`` would (same field order, compact,
UTF-8 text rather than escapes); tests/server/test_spectators.py validates every frame of real
matches against the models and checks that they serialise back to exactly those bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ply_arena.protocol.spectator import SPECTATOR_STREAM_VERSION

#: Compact JSON as pydantic writes it; one encoder (json.dumps with options builds one per call).
dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _int_or_null(value: int | None) -> str:
    return "null" if value is None else str(value)


def _str_or_null(value: str | None) -> str:
    return "null" if value is None else dumps(value)


def _ints(values: Sequence[int]) -> str:
    return f"[{','.join(map(str, values))}]"


def move_text(
    match_id_json: str,
    *,
    ply: int,
    seat: int | None,
    move: str,
    forced: str | None,
    position_json: str,
    think_ms: int | None,
    clocks_ms: Sequence[int],
) -> str:
    """A ``move`` (WatchMove): an event and the position after it."""
    return (
        f'{{"type":"move","match_id":{match_id_json},"ply":{ply},"seat":{_int_or_null(seat)},'
        f'"move":{dumps(move)},"forced":{_str_or_null(forced)},"position":{position_json},'
        f'"think_ms":{_int_or_null(think_ms)},"clocks_ms":{_ints(clocks_ms)}}}'
    )


def turn_text(
    match_id_json: str, *, seat: int, ply: int, move_ms: int, clocks_ms: Sequence[int]
) -> str:
    """A ``turn`` (WatchTurn): ``seat`` starts thinking."""
    return (
        f'{{"type":"turn","match_id":{match_id_json},"seat":{seat},"ply":{ply},'
        f'"move_ms":{move_ms},"clocks_ms":{_ints(clocks_ms)}}}'
    )


def watched_move_json(event_json: str, forced: str | None) -> str:
    """A WatchedMove from the runner's PlayedMove JSON (``{"ply":..,"seat":..,"move":..}``)."""
    return f'{event_json[:-1]},"forced":{_str_or_null(forced)}}}'


def start_text(
    match_id_json: str,
    *,
    game: str,
    seats_json: str,
    time_control_json: str,
    policy: str,
    rated: bool,
    status: str,
    position_json: str,
    moves_json: Sequence[str],
    clocks_ms: Sequence[int] | None,
    to_move: int | None,
    move_ms: int | None,
    dice_commitment: str | None,
    result_json: str | None,
) -> str:
    """A ``watch_start`` (WatchStart); ``moves_json`` holds each WatchedMove's JSON."""
    clocks = "null" if clocks_ms is None else _ints(clocks_ms)
    return (
        f'{{"type":"watch_start","stream_version":{SPECTATOR_STREAM_VERSION},'
        f'"match_id":{match_id_json},"game":{dumps(game)},"seats":{seats_json},'
        f'"time_control":{time_control_json},"policy":{dumps(policy)},'
        f'"rated":{"true" if rated else "false"},"status":{dumps(status)},'
        f'"position":{position_json},"ply":{len(moves_json)},"moves":[{",".join(moves_json)}],'
        f'"clocks_ms":{clocks},"to_move":{_int_or_null(to_move)},'
        f'"move_ms":{_int_or_null(move_ms)},"dice_commitment":{_str_or_null(dice_commitment)},'
        f'"result":{"null" if result_json is None else result_json}}}'
    )
