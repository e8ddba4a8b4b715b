"""``arena demo``: a server with a ladder already playing, for a first look.

    arena demo                       # http://127.0.0.1:8000, a temporary database, until Ctrl+C
    arena demo --db demo.db --port 8001 --minutes 5

It starts the server (a temporary SQLite database unless ``--db``) with house bots that also play
each other, plus a few reference agents connected as remote bots over WebSocket through the bot
kit, as students' bots would be. Within a minute every game's leaderboard holds rated matches.
It prints the addresses to look at, and what to type to add a bot of one's own.

Use ``arena serve`` for a class: no self-play (the house only pairs with students' bots), the
database in the working directory, the admin token kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
import tempfile
from pathlib import Path
from typing import Any

import typer

#: The demo's house bots: quick thinkers, so that matches end within seconds.
DEMO_HOUSE_BOTS = (
    "tic_tac_toe=random,alphabeta@0.05; "
    "connect_four=random,mcts@0.05,alphabeta@0.2; "
    "othello=random,mcts@0.05,alphabeta@0.2; "
    "backgammon=random,expectiminimax:depth=1@0.05,mcts@0.05; "
    "chinese_checkers=random,maxn:depth=1@0.02,mcts:simulations=20@0.02"
)
#: Remote bots per game (through the bot kit, over WebSocket): (name, agent spec, seconds).
DEMO_REMOTE = {
    "tic_tac_toe": [("demo-minimax", "minimax", 0.05), ("demo-random-ttt", "random", 0.0)],
    "connect_four": [("demo-mcts", "mcts", 0.05), ("demo-random-c4", "random", 0.0)],
    "othello": [("demo-negamax", "negamax:depth=2", 0.05), ("demo-random-oth", "random", 0.0)],
    "backgammon": [("demo-random-bg", "random", 0.0)],
    # Three random players never finish (a game then runs to its 1,000-ply cap, longer than
    # the demo's first minute on a busy machine), and two random bots here with the house's
    # random one could make such a group; with one that searches, every group of three has a
    # player that advances (170-350 plies).
    "chinese_checkers": [("demo-maxn-cc", "maxn:depth=1", 0.02), ("demo-random-cc", "random", 0.0)],
}


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        host: str = typer.Option(
            "127.0.0.1", "--host", envvar="ARENA_HOST", help="Interface to listen on."
        ),
        port: int = typer.Option(8000, "--port", envvar="ARENA_PORT", help="TCP port."),
        db: str | None = typer.Option(
            None, "--db", help="Keep the database in this file (default: a temporary one)."
        ),
        minutes: float | None = typer.Option(
            None, "--minutes", min=0.05, help="Stop after this long (default: at Ctrl+C)."
        ),
    ) -> None:
        """A server with house bots and remote agents playing every game (a first look).

        The leaderboards fill within a minute. For a class, use `arena serve`."""
        from ply_arena.server.db.server_mark import running_server

        other = running_server(f"sqlite+aiosqlite:///{db}") if db else None
        if other is not None:
            typer.echo(f"error: {other.describe()} is running on {db}; give another --db", err=True)
            raise typer.Exit(1)
        with tempfile.TemporaryDirectory(prefix="arena-demo-") as tmp:
            path = Path(db) if db else Path(tmp) / "demo.db"
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(run_demo(host, port, path, minutes))


async def run_demo(host: str, port: int, db: Path, minutes: float | None) -> None:
    from ply_arena import games
    from ply_arena.protocol.client import BotClient
    from ply_arena.reference_agents.registry import make, parse_spec
    from ply_arena.server.app import create_app, make_server
    from ply_arena.server.repositories import bots as bot_repo
    from ply_arena.server.settings import Settings

    admin_token = secrets.token_urlsafe(24)
    settings = Settings.from_env(
        host=host,
        port=port,
        db_url=str(db),
        admin_token=admin_token,
        house_bots=DEMO_HOUSE_BOTS,
        house_self_play=True,
    )
    settings.print_admin_token = False
    app = create_app(settings)
    # Ctrl+C (and SIGTERM) stop the server, which then stops the demo: uvicorn takes the
    # signal while it serves, and afterwards passes it on to the handler found before it; that
    # handler must not interrupt the demo's own ending (the remote bots, the standings).
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: None)
    server = make_server(app, settings, log_level="warning")
    # The demo's terminal shows its banner and the standings, not a line per match and login,
    # nor the remote bots' reconnection attempts as the server goes down.
    logging.getLogger("ply_arena.server").setLevel(logging.WARNING)
    logging.getLogger("ply_arena.protocol.client").setLevel(logging.ERROR)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()  # could not start (the port taken?): say why
            return
        await asyncio.sleep(0.05)

    base = f"http://{host}:{port}"
    ws_url = f"ws://{host}:{port}/ws"
    clients = []
    async with app.state.database.session() as session:
        tokens = {}
        for remote in DEMO_REMOTE.values():
            for name, _, _ in remote:
                existing = await bot_repo.bot_by_name(session, name)
                if existing is None:
                    _, tokens[name] = await bot_repo.create_bot(session, name)
                else:
                    tokens[name] = await bot_repo.rotate_token(session, name)
    for game, remote in DEMO_REMOTE.items():
        for name, spec, seconds in remote:
            agent, options = parse_spec(spec)
            if seconds:
                options["move_time"] = seconds

            def factory(
                g: games.Game, agent: str = agent, options: dict[str, Any] = options
            ) -> Any:
                return make(agent, g, **options)

            clients.append(
                BotClient(
                    ws_url, tokens[name], agent=factory, game=game, games=0, client_name="demo"
                )
            )
    running = [asyncio.create_task(c.run()) for c in clients]
    _banner(base, ws_url, admin_token, db, minutes)
    try:
        if minutes is None:
            await serving  # until Ctrl+C (uvicorn stops on it)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(serving), minutes * 60)
    finally:
        for client in clients:
            client.stop()
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        server.should_exit = True
        with contextlib.suppress(Exception):
            await serving
        await _standings(db, settings.rating_anchors)


def _banner(base: str, ws_url: str, admin_token: str, db: Path, minutes: float | None) -> None:
    from ply_arena import games

    lines = [
        "",
        f"Ply Arena demo on {base}  (database: {db})",
        "House bots and remote reference agents are playing every game; leaderboards fill within"
        " a minute. Open the pages in a browser:",
        f"  {base}/  (the games, matches being played now, results)",
        *(f"  {base}/leaderboard/{name}" for name in games.names()),
        f"  as JSON: {base}/api/leaderboard/connect_four",
        f"  arena leaderboard connect_four --url {base}",
        "",
        f"Add a bot of your own: arena bots create mybot --db {db}",
        f"  then connect it to {ws_url} with its token (docs/protocol.md), or:",
        f"  arena agent connect_four alphabeta --url {ws_url} --token TOKEN --games 0",
        f"Admin token for this demo (REST): {admin_token}",
        "",
        "Stop with Ctrl+C." if minutes is None else f"Stops in {minutes:g} minute(s).",
        "",
    ]
    typer.echo("\n".join(lines))


async def _standings(db: Path, anchors_text: str) -> None:
    """The top of every game's leaderboard, printed as the demo ends."""
    from ply_arena import games
    from ply_arena.server.cli.ratings import print_leaderboard
    from ply_arena.server.db.database import Database
    from ply_arena.server.ratings import report
    from ply_arena.server.ratings.anchors import parse_anchors
    from ply_arena.server.ratings.model import RatingModel

    model = RatingModel(anchors=parse_anchors(anchors_text))
    database = Database(f"sqlite+aiosqlite:///{db}")
    try:
        async with database.session() as session:
            for name in games.names():
                data = await report.leaderboard(
                    session, name, limit=5, offset=0, provisional=10, model=model
                )
                if data["ranking"]:
                    print_leaderboard(data)
    finally:
        await database.dispose()
