"""``GET /leaderboard/{game}``: rank, rating with its uncertainty, W/D/L, provisional and house
marks, and each bot's recent ratings as a sparkline."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

import games
from server.pages.errors import PageError
from server.pages.pager import page_offset, pager
from server.pages.svg.charts import sparkline
from server.pages.templating import render
from server.ratings import report
from server.repositories import ratings as rating_repo

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
    async with request.app.state.database.session() as session:
        board = await report.leaderboard(
            session, game, limit=PAGE, offset=offset, provisional=provisional
        )
        recent = await rating_repo.recent_ratings(
            session, game, [row["bot"] for row in board["ranking"]], last=SPARK_POINTS
        )
    rows = [{**row, "spark": sparkline(recent.get(row["bot"], []))} for row in board["ranking"]]
    return render(
        request,
        "leaderboard.html",
        {
            "game": game,
            "rows": rows,
            "pages": pager(request, offset=offset, page=PAGE, total=board["total"]),
            "provisional_below": provisional,
            "games": games.names(),
        },
    )
