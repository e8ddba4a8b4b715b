"""The database a local command works on (``arena bots``, ``arena leaderboard``, ``arena ratings``):
which one, said on stderr, never created by mistake; and one unit of work on it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import typer

from ply_arena.server.db.sqlite_file import problem


def sqlite_file(db_url: str) -> Path | None:
    """The file of an SQLite URL (None for another database or an in-memory one)."""
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def database_url(
    db: str | None, *, init_db: bool = False, elsewhere: str = "", option: str = "--db"
) -> str:
    """The database URL to use; says which on stderr, and refuses a missing SQLite file unless
    ``init_db`` (exit status 1, naming the path looked for and how to point at the right one;
    ``elsewhere`` adds another way, such as --url)."""
    from ply_arena.server.settings import Settings, shown_db_url

    url = Settings.from_env(db_url=db).db_url
    if db:
        source = option
    elif os.environ.get("ARENA_DB_URL"):
        source = "ARENA_DB_URL"
    else:
        source = "the default: arena.db in the current directory"
    path = sqlite_file(url)
    shown = str(path.resolve()) if path is not None else shown_db_url(url)
    refused = problem(path) if path is not None else None
    if refused is not None:
        typer.echo(f"error: {refused}; give the arena's database with {option} PATH", err=True)
        raise typer.Exit(1)
    if path is not None and (not path.is_file() or path.stat().st_size == 0):
        if not init_db:
            typer.echo(
                f"error: no arena database at {shown} (from {source}). Run this where "
                "`arena serve` runs (it prints its database when it starts), or point at that "
                f"database with --db PATH or ARENA_DB_URL{' ' + elsewhere if elsewhere else ''}; "
                "to start a new empty database here, add --init-db to `arena bots create`.",
                err=True,
            )
            raise typer.Exit(1)
        typer.echo(f"database: {shown} (new, from {source})", err=True)
    else:
        typer.echo(f"database: {shown} (from {source})", err=True)
    return url


def run_in_session(db_url: str, work: Any) -> Any:
    """Run ``await work(session)`` in one unit of work on a migrated database."""
    from ply_arena.server.db.database import Database

    async def main() -> Any:
        database = Database(db_url)
        try:
            await database.migrate()
            async with database.session() as session:
                return await work(session)
        finally:
            await database.dispose()

    return asyncio.run(main())
