"""Previous / next links of a page of rows, keeping the page's other query parameters."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from ply_arena.server.api.errors import ApiError
from ply_arena.server.api.params import int_param
from ply_arena.server.pages.errors import PageError

#: The furthest a page's ``?offset=`` may go.
MAX_OFFSET = 10**9


def page_offset(request: Request) -> int:
    """``?offset=`` of a paged list (0 when absent); a 400 page when it is not 0..MAX_OFFSET."""
    try:
        return int_param(request.query_params.get("offset"), "offset", 0, 0, MAX_OFFSET)
    except ApiError as e:
        raise PageError(400, "Bad page", e.message) from None


def pager(request: Request, *, offset: int, page: int, total: int) -> dict[str, Any]:
    """What ``_pager.html`` shows: rows first..last of total, and the links (None at an end)."""

    def at(new_offset: int) -> str:
        params = [(k, v) for k, v in request.query_params.multi_items() if k != "offset"]
        if new_offset:
            params.append(("offset", str(new_offset)))
        return f"{request.url.path}?{urlencode(params)}" if params else request.url.path

    return {
        "first": offset + 1 if total else 0,
        "last": min(offset + page, total),
        "total": total,
        "previous": at(max(offset - page, 0)) if offset > 0 else None,
        "next": at(offset + page) if offset + page < total else None,
    }
