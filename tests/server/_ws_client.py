"""A small real WebSocket bot for the referee tests, plus the re-derivation check of records.

``WsBot`` reads frames in a background task (answering pings so the latency grace is measured)
and keeps them in a queue; ``expect`` waits for a given message type. Kept tiny on purpose: the
tests speak the raw protocol, not the bot kit, so they check the wire itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Callable
from typing import Any, ClassVar

import websockets
from sqlalchemy import select
from websockets.asyncio.client import ClientConnection

from ply_arena import games
from ply_arena.games import CHANCE
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Match
from ply_arena.server.repositories import matches as match_repo

Message = dict[str, Any]


class Closed(Exception):
    """The server closed the connection; ``code`` is the close code."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"closed with code {code}")
        self.code = code


class WsBot:
    #: Every bot opened, so that a test's teardown can close what the test left open.
    opened: ClassVar[list[WsBot]] = []

    def __init__(self, ws: ClientConnection, *, answer_pings: bool = True) -> None:
        WsBot.opened.append(self)
        self.ws = ws
        self.answer_pings = answer_pings
        self.inbox: asyncio.Queue[Message | Closed] = asyncio.Queue()
        self.log: list[Message] = []
        self.sent = 0  # frames sent, pongs included
        self._pongs: set[asyncio.Task[None]] = set()
        self._reader = asyncio.create_task(self._read())
        self.welcome: Message | None = None

    @classmethod
    async def connect(
        cls, url: str, token: str | None = None, *, answer_pings: bool = True
    ) -> WsBot:
        """Connect and, with a token, do the handshake (``welcome`` kept in ``.welcome``)."""
        ws = await websockets.connect(url, max_size=None)
        bot = cls(ws, answer_pings=answer_pings)
        if token is not None:
            await bot.send({"type": "hello", "protocol": 1, "token": token, "client": "tests"})
            bot.welcome = await bot.expect("welcome")
        return bot

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message.get("type") == "ping" and self.answer_pings:
                    # In its own task: a send racing the server's close may wait for the close
                    # handshake, and the reader must keep reading meanwhile.
                    self._pongs.add(asyncio.create_task(self._pong(message["id"])))
                    continue
                self.log.append(message)
                await self.inbox.put(message)
        except websockets.ConnectionClosed:
            pass
        await self.inbox.put(Closed(self.ws.close_code))

    async def _pong(self, ping_id: int) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            await self.ws.send(json.dumps({"type": "pong", "id": ping_id}))
            self.sent += 1

    async def send(self, message: Message | str | bytes) -> None:
        self.sent += 1
        await self.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))

    async def recv(self, timeout: float = 5.0) -> Message:
        item = await asyncio.wait_for(self.inbox.get(), timeout)
        if isinstance(item, Closed):
            await self.inbox.put(item)  # stays closed for later calls
            raise item
        return item

    async def expect(self, kind: str, timeout: float = 5.0, **fields: Any) -> Message:
        """The next message of type ``kind`` (with ``fields``), skipping others."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            message = await self.recv(max(0.01, end - loop.time()))
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                return message

    async def expect_error(self, code: str, timeout: float = 5.0) -> Message:
        return await self.expect("error", timeout, code=code)

    async def expect_closed(self, timeout: float = 5.0) -> int | None:
        """Wait until the server closes the connection; its close code."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            try:
                await self.recv(max(0.01, end - loop.time()))
            except Closed as closed:
                return closed.code

    async def play(
        self,
        match_id: str,
        choose: Callable[[Message], str] | None = None,
        timeout: float = 30.0,
        delay: float = 0.0,
    ) -> Message:
        """Answer every turn of ``match_id`` (random legal moves by default) until match_end."""
        rng = random.Random(1)
        pick = choose or (lambda turn: rng.choice(turn["legal_moves"]))
        while True:
            message = await self.recv(timeout)
            if message.get("match_id") != match_id:
                continue
            if message["type"] == "turn":
                if delay:
                    await asyncio.sleep(delay)
                await self.send(
                    {
                        "type": "move",
                        "match_id": match_id,
                        "ply": message["ply"],
                        "move": pick(message),
                    }
                )
            elif message["type"] == "match_end":
                return message

    async def close(self) -> None:
        await self.ws.close()
        for task in (self._reader, *self._pongs):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @classmethod
    async def close_all(cls) -> None:
        bots, cls.opened = cls.opened, []
        for bot in bots:
            await bot.close()


async def stored_records(db_url: str) -> list[Message]:
    """Every match stored in the SQLite file, read through the repositories (not the server)."""
    database = Database(db_url)
    try:
        async with database.session() as session:
            ids = (await session.scalars(select(Match.id))).all()
            records = [await match_repo.get_match(session, match_id) for match_id in ids]
    finally:
        await database.dispose()
    return [r for r in records if r is not None]


async def start_pair(
    url: str,
    token_a: str,
    token_b: str,
    game: str = "tic_tac_toe",
    *,
    move_ms: int = 500,
    bank_ms: int = 0,
    policy: str = "forfeit",
) -> tuple[WsBot, WsBot, Message, Message]:
    """Two connected bots paired through the lobby: (a, b, a's match_start, b's match_start)."""
    a = await WsBot.connect(url, token_a)
    b = await WsBot.connect(url, token_b)
    join = {
        "type": "join",
        "game": game,
        "time_control": {"move_ms": move_ms, "bank_ms": bank_ms},
        "policy": policy,
    }
    await a.send(join)
    await a.expect("joined")
    await b.send(join)
    start_a = await a.expect("match_start")
    start_b = await b.expect("match_start")
    assert start_a["match_id"] == start_b["match_id"]
    return a, b, start_a, start_b


def rederive(record: Message) -> games.State:
    """Replay a stored record through ``games``; check it ends where the record says it ends.

    Every stored move must parse in its position (chance outcomes included), the final position
    must equal the stored one, and a normally finished match must pay what the rules pay.
    """
    game = games.get(record["game"])
    state = game.initial_state()
    for move in record["moves"]:
        if move["seat"] is None:
            assert state.player == CHANCE, f"chance event at a decision node: {move}"
            by_text = {game.format_move(state, o): o for o in state.actions()}
            state = state.result(by_text[move["move"]])
        else:
            assert state.player == move["seat"], f"seat {move['seat']} moved out of turn"
            state = state.result(game.parse_move(state, move["move"]))
    result = record["result"]
    assert result is not None, "the match has no result"
    assert game.state_to_json(state) == result["final_position"]
    if result["termination"] == "normal":
        assert state.is_terminal()
        assert result["payoffs"] == list(state.returns())
    elif result["at_fault"] is not None:
        assert result["payoffs"][result["at_fault"]] == game.min_utility
    return state
