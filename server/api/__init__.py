"""The REST API under /api: endpoints parse, call a repository or service, and render."""

from __future__ import annotations

from starlette.routing import Route

from ply_arena.server.api import analyze, bots, classes, games, leaderboard, matches, tournaments

routes = [
    Route("/health", games.health, methods=["GET"]),
    Route("/analyze", analyze.analyze, methods=["GET"]),
    Route("/games", games.list_games, methods=["GET"]),
    Route("/bots", bots.list_bots, methods=["GET"]),
    Route("/bots", bots.create_bot, methods=["POST"]),
    Route("/bots/{name}", leaderboard.bot_page, methods=["GET"]),
    Route("/bots/{name}/ratings", leaderboard.rating_history, methods=["GET"]),
    Route("/bots/{name}/rotate", bots.rotate_token, methods=["POST"]),
    Route("/bots/{name}/disable", bots.disable_bot, methods=["POST"]),
    Route("/bots/{name}/enable", bots.enable_bot, methods=["POST"]),
    Route("/bots/{name}/retire", bots.retire_bot, methods=["POST"]),
    Route("/classes", classes.list_classes, methods=["GET"]),
    Route("/classes", classes.create_class, methods=["POST"]),
    Route("/classes/{name}", classes.get_class, methods=["GET"]),
    Route("/classes/{name}/code/rotate", classes.rotate_code, methods=["POST"]),
    Route("/classes/{name}/code/close", classes.close_code, methods=["POST"]),
    Route("/classes/{name}/code/open", classes.open_code, methods=["POST"]),
    Route("/classes/{name}/token/rotate", classes.rotate_instructor_token, methods=["POST"]),
    Route("/classes/{name}/seasons", classes.list_seasons, methods=["GET"]),
    Route("/classes/{name}/seasons", classes.start_season, methods=["POST"]),
    Route("/register", classes.register, methods=["POST"]),
    Route("/tournaments", tournaments.list_tournaments, methods=["GET"]),
    Route("/tournaments", tournaments.create_tournament, methods=["POST"]),
    Route("/tournaments/{name}", tournaments.get_tournament, methods=["GET"]),
    Route("/tournaments/{name}/start", tournaments.start, methods=["POST"]),
    Route("/tournaments/{name}/pause", tournaments.pause, methods=["POST"]),
    Route("/tournaments/{name}/resume", tournaments.resume, methods=["POST"]),
    Route("/tournaments/{name}/cancel", tournaments.cancel, methods=["POST"]),
    Route("/tournaments/{name}/export", tournaments.export_tournament, methods=["GET"]),
    Route("/tournaments/{name}/grades.csv", tournaments.grades, methods=["GET"]),
    Route("/leaderboard/{game}", leaderboard.leaderboard, methods=["GET"]),
    Route("/matches", matches.list_matches, methods=["GET"]),
    Route("/matches/abort", matches.abort_all, methods=["POST"]),
    Route("/matches/{match_id}", matches.get_match, methods=["GET"]),
    Route("/matches/{match_id}/replay", matches.replay, methods=["GET"]),
    Route("/matches/{match_id}/record", matches.record_document, methods=["GET"]),
    Route("/matches/{match_id}/abort", matches.abort_match, methods=["POST"]),
]
