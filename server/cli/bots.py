"""``arena bots``: create and list bots directly in the database file.

Every command says on stderr which database it used, and none creates a database silently: a bot
written to a new ``arena.db`` in the wrong directory would be refused by the running server.
``arena bots create NAME --init-db`` starts a new database on purpose.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import typer

_DB_HELP = "Database URL or SQLite file path (default: ARENA_DB_URL or arena.db here)."


def register(app: typer.Typer) -> None:
    bots_app = typer.Typer(
        help="Create and list bots (works on the database directly).", no_args_is_help=True
    )
    app.add_typer(bots_app, name="bots")

    @bots_app.command("create")
    def create(
        name: str = typer.Argument(..., help="The bot's name (letters, digits, _ - .)."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
        init_db: bool = typer.Option(
            False, "--init-db", help="Create the database if it does not exist yet."
        ),
    ) -> None:
        """Create a bot and print its token (shown this once only)."""
        from server.repositories import bots

        url = _database(db, init_db=init_db)
        try:
            token = _run(url, lambda s: _create(s, name))
        except (bots.BotNameError, bots.BotExistsError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        typer.echo(f"Created bot {name!r}. Its token (shown once, keep it secret):")
        typer.echo(token)

    @bots_app.command("list")
    def list_(db: str = typer.Option(None, "--db", help=_DB_HELP)) -> None:
        """List the bots: name, enabled, created."""
        from rich.console import Console
        from rich.table import Table

        rows = _run(_database(db), _list)
        table = Table("name", "enabled", "created")
        for name, enabled, created in rows:
            table.add_row(name, "yes" if enabled else "no", created)
        Console().print(table)

    @bots_app.command("rotate")
    def rotate(
        name: str = typer.Argument(..., help="The bot's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Give a bot a new token (printed once); the old one stops working."""
        from server.repositories import bots

        url = _database(db)
        try:
            token = _run(url, lambda s: bots.rotate_token(s, name))
        except bots.UnknownBotError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        typer.echo(f"New token for {name!r} (shown once):")
        typer.echo(token)


def sqlite_file(db_url: str) -> Path | None:
    """The file of an SQLite URL (None for another database or an in-memory one)."""
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def _database(db: str | None, *, init_db: bool = False) -> str:
    """The database URL to use; says which on stderr, and refuses a missing SQLite file unless
    ``init_db`` (exit status 1, naming the path looked for and how to point at the right one)."""
    from server.settings import Settings

    url = Settings.from_env(db_url=db).db_url
    if db:
        source = "--db"
    elif os.environ.get("ARENA_DB_URL"):
        source = "ARENA_DB_URL"
    else:
        source = "the default: arena.db in the current directory"
    path = sqlite_file(url)
    shown = str(path.resolve()) if path is not None else url
    if path is not None and not path.is_file():
        if not init_db:
            typer.echo(
                f"error: no arena database at {shown} (from {source}). Run this where "
                "`arena serve` runs (it prints its database when it starts), or point at that "
                "database with --db PATH or ARENA_DB_URL; to start a new empty database here, "
                "add --init-db to `arena bots create`.",
                err=True,
            )
            raise typer.Exit(1)
        typer.echo(f"database: {shown} (new, from {source})", err=True)
    else:
        typer.echo(f"database: {shown} (from {source})", err=True)
    return url


async def _create(session: Any, name: str) -> str:
    from server.repositories import bots

    _, token = await bots.create_bot(session, name)
    return token


async def _list(session: Any) -> list[tuple[str, bool, str]]:
    from server.repositories import bots
    from server.repositories.matches import iso

    return [(b.name, b.enabled, iso(b.created_at)) for b in await bots.list_bots(session)]


def _run(db_url: str, work: Any) -> Any:
    """Run ``await work(session)`` in one unit of work on a migrated database."""
    from server.db.database import Database

    async def main() -> Any:
        database = Database(db_url)
        try:
            await database.migrate()
            async with database.session() as session:
                return await work(session)
        finally:
            await database.dispose()

    return asyncio.run(main())
