"""``GET /analyze``: pick a game, play moves (typed, or clicked on the board), pick an agent
and the size of its search, and see the tree of that search drawn.

The position and the move links are drawn here; the search runs through the server's
``Analyst`` (a process of its own, within the limits of the settings) and its report, the same
as ``GET /api/analyze`` answers, goes into the page as JSON for ``static/analyze.js`` to draw
the tree. The text trace is in the page too, for a browser without scripts.
"""

from __future__ import annotations

import shlex
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from ply_arena import games
from ply_arena.games import Game, State
from ply_arena.reference_agents.registry import applicable_agents
from ply_arena.reference_agents.trace import DEFAULT_LIMIT
from ply_arena.server.analysis.query import MAX_AGENT_CHARS, MAX_MOVES_CHARS, analysis_request
from ply_arena.server.analysis.report import parse_moves
from ply_arena.server.analysis.runner import AnalysisError
from ply_arena.server.pages import words
from ply_arena.server.pages.errors import PageError
from ply_arena.server.pages.svg.boards import board_svg
from ply_arena.server.pages.templating import render

#: The agents whose searches can be drawn, in the order the notes teach them.
TRACED = ("minimax", "alphabeta", "negamax", "expectiminimax", "maxn", "mcts")
#: What the form starts with.
DEFAULT_DEPTH = 2
DEFAULT_SIMULATIONS = 200
#: The first of these that plays a game is its default agent.
PREFERRED = ("alphabeta", "expectiminimax", "maxn", "mcts")


def traced_agents(game: Game) -> list[str]:
    playing = set(applicable_agents(game))
    return [name for name in TRACED if name in playing]


async def analyze_page(request: Request) -> Response:
    params = request.query_params
    game_name = params.get("game") or "tic_tac_toe"
    if game_name not in games.names():
        raise PageError(
            404,
            "Unknown game",
            f"There is no game {game_name[:64]!r}: the games are {', '.join(games.names())}.",
        )
    game = games.get(game_name)
    agents = traced_agents(game)
    submitted = "agent" in params
    form = {
        "game": game_name,
        "moves": (params.get("moves") or "")[:MAX_MOVES_CHARS].strip(),
        "agent": (params.get("agent") or next(a for a in PREFERRED if a in agents)),
        "options": (params.get("options") or "")[:MAX_AGENT_CHARS].strip(),
        "depth": params.get("depth") or str(DEFAULT_DEPTH),
        "simulations": params.get("simulations") or str(DEFAULT_SIMULATIONS),
        "limit": params.get("limit") or str(DEFAULT_LIMIT),
    }
    context: dict[str, Any] = {
        "form": form,
        "games": games.names(),
        "agents": agents,
        "submitted": submitted,
        "error": None,
        "report": None,
        "position_error": None,
    }
    status = 200
    try:
        state, played = parse_moves(game, form["moves"])
    except ValueError as exc:
        context["position_error"] = str(exc)
        return render(request, "analyze.html", context, status=400)
    context["position"] = _position(game, state, played, form if submitted else None)
    form["moves"] = " ".join(played)
    if submitted and context["position"]["playable"]:
        try:
            context["report"] = await request.app.state.analyst.analyze(
                analysis_request(_query(form))
            )
            context["command"] = _command(form)
            context["api_url"] = "/api/analyze?" + urlencode(_query(form))
        except AnalysisError as exc:
            context["error"] = {"code": exc.code.value, "message": exc.message}
            status = exc.status
    response = render(request, "analyze.html", context, status=status)
    if context["error"] and status == 503:
        response.headers["Retry-After"] = "2"
    return response


def _query(form: dict[str, str]) -> dict[str, str]:
    """The API's parameters for the form: the agent with its options, and the depth or the
    simulations, whichever the agent takes."""
    agent = form["agent"] + (f":{form['options']}" if form["options"] else "")
    query = {"game": form["game"], "moves": form["moves"], "agent": agent, "limit": form["limit"]}
    if form["agent"] == "mcts":
        query["simulations"] = form["simulations"]
    else:
        query["depth"] = form["depth"]
    return query


def _url(form: dict[str, str] | None, game: str, moves: list[str]) -> str:
    """The page of the position after ``moves``, analysed as ``form`` asks (if it was sent)."""
    query = {"game": game, "moves": " ".join(moves)}
    if form is not None:
        query.update({k: form[k] for k in ("agent", "options", "depth", "simulations", "limit")})
    return "/analyze?" + urlencode(query)


def _position(
    game: Game, state: State, played: list[str], form: dict[str, str] | None
) -> dict[str, Any]:
    """The board, the moves so far (each a link to its position), and what may come next."""
    seats = game.seat_names or tuple(str(i) for i in range(game.num_players))
    nexts: list[dict[str, Any]] = []
    if state.is_terminal():
        returns = list(state.returns())
        status = "The game is over: " + ", ".join(
            f"{seat} {words.number(r)}" for seat, r in zip(seats, returns, strict=True)
        )
    elif state.is_chance_node():
        status = "The dice are to be rolled: pick the roll"
        for outcome, probability in state.chance_outcomes():
            notation = game.format_move(state, outcome)
            nexts.append(
                {
                    "move": notation,
                    "url": _url(form, game.name, [*played, notation]),
                    "probability": words.fraction(probability),
                }
            )
    else:
        status = words.sentence_case(f"{seats[state.player]} to move")
        for move in state.actions():
            notation = game.format_move(state, move)
            nexts.append({"move": notation, "url": _url(form, game.name, [*played, notation])})
    links = {n["move"]: n["url"] for n in nexts} if not state.is_chance_node() else None
    return {
        "board": board_svg(
            game.name,
            game.state_to_json(state),
            highlight=played[-1] if played else None,
            links=links,
        ),
        "status": status,
        "playable": not state.is_terminal() and not state.is_chance_node(),
        "history": [
            {"move": move, "url": _url(form, game.name, played[: i + 1])}
            for i, move in enumerate(played)
        ],
        "start_url": _url(form, game.name, []),
        "back_url": _url(form, game.name, played[:-1]) if played else None,
        "nexts": nexts,
    }


def _command(form: dict[str, str]) -> str:
    """The same analysis in a terminal."""
    query = _query(form)
    parts = ["arena", "analyze", form["game"]]
    if form["moves"]:
        parts += ["--moves", form["moves"]]
    agent = query["agent"]
    if "simulations" in query:
        agent += f"{',' if ':' in agent else ':'}simulations={query['simulations']}"
    parts += ["--agent", agent]
    if "depth" in query:
        parts += ["--depth", query["depth"]]
    parts += ["--trace-limit", query["limit"]]
    return shlex.join(parts)
