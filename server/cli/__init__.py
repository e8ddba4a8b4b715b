"""The ``arena`` command line. Each command group lives in its own module and registers itself."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="arena",
    help="Ply Arena: a competition server for game-playing bots.",
    no_args_is_help=True,
    add_completion=False,
)



@app.callback()
def _root() -> None:
    """Ply Arena: a competition server for game-playing bots."""


# Each module defines `register(app)`; heavy imports stay inside the commands.
from server.cli import agent, analyze, bots, games_cmd, play, replay, serve  # noqa: E402

for _module in (games_cmd, agent, serve, bots, replay, analyze, play):
    _module.register(app)


def main() -> None:
    app()
