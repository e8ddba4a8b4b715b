"""Leaderboards and bot pages: ``GET /api/leaderboard/{game}``, ``GET /api/bots/{name}`` and
``GET /api/bots/{name}/ratings?game=``; the data is built by ply_arena.server.ratings.report."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import MAX_WIRE_INT
from ply_arena.protocol.wire import clip
from ply_arena.server.api.errors import ApiError
from ply_arena.server.api.params import int_param, known_game, page
from ply_arena.server.db.models import Bot
from ply_arena.server.ratings import report
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.tournaments import export


async def leaderboard(request: Request) -> Response:
    """A game's leaderboard; ``class=``: the class's, in its current season or ``season=N``
    (read-only once ended); ``format=csv``: the page as a CSV download."""
    game = known_game(request.path_params["game"])
    limit, offset = page(request)
    fmt = request.query_params.get("format", "json")
    if fmt not in ("json", "csv"):
        raise ApiError(400, ErrorCode.bad_request, "format is json (the default) or csv")
    raw_season = request.query_params.get("season")
    settings = request.app.state.settings
    async with request.app.state.database.session() as session:
        classroom = None
        season = None
        class_name = request.query_params.get("class")
        if class_name:
            classroom = await class_repo.class_by_name(session, class_name)
            if classroom is None:
                raise ApiError(
                    404, ErrorCode.not_found, f"no class named {clip(repr(class_name), 80)}"
                )
            if raw_season:
                number = int_param(raw_season, "season", 1, 1, MAX_WIRE_INT)
                try:
                    season = await class_repo.season(session, classroom, number)
                except class_repo.UnknownSeasonError as exc:
                    raise ApiError(404, ErrorCode.not_found, str(exc)) from exc
        elif raw_season:
            raise ApiError(400, ErrorCode.bad_request, "season= is a class's: give class= with it")
        data = await report.leaderboard(
            session,
            game,
            limit=limit,
            offset=offset,
            provisional=settings.provisional_matches,
            classroom=classroom,
            season=season,
            model=request.app.state.referee.ratings.model,
        )
    if fmt == "json":
        return JSONResponse(data)
    name = game
    if classroom is not None:
        name = f"{classroom.name}-season{data['season']['number']}-{game}"
    return Response(
        export.leaderboard_csv(data),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
    )


async def bot_page(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        bot = await _bot(session, request)
        settings = request.app.state.settings
        data = await report.bot_page(
            session,
            bot,
            provisional=settings.provisional_matches,
            anchors=request.app.state.referee.ratings.model.anchors,
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
    bot = await bot_repo.bot_for_page(session, name)
    if bot is None:
        raise ApiError(404, ErrorCode.not_found, f"no bot named {clip(repr(name), 80)}")
    return bot
