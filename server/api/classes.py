"""Classes: created by the admin, managed by their instructor, joined by students.

``POST /api/classes`` (admin) answers the class's join code and its instructor's token (shown
once). The instructor (or the admin) reads the class with its bots and their owners, rotates,
closes and opens the join code, and rotates the instructor token. A student registers a bot
with ``POST /api/register`` and the join code: the answer is the bot's token, shown once.
Owners' names and e-mails appear in these answers only, never in public ones.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import JSONResponse

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip
from ply_arena.server.api.auth import admin_or_instructor, may_manage_class, require_admin_only
from ply_arena.server.api.body import read_json_body
from ply_arena.server.api.bots import render_bot
from ply_arena.server.api.errors import ApiError
from ply_arena.server.api.throttle import AddressThrottle
from ply_arena.server.db.models import Bot, Classroom
from ply_arena.server.ratings import report
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories.matches import iso


def render_class(classroom: Classroom) -> dict[str, Any]:
    return {
        "name": classroom.name,
        "join_code": class_repo.show_code(classroom.join_code),
        "join_open": classroom.join_open,
        "created_at": iso(classroom.created_at),
    }


def render_member(bot: Bot) -> dict[str, Any]:
    """A bot of the class as its instructor sees it: with its owner."""
    return {**render_bot(bot), "owner": bot.owner}


async def create_class(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        await require_admin_only(request, session)
    body = await _body(request, {"name"}, '{"name": "<class name>"}')
    try:
        async with request.app.state.database.session() as session:
            classroom, token = await class_repo.create_class(session, body["name"])
            rendered = render_class(classroom)
    except class_repo.ClassNameError as exc:
        raise ApiError(400, ErrorCode.bad_request, str(exc)) from exc
    except class_repo.ClassExistsError as exc:
        raise ApiError(409, ErrorCode.conflict, str(exc)) from exc
    # The instructor's token is in this response and nowhere else.
    return JSONResponse({**rendered, "instructor_token": token}, status_code=201)


async def list_classes(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        await require_admin_only(request, session)
        found = []
        for classroom in await class_repo.list_classes(session):
            members = await class_repo.class_bots(session, classroom)
            found.append({**render_class(classroom), "bots": len(members)})
    return JSONResponse({"classes": found})


async def get_class(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        classroom = await _managed_class(request, session)
        members = await class_repo.class_bots(session, classroom)
        found = await class_repo.seasons(session, classroom)
        return JSONResponse(
            {
                **render_class(classroom),
                "bots": [render_member(b) for b in members],
                "seasons": [report.season_info(s) for s in found],
            }
        )


async def rotate_code(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        classroom = await _managed_class(request, session)
        await class_repo.rotate_join_code(session, classroom)
        return JSONResponse(render_class(classroom))


async def close_code(request: Request) -> JSONResponse:
    return await _set_open(request, False)


async def open_code(request: Request) -> JSONResponse:
    return await _set_open(request, True)


async def _set_open(request: Request, open_: bool) -> JSONResponse:
    async with request.app.state.database.session() as session:
        classroom = await _managed_class(request, session)
        await class_repo.set_join_open(session, classroom, open_)
        return JSONResponse(render_class(classroom))


async def rotate_instructor_token(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        classroom = await _managed_class(request, session)
        token = await class_repo.rotate_instructor_token(session, classroom)
        rendered = render_class(classroom)
    return JSONResponse({**rendered, "instructor_token": token})


async def list_seasons(request: Request) -> JSONResponse:
    """The class's seasons (public: the class page shows them)."""
    async with request.app.state.database.session() as session:
        name = request.path_params["name"]
        classroom = await class_repo.class_by_name(session, name)
        if classroom is None:
            raise ApiError(404, ErrorCode.not_found, f"no class named {clip(repr(name), 80)}")
        found = await class_repo.seasons(session, classroom)
        return JSONResponse(
            {"class": classroom.name, "seasons": [report.season_info(s) for s in found]}
        )


async def start_season(request: Request) -> JSONResponse:
    """End the class's current season and start the next (the admin or its instructor)."""
    try:
        async with request.app.state.database.session() as session:
            classroom = await _managed_class(request, session)
            started = await class_repo.start_season(session, classroom)
            ended = await class_repo.season(session, classroom, started.number - 1)
            body = {
                "class": classroom.name,
                "season": report.season_info(started),
                "ended": report.season_info(ended),
            }
    except IntegrityError as exc:
        raise ApiError(
            409, ErrorCode.conflict, "another new season of this class was started just now"
        ) from exc
    return JSONResponse(body, status_code=201)


async def register(request: Request) -> JSONResponse:
    """A student's bot in the class of the join code; its token, shown once."""
    throttle: AddressThrottle = request.app.state.register_throttle
    address = request.client.host if request.client else "unknown"
    wait = throttle.allow(address, time.monotonic())
    if wait is not None:
        seconds = max(1, round(wait))
        raise ApiError(
            429,
            ErrorCode.rate_limited,
            f"too many registrations from this address: try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
    body = await _body(
        request,
        {"code", "name", "owner"},
        '{"code": "<join code>", "name": "<bot name>", "owner": "<your name or e-mail>"}',
    )
    try:
        async with request.app.state.database.session() as session:
            bot, classroom, token = await class_repo.register_bot(
                session, body["code"], body["name"], body["owner"]
            )
            rendered = render_bot(bot)
            class_name = classroom.name
    except class_repo.BadJoinCodeError as exc:
        raise ApiError(403, ErrorCode.bad_join_code, str(exc)) from exc
    except class_repo.JoinClosedError as exc:
        raise ApiError(403, ErrorCode.join_closed, str(exc)) from exc
    except (class_repo.OwnerError, bot_repo.BotNameError) as exc:
        raise ApiError(400, ErrorCode.bad_request, str(exc)) from exc
    except bot_repo.BotExistsError as exc:
        raise ApiError(409, ErrorCode.conflict, str(exc)) from exc
    return JSONResponse({**rendered, "class": class_name, "token": token}, status_code=201)


async def _managed_class(request: Request, session: AsyncSession) -> Classroom:
    """The class of the path, if the caller is the admin or its instructor (401, 404, 403)."""
    caller = await admin_or_instructor(request, session)
    name = request.path_params["name"]
    classroom = await class_repo.class_by_name(session, name)
    if classroom is None:
        raise ApiError(404, ErrorCode.not_found, f"no class named {clip(repr(name), 80)}")
    may_manage_class(caller, classroom)
    return classroom


async def _body(request: Request, fields: set[str], shape: str) -> dict[str, str]:
    """A JSON object with exactly ``fields``, each a string; else a coded 400 showing
    ``shape``."""
    body = await read_json_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, ErrorCode.invalid_message, f"send a JSON body {shape}")
    extra = sorted(set(body) - fields)
    if extra:
        raise ApiError(
            400,
            ErrorCode.invalid_message,
            f"unknown field {clip(repr(extra[0]))}: the body is {shape}",
        )
    for name in sorted(fields):
        if not isinstance(body.get(name), str):
            raise ApiError(
                400, ErrorCode.invalid_message, f"{name!r} must be a string: the body is {shape}"
            )
    return {name: body[name] for name in fields}
