"""``arena classes``: classes on the database file (the admin's side); ``arena register``: a
student's bot through a running server's ``POST /api/register``.

    arena classes create ai-2026          # prints the join code and the instructor's token
    arena classes show ai-2026            # the join code, and the bots with their owners
    arena classes rotate-code ai-2026     # a new join code; the old one registers nobody
    arena classes close ai-2026           # no new bots until `arena classes open`
    arena classes season start ai-2026    # a new season: the class leaderboard starts fresh
    arena classes season list ai-2026     # its seasons, with their start and end
    arena register --url http://HOST:8000 --code K7QF-92MX --owner ana@uni.es my-bot
"""

from __future__ import annotations

from typing import Any

import typer

from ply_arena.server.cli._database import database_url, run_in_session

_DB_HELP = "Database URL or SQLite file path (default: ARENA_DB_URL or arena.db here)."


def register(app: typer.Typer) -> None:
    classes_app = typer.Typer(
        help="Create and manage classes (works on the database directly).",
        no_args_is_help=True,
    )
    app.add_typer(classes_app, name="classes")

    @classes_app.command("create")
    def create(
        name: str = typer.Argument(..., help="The class's name (letters, digits, _ - .)."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
        init_db: bool = typer.Option(
            False, "--init-db", help="Create the database if it does not exist yet."
        ),
    ) -> None:
        """Create a class: print its join code and its instructor's token (shown once)."""
        from ply_arena.server.repositories import classes

        url = database_url(db, init_db=init_db)
        try:
            code, token = run_in_session(url, lambda s: _create(s, name))
        except (classes.ClassNameError, classes.ClassExistsError) as exc:
            _fail(exc)
        typer.echo(f"Created class {name!r}.")
        typer.echo(f"Join code (students register their bots with it): {code}")
        typer.echo("Instructor token (shown once, keep it secret; it reaches this class only):")
        typer.echo(token)

    @classes_app.command("list")
    def list_(db: str = typer.Option(None, "--db", help=_DB_HELP)) -> None:
        """List the classes: name, join code, open or closed, bots."""
        from rich.console import Console
        from rich.table import Table

        table = Table("name", "join code", "open", "bots", "created")
        for row in run_in_session(database_url(db), _list):
            table.add_row(*row)
        Console().print(table)

    @classes_app.command("show")
    def show(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """A class's join code and its bots with their owners."""
        from rich.console import Console
        from rich.table import Table

        from ply_arena.server.repositories import classes

        try:
            code, open_, members = run_in_session(database_url(db), lambda s: _show(s, name))
        except classes.UnknownClassError as exc:
            _fail(exc)
        typer.echo(f"class {name}: join code {code} ({'open' if open_ else 'closed'})")
        table = Table("bot", "owner", "enabled", "created")
        for row in members:
            table.add_row(*row)
        Console().print(table)

    def _change(name: str, db: str | None, work: Any, done: str) -> None:
        from ply_arena.server.repositories import classes

        try:
            shown = run_in_session(database_url(db), lambda s: _on_class(s, name, work))
        except classes.UnknownClassError as exc:
            _fail(exc)
        typer.echo(done.format(name=name, shown=shown))

    @classes_app.command("rotate-code")
    def rotate_code(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Give the class a new join code; the old one registers nobody from now on."""
        from ply_arena.server.repositories import classes

        async def work(session: Any, classroom: Any) -> str:
            return classes.show_code(await classes.rotate_join_code(session, classroom))

        _change(name, db, work, "New join code for class {name!r}: {shown}")

    @classes_app.command("close")
    def close(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Close the join code: no new bots until the class is opened again."""
        _change(name, db, _opener(False), "Class {name!r} takes no new bots now.")

    @classes_app.command("open")
    def open_(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Open the join code again."""
        _change(name, db, _opener(True), "Class {name!r} takes new bots with its join code.")

    @classes_app.command("rotate-token")
    def rotate_token(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """Give the class's instructor a new token (printed once); the old one stops working."""
        from ply_arena.server.repositories import classes

        async def work(session: Any, classroom: Any) -> str:
            return await classes.rotate_instructor_token(session, classroom)

        _change(name, db, work, "New instructor token for class {name!r} (shown once):\n{shown}")

    season_app = typer.Typer(
        help="A class's seasons: each rates the class's bots afresh on its leaderboard.",
        no_args_is_help=True,
    )
    classes_app.add_typer(season_app, name="season")

    @season_app.command("start")
    def season_start(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """End the class's current season now and start the next one: its leaderboard rates
        the class's bots afresh from now on; the ended season stays viewable, read-only."""
        from ply_arena.server.repositories import classes

        async def work(session: Any, classroom: Any) -> str:
            started = await classes.start_season(session, classroom)
            return f"{started.number} (season {started.number - 1} ended)"

        _change(name, db, work, "Class {name!r} is in season {shown}.")

    @season_app.command("list")
    def season_list(
        name: str = typer.Argument(..., help="The class's name."),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """The class's seasons: number, start and end (UTC)."""
        from rich.console import Console
        from rich.table import Table

        from ply_arena.server.repositories import classes

        async def work(session: Any, classroom: Any) -> list[tuple[str, str, str]]:
            return [
                (
                    str(s.number),
                    s.started_at.strftime("%Y-%m-%d %H:%M"),
                    "(current)" if s.ended_at is None else s.ended_at.strftime("%Y-%m-%d %H:%M"),
                )
                for s in await classes.seasons(session, classroom)
            ]

        try:
            rows = run_in_session(database_url(db), lambda s: _on_class(s, name, work))
        except classes.UnknownClassError as exc:
            _fail(exc)
        table = Table("season", "started", "ended")
        for row in rows:
            table.add_row(*row)
        Console().print(table)

    @app.command("register")
    def register_bot(
        name: str = typer.Argument(..., help="Your bot's name (letters, digits, _ - .)."),
        url: str = typer.Option(
            ...,
            "--url",
            help="The server, e.g. http://127.0.0.1:8000 (or the bots' ws://127.0.0.1:8000/ws).",
        ),
        code: str = typer.Option(..., "--code", help="Your class's join code."),
        owner: str = typer.Option(
            ..., "--owner", help="Your name or e-mail (your instructor sees it; others do not)."
        ),
    ) -> None:
        """Register a bot in your class with its join code; prints the bot's token (once)."""
        import httpx

        from ply_arena.server.cli._server_api import server_address

        url = server_address(url)  # http://HOST:PORT, also from the bots' ws://HOST:PORT/ws
        try:
            response = httpx.post(
                url + "/api/register",
                json={"code": code, "name": name, "owner": owner},
                timeout=30,
            )
        except httpx.HTTPError as exc:
            typer.echo(f"error: cannot reach {url}: {exc}", err=True)
            raise typer.Exit(1) from None
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status_code != 201:
            error = answer.get("error") if isinstance(answer, dict) else None
            message = error.get("message") if isinstance(error, dict) else response.text[:200]
            code_text = error.get("code") if isinstance(error, dict) else response.status_code
            typer.echo(f"error ({code_text}): {message}", err=True)
            raise typer.Exit(1)
        typer.echo(f"Registered bot {answer['name']!r} in class {answer['class']!r}.")
        typer.echo("Its token (shown once, keep it secret; your bot sends it in hello):")
        typer.echo(answer["token"])


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1) from exc


def _opener(open_: bool) -> Any:
    async def work(session: Any, classroom: Any) -> str:
        from ply_arena.server.repositories import classes

        await classes.set_join_open(session, classroom, open_)
        return ""

    return work


async def _create(session: Any, name: str) -> tuple[str, str]:
    from ply_arena.server.repositories import classes

    classroom, token = await classes.create_class(session, name)
    return classes.show_code(classroom.join_code), token


async def _list(session: Any) -> list[tuple[str, ...]]:
    from ply_arena.server.repositories import classes

    rows: list[tuple[str, ...]] = []
    for c in await classes.list_classes(session):
        members = await classes.class_bots(session, c)
        rows.append(
            (
                c.name,
                classes.show_code(c.join_code),
                "yes" if c.join_open else "no",
                str(len(members)),
                c.created_at.strftime("%Y-%m-%d %H:%M"),
            )
        )
    return rows


async def _show(session: Any, name: str) -> tuple[str, bool, list[tuple[str, ...]]]:
    from ply_arena.server.repositories import classes

    classroom = await classes.require_class(session, name)
    members: list[tuple[str, ...]] = [
        (
            b.name,
            b.owner or "",
            "retired" if b.retired_at is not None else "yes" if b.enabled else "no",
            b.created_at.strftime("%Y-%m-%d"),
        )
        for b in await classes.class_bots(session, classroom)
    ]
    return classes.show_code(classroom.join_code), classroom.join_open, members


async def _on_class(session: Any, name: str, work: Any) -> Any:
    from ply_arena.server.repositories import classes

    return await work(session, await classes.require_class(session, name))
