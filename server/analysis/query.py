"""An analysis request read from a query string (``GET /api/analyze`` and the ``/analyze``
page): every parameter bounded, every mistake an AnalysisError that names the parameter."""

from __future__ import annotations

from collections.abc import Mapping

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip
from ply_arena.reference_agents.trace import DEFAULT_LIMIT
from ply_arena.server.analysis.runner import AnalysisError, AnalysisRequest

#: Characters of ``moves``: a whole backgammon game is about 3,000.
MAX_MOVES_CHARS = 8000
#: Characters of the agent and its options.
MAX_AGENT_CHARS = 200
MAX_DEPTH = 64
#: Nodes of the tree drawn at most (a page of 1,000 nodes is already hard to read).
MAX_LIMIT = 1000


def text_param(params: Mapping[str, str], name: str, default: str, longest: int) -> str:
    value = params.get(name)
    if value is None:
        return default
    if len(value) > longest:
        raise AnalysisError(
            400, ErrorCode.bad_request, f"{name} is longer than {longest:,} characters"
        )
    return value.strip()


def int_param(
    params: Mapping[str, str], name: str, default: int | None, low: int, high: int
) -> int | None:
    raw = (params.get(name) or "").strip()
    if raw == "":
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 12 else low - 1
    if not low <= value <= high:
        raise AnalysisError(
            400,
            ErrorCode.bad_request,
            f"{name} must be a whole number {low}..{high:,}, not {clip(repr(raw))}",
        )
    return value


def analysis_request(params: Mapping[str, str]) -> AnalysisRequest:
    """``?game=&moves=&agent=&depth=&simulations=&limit=`` as a request (game required)."""
    game = text_param(params, "game", "", 64)
    if not game:
        raise AnalysisError(
            400, ErrorCode.bad_request, "give ?game= (tic_tac_toe, connect_four, ...)"
        )
    limit = int_param(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    assert limit is not None
    return AnalysisRequest(
        game=game,
        moves=text_param(params, "moves", "", MAX_MOVES_CHARS),
        agent=text_param(params, "agent", "alphabeta", MAX_AGENT_CHARS) or "alphabeta",
        depth=int_param(params, "depth", None, 1, MAX_DEPTH),
        simulations=int_param(params, "simulations", None, 1, 10**9),
        limit=limit,
    )
