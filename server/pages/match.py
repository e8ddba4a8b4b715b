"""``GET /matches/{id}``: a match being played, live; a finished one as a replay.

Live: the board as it stands, the moves so far, and a spectator WebSocket
(``/ws/watch/{id}``) that the page's script follows. Replay: every position of the match
re-derived through ``games`` (server/replay.py), the move list with think times, forced moves
and each bot's ``info``, an evaluation chart from the bots' reported scores, and the result in
words. A finished match never changes, so its replay page is kept, rendered (a few, least
recently used first out): re-deriving a long match takes a good part of a second, and a page
kept as bytes is nothing for the garbage collector to walk (kept as the positions' dicts and
lists, 64 replays were most of the objects a full collection walked: 40 ms pauses).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ply_arena import games
from ply_arena.protocol.verify import check_events
from ply_arena.server.pages import words
from ply_arena.server.pages.errors import not_found
from ply_arena.server.pages.svg.boards import board_svg
from ply_arena.server.pages.svg.charts import eval_chart
from ply_arena.server.pages.svg.palette import seat_colours
from ply_arena.server.pages.templating import render
from ply_arena.server.referee.match_runner import MatchRunner
from ply_arena.server.replay import replay_match
from ply_arena.server.repositories import matches as match_repo

#: Rendered replay pages kept in memory (finished matches only).
REPLAY_CACHE = 64
#: The evaluation chart's range: bots report won positions as huge scores (1e6 and more).
EVAL_CLIP = 1000.0

_replays: OrderedDict[str, bytes] = OrderedDict()


async def match_page(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    runner = request.app.state.referee.running_match(match_id)
    if runner is not None and not runner.finished:
        context = _live(request, runner)
        if runner.origin == "tournament":
            # The runner does not know its tournament game; the database does.
            async with request.app.state.database.session() as session:
                found = await match_repo.tournaments_of(session, [match_id])
            context["match"]["tournament"] = found.get(match_id)
        return render(request, "match.html", context)
    page = _replays.get(match_id)
    if page is None:
        async with request.app.state.database.session() as session:
            record = await match_repo.get_match(session, match_id)
        if record is None:
            raise not_found(f"match {match_id!r}")
        if record["status"] == match_repo.RUNNING:
            # Running in the database but not here: it is ending right now (or another
            # process referees it). The live page's stream tells which.
            return render(request, "match.html", _live_from_record(record))
        context = await asyncio.to_thread(replay_context, record)
        response = render(request, "match.html", context)
        _replays[match_id] = bytes(response.body)
        while len(_replays) > REPLAY_CACHE:
            _replays.popitem(last=False)
        return response
    _replays.move_to_end(match_id)
    return HTMLResponse(page)


def replay_context(record: dict[str, Any]) -> dict[str, Any]:
    """Everything the replay page shows, from a stored record (get_match)."""
    game = record["game"]
    replay = replay_match(record, boards=False)
    bots = [s["bot"] for s in record["seats"]]
    positions = [replay["initial"]["position"]]
    #: The move that led to each position (marked on its board); none for the first.
    last_moves: list[str | None] = [None]
    rows = []
    for step in replay["plies"]:
        rejected = bool(step.get("rejected"))
        if not rejected:
            positions.append(step["position"])
            last_moves.append(step["move"])
        rows.append(_row(game, step, index=len(positions) - 1, rejected=rejected))
    moves = sum(1 for r in rows if r["seat"] is not None and not r["rejected"])
    result = record["result"] or {}
    return {
        "mode": "replay",
        "match": record,
        "game": game,
        "seats": _seats(game, bots, None),
        "rows": rows,
        "board": board_svg(game, positions[-1], highlight=last_moves[-1]),
        # The replay's script changes it as the replay moves.
        "analyze_url": "/analyze?"
        + urlencode({"game": game, "moves": " ".join(m for m in last_moves if m is not None)}),
        "island": {
            "mode": "replay",
            "game": game,
            "positions": positions,
            "last_moves": last_moves,
        },
        "sentence": words.result_sentence(
            game,
            bots,
            termination=result.get("termination"),
            at_fault=result.get("at_fault"),
            payoffs=result.get("payoffs"),
            moves=moves,
        ),
        "eval_chart": _eval_chart(game, bots, rows),
        "verified": replay["verified"],
        "has_dice": games.get(game).has_chance,
        "problems": replay["problems"],
    }


def _live(request: Request, runner: MatchRunner) -> dict[str, Any]:
    game = runner.game.name
    bots = [s.name for s in runner.seats]
    connections = request.app.state.referee.connections
    clients = []
    for seat in runner.seats:
        conn = connections.get(seat.bot_id)
        clients.append(None if conn is None else conn.client)
    events = [e.model_dump() for e in list(runner.events)]
    return _live_context(
        game,
        bots,
        events,
        game_position(runner),
        match_id=runner.match_id,
        clients=clients,
        match={
            "id": runner.match_id,
            "game": game,
            "status": "running",
            "time_control": runner.time_control.model_dump(),
            "policy": runner.policy.value,
            "rated": runner.rated,
            "tournament": None,
        },
    )


def game_position(runner: MatchRunner) -> dict[str, Any]:
    return runner.game.state_to_json(runner.state)


def _live_from_record(record: dict[str, Any]) -> dict[str, Any]:
    game = games.get(record["game"])
    # The stored moves as far as they re-derive (no seed yet: the dice are taken as stored).
    derived = check_events(game, record["id"], record["moves"], seed=None)
    state = derived.state if derived.state is not None else game.initial_state()
    bots = [s["bot"] for s in record["seats"]]
    return _live_context(
        game.name,
        bots,
        record["moves"][: len(derived.states)],
        game.state_to_json(state),
        match_id=record["id"],
        clients=[None] * len(bots),
        match=record,
    )


def _live_context(
    game: str,
    bots: list[str],
    events: list[dict[str, Any]],
    position: dict[str, Any],
    *,
    match_id: str,
    clients: list[str | None],
    match: dict[str, Any],
) -> dict[str, Any]:
    # No info and no think times while the match runs: spectators see what the players see.
    rows = [
        _row(game, {**e, "think_ms": None, "info": None, "forced": e.get("forced")}, index=i + 1)
        for i, e in enumerate(events)
    ]
    return {
        "mode": "live",
        "match": match,
        "game": game,
        "seats": _seats(game, bots, clients),
        "rows": rows,
        "board": board_svg(game, position, highlight=events[-1]["move"] if events else None),
        "island": {
            "mode": "live",
            "game": game,
            "match_id": match_id,
            "watch": f"/ws/watch/{match_id}",
            "labels": _labels(game),
            "move_ms": match["time_control"]["move_ms"],
            "bank_ms": match["time_control"]["bank_ms"],
        },
        "sentence": words.result_sentence(
            game,
            bots,
            termination=None,
            at_fault=None,
            payoffs=None,
            moves=sum(1 for e in events if e.get("seat") is not None),
        ),
        "eval_chart": None,
        "verified": None,
        "has_dice": games.get(game).has_chance,
        "problems": [],
    }


def _labels(game: str) -> list[str]:
    return [words.seat_label(game, s) for s in range(games.get(game).num_players)]


def _seats(game: str, bots: list[str], clients: list[str | None] | None) -> list[dict[str, Any]]:
    colours = seat_colours(game)
    return [
        {
            "seat": seat,
            "bot": bot,
            "label": words.seat_label(game, seat),
            "colour": colours[seat],
            "client": clients[seat] if clients is not None else None,
        }
        for seat, bot in enumerate(bots)
    ]


def _row(game: str, event: dict[str, Any], *, index: int, rejected: bool = False) -> dict[str, Any]:
    """One line of the move list; ``index`` is the position it leads to (0 = the start)."""
    seat = event.get("seat")
    info = event.get("info") or {}
    return {
        "index": index,
        "ply": event["ply"],
        "seat": seat,
        "label": words.seat_label(game, seat) if seat is not None else "dice",
        "move": event["move"],
        "think": words.think_time(event.get("think_ms")),
        "forced": event.get("forced"),
        "rejected": rejected,
        "depth": info.get("depth"),
        "score": info.get("score"),
        "nodes": info.get("nodes"),
        "pv": " ".join(info.get("pv") or []),
        "comment": info.get("comment") or "",
    }


def _eval_chart(game: str, bots: list[str], rows: list[dict[str, Any]]) -> str | None:
    """Each bot's own reported score (from its own point of view), by ply; None when no bot
    reported one."""
    # A light seat colour (white discs, white checkers) would vanish on the white chart.
    colours = [_visible(c) for c in seat_colours(game)]
    series = []
    for seat, bot in enumerate(bots):
        points = [(r["ply"], r["score"]) for r in rows if r["seat"] == seat and not r["rejected"]]
        if any(score is not None for _, score in points):
            label = f"{bot} ({words.seat_label(game, seat)})"
            series.append((label, colours[seat], points))
    if not series:
        return None
    return eval_chart(series, clip=EVAL_CLIP)


def _visible(colour: str) -> str:
    """``colour``, or a mid grey when it is too light to see on white (#RRGGBB only)."""
    if len(colour) == 7 and colour.startswith("#"):
        r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        if 0.299 * r + 0.587 * g + 0.114 * b > 200:
            return "#8a8a8a"
    return colour
