"""``arena serve``: run the server under uvicorn."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ply_arena.server.settings import Settings


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
        workers: int = typer.Option(
            None,
            "--workers",
            help="Server processes on the one port (default: 1; more: PostgreSQL only; "
            "docs/server.md, 'Several processes on one port').",
        ),
        # A worker of --workers: the listening socket it inherits, and its parent.
        listen_fd: int = typer.Option(None, "--listen-fd", hidden=True),
        parent_pid: int = typer.Option(None, "--parent-pid", hidden=True),
        worker_index: int = typer.Option(None, "--worker-index", hidden=True),
    ) -> None:
        """Run the arena: REST under /api, bots connect to /ws.

        The database is migrated on start; matches a stop or a crash left running are resumed.
        The admin token comes from ARENA_ADMIN_TOKEN, or is generated and printed on first start.
        """
        from ply_arena.server.app import create_app, make_server
        from ply_arena.server.db.server_mark import running_server
        from ply_arena.server.settings import Settings, shown_db_url

        settings = Settings.from_env(host=host, port=port, db_url=db, workers=workers)
        workers = settings.workers
        if listen_fd is not None:  # one of the processes of --workers: its parent checked
            _serve_as_worker(settings, listen_fd, parent_pid, worker_index)
            return
        from ply_arena.server.cli._database import sqlite_file
        from ply_arena.server.db.sqlite_file import problem

        path = sqlite_file(settings.db_url)
        refused = problem(path) if path is not None else None
        if refused is not None:
            typer.echo(f"error: {refused}; give another --db", err=True)
            raise typer.Exit(1)
        if workers > 1 and os.name != "posix":
            typer.echo(
                "error: --workers needs Linux or another POSIX system (its workers inherit one "
                "listening socket); run several arena serve on other ports behind nginx "
                "instead (docs/server.md)",
                err=True,
            )
            raise typer.Exit(2)
        if workers > 1 and path is not None:
            typer.echo(
                f"error: --workers {workers} needs PostgreSQL: on an SQLite file one server "
                "process serves (a second one is refused); give --db postgresql://USER@HOST/DB "
                "(docs/server.md), or run one (--workers 1)",
                err=True,
            )
            raise typer.Exit(2)
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
        if workers > 1:
            raise typer.Exit(_run_workers(settings, workers))
        typer.echo(
            f"Ply Arena on http://{settings.host}:{settings.port}  "
            f"(db: {shown_db_url(settings.db_url)}); "
            "open it in a browser for the leaderboards and matches"
        )
        make_server(app_, settings, log_level="info").run()


def _run_workers(settings: Settings, count: int) -> int:
    """The parent of ``--workers``: bind the port, run the workers until a signal; its exit
    status."""
    from ply_arena.server.settings import shown_db_url
    from ply_arena.server.workers import Workers, WorkersError, listen

    try:
        sock = listen(settings.host, settings.port)
    except WorkersError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 1
    port = sock.getsockname()[1]
    typer.echo(
        f"Ply Arena on http://{settings.host}:{port}  (db: {shown_db_url(settings.db_url)}), "
        f"{count} worker processes; open it in a browser for the leaderboards and matches"
    )
    # The workers read their settings as any arena serve does, from ARENA_* variables: the
    # options given here go with them (a password in the URL stays out of ps).
    env = {
        **os.environ,
        "ARENA_DB_URL": settings.db_url,
        "ARENA_HOST": settings.host,
        "ARENA_PORT": str(port),
    }
    return Workers(count, sock, [sys.executable, "-m", "ply_arena", "serve"], env).run()


def _serve_as_worker(
    settings: Settings, fd: int, parent_pid: int | None, index: int | None
) -> None:
    """One of the processes of ``--workers``: serve on the inherited socket until SIGTERM,
    each log line naming the worker (``[worker 2]``, as the parent numbers them)."""
    from ply_arena.server.app import create_app, make_server
    from ply_arena.server.workers import inherited_socket, stop_when_orphaned

    sock = inherited_socket(fd)
    stop_when_orphaned(os.getppid() if parent_pid is None else parent_pid)
    prefix = "" if index is None else f"[worker {index}] "
    make_server(create_app(settings), settings, log_level="info", log_prefix=prefix).run(
        sockets=[sock]
    )


async def _open(db_url: str) -> None:
    from ply_arena.server.db.database import Database

    database = Database(db_url)
    try:
        await database.migrate()
    finally:
        await database.dispose()
