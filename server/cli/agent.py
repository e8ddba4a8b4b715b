"""``arena agent GAME AGENT``: a reference agent plays as a remote bot through the bot kit.

    arena agent connect_four alphabeta:depth=6 --url ws://127.0.0.1:8000/ws --token T --games 10

The game comes first and the agent second, as in ``arena play GAME AGENT...`` and
``arena analyze GAME``. ``--play GAME=AGENT`` (repeatable) adds another game the same bot plays
on the same connection: a tournament's matches of each game (with ``--no-lobby``) and the
challenges it accepts are played by that game's agent; the lobby it joins is GAME's.

    arena agent connect_four alphabeta --play chinese_checkers=maxn:depth=2 --no-lobby --games 0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ply_arena.games import Game
    from ply_arena.protocol.messages import MatchEnd, MatchStart
    from ply_arena.reference_agents import Agent


def _old_game_option(ctx: typer.Context, value: str | None) -> str | None:
    # `--game` was how the game used to be given; say what the command looks like now.
    if value is not None and not ctx.resilient_parsing:
        typer.echo(
            f"error: --game is gone: the game is the first argument, as in `arena play`: "
            f"arena agent {value} AGENT [OPTIONS]",
            err=True,
        )
        raise typer.Exit(2)
    return value


def _names(values: list[str] | None) -> list[str]:
    """The items of a repeatable option, each of which may hold several, comma-separated:
    ``--challenge carol,erin`` is ``--challenge carol --challenge erin``."""
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def _pairs(values: list[str] | None) -> list[tuple[str, str]]:
    """The ``--play GAME=AGENT`` pairs (ValueError for one without ``=``)."""
    pairs = []
    for value in values or []:
        game, sep, spec = value.partition("=")
        if not sep or not game.strip() or not spec.strip():
            raise ValueError(
                f"--play takes GAME=AGENT, as in --play chinese_checkers=maxn: {value!r}"
            )
        pairs.append((game.strip(), spec.strip()))
    return pairs


def result_line(start: MatchStart, end: MatchEnd, seat_names: tuple[str, ...] = ()) -> str:
    """The line printed when a match ends: its id, how it ended, the payoffs by seat, and then
    what they meant for this bot, in which seat, against whom (payoffs alone do not say which
    seat was ours, and the seats rotate from match to match).

        >>> from ply_arena.protocol.messages import MatchEnd, MatchStart, SeatInfo, Termination
        >>> seats = [SeatInfo(seat=0, bot="bob"), SeatInfo(seat=1, bot="alice")]
        >>> start = MatchStart(match_id="M1", game="connect_four", seats=seats, your_seat=1,
        ...     time_control={"move_ms": 1000}, policy="forfeit", position={}, ply=0, moves=[])
        >>> end = MatchEnd(match_id="M1", game="connect_four", payoffs=[-1.0, 1.0],
        ...     termination=Termination.normal, at_fault=None, position={}, plies=9)
        >>> result_line(start, end, ("X", "O"))
        'M1 normal payoffs=[-1.0, 1.0] won as O (seat 1) against bob'
    """
    seat = start.your_seat
    mine = end.payoffs[seat] if seat < len(end.payoffs) else None
    others = [p for i, p in enumerate(end.payoffs) if i != seat]
    if end.termination.value == "aborted" or mine is None:
        outcome = "no result"
    elif not others or mine > max(others):
        outcome = "won"
    elif mine == max(others):
        outcome = "drew"
    else:
        outcome = "lost"
    name = f"{seat_names[seat]} (seat {seat})" if seat < len(seat_names) else f"seat {seat}"
    opponents = " and ".join(s.bot for s in start.seats if s.seat != seat)
    against = f" against {opponents}" if opponents else ""
    return (
        f"{end.match_id} {end.termination.value} payoffs={end.payoffs} {outcome} as {name}{against}"
    )


def register(app: typer.Typer) -> None:
    @app.command("agent")
    def agent(
        game: Annotated[
            str, typer.Argument(metavar="GAME", help="Game to play (see `arena games`).")
        ],
        spec: Annotated[
            str,
            typer.Argument(
                metavar="AGENT",
                help="Agent with options: alphabeta, alphabeta:depth=6 (see docs/agents.md).",
            ),
        ],
        url: str = typer.Option("ws://127.0.0.1:8000/ws", "--url", help="server WebSocket URL"),
        token: str = typer.Option(
            ..., "--token", envvar="ARENA_BOT_TOKEN", help="the bot's token (or ARENA_BOT_TOKEN)"
        ),
        games_to_play: int = typer.Option(1, "--games", "-n", help="matches to play (0: forever)"),
        concurrent: int = typer.Option(1, "--concurrent", help="matches to play at once"),
        option: Annotated[
            list[str] | None,
            typer.Option(
                "--option",
                "-o",
                metavar="KEY=VALUE[,...]",
                help="agent options, comma-separated or repeated",
            ),
        ] = None,
        challenge: Annotated[
            list[str] | None,
            typer.Option(
                "--challenge",
                metavar="BOT[,BOT]",
                help="challenge these bots, not the lobby (comma-separated or repeated)",
            ),
        ] = None,
        challenge_wait: float = typer.Option(
            60.0,
            "--challenge-wait",
            metavar="SECONDS",
            help="stop when a challenged bot is not connected for this long",
        ),
        no_lobby: bool = typer.Option(
            False,
            "--no-lobby",
            help="never join the lobby: play only the matches the server starts for this bot "
            "(a tournament's) and the challenges it accepts",
        ),
        accept_challenges: bool = typer.Option(
            False, "--accept-challenges", help="accept challenges from any bot (default: decline)"
        ),
        accept_from: Annotated[
            list[str] | None,
            typer.Option(
                "--accept-from",
                metavar="BOT[,BOT...]",
                help="accept challenges from these bots only (comma-separated or repeated)",
            ),
        ] = None,
        min_move_ms: int = typer.Option(
            0, "--min-move-ms", help="decline challenges giving less than this per move"
        ),
        move_ms: int | None = typer.Option(None, "--move-ms", help="ask for this per-move limit"),
        bank_ms: int = typer.Option(0, "--bank-ms", help="with --move-ms: the overage bank"),
        policy: str = typer.Option("forfeit", "--policy", help="forfeit or random_move"),
        max_retries: int | None = typer.Option(
            None, "--max-retries", help="give up after this many failed reconnections in a row"
        ),
        play: Annotated[
            list[str] | None,
            typer.Option(
                "--play",
                metavar="GAME=AGENT",
                help="also play GAME with AGENT on this connection (repeatable): its tournament "
                "matches and accepted challenges; the lobby joined stays the first GAME's",
            ),
        ] = None,
        quiet: bool = typer.Option(False, "--quiet", "-q", help="print only the results"),
        old_game: str | None = typer.Option(
            None, "--game", "-g", hidden=True, is_eager=True, callback=_old_game_option
        ),
    ) -> None:
        """Play GAME on a server as a remote bot driven by the reference agent AGENT."""
        import asyncio
        import logging

        from ply_arena import games
        from ply_arena.protocol.client import BotClient, BotError, MatchView, check_url
        from ply_arena.protocol.messages import Policy, TimeControl
        from ply_arena.reference_agents.registry import agent_names, make, parse_spec

        logging.basicConfig(
            level=logging.WARNING if quiet else logging.INFO,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        try:
            name, options = parse_spec(spec)
            _, extra = parse_spec("x:" + ",".join(_names(option)))
            options.update(extra)
            if game not in games.names() and game.partition(":")[0] in agent_names():
                raise ValueError(f"the game comes first, then the agent: arena agent {spec} {game}")
            the_game = games.get(game)
            make(name, the_game, **options)  # fail now, not at the first match
            # Every game's agent, made fresh for each match: (name, options) by game.
            agents: dict[str, tuple[str, dict[str, object]]] = {the_game.name: (name, options)}
            for other_game, other_spec in _pairs(play):
                other = games.get(other_game)
                if other.name in agents:
                    raise ValueError(f"{other.name} is given twice")
                other_name, other_options = parse_spec(other_spec)
                make(other_name, other, **other_options)
                agents[other.name] = (other_name, other_options)
            tc = TimeControl(move_ms=move_ms, bank_ms=bank_ms) if move_ms else None
            chosen_policy = Policy(policy)
            check_url(url)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

        class Reporting(BotClient):
            # One line per match as it ends (with --games 0 the run never returns). on_result,
            # unlike run_bot's on_match_end, is given the match's view: which seat was ours.
            def on_result(self, view: MatchView, end: MatchEnd) -> None:
                typer.echo(result_line(view.start, end, view.game.seat_names))

        try:
            client = Reporting(
                url,
                token,
                # A fresh agent per match, by its game.
                agent={g: _factory(*spec) for g, spec in agents.items()},
                game=the_game.name,
                lobby=not no_lobby,
                games=games_to_play,
                concurrent=concurrent,
                challenge=_names(challenge) or None,
                challenge_wait_s=challenge_wait,
                accept_challenges=_names(accept_from) or accept_challenges,
                min_move_ms=min_move_ms,
                time_control=tc,
                policy=chosen_policy,
                client_name="arena-agent/" + "+".join(n for n, _ in agents.values()),
                max_retries=max_retries,
            )
            asyncio.run(client.run())
        except (BotError, ConnectionError, ValueError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            # Its running matches go on without it (the protocol's disconnects), as run_bot's.
            logging.getLogger("ply_arena.protocol.client").warning("stopped by Ctrl+C")
            raise typer.Exit(130) from None


def _factory(name: str, options: dict[str, object]) -> Callable[[Game], Agent]:
    """A factory of ``name`` agents with ``options``, one for each match."""
    from ply_arena.reference_agents.registry import make

    return lambda game: make(name, game, **options)
