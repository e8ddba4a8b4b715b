"""The admin bearer token check for REST endpoints that change bots."""

from __future__ import annotations

from starlette.requests import Request

from protocol.errors import ErrorCode
from server.api.errors import ApiError
from server.repositories.bots import token_matches


def require_admin(request: Request) -> None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, ErrorCode.unauthorized, "missing admin token: send Authorization: Bearer <token>"
        )
    if not token_matches(token.strip(), request.app.state.admin_token_hash):
        raise ApiError(401, ErrorCode.unauthorized, "the admin token is not valid")
