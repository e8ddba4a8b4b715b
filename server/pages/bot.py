"""``GET /bots/{name}``: a bot's ratings per game, its rating over time, its recent matches and
how it fares against each opponent."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ply_arena.server.pages.errors import not_found
from ply_arena.server.pages.matches_list import summary_row
from ply_arena.server.pages.svg.charts import rating_chart
from ply_arena.server.pages.templating import render
from ply_arena.server.ratings import report
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import ratings as rating_repo
from ply_arena.server.repositories.matches import iso

#: Points in each rating chart: the latest rated matches in that game.
CHART_POINTS = 200


async def bot_page(request: Request) -> Response:
    name = request.path_params["name"]
    provisional = request.app.state.settings.provisional_matches
    async with request.app.state.database.session() as session:
        bot = await bot_repo.bot_for_page(session, name)
        if bot is None:
            raise not_found(f"bot named {name!r}")
        anchors = request.app.state.referee.ratings.model.anchors
        data = await report.bot_page(session, bot, provisional=provisional, anchors=anchors)
        charts = {}
        for rating in data["ratings"]:
            changes = await rating_repo.history(session, bot.id, rating["game"], last=CHART_POINTS)
            charts[rating["game"]] = rating_chart([(iso(c.at), c.mu, c.sigma) for c in changes])
    conn = request.app.state.referee.connections.get(bot.id)
    return render(
        request,
        "bot.html",
        {
            "bot": data,
            "online": conn is not None,
            "client": conn.client if conn is not None else None,
            "charts": charts,
            "recent": [summary_row(m) for m in data["recent_matches"]],
        },
    )
