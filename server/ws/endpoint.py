"""The bot WebSocket endpoint, mounted by the app factory as ``WebSocketRoute("/ws", ...)``."""

from __future__ import annotations

from starlette.websockets import WebSocket

from ply_arena.server.referee import Referee
from ply_arena.server.ws.session import Session, check_role


async def bot_websocket(websocket: WebSocket) -> None:
    """Accept the connection and run its session until it closes.

    The session is listed in ``app.state.sessions`` while it runs, so that a shutdown can wait
    for the last messages (match_end, the closing error) to go out.
    """
    referee: Referee = websocket.app.state.referee
    sessions: set[Session] = websocket.app.state.sessions
    await websocket.accept()
    role = check_role(websocket)
    # The handshake's headers (a list of byte pairs, about 1 KB) are not read again once the
    # connection is open; the scope would keep them for the connection's life
    # (docs/benchmarks.md, "Idle bots").
    websocket.scope["headers"] = []
    session = Session(websocket, referee, check_role=role)
    sessions.add(session)
    try:
        await session.run()
    finally:
        sessions.discard(session)
