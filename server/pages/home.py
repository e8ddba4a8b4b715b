"""``GET /``: the games, the matches being played now, recent results."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ply_arena import games
from ply_arena.server.pages.live import live_matches
from ply_arena.server.pages.matches_list import summary_row
from ply_arena.server.pages.templating import render
from ply_arena.server.repositories import matches as match_repo

RECENT = 15
LIVE = 20


async def home(request: Request) -> Response:
    async with request.app.state.database.session() as session:
        recent, _ = await match_repo.list_matches(
            session, status=match_repo.FINISHED, limit=RECENT, count=False
        )
    context: dict[str, Any] = {
        "games": [
            {"name": game.name, "players": game.num_players, "summary": game.summary}
            for game in map(games.get, games.names())
        ],
        "live": await live_matches(request.app.state.referee, LIVE),
        "recent": [summary_row(m) for m in recent],
    }
    return render(request, "home.html", context)
