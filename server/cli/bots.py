"""``arena bots``: create and list bots directly in the database file."""

from __future__ import annotations

import asyncio
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
    ) -> None:
        """Create a bot and print its token (shown this once only)."""
        from server.repositories import bots

        try:
            token = _run(db, lambda s: _create(s, name))
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

        rows = _run(db, _list)
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

        try:
            token = _run(db, lambda s: bots.rotate_token(s, name))
        except bots.UnknownBotError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        typer.echo(f"New token for {name!r} (shown once):")
        typer.echo(token)


async def _create(session: Any, name: str) -> str:
    from server.repositories import bots

    _, token = await bots.create_bot(session, name)
    return token


async def _list(session: Any) -> list[tuple[str, bool, str]]:
    from server.repositories import bots
    from server.repositories.matches import iso

    return [(b.name, b.enabled, iso(b.created_at)) for b in await bots.list_bots(session)]


def _run(db: str | None, work: Any) -> Any:
    """Run ``await work(session)`` in one unit of work on a migrated database."""
    from server.db.database import Database
    from server.settings import Settings

    async def main() -> Any:
        database = Database(Settings.from_env(db_url=db).db_url)
        try:
            await database.migrate()
            async with database.session() as session:
                return await work(session)
        finally:
            await database.dispose()

    return asyncio.run(main())
