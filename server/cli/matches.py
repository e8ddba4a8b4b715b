"""``arena matches abort``: end running matches by hand, on a running server, through its API.

    arena matches abort MATCH_ID [MATCH_ID ...] --token ADMIN_TOKEN
    arena matches abort --all --token ADMIN_TOKEN

A match running when the server stops is resumed at its next start; this is how an instructor
ends one instead (zero payoffs, unrated; its bots get ``match_end`` ``aborted``). A tournament
game aborted so is played again: cancel the tournament to stop it.
"""

from __future__ import annotations

import typer

from ply_arena.server.cli._server_api import ApiRefusal, call_api, url_option

_TOKEN_HELP = "The admin's token (or ARENA_TOKEN, or ARENA_ADMIN_TOKEN as the server has it)."


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
            ..., "--token", envvar=["ARENA_TOKEN", "ARENA_ADMIN_TOKEN"], help=_TOKEN_HELP
        ),
    ) -> None:
        """End running matches as aborted: zero payoffs, unrated, their bots told match_end."""
        if every == bool(match_ids):
            typer.echo("error: give the match ids to abort, or --all (not both)", err=True)
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
