"""Matches: the paginated list, the full record and the re-derived replay; the admin's abort."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.verify import RECORD_VERSION
from ply_arena.protocol.wire import clip
from ply_arena.server.api.auth import require_admin_only
from ply_arena.server.api.body import read_json_body
from ply_arena.server.api.errors import ApiError
from ply_arena.server.api.params import known_game, page
from ply_arena.server.replay import replay_match
from ply_arena.server.repositories import match_filters, matches


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
        try:
            context = await match_filters.resolve(
                session, params.get("tournament") or None, params.get("class") or None
            )
        except match_filters.BadFilterError as exc:
            raise ApiError(400, ErrorCode.bad_request, str(exc)) from None
        except match_filters.UnknownFilterError as exc:
            raise ApiError(404, ErrorCode.not_found, str(exc)) from None
        items, total = await matches.list_matches(
            session,
            game=game,
            bot=params.get("bot") or None,
            status=status,
            limit=limit,
            offset=offset,
            tournament_id=context.tournament_id,
            class_id=context.class_id,
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


#: How long an abort waits for the matches' results to be stored before it answers.
ABORT_WAIT_S = 10.0


async def abort_match(request: Request) -> JSONResponse:
    """``POST /api/matches/{id}/abort`` (admin): end a running match ``aborted`` now (zero
    payoffs, unrated; its bots get ``match_end``). 404 for no such match, 409 for one over."""
    match_id = request.path_params["match_id"]
    async with request.app.state.database.session() as session:
        await require_admin_only(request, session)
    ended = await _abort(request, [match_id])
    if not ended:
        async with request.app.state.database.session() as session:
            record = await matches.get_match(session, match_id)
        if record is None:
            raise ApiError(404, ErrorCode.not_found, f"no match {clip(repr(match_id), 80)}")
        raise ApiError(
            409, ErrorCode.conflict, f"match {match_id} is over already ({record['status']})"
        )
    return JSONResponse({"aborted": ended})


async def abort_all(request: Request) -> JSONResponse:
    """``POST /api/matches/abort`` with ``{"all": true}`` (admin): every running match."""
    async with request.app.state.database.session() as session:
        await require_admin_only(request, session)
    body = await read_json_body(request)
    if not isinstance(body, dict) or body.get("all") is not True:
        raise ApiError(
            400,
            ErrorCode.bad_request,
            'send {"all": true} to abort every running match (one match: '
            "POST /api/matches/{id}/abort)",
        )
    return JSONResponse({"aborted": await _abort(request, None)})


async def _abort(request: Request, ids: list[str] | None) -> list[str]:
    """Abort running matches (``ids``, or all): those this server plays through the referee
    (their results are stored before this returns), and any other the database has as running
    (nothing plays it: ended in the database). The ids ended."""
    referee = request.app.state.referee
    wanted = list(referee.matches) if ids is None else [i for i in ids if i in referee.matches]
    ended: list[str] = []
    tasks: list[asyncio.Task[None]] = []
    for match_id in wanted:
        if referee.abort_match(match_id):
            ended.append(match_id)
            task = referee.match_task(match_id)
            if task is not None:
                tasks.append(task)
    if tasks:
        await asyncio.wait(tasks, timeout=ABORT_WAIT_S)
    async with request.app.state.database.session() as session:
        stored = await matches.running_ids(session, ids)
        orphans = [i for i in stored if i not in referee.matches]
        ended.extend(await matches.abort_running(session, orphans))
    return ended
