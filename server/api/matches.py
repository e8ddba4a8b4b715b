"""Matches: the paginated list, the full record and the re-derived replay."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.verify import RECORD_VERSION
from ply_arena.protocol.wire import clip
from ply_arena.server.api.errors import ApiError
from ply_arena.server.api.params import known_game, page
from ply_arena.server.replay import replay_match
from ply_arena.server.repositories import matches


async def list_matches(request: Request) -> JSONResponse:
    params = request.query_params
    game = params.get("game") or None
    if game is not None:
        known_game(game, status=400)
    status = params.get("status") or None
    if status is not None and status not in matches.STATUSES:
        raise ApiError(
            400, ErrorCode.bad_request, f"status must be one of {', '.join(matches.STATUSES)}"
        )
    limit, offset = page(request)
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


async def record_document(request: Request) -> JSONResponse:
    """The whole record as one versioned document, to keep and to check with ``arena verify``."""
    record = await _record(request)
    document = {"record_version": RECORD_VERSION, **record}
    return JSONResponse(
        document,
        headers={"Content-Disposition": f'attachment; filename="{record["id"]}.json"'},
    )


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
