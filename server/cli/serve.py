"""``arena serve``: run the server under uvicorn."""

from __future__ import annotations

import asyncio

import typer


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        host: str = typer.Option(None, help="Interface to listen on (default: 127.0.0.1)."),
        port: int = typer.Option(None, help="TCP port (default: 8000)."),
        db: str = typer.Option(
            None,
            "--db",
            help="Database URL or SQLite file path (default: sqlite file arena.db here).",
        ),
    ) -> None:
        """Run the arena: REST under /api, bots connect to /ws.

        The database is migrated on start; matches a crash left running are closed as aborted.
        The admin token comes from ARENA_ADMIN_TOKEN, or is generated and printed on first start.
        """
        from ply_arena.server.app import create_app, make_server
        from ply_arena.server.db.server_mark import running_server
        from ply_arena.server.settings import Settings, shown_db_url

        settings = Settings.from_env(host=host, port=port, db_url=db)
        from ply_arena.server.cli._database import sqlite_file
        from ply_arena.server.db.sqlite_file import problem

        path = sqlite_file(settings.db_url)
        refused = problem(path) if path is not None else None
        if refused is not None:
            typer.echo(f"error: {refused}; give another --db", err=True)
            raise typer.Exit(1)
        other = running_server(settings.db_url)
        if other is not None:
            typer.echo(
                f"error: {other.describe()} is already running on this database "
                f"({shown_db_url(settings.db_url)}); stop it first, or give another --db "
                f"(if no server runs, delete {other.path})",
                err=True,
            )
            raise typer.Exit(1)
        try:
            # The database is reachable and migrated before uvicorn starts: a wrong URL or a
            # database server that is down is one line here, not a traceback from the lifespan.
            asyncio.run(_open(settings.db_url))
            app_ = create_app(settings)
        except ValueError as exc:  # a setting refused, e.g. ARENA_HOUSE_BOTS: said in one line
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(
            f"Ply Arena on http://{settings.host}:{settings.port}  "
            f"(db: {shown_db_url(settings.db_url)}); "
            "open it in a browser for the leaderboards and matches"
        )
        make_server(app_, settings, log_level="info").run()


async def _open(db_url: str) -> None:
    from ply_arena.server.db.database import Database

    database = Database(db_url)
    try:
        await database.migrate()
    finally:
        await database.dispose()
