"""``GET /classes/{name}``: a class's public page: its bots (names only: owners are for the
instructor), its leaderboard in each game (the class's bots ranked among themselves) and its
tournaments."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ply_arena import games
from ply_arena.server.pages.errors import not_found
from ply_arena.server.pages.templating import render
from ply_arena.server.ratings import report
from ply_arena.server.ratings.anchors import parse_anchors
from ply_arena.server.repositories import classes as class_repo
from ply_arena.server.repositories import tournaments as tournament_repo

#: Rows of each game's table on the class page (the whole table is its leaderboard page).
TOP = 10


async def class_page(request: Request) -> Response:
    name = request.path_params["name"]
    provisional = request.app.state.settings.provisional_matches
    anchors = parse_anchors(request.app.state.settings.rating_anchors)
    async with request.app.state.database.session() as session:
        classroom = await class_repo.class_by_name(session, name)
        if classroom is None:
            raise not_found(f"class {name[:64]!r}")
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
                anchors=anchors,
            )
            if board["total"]:
                boards.append(board)
    return render(
        request,
        "class.html",
        {
            "classroom": classroom.name,
            "bots": [{"name": b.name, "enabled": b.enabled} for b in members],
            "boards": boards,
            "tournaments": [
                {"name": t.name, "game": t.game, "format": t.format, "status": t.status}
                for t in tournaments
            ],
            "provisional_below": provisional,
        },
    )
