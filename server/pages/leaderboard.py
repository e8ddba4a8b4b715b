"""``GET /leaderboard/{game}[?class=NAME[&season=N]]``: rank, rating with its uncertainty, W/D/L,
provisional and house marks, and each bot's recent ratings as a sparkline; with ``class``, the
bots of that class ranked among themselves in its current season (or season N, read-only once
ended), rated afresh from the season's start (no sparkline: those are the global ratings)."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from ply_arena import games
from ply_arena.server.pages.classroom import season_of
from ply_arena.server.pages.errors import PageError, not_found
from ply_arena.server.pages.pager import page_offset, pager
from ply_arena.server.pages.svg.charts import sparkline
from ply_arena.server.pages.templating import render
from ply_arena.server.ratings import report
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import ratings as rating_repo

PAGE = 50
#: Points in each sparkline: the latest rated matches.
SPARK_POINTS = 30


async def leaderboard_page(request: Request) -> Response:
    game = request.path_params["game"]
    if game not in games.names():
        raise PageError(
            404,
            "Unknown game",
            f"There is no game {game!r}; the games are {', '.join(games.names())}.",
        )
    offset = page_offset(request)
    provisional = request.app.state.settings.provisional_matches
    class_name = request.query_params.get("class") or None
    async with request.app.state.database.session() as session:
        classroom = None
        season = None
        if class_name is not None:
            classroom = await class_repo.class_by_name(session, class_name)
            if classroom is None:
                raise not_found(f"class {class_name[:64]!r}")
            season = await season_of(request, session, classroom)
        board = await report.leaderboard(
            session,
            game,
            limit=PAGE,
            offset=offset,
            provisional=provisional,
            classroom=classroom,
            season=season,
            model=request.app.state.referee.ratings.model,
        )
        recent = {}
        if classroom is None:
            recent = await rating_repo.recent_ratings(
                session, game, [row["bot"] for row in board["ranking"]], last=SPARK_POINTS
            )
    rows = [{**row, "spark": sparkline(recent.get(row["bot"], []))} for row in board["ranking"]]
    query: dict[str, str] = {}
    if board["class"]:
        query["class"] = board["class"]
        if not board["season"]["current"]:
            query["season"] = str(board["season"]["number"])
    return render(
        request,
        "leaderboard.html",
        {
            "game": game,
            "rows": rows,
            "pages": pager(request, offset=offset, page=PAGE, total=board["total"]),
            "provisional_below": provisional,
            "games": games.names(),
            "classroom": board["class"],
            "season": board["season"],
            "class_query": f"?{urlencode(query)}" if query else "",
            "csv_query": f"?{urlencode({**query, 'format': 'csv'})}",
        },
    )
