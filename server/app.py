"""The app factory: the pages at the top, REST under /api, the bots' WebSocket at /ws, the
spectators' at /ws/watch/{match_id}, and a lifespan that migrates the database, sets up the admin
token, resumes the matches a stop or a crash left running and runs the referee and the house
bots."""

from __future__ import annotations

import asyncio
import copy
import gc
import logging
import secrets
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import MAX_FRAME_BYTES
from ply_arena.server.analysis.runner import Analyst
from ply_arena.server.api import routes as api_routes
from ply_arena.server.api.errors import InternalErrorMiddleware, error_response
from ply_arena.server.api.errors import exception_handlers as api_exception_handlers
from ply_arena.server.api.throttle import AddressThrottle
from ply_arena.server.cluster.membership import Membership
from ply_arena.server.db import server_mark
from ply_arena.server.db.database import Database
from ply_arena.server.house import House, parse_house_bots
from ply_arena.server.pages.errors import PageError, html_not_found, page_error, wants_html
from ply_arena.server.pages.headers import SecurityHeadersMiddleware
from ply_arena.server.pages.routes import routes as page_routes
from ply_arena.server.pages.templating import compile_templates
from ply_arena.server.ratings import RatingModel
from ply_arena.server.ratings.rebuild import rebuild_if_needed
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import bots
from ply_arena.server.repositories import ratings as rating_repo
from ply_arena.server.settings import Settings
from ply_arena.server.tournaments.director import Directors
from ply_arena.server.transport import ArenaWebSocketProtocol, http_protocol
from ply_arena.server.ws.endpoint import bot_websocket
from ply_arena.server.ws.session import CLOSE_GRACE_S
from ply_arena.server.ws.watch import watch_http_only, watch_websocket

log = logging.getLogger("ply_arena.server.app")

#: gc.set_threshold once the server has started (defaults: 700, 10, 10).
GC_THRESHOLDS = (50_000, 50, 100)


def uvicorn_config(
    app: Starlette, settings: Settings, *, log_prefix: str = "", **options: Any
) -> uvicorn.Config:
    """The one uvicorn configuration, shared by ``arena serve`` and the tests' live server
    (``log_prefix``: what each log line says after its level, ``[worker 2]``)."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        # uvicorn's sans-I/O websockets implementation (the legacy one is deprecated in
        # websockets >= 14) and its h11 one, each with what a server facing untrusted clients
        # needs on top (server/transport.py: coded frame errors, request deadlines).
        ws=ArenaWebSocketProtocol,
        http=http_protocol(settings.http_request_timeout_s),
        # uvloop when it is installed (a dependency except on Windows), else asyncio's own loop:
        # ~15% less server CPU per relayed move in bench/server.py. (The legacy "websockets"
        # implementation measured no better; wsproto is not installed.)
        loop="auto",
        # A bigger frame is refused from its header (ArenaWebSocketProtocol answers it with
        # frame_too_large), so no connection makes the server buffer more than this.
        ws_max_size=MAX_FRAME_BYTES,
        # Frames are a few hundred bytes of JSON: compressing each costs more CPU than it saves.
        ws_per_message_deflate=False,
        # No WebSocket-level keepalive from uvicorn: the protocol's own heartbeat (ping/pong in
        # JSON, settings.heartbeat_s) decides when a bot is gone, with a coded error. uvicorn's
        # would close a bot that stops reading for 40 s while it thinks, silently (1011).
        ws_ping_interval=None,
        lifespan="on",
        log_config=log_config(log_prefix),
        **options,
    )


async def _report_unanchored(database: Database, settings: Settings) -> None:
    """Log each rating anchor whose bot does not exist (ratings in its game then float): a
    warning when the anchors were configured (a typo?), else (the default anchors, without
    the default house bots) for information."""
    model = RatingModel.from_settings(settings)
    configured = settings.rating_anchors.strip().lower() != "default"
    async with database.session() as session:
        found = await session.run_sync(
            lambda sync: rating_repo.anchor_ids(sync.connection(), model.anchors)
        )
    anchored = {game for _, game in found}
    missing = [f"{a.game} ({a.bot})" for a in model.anchors if a.game not in anchored]
    if missing:
        log.log(
            logging.WARNING if configured else logging.INFO,
            "ratings not anchored, no such bot: %s (ARENA_RATING_ANCHORS, docs/server.md)",
            ", ".join(missing),
        )


def create_app(settings: Settings | None = None) -> Starlette:
    """The app. A ``house_bots`` setting that cannot be read is a HouseConfigError (a ValueError
    naming the entry at fault) here, before anything starts."""
    settings = settings if settings is not None else Settings.from_env()
    house_specs = parse_house_bots(settings.house_bots)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # First: a second server on the same SQLite file would abort the first one's matches.
        mark = server_mark.claim(settings.db_url)
        database = Database(settings.db_url)
        try:
            await database.migrate()
            async with database.session() as session:
                app.state.admin_token_hash = await _admin_token_hash(session, settings)
            async with database.session() as session:
                rebuilt = await rebuild_if_needed(session, RatingModel.from_settings(settings))
                if rebuilt is not None:
                    log.info(
                        "ratings rebuilt from %d rated match(es): %d rating(s)",
                        rebuilt.matches,
                        rebuilt.ratings,
                    )
            app.state.database = database
            referee = Referee(database, settings)
            app.state.referee = referee
            house = House(referee, settings, house_specs)
            app.state.house = house
            await referee.start()
            # On PostgreSQL other processes may share the database: they meet over the bus.
            membership = await Membership.join(referee)
            # Before the house bots log in and the directors look at their games: a resumed
            # match is one they find running.
            app.state.resumed_on_start = len(await referee.resume_unfinished())
            directors = Directors(referee, database)
            app.state.tournaments = directors
            try:
                await house.start()
                # After the house bots, the default anchors: said when one names no bot.
                await _report_unanchored(database, settings)
                # After the house bots: a gauntlet's pool is usually theirs.
                await directors.start()
                # Everything built so far (modules, tables, the app) lives as long as the
                # server: move it out of the collector's sight, so that a full collection does
                # not walk it again and again while matches run (80-200 ms pauses under load
                # otherwise), and collect less often: each move allocates a few hundred
                # short-lived objects, and the default threshold (700) ran a young collection
                # every few moves.
                compile_templates()
                gc.collect()
                gc.freeze()
                gc.set_threshold(*GC_THRESHOLDS)
                yield
            finally:
                # The directors first (their games stay stored as playing), then the referee:
                # every match stays stored as running, the house bots' too, to be resumed.
                await directors.stop()
                await referee.stop()
                await house.stop()
                if membership is not None:
                    await membership.leave()
        finally:
            await database.dispose()
            server_mark.release(mark)

    app = Starlette(
        routes=[
            Mount("/api", routes=api_routes),
            WebSocketRoute("/ws", bot_websocket),
            Route("/ws", websocket_only),  # a browser or curl at the bots' address
            WebSocketRoute("/ws/watch/{match_id}", watch_websocket),
            Route("/ws/watch/{match_id}", watch_http_only),
            *page_routes,
        ],
        exception_handlers={
            **api_exception_handlers,
            HTTPException: _http_error,
            PageError: page_error,
        },
        middleware=[Middleware(SecurityHeadersMiddleware), Middleware(InternalErrorMiddleware)],
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.analyst = Analyst(settings)
    app.state.register_throttle = AddressThrottle(
        settings.register_limit, settings.register_window_s
    )
    app.state.sessions = set()
    return app


async def _http_error(request: Request, exc: Exception) -> Response:
    """A 404 or 405: a page for a browser, the API's JSON error for anyone else."""
    assert isinstance(exc, HTTPException)
    if wants_html(request):
        return await html_not_found(request, exc)
    return await api_exception_handlers[HTTPException](request, exc)


async def websocket_only(request: Request) -> JSONResponse:
    """426 at the bots' address for an HTTP request: say what the address is for."""
    return error_response(
        426,
        ErrorCode.bad_request,
        "this is where bots connect over WebSocket (ws://HOST:PORT/ws, with hello as the first "
        "message; docs/protocol.md); a browser cannot open it. The REST API is under /api (for "
        "example /api/matches)",
        {"Upgrade": "websocket"},
    )


class ArenaServer(uvicorn.Server):
    """uvicorn's server, with a shutdown that bots can follow.

    uvicorn's own shutdown closes every WebSocket at once (1012) and only then runs the app's
    lifespan shutdown, without a word to the bots. Here, once no new connection is accepted,
    the referee stops every match where it stands (stored as running: the next start resumes
    it) and closes each bot's connection, and each spectator's, with the fatal
    ``shutting_down`` (1012, reconnect); they get ``CLOSE_GRACE_S`` to read it (one that does
    not read is aborted then).
    """

    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: Any) -> None:
        # At the signal, not at uvicorn's next tick (up to 0.1 s later): no match starts now.
        referee: Referee | None = getattr(self.app.state, "referee", None)
        if referee is not None:
            referee.closing = True
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        referee: Referee | None = getattr(self.app.state, "referee", None)
        if referee is not None:
            await referee.shutdown()
            connections = [*self.app.state.sessions, *referee.spectators.connections()]
            waits = [asyncio.ensure_future(c.finished.wait()) for c in connections]
            if waits:
                _, pending = await asyncio.wait(waits, timeout=CLOSE_GRACE_S + 0.5)
                for wait in pending:
                    wait.cancel()
        await super().shutdown(sockets)


def make_server(app: Starlette, settings: Settings, **options: Any) -> ArenaServer:
    """The server ``arena serve`` runs (and the tests' live server): app, settings, logging."""
    return ArenaServer(uvicorn_config(app, settings, **options), app)


def log_config(prefix: str = "") -> dict[str, Any]:
    """uvicorn's logging configuration, plus one line per login, match start and end, and fatal
    connection error from the ``ply_arena.server`` loggers, in uvicorn's format; ``prefix``
    after each line's level (which of the workers of ``--workers`` wrote it)."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    if prefix:
        for formatter in config["formatters"].values():
            formatter["fmt"] = formatter["fmt"].replace(
                "%(levelprefix)s ", f"%(levelprefix)s {prefix}", 1
            )
    config["formatters"]["arena"] = {
        **config["formatters"]["default"],
        "()": "ply_arena.server.log_lines.LineFormatter",
    }
    config["handlers"]["arena"] = {**config["handlers"]["default"], "formatter": "arena"}
    config["loggers"]["ply_arena.server"] = {"handlers": ["arena"], "level": "INFO"}
    return config


async def _admin_token_hash(session: AsyncSession, settings: Settings) -> str:
    """The admin token's hash: from the settings, else the stored one, else a new one (printed).
    Under the admin token's lock: of several processes starting at once on one database, one
    makes (and prints) the token, the others find it."""
    await bots.lock_admin_token(session)
    if settings.admin_token:
        await bots.set_admin_token(session, settings.admin_token)
        return bots.hash_token(settings.admin_token)
    stored = await bots.admin_token_hash(session)
    if stored is not None:
        return stored
    token = secrets.token_urlsafe(32)
    await bots.set_admin_token(session, token)
    if settings.print_admin_token:
        # Printed once: only the hash is kept, so this is the only chance to copy it.
        print(
            f"\nAdmin token (shown once, keep it; or set ARENA_ADMIN_TOKEN): {token}\n",
            file=sys.stderr,
            flush=True,
        )
    return bots.hash_token(token)
