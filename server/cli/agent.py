"""``arena agent``: a reference agent plays as a remote bot through the bot kit."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("agent")
    def agent(
        spec: str = typer.Argument(
            ..., help="agent name with options, e.g. alphabeta or 'alphabeta:depth=6'"
        ),
        game: str = typer.Option(..., "--game", "-g", help="game to play, e.g. connect_four"),
        url: str = typer.Option("ws://127.0.0.1:8000/ws", "--url", help="server WebSocket URL"),
        token: str = typer.Option(
            ..., "--token", envvar="ARENA_BOT_TOKEN", help="the bot's token (or ARENA_BOT_TOKEN)"
        ),
        games_to_play: int = typer.Option(1, "--games", "-n", help="matches to play (0: forever)"),
        concurrent: int = typer.Option(1, "--concurrent", help="matches to play at once"),
        option: Annotated[
            list[str] | None,
            typer.Option("--option", "-o", help="agent option key=value (repeatable)"),
        ] = None,
        challenge: Annotated[
            list[str] | None,
            typer.Option("--challenge", help="challenge this bot, not the lobby (repeatable)"),
        ] = None,
        move_ms: int | None = typer.Option(None, "--move-ms", help="ask for this per-move limit"),
        bank_ms: int = typer.Option(0, "--bank-ms", help="with --move-ms: the overage bank"),
        policy: str = typer.Option("forfeit", "--policy", help="forfeit or random_move"),
        max_retries: int | None = typer.Option(
            None, "--max-retries", help="give up after this many failed reconnections in a row"
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="print only the results"),
    ) -> None:
        """Play GAME on a server as a remote bot driven by a reference agent."""
        import logging

        import games
        from protocol.client import BotError, run_bot
        from protocol.messages import Policy, TimeControl
        from reference_agents.registry import make, parse_spec

        logging.basicConfig(
            level=logging.WARNING if quiet else logging.INFO,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        try:
            name, options = parse_spec(spec)
            _, extra = parse_spec("x:" + ",".join(option or []))
            options.update(extra)
            the_game = games.get(game)
            make(name, the_game, **options)  # fail now, not at the first match
            tc = TimeControl(move_ms=move_ms, bank_ms=bank_ms) if move_ms else None
            chosen_policy = Policy(policy)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc

        try:
            results = run_bot(
                url,
                token,
                agent=lambda g: make(name, g, **options),  # a fresh agent per match
                game=game,
                games=games_to_play,
                concurrent=concurrent,
                challenge=challenge or None,
                time_control=tc,
                policy=chosen_policy,
                client_name=f"arena-agent/{name}",
                max_retries=max_retries,
            )
        except (BotError, ConnectionError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
        for end in results:
            typer.echo(f"{end.match_id} {end.termination.value} payoffs={end.payoffs}")
