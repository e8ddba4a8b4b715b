"""Errors on the pages: an HTML page that says what went wrong and where to go, not JSON."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from ply_arena.protocol.wire import clip
from ply_arena.server.pages.templating import render


class PageError(Exception):
    """Raised by a page; rendered as an error page with ``status``."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message


def not_found(what: str) -> PageError:
    return PageError(404, "Not found", f"There is no {what}.")


async def page_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PageError)
    return render(
        request, "error.html", {"title": exc.title, "message": exc.message}, status=exc.status
    )


def wants_html(request: Request) -> bool:
    """A browser asking for a page (not the REST API, not a tool asking for JSON)."""
    path = request.url.path
    return not path.startswith(("/api/", "/ws")) and "text/html" in request.headers.get(
        "accept", ""
    )


async def html_not_found(request: Request, exc: HTTPException) -> Response:
    """A browser's 404 or 405 outside the API, as a page."""
    message = (
        f"Nothing is at {clip(request.url.path, 80)}."
        if exc.status_code == 404
        else str(exc.detail)
    )
    return render(
        request,
        "error.html",
        {"title": "Not found" if exc.status_code == 404 else "Error", "message": message},
        status=exc.status_code,
    )
