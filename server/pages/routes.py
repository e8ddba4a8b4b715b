"""The pages' routes, mounted at the top of the app (the REST API is under /api, bots and
spectators connect under /ws)."""

from __future__ import annotations

from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ply_arena.server.pages.analyze import analyze_page
from ply_arena.server.pages.board import board_image
from ply_arena.server.pages.bot import bot_page
from ply_arena.server.pages.classroom import class_page
from ply_arena.server.pages.home import home
from ply_arena.server.pages.leaderboard import leaderboard_page
from ply_arena.server.pages.match import match_page
from ply_arena.server.pages.matches_list import matches_page
from ply_arena.server.pages.templating import STATIC
from ply_arena.server.pages.tournament import tournament_page, tournaments_page

routes = [
    Route("/", home, methods=["GET"]),
    Route("/leaderboard/{game}", leaderboard_page, methods=["GET"]),
    Route("/bots/{name}", bot_page, methods=["GET"]),
    Route("/classes/{name}", class_page, methods=["GET"]),
    Route("/tournaments", tournaments_page, methods=["GET"]),
    Route("/tournaments/{name}", tournament_page, methods=["GET"]),
    Route("/matches", matches_page, methods=["GET"]),
    Route("/matches/{match_id}", match_page, methods=["GET"]),
    Route("/analyze", analyze_page, methods=["GET"]),
    Route("/boards/{game}.svg", board_image, methods=["GET"]),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]
