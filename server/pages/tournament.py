"""``GET /tournaments`` and ``GET /tournaments/{name}``: the tournaments, and one tournament's
standings, crosstable and rounds, each game linked to its match (live while it is played).

The page shows the same document as ``GET /api/tournaments/{name}`` (server/tournaments/table.py),
so the page and the exports agree. While the tournament runs, the page reloads itself every
few seconds (a meta refresh: no script needed).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ply_arena.server.api.tournaments import summary
from ply_arena.server.pages.errors import not_found
from ply_arena.server.pages.templating import render
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import tournaments as repo
from ply_arena.server.tournaments.table import read_document

#: Seconds between reloads of a running tournament's page.
REFRESH_S = 5


async def tournaments_page(request: Request) -> Response:
    async with request.app.state.database.session() as session:
        names = {c.id: c.name for c in await class_repo.list_classes(session)}
        listed = [
            summary(t, names.get(t.class_id or 0)) for t in await repo.list_tournaments(session)
        ]
    return render(request, "tournaments.html", {"tournaments": listed})


async def tournament_page(request: Request) -> Response:
    name = request.path_params["name"]
    live = await request.app.state.referee.live_match_ids()
    async with request.app.state.database.session() as session:
        tournament = await repo.tournament_by_name(session, name)
        if tournament is None:
            raise not_found(f"tournament {name[:64]!r}")
        doc = await read_document(session, tournament, live)
    return render(
        request,
        "tournament.html",
        {"t": doc, "refresh_s": REFRESH_S if doc["status"] == "running" else None},
    )
