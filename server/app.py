"""The app factory: REST under /api, the bots' WebSocket at /ws, and a lifespan that migrates
the database, closes matches a crash left running, sets up the admin token and runs the referee."""

from __future__ import annotations

import gc
import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, WebSocketRoute

from server.api import routes as api_routes
from server.api.errors import InternalErrorMiddleware, exception_handlers
from server.db.database import Database
from server.referee import Referee
from server.repositories import bots, matches
from server.settings import Settings
from server.ws.endpoint import bot_websocket

#: gc.set_threshold once the server has started (defaults: 700, 10, 10).
GC_THRESHOLDS = (50_000, 50, 100)


def uvicorn_config(app: Starlette, settings: Settings, **options: Any) -> uvicorn.Config:
    """The one uvicorn configuration, shared by ``arena serve`` and the tests' live server."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        # The sans-I/O implementation: the legacy one is deprecated in websockets >= 14.
        ws="websockets-sansio",
        # uvloop when it is installed (a dependency except on Windows), else asyncio's own loop:
        # ~15% less server CPU per relayed move in bench/server.py. (The legacy "websockets"
        # implementation measured no better; wsproto is not installed.)
        loop="auto",
        # Above the protocol's 64 KiB so the referee can answer frame_too_large itself.
        ws_max_size=1024 * 1024,
        # Frames are a few hundred bytes of JSON: compressing each costs more CPU than it saves.
        ws_per_message_deflate=False,
        lifespan="on",
        **options,
    )


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings if settings is not None else Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        database = Database(settings.db_url)
        try:
            await database.migrate()
            async with database.session() as session:
                app.state.aborted_on_start = await matches.abort_unfinished(session)
                app.state.admin_token_hash = await _admin_token_hash(session, settings)
            app.state.database = database
            referee = Referee(database, settings)
            app.state.referee = referee
            await referee.start()
            # Everything built so far (modules, tables, the app) lives as long as the server:
            # move it out of the collector's sight, so that a full collection does not walk it
            # again and again while matches run (80-200 ms pauses under load otherwise), and
            # collect less often: each move allocates a few hundred short-lived objects, and
            # the default threshold (700) ran a young collection every few moves.
            gc.collect()
            gc.freeze()
            gc.set_threshold(*GC_THRESHOLDS)
            try:
                yield
            finally:
                await referee.stop()
        finally:
            await database.dispose()

    app = Starlette(
        routes=[Mount("/api", routes=api_routes), WebSocketRoute("/ws", bot_websocket)],
        exception_handlers=exception_handlers,
        middleware=[Middleware(InternalErrorMiddleware)],
        lifespan=lifespan,
    )
    app.state.settings = settings
    return app


async def _admin_token_hash(session: AsyncSession, settings: Settings) -> str:
    """The admin token's hash: from the settings, else the stored one, else a new one (printed)."""
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
