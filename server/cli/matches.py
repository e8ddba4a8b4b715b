"""``arena matches abort``: end running matches by hand, on a running server through its API,
or with no server running, in its database (``--db``: they will not be resumed then).

    arena matches abort MATCH_ID [MATCH_ID ...] --token ADMIN_TOKEN
    arena matches abort --all --token ADMIN_TOKEN
    arena matches abort --all --db arena.db        # the server is stopped

A match running when the server stops is resumed at its next start; this is how an instructor
ends one instead (zero payoffs, unrated; its bots get ``match_end`` ``aborted``). A tournament
game aborted so is played again: cancel the tournament to stop it.
"""

from __future__ import annotations

import typer

from ply_arena.server.cli._server_api import ApiRefusal, call_api, url_option

_TOKEN_HELP = "The admin's token (or ARENA_ADMIN_TOKEN, as the server has it, else ARENA_TOKEN)."
_DB_HELP = (
    "With the server stopped: end the matches in this database (a file or URL) instead, so that "
    "the next start does not resume them."
)


def register(app: typer.Typer) -> None:
    matches_app = typer.Typer(help="End running matches on a running server.", no_args_is_help=True)
    app.add_typer(matches_app, name="matches")

    @matches_app.command("abort")
    def abort(
        match_ids: list[str] = typer.Argument(  # noqa: B008
            None, metavar="MATCH_ID", help="The matches to end (ids from /matches)."
        ),
        every: bool = typer.Option(False, "--all", help="Every running match."),
        url: str = url_option(),
        token: str = typer.Option(
            None, "--token", envvar=["ARENA_ADMIN_TOKEN", "ARENA_TOKEN"], help=_TOKEN_HELP
        ),
        db: str = typer.Option(None, "--db", help=_DB_HELP),
    ) -> None:
        """End running matches as aborted: zero payoffs, unrated, their bots told match_end."""
        if every == bool(match_ids):
            typer.echo("error: give the match ids to abort, or --all (not both)", err=True)
            raise typer.Exit(2)
        if db is not None:
            _abort_stored(db, None if every else match_ids)
            return
        if not token:
            typer.echo(
                "error: give the admin token (--token, or ARENA_ADMIN_TOKEN); with the server "
                "stopped, --db DATABASE instead",
                err=True,
            )
            raise typer.Exit(2)
        if every:
            ended = call_api("POST", url, "/api/matches/abort", token, {"all": True})["aborted"]
            refused = 0
        else:
            # Each id on its own: one the server refuses (unknown, over) is said, the others
            # are still aborted, and the exit status says something was refused.
            ended, refused = [], 0
            for match_id in match_ids:
                try:
                    path = f"/api/matches/{match_id}/abort"
                    ended += call_api("POST", url, path, token, go_on=True)["aborted"]
                except ApiRefusal:
                    refused += 1
        for match_id in ended:
            typer.echo(f"aborted {match_id}")
        if refused:
            raise typer.Exit(1)
        if not ended:
            typer.echo("no match was running")


def _abort_stored(db: str, match_ids: list[str] | None) -> None:
    """End running matches in a database no server runs on (they are not resumed then)."""
    from ply_arena.server.cli._database import database_url, run_in_session
    from ply_arena.server.db.server_mark import running_server
    from ply_arena.server.repositories import matches

    url = database_url(db)
    other = running_server(url)
    if other is not None:
        typer.echo(
            f"error: {other.describe()} is running on this database: abort through it "
            f"(--url, --token), or stop it first (if no server runs, delete {other.path})",
            err=True,
        )
        raise typer.Exit(1)
    ended: list[str] = run_in_session(url, lambda s: matches.abort_running(s, match_ids))
    for match_id in ended:
        typer.echo(f"aborted {match_id}")
    missing = sorted(set(match_ids or []) - set(ended))
    for match_id in missing:
        typer.echo(f"error: {match_id} is not a running match in this database", err=True)
    if missing:
        raise typer.Exit(1)
    if not ended:
        typer.echo("no match was running")
