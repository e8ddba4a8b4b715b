"""Who is asking: the admin token, or a class's instructor token (reaching that class only).

A request without a bearer token, or with one that matches neither, is 401 ``unauthorized``;
an instructor's token on another class, or on a bot that is not in its class, is 403
``forbidden``. Nothing else tells an unauthenticated caller whether a class or bot exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request

from ply_arena.protocol.errors import ErrorCode
from ply_arena.server.api.errors import ApiError
from ply_arena.server.db.models import Bot, Classroom
from ply_arena.server.repositories.bots import token_matches
from ply_arena.server.repositories.classes import class_by_instructor_token


@dataclass(frozen=True)
class Caller:
    """The admin, or the instructor of one class."""

    admin: bool
    classroom_id: int | None = None


def _bearer(request: Request, who: str) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, ErrorCode.unauthorized, f"missing {who} token: send Authorization: Bearer <token>"
        )
    return token.strip()


async def admin_or_instructor(
    request: Request, session: AsyncSession, *, admin_only: bool = False
) -> Caller:
    """The caller, if its token is the admin's or any class's instructor's; else 401."""
    token = _bearer(request, "admin" if admin_only else "admin or instructor")
    if token_matches(token, request.app.state.admin_token_hash):
        return Caller(admin=True)
    classroom = await class_by_instructor_token(session, token)
    if classroom is None:
        raise ApiError(
            401,
            ErrorCode.unauthorized,
            "the admin token is not valid"
            if admin_only
            else "the token is neither the admin's nor an instructor's",
        )
    return Caller(admin=False, classroom_id=classroom.id)


async def require_admin_only(request: Request, session: AsyncSession) -> None:
    """The admin: 401 without a valid token, 403 for an instructor's (valid, but not enough)."""
    caller = await admin_or_instructor(request, session, admin_only=True)
    if not caller.admin:
        raise ApiError(
            403, ErrorCode.forbidden, "this needs the admin token: an instructor's is not enough"
        )


def may_manage_class(caller: Caller, classroom: Classroom) -> None:
    if not caller.admin and caller.classroom_id != classroom.id:
        raise ApiError(
            403,
            ErrorCode.forbidden,
            f"an instructor's token reaches its own class only, not {classroom.name!r}",
        )


def may_manage_bot(caller: Caller, bot: Bot) -> None:
    if not caller.admin and (bot.class_id is None or caller.classroom_id != bot.class_id):
        raise ApiError(
            403,
            ErrorCode.forbidden,
            f"bot {bot.name!r} is not in your class: an instructor manages its class's bots only",
        )
