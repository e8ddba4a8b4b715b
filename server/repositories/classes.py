"""Classes: join codes, instructor tokens, and the bots students register in them.

A join code is what students type, so it avoids the characters people mistake for one another
(0/O, 1/I/L) and is shown in two groups of four (``K7QF-92MX``); it is compared without case,
dashes or spaces. The instructor's token is random, shown once and stored as a sha256 hash, as
bot tokens are.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.protocol.wire import clip
from ply_arena.server.db.models import Bot, Classroom, ClassSeason, utcnow
from ply_arena.server.repositories.bots import create_bot, hash_token, name_problem, new_token

#: What a join code is made of: no 0/O, 1/I/L, U (no accidental words either way).
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 8
#: The longest owner (a name or an e-mail address: RFC 5321's 254).
MAX_OWNER = 254


class ClassNameError(ValueError):
    """Not an acceptable class name."""


class ClassExistsError(ValueError):
    """A class of that name exists."""


class UnknownClassError(LookupError):
    """No class has that name."""


class BadJoinCodeError(LookupError):
    """No class has that join code (mistyped, or rotated by the instructor)."""


class JoinClosedError(PermissionError):
    """The class's join code is closed."""


class OwnerError(ValueError):
    """The owner (a student's name or e-mail) is missing or not acceptable."""


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(code: str) -> str:
    """As stored: upper case, no dashes or spaces (``k7qf-92mx`` is ``K7QF92MX``)."""
    return re.sub(r"[\s-]", "", code).upper()


def show_code(code: str) -> str:
    """As handed out: ``K7QF-92MX``."""
    return f"{code[:4]}-{code[4:]}"


async def create_class(session: AsyncSession, name: str) -> tuple[Classroom, str]:
    """A new class, open for registration, and its instructor's token (shown once)."""
    problem = name_problem(name, "class")
    if problem is not None:
        raise ClassNameError(problem)
    if await class_by_name(session, name) is not None:
        raise ClassExistsError(f"a class named {name!r} already exists")
    token = new_token()
    now = utcnow()
    classroom = Classroom(
        name=name,
        name_key=name.lower(),
        join_code=new_join_code(),
        join_open=True,
        instructor_token_hash=hash_token(token),
        created_at=now,
    )
    session.add(classroom)
    try:
        await session.flush()
    except IntegrityError as exc:
        raise ClassExistsError(f"a class named {name!r} already exists") from exc
    # Season 1 opens with the class (server/ratings/season.py).
    session.add(ClassSeason(class_id=classroom.id, number=1, started_at=now))
    await session.flush()
    return classroom, token


# --- seasons -----------------------------------------------------------------------------------


class UnknownSeasonError(LookupError):
    """The class has no season of that number."""


async def seasons(session: AsyncSession, classroom: Classroom) -> list[ClassSeason]:
    """The class's seasons, the first first (the last is the current one)."""
    found = await session.scalars(
        select(ClassSeason).where(ClassSeason.class_id == classroom.id).order_by(ClassSeason.number)
    )
    return list(found.all())


async def season(
    session: AsyncSession, classroom: Classroom, number: int | None = None
) -> ClassSeason:
    """Season ``number`` of the class (None: the current one); UnknownSeasonError."""
    found = await seasons(session, classroom)
    if number is None:
        return found[-1]
    for each in found:
        if each.number == number:
            return each
    raise UnknownSeasonError(
        f"class {classroom.name!r} has no season {number}: its seasons are 1 to {len(found)}"
    )


async def start_season(session: AsyncSession, classroom: Classroom) -> ClassSeason:
    """End the current season now and start the next one, from the same moment: a result that
    finishes from now on counts in the new season (its ratings start fresh), every earlier one
    stays in the season it finished in. Two starts at once: one wins, the other's insert
    breaks the unique (class, number) and raises IntegrityError."""
    current = await season(session, classroom)
    now = utcnow()
    current.ended_at = now
    started = ClassSeason(class_id=classroom.id, number=current.number + 1, started_at=now)
    session.add(started)
    await session.flush()
    return started


async def class_by_name(session: AsyncSession, name: str) -> Classroom | None:
    return await session.scalar(select(Classroom).where(Classroom.name_key == name.lower()))


async def require_class(session: AsyncSession, name: str) -> Classroom:
    found = await class_by_name(session, name)
    if found is None:
        raise UnknownClassError(f"no class named {clip(repr(name), 80)}")
    return found


async def class_by_instructor_token(session: AsyncSession, token: str) -> Classroom | None:
    if not token:
        return None
    return await session.scalar(
        select(Classroom).where(Classroom.instructor_token_hash == hash_token(token))
    )


async def list_classes(session: AsyncSession) -> Sequence[Classroom]:
    return (await session.scalars(select(Classroom).order_by(Classroom.name))).all()


async def class_bots(session: AsyncSession, classroom: Classroom) -> Sequence[Bot]:
    return (
        await session.scalars(select(Bot).where(Bot.class_id == classroom.id).order_by(Bot.name))
    ).all()


async def rotate_join_code(session: AsyncSession, classroom: Classroom) -> str:
    """A new join code; the old one registers nobody from now on."""
    classroom.join_code = new_join_code()
    await session.flush()
    return classroom.join_code


async def set_join_open(session: AsyncSession, classroom: Classroom, open_: bool) -> None:
    classroom.join_open = open_
    await session.flush()


async def rotate_instructor_token(session: AsyncSession, classroom: Classroom) -> str:
    """A new instructor token (shown once); the old one stops working at once."""
    token = new_token()
    classroom.instructor_token_hash = hash_token(token)
    await session.flush()
    return token


async def register_bot(
    session: AsyncSession, code: str, name: str, owner: str
) -> tuple[Bot, Classroom, str]:
    """A student's new bot in the class of ``code``: (bot, class, token shown once).

    BadJoinCodeError, JoinClosedError, OwnerError, and create_bot's BotNameError and
    BotExistsError, each with a message that says what to do.
    """
    owner = owner.strip()
    if not owner:
        raise OwnerError("give your name or e-mail as the owner: your instructor sees it")
    if len(owner) > MAX_OWNER or any(ord(c) < 32 or ord(c) == 127 for c in owner):
        raise OwnerError(f"the owner is at most {MAX_OWNER} characters, without control characters")
    classroom = await session.scalar(
        select(Classroom).where(Classroom.join_code == normalize_code(code))
    )
    if classroom is None:
        raise BadJoinCodeError(
            "no class has this join code: check it with your instructor (a code may have been "
            "replaced by a new one)"
        )
    if not classroom.join_open:
        raise JoinClosedError(
            f"class {classroom.name!r} is not taking new bots now: ask your instructor to open "
            "its join code"
        )
    bot, token = await create_bot(session, name, class_id=classroom.id, owner=owner)
    return bot, classroom, token
