"""``GET /api/health`` and ``GET /api/games``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import JSONResponse

from ply_arena import games
from ply_arena.protocol.messages import PROTOCOL_VERSION
from ply_arena.server import time_controls


async def health(request: Request) -> JSONResponse:
    async with request.app.state.database.session() as session:
        await session.execute(text("SELECT 1"))
    return JSONResponse({"status": "ok", "protocol": PROTOCOL_VERSION})


async def list_games(request: Request) -> JSONResponse:
    return JSONResponse(
        {"games": [describe_game(name) for name in games.names()], "limits": time_controls.limits()}
    )


def describe_game(name: str) -> dict[str, Any]:
    game = games.get(name)
    return {
        "name": name,
        "players": game.num_players,
        "chance": game.has_chance,
        "summary": game.summary,
        "seat_names": list(game.seat_names),
        "default_time_control": time_controls.default_time_control(name).model_dump(),
        "move_limit": time_controls.move_limit(name),
    }
