"""``arena check-bot``: play a bot through a short scripted session and print a checklist.

    arena check-bot --url ws://HOST:PORT/ws --token CHECKER_TOKEN --game connect_four

The bot under test connects to the checker's relay (printed, ``ws://127.0.0.1:8765/ws`` by
default) instead of the arena; ``--direct`` checks a bot already connected to the arena itself
instead, with fewer items. docs/check-bot.md says what each item means.
"""

from __future__ import annotations

import typer


def _listen_address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise typer.BadParameter(f"expected HOST:PORT, e.g. 127.0.0.1:8765, not {value!r}")
    return host.strip("[]"), int(port)


def register(app: typer.Typer) -> None:
    @app.command("check-bot")
    def check_bot(
        url: str = typer.Option(
            "ws://127.0.0.1:8000/ws", "--url", help="the arena's WebSocket URL (as bots use it)"
        ),
        token: str = typer.Option(
            ...,
            "--token",
            envvar="ARENA_CHECKER_TOKEN",
            help="token of the checker's own bot, not the bot under test (or ARENA_CHECKER_TOKEN)",
        ),
        game: str = typer.Option(..., "--game", help="the game to check it on (two players)"),
        bot: str | None = typer.Option(
            None, "--bot", help="the bot under test (default: the first that logs in)"
        ),
        listen: str = typer.Option(
            "127.0.0.1:8765",
            "--listen",
            metavar="HOST:PORT",
            help="where the relay waits for the bot (port 0: any free port)",
        ),
        direct: bool = typer.Option(
            False,
            "--direct",
            help="the bot is connected to the arena itself and accepts the checker's "
            "challenges (no relay: fewer items)",
        ),
        wait: float = typer.Option(
            120.0, "--wait", metavar="SECONDS", help="how long to wait for the bot to log in"
        ),
        move_ms: int | None = typer.Option(
            None, "--move-ms", help="per-move limit of the matches (default: the game's)"
        ),
        bank_ms: int | None = typer.Option(
            None, "--bank-ms", help="bank of the matches (default: the game's)"
        ),
        with_backgammon: bool = typer.Option(
            False,
            "--with-backgammon",
            help="add a backgammon match (chance events) when --game is another game",
        ),
        seed: int | None = typer.Option(None, "--seed", hidden=True),
    ) -> None:
        """Check that a bot speaks the protocol, item by item, with what to fix.

        The items: handshake, pings, legal moves and plies, clocks, forced moves, match ends,
        two matches at once, reconnection, dice."""
        import asyncio

        from ply_arena.protocol.client import check_url
        from ply_arena.server.checkbot.checklist import judge, report
        from ply_arena.server.checkbot.session import CheckConfig, CheckSetupError, run_check

        try:
            check_url(url)
            host, port = _listen_address(listen)
        except (ValueError, typer.BadParameter) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if direct and bot is None:
            typer.echo("error: --direct needs --bot NAME (the bot to challenge)", err=True)
            raise typer.Exit(2)
        config = CheckConfig(
            url=url,
            token=token,
            game=game,
            bot=bot,
            direct=direct,
            listen_host=host,
            listen_port=port,
            wait_s=wait,
            move_ms=move_ms,
            bank_ms=bank_ms,
            with_backgammon=with_backgammon,
            seed=seed,
        )

        def say(line: str) -> None:
            typer.echo(line)

        try:
            observations = asyncio.run(run_check(config, say))
        except CheckSetupError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
        items = judge(observations)
        for line in report(observations, items):
            typer.echo(line)
        if any(item.status == "fail" for item in items):
            raise typer.Exit(1)
