"""Matches: the paginated list, the full record and the re-derived replay."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

import games
from protocol.errors import ErrorCode
from protocol.messages import MAX_WIRE_INT
from protocol.wire import clip
from server.api.errors import ApiError
from server.replay import replay_match
from server.repositories import matches

MAX_PAGE = 200
DEFAULT_PAGE = 50


async def list_matches(request: Request) -> JSONResponse:
    params = request.query_params
    game = params.get("game") or None
    if game is not None and game not in games.names():
        raise ApiError(
            400,
            ErrorCode.unknown_game,
            f"unknown game {game!r}: known games are {', '.join(games.names())}",
        )
    status = params.get("status") or None
    if status is not None and status not in matches.STATUSES:
        raise ApiError(
            400, ErrorCode.bad_request, f"status must be one of {', '.join(matches.STATUSES)}"
        )
    limit = _int_param(params.get("limit"), "limit", DEFAULT_PAGE, 1, MAX_PAGE)
    offset = _int_param(params.get("offset"), "offset", 0, 0, MAX_WIRE_INT)
    async with request.app.state.database.session() as session:
        items, total = await matches.list_matches(
            session,
            game=game,
            bot=params.get("bot") or None,
            status=status,
            limit=limit,
            offset=offset,
        )
    return JSONResponse({"matches": items, "total": total, "limit": limit, "offset": offset})


async def get_match(request: Request) -> JSONResponse:
    return JSONResponse(await _record(request))


async def replay(request: Request) -> Response:
    record = await _record(request)
    # Re-deriving a long match is CPU work (a 1000-ply Chinese checkers match takes ~0.3 s):
    # do it in a worker thread so the referee's clocks and turns are not held up meanwhile.
    body = await asyncio.to_thread(_replay_json, record)
    return Response(body, media_type="application/json")


def _replay_json(record: dict[str, Any]) -> bytes:
    return json.dumps(replay_match(record), separators=(",", ":")).encode()


async def _record(request: Request) -> dict[str, Any]:
    match_id = request.path_params["match_id"]
    async with request.app.state.database.session() as session:
        record = await matches.get_match(session, match_id)
    if record is None:
        raise ApiError(404, ErrorCode.not_found, f"no match {clip(repr(match_id), 80)}")
    return record


def _int_param(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within low..high (the database's integers are 64-bit: a
    larger offset would overflow in SQL, so the bound is part of the API)."""
    if raw is None or raw == "":
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 20 else low - 1
    if not low <= value <= high:
        raise ApiError(
            400,
            ErrorCode.bad_request,
            f"{name} must be an integer {low}..{high}, not {clip(repr(raw))}",
        )
    return value
