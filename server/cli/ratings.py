"""``arena leaderboard GAME`` and ``arena ratings rebuild``.

arena leaderboard connect_four                      # the local database (arena.db here)
arena leaderboard othello --url http://HOST:8000    # a running server's, over its REST API
arena ratings rebuild                               # recompute every rating (server stopped)
"""

from __future__ import annotations

from typing import Any

import typer

_DB_HELP = "Database URL or SQLite file path (default: ARENA_DB_URL or arena.db here)."


def register(app: typer.Typer) -> None:
    @app.command("leaderboard")
    def leaderboard(
        game: str = typer.Argument(..., metavar="GAME", help="Game name (see `arena games`)."),
        url: str | None = typer.Option(
            None,
            "--url",
            envvar="ARENA_URL",
            help="A running server (http://HOST:PORT, or its bots' ws://HOST:PORT/ws; or "
            "ARENA_URL); default: the local database (--db).",
        ),
        db: str | None = typer.Option(None, "--db", help=_DB_HELP),
        limit: int = typer.Option(20, "--limit", min=1, max=200, help="Rows to show."),
        offset: int = typer.Option(0, "--offset", min=0, help="Rows to skip."),
        as_json: bool = typer.Option(False, "--json", help="Print the JSON instead of a table."),
        class_name: str | None = typer.Option(
            None,
            "--class",
            help="Only the bots of this class, ranked among themselves in its current season.",
        ),
        season: int | None = typer.Option(
            None, "--season", min=1, help="With --class: that season of the class (1, 2, ...)."
        ),
    ) -> None:
        """The leaderboard of GAME: rank, conservative rating (mu - 3 sigma), mu, sigma, record."""
        import json

        from ply_arena import games

        if game not in games.names():
            typer.echo(f"error: unknown game {game!r}: known games are {', '.join(games.names())}")
            raise typer.Exit(2)
        if season is not None and class_name is None:
            typer.echo("error: --season is a class's: give --class with it", err=True)
            raise typer.Exit(2)
        # --db names a local database: it wins over an ARENA_URL left in the environment.
        data = (
            _from_server(url, game, limit, offset, class_name, season)
            if url and not db
            else _local(db, game, limit, offset, class_name, season)
        )
        if as_json:
            typer.echo(json.dumps(data, indent=2))
        else:
            print_leaderboard(data)

    ratings_app = typer.Typer(
        help="Ratings: derived from the stored matches.", no_args_is_help=True
    )
    app.add_typer(ratings_app, name="ratings")

    @ratings_app.command("rebuild")
    def rebuild(db: str | None = typer.Option(None, "--db", help=_DB_HELP)) -> None:
        """Recompute every rating from the stored rated matches, in the order they were rated.

        Gives exactly what the incremental updates gave, or what the current ARENA_RATING_*
        settings give (ARENA_RATING_ANCHORS: each game's anchor pinned from its first match).
        Stop the server first: it keeps the ratings it pairs by in memory.
        """
        from ply_arena.server.cli._database import database_url, run_in_session
        from ply_arena.server.db.server_mark import running_server
        from ply_arena.server.ratings import RatingModel
        from ply_arena.server.ratings.rebuild import rebuild as rebuild_ratings
        from ply_arena.server.settings import Settings

        model = RatingModel.from_settings(Settings.from_env())
        url = database_url(db)
        other = running_server(url)
        if other is not None:
            # The server pairs by the ratings it holds in memory and writes each result's
            # rating from them: rebuilt rows would be overwritten, and history corrupted.
            typer.echo(
                f"error: {other.describe()} is running on this database; stop it first "
                "(it keeps the ratings in memory and would overwrite what a rebuild writes), "
                f"then rebuild (if no server runs, delete {other.path})",
                err=True,
            )
            raise typer.Exit(1)
        done = run_in_session(url, lambda s: rebuild_ratings(s, model))
        typer.echo(f"rebuilt {done.ratings} rating(s) from {done.matches} rated match(es)")


def _local(
    db: str | None,
    game: str,
    limit: int,
    offset: int,
    class_name: str | None,
    season: int | None = None,
) -> dict[str, Any]:
    from ply_arena.server.cli._database import database_url, run_in_session
    from ply_arena.server.ratings import RatingModel, report
    from ply_arena.server.repositories import classes
    from ply_arena.server.settings import Settings

    settings = Settings.from_env()

    async def work(session: Any) -> dict[str, Any]:
        classroom = None if class_name is None else await classes.require_class(session, class_name)
        chosen = None
        if classroom is not None and season is not None:
            chosen = await classes.season(session, classroom, season)
        return await report.leaderboard(
            session,
            game,
            limit=limit,
            offset=offset,
            provisional=settings.provisional_matches,
            classroom=classroom,
            season=chosen,
            model=RatingModel.from_settings(settings),
        )

    url = database_url(db, elsewhere="or, to read a running server's, --url http://HOST:PORT")
    try:
        data: dict[str, Any] = run_in_session(url, work)
    except (classes.UnknownClassError, classes.UnknownSeasonError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    return data


def _from_server(
    url: str,
    game: str,
    limit: int,
    offset: int,
    class_name: str | None,
    season: int | None = None,
) -> dict[str, Any]:
    import httpx

    from ply_arena.server.cli._server_api import server_address

    url = server_address(url)  # http://HOST:PORT, also from the bots' ws://HOST:PORT/ws
    address = f"{url}/api/leaderboard/{game}"
    try:
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if class_name is not None:
            params["class"] = class_name
        if season is not None:
            params["season"] = season
        response = httpx.get(address, params=params, timeout=30)
    except httpx.HTTPError as exc:
        typer.echo(f"error: cannot reach {url}: {exc}", err=True)
        raise typer.Exit(2) from exc
    if response.status_code != 200:
        typer.echo(f"error: {url} answered {response.status_code}: {response.text[:200]}", err=True)
        raise typer.Exit(1)
    return dict(response.json())


#: Columns left out, in this order, when the table is wider than the terminal: a bot's name is
#: never cut (two bots may differ only in their last letters).
_OPTIONAL = ("last (UTC)", "faults", "mu", "sigma")


def _of_class(data: dict[str, Any]) -> str:
    """`` of class ai-2026, season 2 (ended)`` for a class's leaderboard; else nothing."""
    if not data.get("class"):
        return ""
    season = data.get("season")  # (.get: a server older than seasons sends none)
    if not season:
        return f" of class {data['class']}"
    state = "current" if season["current"] else "ended"
    return f" of class {data['class']}, season {season['number']} ({state})"


def print_leaderboard(data: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    rows: list[dict[str, str]] = []
    for row in data["ranking"]:
        rows.append(
            {
                "#": str(row["rank"]),
                "bot": row["bot"]
                + (" *" if row["house"] else "")
                + (" (retired)" if row.get("retired") else "")
                # (.get: a server older than the anchors sends no such field)
                + (f" (anchor, fixed at {row['fixed_at']:g})" if row.get("anchor") else ""),
                "rating": f"{row['conservative']:.1f}" + ("?" if row["provisional"] else ""),
                "mu": f"{row['mu']:.1f}",
                "sigma": f"{row['sigma']:.2f}",
                "W-D-L": f"{row['wins']}-{row['draws']}-{row['losses']}",
                "faults": f"{row['timeouts']}/{row['illegal_moves']}/{row['disconnects']}",
                # MM-DD HH:MM, UTC
                "last (UTC)": (row["last_played"] or "")[5:16].replace("T", " "),
            }
        )
    console = Console()
    total, shown_rows = data["total"], len(rows)
    first = data.get("offset", 0) + 1
    if not rows:
        if total:
            console.print(f"{data['game']}: {total} rated bot(s), none from row {first} on")
        else:
            console.print(f"{data['game']}: no rated bot yet (no rated match finished)")
        return
    span = "" if shown_rows == total else f", showing {first}-{first + shown_rows - 1}"
    columns = ["#", "bot", "rating", "mu", "sigma", "W-D-L", "faults", "last (UTC)"]
    for drop in range(len(_OPTIONAL) + 1):
        shown = [c for c in columns if c not in _OPTIONAL[:drop]]
        table = Table(
            title=f"{data['game']}{_of_class(data)}: {total} rated bot(s){span}, ranked by "
            "mu - 3 sigma",
            box=box.SIMPLE_HEAD,
        )
        for name in shown:
            table.add_column(name, no_wrap=True, justify="left" if name == "bot" else "right")
        for row in rows:
            table.add_row(*(row[name] for name in shown))
        natural = console.measure(table, options=console.options.update_width(10_000))
        if natural.maximum <= console.width:
            break
    console.print(table)
    # Below the table, left-aligned and wrapped at the terminal: a caption would be centred and
    # wrapped at the table's width.
    console.print(_caption(data, shown), style="dim", overflow="fold")


def _caption(data: dict[str, Any], shown: list[str]) -> str:
    parts = [
        f"?: provisional (fewer than {data['provisional_below']} rated matches)",
        "*: a house bot (a reference agent run by the server)",
    ]
    if "faults" in shown:
        parts.append("faults: timeouts/illegal moves/disconnects")
    hidden = [c for c in _OPTIONAL if c not in shown]
    if hidden:
        parts.append(f"not shown at this width: {', '.join(hidden)} (--json has all)")
    return "; ".join(parts)
