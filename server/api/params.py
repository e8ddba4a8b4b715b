"""Query and path parameters shared by the REST endpoints: pages, games."""

from __future__ import annotations

from starlette.requests import Request

from ply_arena import games
from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import MAX_WIRE_INT
from ply_arena.protocol.wire import clip
from ply_arena.server.api.errors import ApiError

MAX_PAGE = 200
DEFAULT_PAGE = 50


def page(request: Request) -> tuple[int, int]:
    """(limit, offset) from ``?limit=&offset=``: 1..200 (default 50) and 0..2^53 - 1."""
    params = request.query_params
    limit = int_param(params.get("limit"), "limit", DEFAULT_PAGE, 1, MAX_PAGE)
    offset = int_param(params.get("offset"), "offset", 0, 0, MAX_WIRE_INT)
    return limit, offset


def int_param(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within low..high (the database's integers are 64-bit: a
    larger offset would overflow in SQL, so the bound is part of the API)."""
    if raw is None or raw == "":
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 20 else low - 1
    if not low <= value <= high:
        raise ApiError(
            400,
            ErrorCode.bad_request,
            f"{name} must be an integer {low}..{high}, not {clip(repr(raw))}",
        )
    return value


def known_game(name: str, *, status: int = 404) -> str:
    """``name`` if a game has it; else ApiError ``unknown_game`` listing the games."""
    if name not in games.names():
        raise ApiError(
            status,
            ErrorCode.unknown_game,
            f"unknown game {clip(repr(name))}: known games are {', '.join(games.names())}",
        )
    return name
