"""A small real spectator client (``/ws/watch/{match_id}``) for the tests, and a bot loop that a
test can pause.

``Spectator`` reads every frame in a background task, keeps the raw text (``raw``) and the
parsed messages, and checks nothing itself: the tests do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
from collections.abc import Callable
from typing import Any, ClassVar

import websockets
from _ws_client import Closed, Message, WsBot
from websockets.asyncio.client import ClientConnection


def watch_url(ws_url: str, match_id: str) -> str:
    """``ws://HOST:PORT/ws`` -> the spectator address of ``match_id``."""
    return f"{ws_url}/watch/{match_id}"


class Spectator:
    #: Every spectator opened, so that a test's teardown can close what it left open.
    opened: ClassVar[list[Spectator]] = []

    def __init__(self, ws: ClientConnection) -> None:
        Spectator.opened.append(self)
        self.ws = ws
        self.raw: list[str] = []
        self.inbox: asyncio.Queue[Message | Closed] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, ws_url: str, match_id: str) -> Spectator:
        return cls(await websockets.connect(watch_url(ws_url, match_id), max_size=None))

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                assert isinstance(raw, str)
                self.raw.append(raw)
                await self.inbox.put(json.loads(raw))
        except websockets.ConnectionClosed:
            pass
        await self.inbox.put(Closed(self.ws.close_code))

    async def recv(self, timeout: float = 10.0) -> Message:
        item = await asyncio.wait_for(self.inbox.get(), timeout)
        if isinstance(item, Closed):
            await self.inbox.put(item)
            raise item
        return item

    async def expect(self, kind: str, timeout: float = 10.0) -> Message:
        """The next message of type ``kind``, skipping others."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            message = await self.recv(max(0.01, end - loop.time()))
            if message["type"] == kind:
                return message

    async def rest(self, timeout: float = 30.0) -> tuple[list[Message], int | None]:
        """Every message until the server closes the connection, and the close code."""
        got: list[Message] = []
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            try:
                got.append(await self.recv(max(0.01, end - loop.time())))
            except Closed as closed:
                return got, closed.code

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    @classmethod
    async def close_all(cls) -> None:
        spectators, cls.opened = cls.opened, []
        for spectator in spectators:
            await spectator.close()


async def stalling_spectator(port: int, ws_url: str, match_id: str) -> ClientConnection:
    """A spectator that reads nothing until told (``recv``): a small receive buffer and the
    websockets library's flow control at one message, so that the server's writes back up."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await websockets.connect(
        watch_url(ws_url, match_id), sock=sock, max_queue=1, max_size=None
    )


async def play(
    bot: WsBot,
    match_id: str,
    *,
    seed: int = 1,
    info: dict[str, Any] | None = None,
    gate: asyncio.Event | None = None,
    hold: Callable[[Message], bool] | None = None,
    moves: list[tuple[int, str]] | None = None,
) -> Message:
    """Answer every turn of ``match_id`` with a random legal move (with ``info``) until its
    match_end. While ``gate`` is clear, or ``hold(turn)`` is true, the bot holds its answer
    (the test pauses the match); ``moves`` collects (ply, move) of what it played."""
    rng = random.Random(seed)
    while True:
        message = await bot.recv(60)
        if message.get("match_id") != match_id:
            continue
        if message["type"] == "turn":
            if gate is not None:
                await gate.wait()
            while hold is not None and hold(message):
                await asyncio.sleep(0.01)
            move = rng.choice(message["legal_moves"])
            if moves is not None:
                moves.append((message["ply"], move))
            answer: Message = {"type": "move", "match_id": match_id, "ply": message["ply"]}
            await bot.send({**answer, "move": move, **({"info": info} if info else {})})
        elif message["type"] == "match_end":
            return message
