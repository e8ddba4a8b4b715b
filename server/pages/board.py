"""``GET /boards/{game}.svg?position=JSON[&last=MOVE]``: any position of a game drawn as SVG,
with the move that led to it marked.

The replay and live pages fetch each position's board from here: one renderer, the server's,
for the first page load and every later step. The position is parsed (and so checked) by the
game before anything is drawn.
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ply_arena import games
from ply_arena.protocol.wire import clip
from ply_arena.server.pages.svg.boards import board_svg

#: A Chinese checkers position is about 400 characters of JSON; nothing needs ten times that.
MAX_POSITION_CHARS = 4096
#: The longest move notation (a backgammon play of four checkers is under 30 characters).
MAX_MOVE_CHARS = 64


async def board_image(request: Request) -> Response:
    game = request.path_params["game"]
    if game not in games.names():
        return PlainTextResponse(
            f"unknown game {clip(repr(game))}: known games are {', '.join(games.names())}",
            status_code=404,
        )
    raw = request.query_params.get("position")
    if raw is None or len(raw) > MAX_POSITION_CHARS:
        return PlainTextResponse(
            f"give ?position= with the position's JSON (at most {MAX_POSITION_CHARS} "
            "characters), as the game's state_to_json writes it",
            status_code=400,
        )
    last = request.query_params.get("last") or None
    if last is not None and len(last) > MAX_MOVE_CHARS:
        last = None  # names no move: nothing to mark
    try:
        svg = board_svg(game, json.loads(raw), highlight=last)
    except (ValueError, TypeError, RecursionError) as e:
        return PlainTextResponse(
            f"not a valid {game} position: {clip(str(e), 200)}", status_code=400
        )
    # The same position always draws the same board.
    return Response(
        svg, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
    )
