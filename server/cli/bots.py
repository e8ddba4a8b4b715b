"""``arena bots``: create, list, rotate and retire bots directly in the database file.

Every command says on stderr which database it used, and none creates a database silently: a bot
written to a new ``arena.db`` in the wrong directory would be refused by the running server.
``arena bots create NAME --init-db`` starts a new database on purpose.
"""

from __future__ import annotations

from typing import Any

import typer

from ply_arena.server.cli._database import database_url, run_in_session

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
        from ply_arena.server.repositories import bots

        url = database_url(db, init_db=init_db)
        try:
            token = run_in_session(url, lambda s: _create(s, name))
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

        rows = run_in_session(database_url(db), _list)
        table = Table("name", "enabled", "created")
        for name, enabled, created in rows:
            table.add_row(name, enabled, created)
        Console().print(table)

    @bots_app.command("retire")
    def retire(
        name: str = typer.Argument(..., help="The bot's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Retire a bot (end of term): disabled for good, kept under its name in every match
        and season, and its name free for a new bot."""
        from ply_arena.server.repositories import bots

        url = database_url(db)
        try:
            run_in_session(url, lambda s: bots.retire_bot(s, name))
        except (bots.UnknownBotError, bots.HouseBotError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        typer.echo(
            f"Retired bot {name!r}: its matches and seasons keep it; the name is free for a "
            "new bot."
        )

    @bots_app.command("rotate")
    def rotate(
        name: str = typer.Argument(..., help="The bot's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Give a bot a new token (printed once); the old one stops working."""
        from ply_arena.server.repositories import bots

        url = database_url(db)
        try:
            token = run_in_session(url, lambda s: bots.rotate_token(s, name))
        except (bots.UnknownBotError, bots.HouseBotError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        typer.echo(f"New token for {name!r} (shown once):")
        typer.echo(token)


async def _create(session: Any, name: str) -> str:
    from ply_arena.server.repositories import bots

    _, token = await bots.create_bot(session, name)
    return token


async def _list(session: Any) -> list[tuple[str, str, str]]:
    from ply_arena.server.repositories import bots
    from ply_arena.server.repositories.matches import iso

    return [
        (
            b.name,
            f"retired {iso(b.retired_at)}" if b.retired_at else "yes" if b.enabled else "no",
            iso(b.created_at),
        )
        for b in await bots.list_bots(session)
    ]
