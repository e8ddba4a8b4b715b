"""Alembic environment. The server passes its own connection in ``config.attributes``; the
``alembic`` command line instead connects to ARENA_DB_URL (default: arena.db here)."""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from ply_arena.server.db.models import Base
from ply_arena.server.settings import DEFAULT_DB_URL

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    # Batch mode lets later migrations alter tables on SQLite (which has little ALTER TABLE).
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_from_url(url: str) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(_run)
    await engine.dispose()


def run_offline() -> None:
    context.configure(
        url=os.environ.get("ARENA_DB_URL", DEFAULT_DB_URL),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        asyncio.run(_run_from_url(os.environ.get("ARENA_DB_URL", DEFAULT_DB_URL)))


if context.is_offline_mode():
    run_offline()
else:
    run_online()
