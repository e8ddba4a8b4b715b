"""The bot WebSocket endpoint, mounted by the app factory as ``WebSocketRoute("/ws", ...)``."""

from __future__ import annotations

from starlette.websockets import WebSocket

from server.referee import Referee
from server.ws.session import Session


async def bot_websocket(websocket: WebSocket) -> None:
    """Accept the connection and run its session until it closes."""
    referee: Referee = websocket.app.state.referee
    await websocket.accept()
    await Session(websocket, referee).run()
