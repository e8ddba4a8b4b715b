"""``arena games``: list the games and their rules in one line each."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("games")
    def list_games() -> None:
        """List the games the server referees."""
        from rich.console import Console
        from rich.table import Table

        from ply_arena import games

        table = Table("name", "players", "chance", "summary")
        for name in games.names():
            game = games.get(name)
            chance = "yes" if game.has_chance else "no"
            table.add_row(name, str(game.num_players), chance, game.summary)
        Console().print(table)
