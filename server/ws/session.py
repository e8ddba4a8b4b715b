"""One bot connection: frame checks, the handshake, rate limiting, heartbeats and dispatch.

Phases: AWAITING_HELLO -> LOGGED_IN -> CLOSED. Every frame is checked in this order, each
failure answered with its code from protocol/errors.py:

1. binary frame -> ``binary_frame``; over 64 KiB -> ``frame_too_large`` (fatal, close 1009);
2. the token bucket (``settings.rate_limit_per_s``, burst ``rate_limit_burst``): a frame beyond
   it is dropped, the first one with a non-fatal ``rate_limited``; when more than a burst of
   frames has been dropped since the bucket was last full -> ``rate_limited`` fatal. A move the
   referee accepts never costs a token (a bot moves at most once per turn);
3. not JSON -> ``bad_json``; no or non-string ``type`` -> ``invalid_message``; a type that is no
   client message -> ``unknown_type``; bad fields -> ``invalid_message`` naming the field;
4. before ``hello``: anything else -> ``hello_required``; no hello within
   ``settings.hello_timeout_s`` -> ``hello_timeout`` (fatal); wrong protocol version ->
   ``unsupported_version`` (fatal); bad token -> ``bad_token`` (fatal); disabled bot ->
   ``bot_disabled`` (fatal).

Everything else is non-fatal: the connection and all matches carry on.

Outgoing frames go through a queue drained by a writer task, so the referee never waits on a
slow client. The server pings every ``settings.heartbeat_s`` (and once right after ``welcome``);
the round trip feeds the latency grace of the bot's clocks. A watchdog closes, with a fatal error:

- a silent connection: nothing at all received for ``heartbeat_misses`` heartbeats ->
  ``heartbeat_timeout`` (a half-open TCP connection or a hung bot);
- a slow consumer: more than ``max_outbound_frames`` messages waiting, or one message not written
  within ``send_timeout_s`` -> ``slow_consumer`` (a bot that does not read its socket would
  otherwise hold an unbounded queue).

Closing is immediate for the referee (the bot counts as disconnected: its clocks run, it may
reconnect); the error and the close frame are then given ``CLOSE_GRACE_S`` to reach the peer.
A peer that never reads again cannot get them: its socket is left to uvicorn, which closes it
once the peer reads or goes away (ASGI offers no way to abort a transport).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import time
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from starlette.websockets import WebSocket

from protocol.errors import ErrorCode
from protocol.messages import (
    MAX_FRAME_BYTES,
    PROTOCOL_VERSION,
    AcceptChallenge,
    Challenge,
    ClientMessage,
    DeclineChallenge,
    ErrorMessage,
    Hello,
    JoinLobby,
    LeaveLobby,
    MakeMove,
    Ping,
    Pong,
    Resign,
    ServerMessage,
    Welcome,
    client_message_adapter,
)
from server.referee import Referee, RefereeError

log = logging.getLogger(__name__)

SERVER_NAME = "ply-arena/0.1"

#: Every ``type`` a client may send, read off the union so it cannot drift.
CLIENT_TYPES: frozenset[str] = frozenset(
    model.model_fields["type"].default
    for model in typing.get_args(typing.get_args(ClientMessage)[0])
)

# WebSocket close codes (RFC 6455).
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_NORMAL = 1000

#: How long the fatal error and the close frame may take to go out once a session is over.
CLOSE_GRACE_S = 2.0


class Phase(enum.Enum):
    AWAITING_HELLO = "awaiting_hello"
    LOGGED_IN = "logged_in"
    CLOSED = "closed"


class _Close:
    def __init__(self, code: int) -> None:
        self.code = code


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; ``take`` spends one if there is one."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self._at = time.monotonic()

    def refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self._at) * self.rate)
        self._at = now

    def full(self) -> bool:
        return self.tokens >= self.burst

    def take(self, now: float) -> bool:
        self.refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def refund(self) -> None:
        self.tokens = min(self.burst, self.tokens + 1.0)


class Session:
    """Implements server.referee.connections.BotConnection for one WebSocket."""

    def __init__(self, websocket: WebSocket, referee: Referee) -> None:
        self.websocket = websocket
        self.referee = referee
        settings = referee.settings
        self.phase = Phase.AWAITING_HELLO
        self.bot_id = -1
        self.bot_name = ""
        self._hello_timeout_s = settings.hello_timeout_s
        self._heartbeat_s = settings.heartbeat_s
        self._heartbeat_misses = max(1, int(getattr(settings, "heartbeat_misses", 3)))
        self._max_queued = max(1, int(getattr(settings, "max_outbound_frames", 1000)))
        self._send_timeout_s = float(getattr(settings, "send_timeout_s", 30.0))
        self._bucket = TokenBucket(
            float(getattr(settings, "rate_limit_per_s", 20.0)),
            int(getattr(settings, "rate_limit_burst", 60)),
        )
        self._strikes = 0
        self._out: asyncio.Queue[str | _Close] = asyncio.Queue()
        self._closing = False
        #: Set by close_with: run() stops reading at once, even if the peer never sends again.
        self._closed = asyncio.Event()
        self._last_heard = time.monotonic()
        #: When the frame being written started (None: the writer is idle).
        self._writing_since: float | None = None
        self._rtt: float | None = None
        self._pings: dict[int, float] = {}
        self._next_ping = 1

    # --- BotConnection ------------------------------------------------------------------

    def send(self, message: ServerMessage) -> None:
        self.send_json(message.model_dump_json())

    def send_json(self, text: str) -> None:
        if self._closing:
            return
        if self._out.qsize() >= self._max_queued:
            self._slow(f"{self._out.qsize()} messages are waiting for this bot to read them")
            return
        self._out.put_nowait(text)

    def rtt_ms(self) -> float | None:
        return self._rtt

    def close_with(self, error: ErrorMessage) -> None:
        if self._closing:
            return
        self._out.put_nowait(error.model_dump_json())
        self._out.put_nowait(
            _Close(CLOSE_TOO_BIG if error.code == ErrorCode.frame_too_large else CLOSE_POLICY)
        )
        self._closing = True
        self._closed.set()

    # --- the connection -----------------------------------------------------------------

    async def run(self) -> None:
        writer = asyncio.create_task(self._write_loop())
        reader = asyncio.create_task(self._serve())
        # A close decided elsewhere (watchdog, referee, a full queue) must not wait for the peer
        # to send something: the reader may be parked in receive() for good.
        closed = asyncio.create_task(self._closed.wait())
        try:
            await asyncio.wait((reader, closed), return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            if self.phase is Phase.LOGGED_IN:
                self.referee.disconnected(self)
            self.phase = Phase.CLOSED
            if self._closing:
                # Let the fatal error and the close frame go out.
                with contextlib.suppress(asyncio.TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(writer), CLOSE_GRACE_S)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer

    async def _serve(self) -> None:
        try:
            if not await self._handshake():
                return
            watchdog = asyncio.create_task(self._watchdog())
            try:
                await self._read_loop()
            finally:
                watchdog.cancel()
        except Exception:
            log.exception("bot connection %r failed", self.bot_name or "(no hello yet)")

    async def _write_loop(self) -> None:
        while True:
            item = await self._out.get()
            self._writing_since = time.monotonic()
            try:
                if isinstance(item, _Close):
                    await self.websocket.close(item.code)
                    return
                await self.websocket.send_text(item)
            except Exception:
                # The peer is gone: stop reading too; the bot counts as disconnected.
                self._closing = True
                self._closed.set()
                return
            finally:
                self._writing_since = None

    async def _receive(self, timeout: float | None = None) -> Mapping[str, Any] | None:
        """The next ASGI message, or None once the connection is gone or closing."""
        if self._closing:
            return None
        try:
            if timeout is None:  # the read loop: no wait_for wrapper on every frame
                message = await self.websocket.receive()
            else:
                message = await asyncio.wait_for(self.websocket.receive(), timeout)
        except RuntimeError:
            return None  # already disconnected
        if message["type"] == "websocket.disconnect":
            return None
        return message

    async def _handshake(self) -> bool:
        deadline = time.monotonic() + self._hello_timeout_s
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise TimeoutError
                raw = await self._receive(remaining)
            except TimeoutError:
                self._fatal(
                    ErrorCode.hello_timeout,
                    f"no hello within {self._hello_timeout_s:g} s of connecting",
                )
                return False
            if raw is None:
                return False
            received_at = self._last_heard = time.monotonic()
            message = self._admit(raw, received_at)
            if message is None:
                continue
            if not isinstance(message, Hello):
                self._error(ErrorCode.hello_required, "send hello with your token first")
                continue
            return await self._login(message)

    async def _login(self, hello: Hello) -> bool:
        if hello.protocol != PROTOCOL_VERSION:
            self._fatal(
                ErrorCode.unsupported_version,
                f"protocol {hello.protocol} is not spoken here; send protocol {PROTOCOL_VERSION}",
            )
            return False
        try:
            self.bot_id, self.bot_name = await self.referee.authenticate(hello.token)
        except RefereeError as e:
            self._fatal(e.code, e.message)
            return False
        self.phase = Phase.LOGGED_IN
        running = self.referee.login(self)
        self.send(
            Welcome(
                protocol=PROTOCOL_VERSION,
                bot=self.bot_name,
                server=SERVER_NAME,
                heartbeat_ms=round(self._heartbeat_s * 1000),
                matches=running,
            )
        )
        self._ping()
        self.referee.resync(self)
        return True

    async def _read_loop(self) -> None:
        while True:
            raw = await self._receive()
            if raw is None:
                return
            received_at = self._last_heard = time.monotonic()
            message = self._admit(raw, received_at)
            if message is None:
                continue
            try:
                self._dispatch(message, received_at)
            except RefereeError as e:
                self.send(e.to_message())
            except Exception:
                log.exception("bot %s: failed on %s", self.bot_name, type(message).__name__)
                self._error(ErrorCode.internal_error, "the server failed on this message")

    def _admit(self, raw: Mapping[str, Any], received_at: float) -> ClientMessage | None:
        """Frame checks, rate limit and parsing; None when the frame was refused (and said so).

        An accepted move is played right here, before the rate limit, and None is returned.
        """
        text = raw.get("text")
        if text is None:
            data = raw.get("bytes") or b""
            if len(data) > MAX_FRAME_BYTES:
                self._fatal(ErrorCode.frame_too_large, f"a {len(data)}-byte frame is over 64 KiB")
            elif self._allowed(received_at):
                self._error(ErrorCode.binary_frame, "binary frames are refused; send JSON text")
            return None
        # Characters are at most 4 bytes: encode only when the text could be over the limit.
        size = len(text)
        if size > MAX_FRAME_BYTES or (
            size * 4 > MAX_FRAME_BYTES and len(text.encode()) > MAX_FRAME_BYTES
        ):
            self._fatal(ErrorCode.frame_too_large, "a frame is over 64 KiB")
            return None
        allowed = self._allowed(received_at)
        message = self._parse(text, report=allowed)
        if isinstance(message, MakeMove) and self.phase is Phase.LOGGED_IN:
            try:
                self.referee.move(self, message, received_at)
            except RefereeError as e:
                if allowed:
                    self.send(e.to_message())
                else:
                    self._strike()
                return None
            if allowed:
                self._bucket.refund()
            return None
        if not allowed:
            self._strike()
            return None
        return message

    def _allowed(self, now: float) -> bool:
        # Strikes are forgiven only once the bucket is full again, i.e. after the bot has been
        # quiet for burst / rate seconds: a flood cannot reset them by pausing briefly.
        self._bucket.refill(now)
        if self._bucket.full():
            self._strikes = 0
        return self._bucket.take(now)

    def _strike(self) -> None:
        self._strikes += 1
        if self._strikes == 1:
            self._error(ErrorCode.rate_limited, "too many messages; this one was dropped")
        elif self._strikes > self._bucket.burst:
            self._fatal(ErrorCode.rate_limited, "too many messages; closing the connection")

    def _parse(self, text: str, *, report: bool) -> ClientMessage | None:
        def refuse(code: ErrorCode, why: str) -> None:
            if report:
                self._error(code, why)

        try:
            data = json.loads(text)
        except ValueError as e:
            refuse(ErrorCode.bad_json, f"not valid JSON: {e}")
            return None
        if not isinstance(data, dict):
            refuse(ErrorCode.invalid_message, "a frame must be one JSON object")
            return None
        kind = data.get("type")
        if not isinstance(kind, str):
            refuse(ErrorCode.invalid_message, "type: required, a string naming the message")
            return None
        if kind not in CLIENT_TYPES:
            refuse(
                ErrorCode.unknown_type,
                f"unknown message type {kind[:40]!r}; client types are "
                + ", ".join(sorted(CLIENT_TYPES)),
            )
            return None
        try:
            return client_message_adapter.validate_python(data)
        except ValidationError as e:
            refuse(ErrorCode.invalid_message, f"invalid {kind!r} message: {describe(e)}")
            return None

    def _dispatch(self, message: ClientMessage, received_at: float) -> None:
        referee = self.referee
        if isinstance(message, Ping):
            self.send(Pong(id=message.id))
        elif isinstance(message, Pong):
            sent = self._pings.pop(message.id, None)
            if sent is not None:
                self._rtt = (received_at - sent) * 1000
        elif isinstance(message, Hello):
            self._error(ErrorCode.invalid_message, "hello was already accepted on this connection")
        elif isinstance(message, JoinLobby):
            referee.join(self, message)
        elif isinstance(message, LeaveLobby):
            referee.leave(self, message)
        elif isinstance(message, Challenge):
            referee.challenge(self, message)
        elif isinstance(message, AcceptChallenge):
            referee.accept(self, message)
        elif isinstance(message, DeclineChallenge):
            referee.decline(self, message)
        elif isinstance(message, Resign):
            referee.resign(self, message)
        elif isinstance(message, MakeMove):
            referee.move(self, message, received_at)

    async def _watchdog(self) -> None:
        """Ping every heartbeat; close a silent connection or one whose writes are stuck."""
        heartbeat = max(self._heartbeat_s, 0.01)  # a zero setting must not spin the loop
        silence = heartbeat * self._heartbeat_misses
        next_ping = time.monotonic() + heartbeat
        while not self._closing:
            now = time.monotonic()
            quiet = now - self._last_heard
            if quiet >= silence:
                self._fatal(
                    ErrorCode.heartbeat_timeout,
                    f"nothing received for {quiet:.1f} s ({self._heartbeat_misses} heartbeats "
                    f"of {heartbeat:g} s); answer every ping with pong",
                )
                return
            writing_since = self._writing_since
            if writing_since is not None and now - writing_since >= self._send_timeout_s:
                self._slow(f"a message could not be written for {self._send_timeout_s:g} s")
                return
            if now >= next_ping:
                self._ping()
                next_ping = now + heartbeat
            # Wake for the next ping, the silence deadline, or the write deadline; an idle
            # writer is looked at again within half the send timeout.
            if writing_since is not None:
                write_deadline = writing_since + self._send_timeout_s
            else:
                write_deadline = now + self._send_timeout_s / 2
            wake = min(next_ping, self._last_heard + silence, write_deadline)
            await asyncio.sleep(max(0.0, wake - now))

    def _ping(self) -> None:
        ping_id = self._next_ping
        self._next_ping += 1
        # Unanswered pings are forgotten after a few beats so the table stays small.
        self._pings = {i: t for i, t in self._pings.items() if i > ping_id - 4}
        self._pings[ping_id] = time.monotonic()
        self.send(Ping(id=ping_id))

    def _slow(self, why: str) -> None:
        # What is queued would reach the bot too late to matter, and a bot that reconnects is
        # resynced from the matches themselves: drop it, so only the error and the close remain.
        while not self._out.empty():
            self._out.get_nowait()
        self._fatal(ErrorCode.slow_consumer, f"{why}; read your socket (closing the connection)")

    def _error(self, code: ErrorCode, message: str) -> None:
        self.send(ErrorMessage(code=code, message=message, fatal=False))

    def _fatal(self, code: ErrorCode, message: str) -> None:
        self.close_with(ErrorMessage(code=code, message=message, fatal=True))


def describe(error: ValidationError) -> str:
    """Which field is wrong and what was expected, e.g. ``ply: Input should be ... (got 'x')``."""
    parts = []
    for item in error.errors()[:4]:
        loc = ".".join(str(x) for x in item["loc"][1:]) or "message"
        detail = item["msg"]
        if item["type"] != "missing":
            shown = repr(item.get("input"))
            detail += f" (got {shown[:40]}{'...' if len(shown) > 40 else ''})"
        parts.append(f"{loc}: {detail}")
    more = len(error.errors()) - 4
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
