"""Leaderboards and bot pages: ``GET /api/leaderboard/{game}``, ``GET /api/bots/{name}`` and
``GET /api/bots/{name}/ratings?game=``; the data is built by ply_arena.server.ratings.report."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import JSONResponse

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip
from ply_arena.server.api.errors import ApiError
from ply_arena.server.api.params import known_game, page
from ply_arena.server.db.models import Bot
from ply_arena.server.ratings import report
from ply_arena.server.ratings.anchors import parse_anchors
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import classes as class_repo


async def leaderboard(request: Request) -> JSONResponse:
    game = known_game(request.path_params["game"])
    limit, offset = page(request)
    async with request.app.state.database.session() as session:
        classroom = None
        class_name = request.query_params.get("class")
        if class_name:
            classroom = await class_repo.class_by_name(session, class_name)
            if classroom is None:
                raise ApiError(
                    404, ErrorCode.not_found, f"no class named {clip(repr(class_name), 80)}"
                )
        data = await report.leaderboard(
            session,
            game,
            limit=limit,
            offset=offset,
            provisional=request.app.state.settings.provisional_matches,
            classroom=classroom,
            anchors=parse_anchors(request.app.state.settings.rating_anchors),
        )
    return JSONResponse(data)


async def bot_page(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        bot = await _bot(session, request)
        settings = request.app.state.settings
        data = await report.bot_page(
            session,
            bot,
            provisional=settings.provisional_matches,
            anchors=parse_anchors(settings.rating_anchors),
        )
    return JSONResponse(data)


async def rating_history(request: Request) -> JSONResponse:
    game = request.query_params.get("game") or None
    if game is not None:
        known_game(game, status=400)
    async with request.app.state.database.session() as session:
        data = await report.history(session, await _bot(session, request), game)
    return JSONResponse(data)


async def _bot(session: AsyncSession, request: Request) -> Bot:
    name = request.path_params["name"]
    bot = await bot_repo.bot_by_name(session, name)
    if bot is None:
        raise ApiError(404, ErrorCode.not_found, f"no bot named {clip(repr(name), 80)}")
    return bot
