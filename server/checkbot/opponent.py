"""The checker's own bot: it challenges the bot under test and plays random legal moves at once.

It speaks the raw protocol (not the bot kit): it must answer within any clock, even 50 ms per
move, and resign exactly when the script says. Each match it plays gets a *rule*, asked on each
of its turns: ``rule(match) -> True`` resigns there (to end a match once it has shown what it
was for, or to give the bot a ``match_end`` in the middle of play).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import websockets
from pydantic import BaseModel, ValidationError
from websockets.asyncio.client import ClientConnection

from ply_arena.protocol.messages import (
    PROTOCOL_VERSION,
    Challenge,
    ChallengeDeclined,
    ChallengeSent,
    ErrorMessage,
    ForcedMove,
    Hello,
    MakeMove,
    MatchEnd,
    MatchStart,
    Ping,
    Policy,
    Pong,
    Resign,
    TimeControl,
    Turn,
    Welcome,
    server_message_adapter,
)
from ply_arena.server.checkbot._changes import Changes
from ply_arena.server.referee.connections import CHECK_HEADER, CheckRole


class CheckerError(RuntimeError):
    """The checker's own bot cannot go on (its token was refused, its connection was lost)."""


class ChallengeRefused(RuntimeError):
    """The arena refused a challenge (``unknown_bot``: the bot is not connected)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class CheckerMatch:
    """A match the checker plays against the bot under test."""

    start: MatchStart
    rule: Callable[[CheckerMatch], bool]
    started_at: float = field(default_factory=time.monotonic)
    #: Moves of the other seats so far (forced ones included), from the checker's turns.
    bot_moves: int = 0
    resigned: bool = False
    #: A match no step was waiting for (a challenge accepted too late): resigned at once.
    stray: bool = False
    forced: list[ForcedMove] = field(default_factory=list)
    ended: asyncio.Future[MatchEnd] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    ended_at: float | None = None

    @property
    def match_id(self) -> str:
        return self.start.match_id

    @property
    def seat(self) -> int:
        return self.start.your_seat


def resign_after(bot_moves: int) -> Callable[[CheckerMatch], bool]:
    """A rule: resign on the checker's first turn after the bot has moved ``bot_moves`` times."""
    return lambda match: match.bot_moves >= bot_moves


class CheckerBot:
    def __init__(self, url: str, token: str, *, seed: int | None = None) -> None:
        self.url = url
        self.token = token
        self.name = ""
        self.matches: dict[str, CheckerMatch] = {}
        #: Every match_start, in order (the script takes them from here).
        self.starts: asyncio.Queue[CheckerMatch] = asyncio.Queue()
        self.declines: dict[str, ChallengeDeclined] = {}
        #: Set when the checker's own connection failed; the script stops with it.
        self.failure: CheckerError | None = None
        self._rng = random.Random(seed)
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: list[asyncio.Future[str]] = []  # challenges awaiting challenge_sent
        self._rules: list[Callable[[CheckerMatch], bool]] = []
        self._changes = Changes()

    async def connect(self) -> str:
        """Log in; the checker's bot name. CheckerError when the arena refuses it."""
        try:
            self._ws = await websockets.connect(
                self.url,
                max_size=None,
                open_timeout=10,
                close_timeout=2,
                ping_interval=None,
                # a check's matches stay off the ladder, and this bot is no class entrant
                additional_headers={CHECK_HEADER: CheckRole.checker.value},
            )
        except (OSError, websockets.exceptions.WebSocketException, TimeoutError) as exc:
            raise CheckerError(f"cannot connect to {self.url}: {exc}") from exc
        await self._send(Hello(protocol=PROTOCOL_VERSION, token=self.token, client="arena-check"))
        try:
            async with asyncio.timeout(10):
                while True:
                    message = server_message_adapter.validate_json(await self._ws.recv())
                    if isinstance(message, Welcome):
                        self.name = message.bot
                        break
                    if isinstance(message, ErrorMessage):
                        raise CheckerError(
                            f"the arena refused the checker's token: {message.message} "
                            f"({message.code})"
                        )
                    if isinstance(message, Ping):
                        await self._send(Pong(id=message.id))
        except (TimeoutError, websockets.ConnectionClosed) as exc:
            raise CheckerError(f"no welcome from {self.url}: {exc!r}") from exc
        self._reader = asyncio.create_task(self._read())
        return self.name

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 3)

    def expect(self, rules: list[Callable[[CheckerMatch], bool]]) -> None:
        """The rules of the next matches to start, in order; later ones resign at once."""
        self._rules = list(rules)

    async def challenge(
        self, opponent: str, game: str, time_control: TimeControl, policy: Policy
    ) -> str:
        """Challenge ``opponent``; the challenge id (ChallengeRefused when the arena says no)."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending.append(future)
        await self._send(
            Challenge(game=game, opponents=[opponent], time_control=time_control, policy=policy)
        )
        try:
            async with asyncio.timeout(10):
                return await future
        except TimeoutError:
            raise CheckerError("the arena did not answer a challenge within 10 s") from None

    async def wait_until(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``ready()`` (looked at after every message); False on timeout."""
        return await self._changes.wait_until(ready, timeout, before=self._raise_failure)

    def _raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure

    async def resign(self, match: CheckerMatch) -> None:
        if not match.ended.done() and not match.resigned:
            match.resigned = True
            await self._send(Resign(match_id=match.match_id))

    # --- reading -------------------------------------------------------------------------------

    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                try:
                    message = server_message_adapter.validate_json(frame)
                except ValidationError:
                    continue
                await self._on(message)
                self._touch()
            self.failure = CheckerError(
                f"the arena closed the checker's connection ({self._ws.close_code} "
                f"{self._ws.close_reason})"
            )
        except websockets.ConnectionClosed as exc:
            self.failure = CheckerError(f"the checker's connection was lost: {exc}")
        for future in self._pending:
            if not future.done():
                future.set_exception(self.failure)
        self._touch()

    async def _on(self, message: BaseModel) -> None:
        if isinstance(message, Ping):
            await self._send(Pong(id=message.id))
        elif isinstance(message, ChallengeSent):
            self._settle(lambda f: f.set_result(message.challenge_id))
        elif isinstance(message, ChallengeDeclined):
            self.declines[message.challenge_id] = message
        elif isinstance(message, MatchStart):
            if message.match_id not in self.matches:
                stray = not self._rules
                rule = self._rules.pop(0) if self._rules else (lambda match: True)
                match = CheckerMatch(start=message, rule=rule, stray=stray)
                self.matches[message.match_id] = match
                self.starts.put_nowait(match)
        elif isinstance(message, Turn):
            await self._play(message)
        elif isinstance(message, ForcedMove):
            forced_in = self.matches.get(message.match_id)
            if forced_in is not None:
                forced_in.forced.append(message)
        elif isinstance(message, MatchEnd):
            ended = self.matches.get(message.match_id)
            if ended is not None and not ended.ended.done():
                ended.ended_at = time.monotonic()
                ended.ended.set_result(message)
        elif isinstance(message, ErrorMessage):
            if message.fatal:
                self.failure = CheckerError(
                    f"the arena closed the checker's connection: {message.message} ({message.code})"
                )
            elif message.match_id is None and self._pending:
                refused = ChallengeRefused(message.code, message.message)
                self._settle(lambda f: f.set_exception(refused))

    async def _play(self, turn: Turn) -> None:
        match = self.matches.get(turn.match_id)
        if match is None:
            return
        match.bot_moves += sum(
            1 for event in turn.since_last if event.seat is not None and event.seat != match.seat
        )
        if match.rule(match):
            await self.resign(match)
            return
        move = self._rng.choice(turn.legal_moves)
        await self._send(MakeMove(match_id=turn.match_id, ply=turn.ply, move=move))

    def _settle(self, how: Callable[[asyncio.Future[str]], None]) -> None:
        while self._pending:
            future = self._pending.pop(0)
            if not future.done():
                how(future)
                return

    async def _send(self, message: BaseModel) -> None:
        if self._ws is None:
            return
        with contextlib.suppress(websockets.ConnectionClosed):
            await self._ws.send(message.model_dump_json(exclude_none=True))

    def _touch(self) -> None:
        self._changes.touch()
