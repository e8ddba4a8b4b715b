"""REST errors: ``{"error": {"code": ..., "message": ...}}`` with the shared codes."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.wire import clip

log = logging.getLogger("arena.api")

_CODE_BY_STATUS = {
    400: ErrorCode.bad_request,
    401: ErrorCode.unauthorized,
    404: ErrorCode.not_found,
    405: ErrorCode.bad_request,
}


class ApiError(Exception):
    """Raised by endpoints; rendered as a JSON error with ``status``."""

    def __init__(
        self,
        status: int,
        code: ErrorCode,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def error_response(
    status: int, code: ErrorCode, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code.value, "message": message}}, status_code=status, headers=headers
    )


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    headers = dict(exc.headers)
    if exc.code == ErrorCode.unauthorized:
        headers["WWW-Authenticate"] = "Bearer"
    return error_response(exc.status, exc.code, exc.message, headers or None)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _CODE_BY_STATUS.get(exc.status_code, ErrorCode.bad_request)
    message = exc.detail if exc.status_code != 404 else f"nothing at {clip(request.url.path, 80)}"
    return error_response(exc.status_code, code, message, exc.headers)


exception_handlers = {ApiError: _api_error, HTTPException: _http_error}


class InternalErrorMiddleware:
    """Answer an unexpected exception with a JSON ``internal_error`` and keep the connection.

    Starlette's own 500 handler re-raises after responding, which makes uvicorn drop the
    connection; this one logs and answers instead (the unit of work has rolled back).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except ClientDisconnect:
            # The client went away (or was dropped for sending half a request): nobody to
            # answer, nothing to log.
            return
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            response = error_response(
                500, ErrorCode.internal_error, "internal error; nothing was changed"
            )
            await response(scope, receive, send)
