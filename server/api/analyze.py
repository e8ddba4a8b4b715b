"""``GET /api/analyze``: a reference agent's search of a position, with its tree.

The answer is ``arena analyze --trace --json``'s report (docs/agents.md, "Traces"), plus
``trace_nodes``: each node's position and line of the text trace. Computed in a process of its
own within the server's limits (server/analysis/runner.py).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ply_arena.server.analysis.query import analysis_request
from ply_arena.server.analysis.runner import AnalysisError
from ply_arena.server.api.errors import error_response


async def analyze(request: Request) -> Response:
    try:
        report = await request.app.state.analyst.analyze(analysis_request(request.query_params))
    except AnalysisError as exc:
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return error_response(exc.status, exc.code, exc.message, headers)
    return JSONResponse(report)
