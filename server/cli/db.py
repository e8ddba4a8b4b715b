"""``arena db copy``: move an arena to another database (SQLite to PostgreSQL, or back).

arena db copy --from arena.db --to postgresql+asyncpg://arena@dbhost/arena
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    db_app = typer.Typer(help="The arena's database as a whole.", no_args_is_help=True)
    app.add_typer(db_app, name="db")

    @db_app.command("copy")
    def copy(
        source: str = typer.Option(
            ...,
            "--from",
            metavar="URL_OR_FILE",
            help="The arena's database now (a URL or an SQLite file path).",
        ),
        target: str = typer.Option(
            ...,
            "--to",
            metavar="URL_OR_FILE",
            help="A new, empty database (it is migrated "
            "first; one that holds arena data is refused).",
        ),
    ) -> None:
        """Copy every bot, class, match, rating and tournament into a new, empty database.

        Stop the server first. Both databases are migrated to this release's schema; the copy is
        one transaction on the target, so a failed copy leaves it empty. Afterwards start the
        server on the new one (ARENA_DB_URL or --db); the old one is left as it was."""
        import asyncio

        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

        from ply_arena.server.cli._database import database_url
        from ply_arena.server.db.copy import CopyRefusedError, copy_database
        from ply_arena.server.db.server_mark import running_server
        from ply_arena.server.settings import normalize_db_url, shown_db_url

        source_url = database_url(source, option="--from")
        target_url = normalize_db_url(target)
        if source_url == target_url:
            typer.echo("error: --from and --to name the same database", err=True)
            raise typer.Exit(2)
        other = running_server(source_url)
        if other is not None:
            typer.echo(
                f"error: {other.describe()} is running on {shown_db_url(source_url)}; stop it "
                f"first, so that nothing is written during the copy (if no server runs, delete "
                f"{other.path})",
                err=True,
            )
            raise typer.Exit(1)
        typer.echo(f"copying into {shown_db_url(target_url)}", err=True)
        with Progress(
            TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(),
            transient=True,
        ) as bar:  # fmt: skip
            tasks: dict[str, TaskID] = {}

            def progress(table: str, done: int, total: int) -> None:
                if table not in tasks:
                    tasks[table] = bar.add_task(table, total=total)
                bar.update(tasks[table], completed=done)

            try:
                copied = asyncio.run(copy_database(source_url, target_url, progress=progress))
            except CopyRefusedError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(1) from None
        for table, rows in copied.rows.items():
            typer.echo(f"  {table:<20} {rows:>9,} row(s)")
        shown = shown_db_url(target_url)
        typer.echo(
            f"copied {copied.total:,} row(s). Start the server on the new database: "
            f"arena serve --db '{shown}'"
            + (" (with your password where *** stands)" if "***" in shown else "")
        )
