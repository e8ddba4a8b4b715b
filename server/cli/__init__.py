"""The ``arena`` command line. Each command group lives in its own module and registers itself."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import DefaultPlaceholder


def unwrap(text: str | None) -> str | None:
    """A docstring's paragraphs as single lines: the terminal wraps them, at its own width
    (Typer's rich help keeps the source's line breaks, cutting sentences mid-line)."""
    if not text:
        return text
    paragraphs = text.strip().split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


class _FlagsAsFlags:
    """Boolean flags render as flags in ``--help``: ``--trace``, not ``--trace <bool>``; help
    paragraphs are unwrapped (``unwrap``).

    Typer's rich help prints every option's type, flags (``--help`` included) too; a flag's
    metavar, when set, replaces that type, and a flag takes no value to name.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = unwrap(kwargs["help"])
        super().__init__(*args, **kwargs)

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
        return params


class ArenaCommand(_FlagsAsFlags, TyperCommand):
    pass


class ArenaGroup(_FlagsAsFlags, TyperGroup):
    pass


app = typer.Typer(
    name="arena",
    help="Ply Arena: a competition server for game-playing bots.",
    no_args_is_help=True,
    add_completion=False,
    cls=ArenaGroup,
)


@app.callback()
def _root() -> None:
    """Ply Arena: a competition server for game-playing bots."""


# Each module defines `register(app)`; heavy imports stay inside the commands.
from ply_arena.server.cli import (  # noqa: E402
    agent,
    analyze,
    bots,
    check_bot,
    classes,
    db,
    demo,
    games_cmd,
    matches,
    play,
    ratings,
    replay,
    serve,
    tournament,
    verify,
)

for _module in (
    games_cmd,
    serve,
    demo,
    bots,
    classes,
    tournament,
    matches,
    agent,
    check_bot,
    ratings,
    db,
    replay,
    verify,
    analyze,
    play,
):
    _module.register(app)


def _use_arena_classes(typer_app: typer.Typer) -> None:
    """Every command and group registered so far, whichever module made it, uses the classes
    above (set here once, so that no command module has to remember it)."""
    for command in typer_app.registered_commands:
        if _is_default(command.cls, TyperCommand):
            command.cls = ArenaCommand
    for group in typer_app.registered_groups:
        if _is_default(group.cls, TyperGroup):
            group.cls = ArenaGroup
        if group.typer_instance is not None:
            if _is_default(group.typer_instance.info.cls, TyperGroup):
                group.typer_instance.info.cls = ArenaGroup
            _use_arena_classes(group.typer_instance)


def _is_default(cls: Any, default: type) -> bool:
    # typer marks values nobody chose as DefaultPlaceholder, or fills in its own class.
    return cls is None or cls is default or isinstance(cls, DefaultPlaceholder)


_use_arena_classes(app)


def main() -> None:
    from ply_arena.server.settings import SettingsError

    try:
        app()
    except SettingsError as exc:  # an ARENA_* variable with a typo: one line, not a traceback
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None
