"""Bots: list (public), create (admin token); rotate token / disable / enable / retire (the
admin, or the instructor of the bot's class)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import JSONResponse

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip
from ply_arena.server.api.auth import admin_or_instructor, may_manage_bot, require_admin_only
from ply_arena.server.api.body import read_json_body
from ply_arena.server.api.errors import ApiError
from ply_arena.server.db.models import Bot
from ply_arena.server.repositories import bots
from ply_arena.server.repositories.matches import iso


def render_bot(bot: Bot) -> dict[str, Any]:
    rendered = {
        "name": bot.name,
        "enabled": bot.enabled,
        "house": bot.house,
        "created_at": iso(bot.created_at),
    }
    if bot.retired_at is not None:
        rendered["retired_at"] = iso(bot.retired_at)
    return rendered


async def list_bots(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        found = await bots.list_bots(session)
        return JSONResponse({"bots": [render_bot(b) for b in found]})


async def create_bot(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        await require_admin_only(request, session)
    name = await _body_name(request)
    try:
        async with request.app.state.database.session() as session:
            bot, token = await bots.create_bot(session, name)
            rendered = render_bot(bot)
    except bots.BotNameError as exc:
        raise ApiError(400, ErrorCode.bad_request, str(exc)) from exc
    except bots.BotExistsError as exc:
        raise ApiError(409, ErrorCode.conflict, str(exc)) from exc
    # The token is in this response and nowhere else.
    return JSONResponse({**rendered, "token": token}, status_code=201)


async def rotate_token(request: Request) -> JSONResponse:
    name = request.path_params["name"]
    async with request.app.state.database.session() as session:
        await _managed_bot(request, session, name)
        try:
            token = await bots.rotate_token(session, name)
        except bots.UnknownBotError as exc:
            raise ApiError(404, ErrorCode.not_found, str(exc)) from exc
        except bots.HouseBotError as exc:
            raise ApiError(400, ErrorCode.bad_request, str(exc)) from exc
    # Committed: the old token must stop working for a connection already logged in with it.
    _revoke(request, name, ErrorCode.bad_token)
    return JSONResponse({"name": name, "token": token})


async def disable_bot(request: Request) -> JSONResponse:
    return await _set_enabled(request, False)


async def enable_bot(request: Request) -> JSONResponse:
    return await _set_enabled(request, True)


async def _set_enabled(request: Request, enabled: bool) -> JSONResponse:
    async with request.app.state.database.session() as session:
        await _managed_bot(request, session, request.path_params["name"])
        try:
            bot = await bots.set_enabled(session, request.path_params["name"], enabled)
        except bots.UnknownBotError as exc:
            raise ApiError(404, ErrorCode.not_found, str(exc)) from exc
        rendered = render_bot(bot)
    if not enabled:
        # Committed: a disabled bot that is connected right now is closed, not just refused
        # at its next hello.
        _revoke(request, rendered["name"], ErrorCode.bot_disabled)
    return JSONResponse(rendered)


async def retire_bot(request: Request) -> JSONResponse:
    """Retire the bot: disabled for good, kept under its name in every record and season,
    its name free for a new bot (repositories.bots.retire_bot)."""
    name = request.path_params["name"]
    async with request.app.state.database.session() as session:
        await _managed_bot(request, session, name)
        try:
            bot = await bots.retire_bot(session, name)
        except bots.UnknownBotError as exc:
            raise ApiError(404, ErrorCode.not_found, str(exc)) from exc
        except bots.HouseBotError as exc:
            raise ApiError(400, ErrorCode.bad_request, str(exc)) from exc
        rendered = render_bot(bot)
    # Committed: connected now, it is closed as a disabled bot is.
    _revoke(request, rendered["name"], ErrorCode.bot_disabled)
    return JSONResponse(rendered)


async def _managed_bot(request: Request, session: AsyncSession, name: str) -> Bot:
    """The bot, if the caller is the admin or the instructor of its class (401, 404, 403)."""
    caller = await admin_or_instructor(request, session)
    bot = await bots.bot_by_name(session, name)
    if bot is None:
        raise ApiError(404, ErrorCode.not_found, f"no bot named {clip(repr(name), 80)}")
    may_manage_bot(caller, bot)
    return bot


def _revoke(request: Request, name: str, code: ErrorCode) -> None:
    referee = getattr(request.app.state, "referee", None)
    if referee is not None:
        referee.bot_revoked(name, code)


async def _body_name(request: Request) -> str:
    body = await read_json_body(request)
    extra = sorted(set(body) - {"name"}) if isinstance(body, dict) else []
    if extra:
        raise ApiError(
            400,
            ErrorCode.invalid_message,
            f'unknown field {clip(repr(extra[0]))}: the body is {{"name": "<bot name>"}}',
        )
    name = body.get("name") if isinstance(body, dict) else None
    if not isinstance(name, str):
        raise ApiError(400, ErrorCode.invalid_message, 'send a JSON body {"name": "<bot name>"}')
    return name
