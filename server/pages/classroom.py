"""``GET /classes/{name}[?season=N]``: a class's public page: its bots (names only: owners are
for the instructor), its leaderboard in each game in the current season or season N (the class's
bots ranked among themselves, rated afresh from the season's start: server/ratings/season.py;
an ended season read-only, as it ended), links to its other seasons, and its tournaments."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import Response

from ply_arena import games
from ply_arena.server.db.models import Classroom, ClassSeason
from ply_arena.server.pages.errors import PageError, not_found
from ply_arena.server.pages.templating import render
from ply_arena.server.ratings import report
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import tournaments as tournament_repo

#: Rows of each game's table on the class page (the whole table is its leaderboard page).
TOP = 10


async def class_page(request: Request) -> Response:
    name = request.path_params["name"]
    settings = request.app.state.settings
    provisional = settings.provisional_matches
    model = request.app.state.referee.ratings.model
    async with request.app.state.database.session() as session:
        classroom = await class_repo.class_by_name(session, name)
        if classroom is None:
            raise not_found(f"class {name[:64]!r}")
        seasons = await class_repo.seasons(session, classroom)
        season = await season_of(request, session, classroom)
        members = await class_repo.class_bots(session, classroom)
        tournaments = await tournament_repo.list_tournaments(session, class_id=classroom.id)
        boards = []
        for game in games.names():
            board = await report.leaderboard(
                session,
                game,
                limit=TOP,
                offset=0,
                provisional=provisional,
                classroom=classroom,
                season=season,
                model=model,
            )
            if board["total"]:
                boards.append(board)
    return render(
        request,
        "class.html",
        {
            "classroom": classroom.name,
            "season": report.season_info(season),
            "seasons": [report.season_info(s) for s in seasons],
            "bots": [
                {"name": b.name, "enabled": b.enabled, "retired": b.retired_at is not None}
                for b in members
            ],
            "boards": boards,
            "tournaments": [
                {"name": t.name, "game": t.game, "format": t.format, "status": t.status}
                for t in tournaments
            ],
            "provisional_below": provisional,
        },
    )


async def season_of(request: Request, session: AsyncSession, classroom: Classroom) -> ClassSeason:
    """The season ``?season=N`` names (404 if the class has none such), else the current one."""
    raw = request.query_params.get("season") or None
    if raw is None:
        return await class_repo.season(session, classroom)
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):
        raise PageError(400, "Bad season", f"season={raw[:20]!r}: a season is a number, 1, 2, ...")
    try:
        return await class_repo.season(session, classroom, int(raw))
    except class_repo.UnknownSeasonError as exc:
        raise PageError(404, "Not found", f"{exc}.") from exc
