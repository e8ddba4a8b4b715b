"""``GET /matches``: every match, newest first, filtered by game, bot, status, tournament or
class, a page at a time; and the one-line summary of a match that every list on the pages shows."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ply_arena import games
from ply_arena.server.pages import words
from ply_arena.server.pages.errors import PageError
from ply_arena.server.pages.pager import page_offset, pager
from ply_arena.server.pages.templating import render
from ply_arena.server.repositories import match_filters
from ply_arena.server.repositories import matches as match_repo

PAGE = 50


def summary_row(match: dict[str, Any]) -> dict[str, Any]:
    """A stored match summary (repositories.matches) with its result in words."""
    bots = [s["bot"] for s in match["seats"]]
    payoffs = [s["payoff"] for s in match["seats"]]
    return {
        **match,
        "bots": bots,
        "result": words.short_result(
            match["game"],
            bots,
            termination=match["termination"],
            at_fault=match["at_fault"],
            payoffs=None if any(p is None for p in payoffs) else payoffs,
        ),
    }


async def matches_page(request: Request) -> Response:
    params = request.query_params
    game = params.get("game") or None
    if game is not None and game not in games.names():
        raise PageError(404, "Unknown game", f"There is no game {game!r}.")
    status = params.get("status") or None
    if status is not None and status not in match_repo.STATUSES:
        raise PageError(400, "Bad filter", f"status is one of {', '.join(match_repo.STATUSES)}.")
    offset = page_offset(request)
    bot = params.get("bot") or None
    async with request.app.state.database.session() as session:
        try:
            context = await match_filters.resolve(
                session, params.get("tournament") or None, params.get("class") or None
            )
        except match_filters.BadFilterError as exc:
            raise PageError(400, "Bad filter", str(exc)) from None
        except match_filters.UnknownFilterError as exc:
            raise PageError(404, "Not found", f"There is {exc}.") from None
        items, total = await match_repo.list_matches(
            session,
            game=game,
            bot=bot,
            status=status,
            limit=PAGE,
            offset=offset,
            tournament_id=context.tournament_id,
            class_id=context.class_id,
        )
    return render(
        request,
        "matches.html",
        {
            "matches": [summary_row(m) for m in items],
            "pages": pager(request, offset=offset, page=PAGE, total=total or 0),
            "game": game,
            "bot": bot,
            "status": status,
            "tournament": context.tournament,
            "class_name": context.class_name,
            "games": games.names(),
        },
    )
