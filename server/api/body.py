"""Reading a request's JSON body with bounds: size, nesting, finite numbers.

Every REST body is a small JSON object (a bot's name), so anything large or deeply nested is
refused with a coded 400 before it is parsed, and nothing a client sends can make the server
hold more than ``MAX_BODY_BYTES`` of it or fail with a 500.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip
from ply_arena.server.api.errors import ApiError

MAX_BODY_BYTES = 64 * 1024


async def read_json_body(request: Request) -> Any:
    """The body parsed as JSON (``None`` when empty); ApiError 400 when it is not acceptable."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw:
        return None
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise ApiError(400, ErrorCode.bad_json, "the body is nested too deeply") from None
    except ValueError as exc:
        raise ApiError(
            400, ErrorCode.bad_json, f"the body is not JSON: {clip(str(exc), 120)}"
        ) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _too_large() -> ApiError:
    return ApiError(400, ErrorCode.bad_request, f"the body is over {MAX_BODY_BYTES // 1024} KiB")
