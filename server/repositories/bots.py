"""Bots and the admin token. Tokens are random, shown once and stored only as sha256 hashes."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.protocol.wire import clip
from ply_arena.server.db.models import AdminToken, Bot, utcnow

#: Bot names appear in URLs and on the wire: keep them plain, and begin and end them with a letter
#: or digit ("alice." would pass for "alice"). Matched with fullmatch: ``$`` would also match
#: before a trailing newline ("okname\n", a look-alike of "okname").
NAME_PATTERN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9])?")


#: House bots' names start with this (server/house); no other bot may take such a name.
HOUSE_PREFIX = "house-"


class BotNameError(ValueError):
    """The name is not acceptable for a bot."""


class BotExistsError(ValueError):
    """A bot with that name already exists."""


class HouseBotError(ValueError):
    """House bots are run by the server itself: they have no token to give out."""


class UnknownBotError(LookupError):
    """No bot has that name."""


def name_problem(name: str, what: str) -> str | None:
    """What is wrong with ``name`` as the name of a bot or a class (None: nothing)."""
    if NAME_PATTERN.fullmatch(name):
        return None
    return (
        f"bad {what} name {clip(repr(name), 80)}: use 1-64 letters, digits, '_', '-' or '.', "
        "starting and ending with a letter or digit"
    )


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


async def create_bot(
    session: AsyncSession, name: str, *, class_id: int | None = None, owner: str | None = None
) -> tuple[Bot, str]:
    """A new enabled bot and its token (the only time the token is available); ``class_id``
    and ``owner`` for a bot a student registers in a class (repositories.classes)."""
    problem = name_problem(name, "bot")
    if problem is not None:
        raise BotNameError(problem)
    if name.lower().startswith(HOUSE_PREFIX):
        raise BotNameError(
            f"bad bot name {clip(repr(name), 80)}: names starting with {HOUSE_PREFIX!r} are kept "
            "for the server's house bots"
        )
    taken = await session.scalar(select(Bot.name).where(Bot.name_key == name.lower()))
    if taken is not None:
        same = "" if taken == name else f" (as {taken!r}: names are the same whatever their case)"
        raise BotExistsError(f"a bot named {name!r} already exists{same}")
    token = new_token()
    bot = Bot(
        name=name,
        name_key=name.lower(),
        token_hash=hash_token(token),
        enabled=True,
        class_id=class_id,
        owner=owner,
    )
    session.add(bot)
    try:
        await session.flush()
    except IntegrityError as exc:
        # Another writer created the same name between our check and this insert.
        raise BotExistsError(f"a bot named {name!r} already exists") from exc
    return bot, token


async def ensure_house_bot(session: AsyncSession, name: str, agent: str) -> Bot:
    """The house bot ``name`` playing ``agent`` (e.g. ``mcts@0.2``), created on first use.

    Its token hash is no sha256 output (it holds a ``:``), so no token logs it in: it plays
    inside the server. The same name finds the same bot after a restart (its id, matches and
    ratings); BotExistsError if a bot that is not a house bot has that name. Several processes
    starting at once (``arena serve --workers``) create it once: the insert does nothing when
    another one's is there (INSERT ... ON CONFLICT), and each then reads the one row.
    """
    found = select(Bot).where(Bot.name_key == name.lower())
    bot = await session.scalar(found)
    if bot is None:
        insert = _insert_for(session)
        await session.execute(
            insert(Bot)
            .values(
                name=name,
                name_key=name.lower(),
                token_hash=f"house:{secrets.token_hex(29)}",
                enabled=True,
                house=True,
                agent=agent,
            )
            .on_conflict_do_nothing(index_elements=[Bot.name_key])
        )
        bot = await session.scalar(found)
        assert bot is not None  # inserted just now, by this process or another one
    if not bot.house:
        raise BotExistsError(
            f"house bot {name!r}: the name is taken by bot {bot.name!r}, which is not a house "
            "bot; rename that bot, or configure this house bot differently (ARENA_HOUSE_BOTS)"
        )
    if bot.agent != agent:
        bot.agent = agent
        await session.flush()
    return bot


async def mark_checker(session: AsyncSession, bot_id: int) -> None:
    """Remember that the bot logged in as an ``arena check-bot`` checker."""
    await session.execute(
        update(Bot).where(Bot.id == bot_id, Bot.checker.is_(False)).values(checker=True)
    )


async def bot_by_token(session: AsyncSession, token: str) -> Bot | None:
    if not token:
        return None
    return await session.scalar(select(Bot).where(Bot.token_hash == hash_token(token)))


async def bot_by_name(session: AsyncSession, name: str) -> Bot | None:
    """The bot of that name, whatever its case (names are unique whatever their case)."""
    return await session.scalar(select(Bot).where(Bot.name_key == name.lower()))


async def list_bots(session: AsyncSession) -> Sequence[Bot]:
    return (await session.scalars(select(Bot).order_by(Bot.name))).all()


async def rotate_token(session: AsyncSession, name: str) -> str:
    """A fresh token for ``name``; the old one stops working at once. HouseBotError for a
    house bot: a token would let anyone log in as the server's own agent."""
    bot = await _require(session, name)
    if bot.house:
        raise HouseBotError(f"{name!r} is a house bot, run by the server itself: it has no token")
    token = new_token()
    bot.token_hash = hash_token(token)
    await session.flush()
    return token


async def set_enabled(session: AsyncSession, name: str, enabled: bool) -> Bot:
    bot = await _require(session, name)  # a retired bot has no name left to find it by
    bot.enabled = enabled
    await session.flush()
    return bot


async def retire_bot(session: AsyncSession, name: str) -> Bot:
    """Retire the bot: disabled for good (no token logs it in; it cannot be enabled again),
    kept under its name in every match, record and season, and its name free for a new bot:
    its ``name_key`` becomes ``name#id``, which no name can be. HouseBotError for a house bot
    (the server makes it again by its name at every start)."""
    bot = await _require(session, name)
    if bot.house:
        raise HouseBotError(f"{bot.name!r} is a house bot, run by the server: configure "
                            "ARENA_HOUSE_BOTS instead")  # fmt: skip
    bot.enabled = False
    bot.retired_at = utcnow()
    bot.name_key = f"{bot.name_key}#{bot.id}"
    bot.token_hash = f"retired:{secrets.token_hex(28)}"  # no sha256 output: no token matches
    await session.flush()
    return bot


async def bot_for_page(session: AsyncSession, name: str) -> Bot | None:
    """The bot a page or a record's link names: the bot that has the name now, else the last
    one retired under it (whatever the case)."""
    found = await bot_by_name(session, name)
    if found is not None:
        return found
    return await session.scalar(
        select(Bot)
        .where(func.lower(Bot.name) == name.lower(), Bot.retired_at.is_not(None))
        .order_by(Bot.retired_at.desc(), Bot.id.desc())
        .limit(1)
    )


async def _require(session: AsyncSession, name: str) -> Bot:
    bot = await bot_by_name(session, name)
    if bot is None:
        raise UnknownBotError(f"no bot named {clip(repr(name), 80)}")
    return bot


# --- the admin token -------------------------------------------------------------------------


async def admin_token_hash(session: AsyncSession) -> str | None:
    """The stored admin token hash (the newest one), or None before first start."""
    return await session.scalar(
        select(AdminToken.token_hash).order_by(AdminToken.id.desc()).limit(1)
    )


#: The advisory lock key of the admin token (PostgreSQL): any 64-bit number no other lock uses.
ADMIN_TOKEN_LOCK_KEY = 0x706C7961_61646D6E  # "plya" "admn"


async def lock_admin_token(session: AsyncSession) -> None:
    """Hold the admin token's lock until this transaction ends (PostgreSQL; nothing on SQLite,
    whose one writer at a time already serialises): several processes starting at once read,
    and if need be make, one admin token between them, not one each."""
    if _dialect(session) == "postgresql":
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADMIN_TOKEN_LOCK_KEY}
        )


async def set_admin_token(session: AsyncSession, token: str) -> None:
    """Make ``token`` the admin token (replacing any stored one)."""
    await lock_admin_token(session)
    digest = hash_token(token)
    for row in (await session.scalars(select(AdminToken))).all():
        if row.token_hash != digest:
            await session.delete(row)
    await session.flush()
    if await admin_token_hash(session) != digest:
        session.add(AdminToken(token_hash=digest))
        await session.flush()


def token_matches(token: str, digest: str | None) -> bool:
    """Constant-time comparison of a presented token with a stored hash."""
    return digest is not None and secrets.compare_digest(hash_token(token), digest)


def _dialect(session: AsyncSession) -> str:
    return session.get_bind().dialect.name


def _insert_for(session: AsyncSession) -> Any:
    """The INSERT of this session's database, the one with ``on_conflict_do_nothing``."""
    if _dialect(session) == "postgresql":
        return postgresql_insert
    return sqlite_insert
