"""One bot connection: frame checks, the handshake, rate limiting, heartbeats and dispatch.

Phases: AWAITING_HELLO -> LOGGED_IN -> CLOSED. Every frame is checked in this order, each
failure answered with its code from protocol/errors.py:

1. binary frame -> ``binary_frame``; over 64 KiB -> ``frame_too_large`` (fatal, close 1009;
   uvicorn's protocol, server/transport.py, refuses such a frame before reading it);
2. a move is offered to the referee first: an accepted move never costs a token;
3. the token bucket (``settings.rate_limit_per_s``, burst ``rate_limit_burst``): a frame beyond
   it is dropped and answered with a non-fatal ``rate_limited`` naming the dropped message and
   carrying ``retry_after_ms`` (a frame that would be refused anyway gets its own error instead:
   resending it would not help); when more than a burst of frames has been beyond the rate since
   the bucket was last full -> ``rate_limited`` fatal. What a well-behaved bot sends to play is
   refunded, so it never meets the limit: a ``join`` that puts the bot in a queue, ``accept``
   / ``decline`` of a pending challenge, a ``pong`` answering the server's ping, and accepted
   moves;
4. ``ply_arena.protocol.wire.parse_client_frame``: strict JSON validation with codes ``bad_json``,
   ``invalid_message``, ``unknown_type``, ``bad_time_control``;
5. before ``hello``: anything else -> ``hello_required``; no hello within
   ``settings.hello_timeout_s`` -> ``hello_timeout`` (fatal); wrong protocol version ->
   ``unsupported_version`` (fatal); bad token -> ``bad_token`` (fatal); disabled bot ->
   ``bot_disabled`` (fatal).

Everything else is non-fatal: the connection and all matches carry on.

Once logged in, a bot's text messages come to the session as the connection parses them
(``_on_text``, through server/transport.py), not through ASGI's receive queue and a task woken
per message; before login, and whenever a message still waits in that queue, they go through
the read loop, so the order holds. Outgoing messages are written to the connection at once while
nothing waits before them and its buffer is nearly empty (``_write_now``), otherwise through a
queue drained by a writer task, so the referee never waits on a slow client. The server pings
every ``settings.heartbeat_s`` (and once right after ``welcome``);
the round trip feeds the latency grace of the bot's clocks. A watchdog closes, with a fatal error:

- a silent connection: nothing at all received for ``heartbeat_misses`` heartbeats ->
  ``heartbeat_timeout`` (a half-open TCP connection or a hung bot);
- a slow consumer: more than ``max_outbound_frames`` messages or ``max_outbound_bytes`` bytes
  waiting, or one message not written within ``send_timeout_s`` -> ``slow_consumer`` (a bot that
  does not read its socket would otherwise make the server hold an unbounded queue). A message
  is written once it has left the server: handing it to ASGI is not enough (the transport
  buffers up to 64 KiB before a send waits, and the kernel's send queue more), so a bot that
  stops reading after a few messages, or whose TCP stalls, is caught as surely as one that makes
  a send wait; the transport handle counts what has left (``TransportHandle.sent``).

Closing is immediate for the referee (the bot counts as disconnected: its clocks run, it may
reconnect); the error and the close frame are then given ``CLOSE_GRACE_S`` to leave the server.
A connection that still holds unsent bytes by then, however the session ended, has its TCP
connection aborted (through the handle that server/transport.py puts in the ASGI scope), so
that a peer that does not read can neither make the server keep its buffers nor hold up its
shutdown (a transport closes only once its buffer is empty).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import math
import time
from collections.abc import Mapping
from typing import Any

from starlette.websockets import WebSocket

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import (
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
)
from ply_arena.protocol.wire import WireError, clip, escape_controls, parse_client_frame
from ply_arena.server.referee import Referee, RefereeError
from ply_arena.server.referee.connections import CHECK_HEADER, CheckRole
from ply_arena.server.spectate.frames import text_frame
from ply_arena.server.transport import Flag, TransportHandle, transport_handle

log = logging.getLogger(__name__)

SERVER_NAME = "ply-arena/0.1"

# WebSocket close codes (RFC 6455).
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_RESTART = 1012
CLOSE_NORMAL = 1000

#: How long the fatal error and the close frame may take to go out once a session is over.
CLOSE_GRACE_S = 2.0
#: How often run() looks whether the connection's last bytes have left, during that grace.
_DRAIN_POLL_S = 0.02
#: A message is written at once (Session._write_now) while at most this much of what was
#: written before it waits in the transport's buffer (asyncio's default high-water mark).
_DIRECT_WRITE_MAX_BUFFERED = 64 * 1024


class Phase(enum.Enum):
    AWAITING_HELLO = "awaiting_hello"
    LOGGED_IN = "logged_in"
    CLOSED = "closed"


class _Close:
    """The close frame: its code, and as its reason the fatal error's code (``shutting_down``
    with 1012 tells a bot that reads only the close frame that the server restarts)."""

    __slots__ = ("code", "reason")

    def __init__(self, code: int, reason: str = "") -> None:
        self.code = code
        self.reason = reason


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; ``take`` spends one if there is one."""

    __slots__ = ("_at", "burst", "rate", "tokens")

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

    def wait_ms(self) -> int:
        """Milliseconds until one token is there again (as of the last refill)."""
        missing = max(0.0, 1.0 - self.tokens)
        return max(1, math.ceil(missing / self.rate * 1000)) if self.rate > 0 else 1000


class Session:
    """Implements ply_arena.server.referee.connections.BotConnection for one WebSocket."""

    # Slots: some thirty attributes would otherwise make a 1.6 KB dict for every connection
    # (docs/benchmarks.md, "Idle bots").
    __slots__ = (
        "_bucket",
        "_closing",
        "_heartbeat_misses",
        "_heartbeat_s",
        "_hello_timeout_s",
        "_last_heard",
        "_max_queued",
        "_max_queued_bytes",
        "_next_ping",
        "_out",
        "_ping_due",
        "_pings",
        "_queued_chars",
        "_reader",
        "_rtt",
        "_send_timeout_s",
        "_strikes",
        "_transport",
        "_unsent",
        "_unsent_grain_s",
        "_watch_timer",
        "_writer",
        "_writing_since",
        "bot_id",
        "bot_name",
        "check_role",
        "client",
        "finished",
        "phase",
        "referee",
        "websocket",
    )

    def __init__(
        self, websocket: WebSocket, referee: Referee, *, check_role: CheckRole | None = None
    ) -> None:
        self.websocket = websocket
        self.referee = referee
        settings = referee.settings
        self.phase = Phase.AWAITING_HELLO
        self.bot_id = -1
        self.bot_name = ""
        self.client = ""
        #: An ``arena check-bot`` connection (its handshake's CHECK_HEADER), or None.
        self.check_role = check_role
        self._transport: TransportHandle | None = transport_handle(websocket.scope)
        self._hello_timeout_s = settings.hello_timeout_s
        self._heartbeat_s = settings.heartbeat_s
        self._heartbeat_misses = max(1, settings.heartbeat_misses)
        self._max_queued = max(1, settings.max_outbound_frames)
        self._max_queued_bytes = max(MAX_FRAME_BYTES, settings.max_outbound_bytes)
        self._send_timeout_s = settings.send_timeout_s
        self._bucket = TokenBucket(settings.rate_limit_per_s, settings.rate_limit_burst)
        self._strikes = 0
        #: Messages waiting for the writer task, oldest first. The task runs only while there
        #: are some (most messages are written at once, _write_now), and a list rather than an
        #: asyncio.Queue (three deques and an event) or a deque (a 0.5 KB block from the start):
        #: every idle connection has one, empty (docs/benchmarks.md, "Idle bots"). It is
        #: bounded (``max_outbound_frames``), so that taking from its front costs little.
        self._out: list[str | _Close] = []
        self._writer: asyncio.Task[None] | None = None
        #: Characters of text waiting in ``_out`` (about its bytes: frames are mostly ASCII).
        self._queued_chars = 0
        self._closing = False
        #: The task reading ASGI's receive (run()); a close decided elsewhere cancels it.
        self._reader: asyncio.Task[None] | None = None
        #: The watchdog's next wake (a timer, not a task: every idle connection has one).
        self._watch_timer: asyncio.TimerHandle | None = None
        self._ping_due = 0.0
        self._last_heard = time.monotonic()
        #: When the frame being written started (None: the writer is idle).
        self._writing_since: float | None = None
        #: Messages written but not yet sent, oldest first: (the connection's byte count once
        #: the message was written, when its writing began). Messages begun within
        #: ``_unsent_grain_s`` of each other share one entry (the first one's time, the last
        #: one's bytes), so the list stays short whatever the traffic (a list: a deque's first
        #: block alone is 0.5 KB, for every idle connection).
        self._unsent: list[tuple[int, float]] = []
        self._unsent_grain_s = self._send_timeout_s / 16
        self._rtt: float | None = None
        self._pings: dict[int, float] = {}
        self._next_ping = 1
        #: Set when run() has returned: everything that could be sent was sent. (A Flag: an
        #: asyncio.Event allocates its waiters' deque up front.)
        self.finished = Flag()

    # --- BotConnection ------------------------------------------------------------------

    def send(self, message: ServerMessage) -> None:
        self.send_json(message.model_dump_json())

    def send_json(self, text: str) -> None:
        if self._closing:
            return
        if self._write_now(text):
            return
        if len(self._out) >= self._max_queued:
            self._slow(f"{len(self._out)} messages are waiting for this bot to read them")
            return
        if self._queued_chars + len(text) > self._max_queued_bytes:
            self._slow(f"{self._queued_chars} bytes are waiting for this bot to read them")
            return
        self._queued_chars += len(text)
        self._put(text)

    def _put(self, item: str | _Close) -> None:
        self._out.append(item)
        if self._writer is None and not self.finished.is_set():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    def _write_now(self, text: str) -> bool:
        """Write the message as a frame to the connection at once, when nothing is queued or
        being written before it and the transport's buffer is nearly empty; False: queue it.

        Every message went through the queue, the writer task, Starlette's and uvicorn's send
        and the websockets library's framing: more of the server's CPU per move than the rules
        and the clocks (docs/benchmarks.md). A bot that reads keeps the buffer empty, so its
        messages go straight out; one that does not fills it, and its messages then queue,
        with the limits and the slow-reader check as before.
        """
        transport = self._transport
        if (
            transport is None
            or self._writing_since is not None
            or self._out
            or transport.write_buffer_size() > _DIRECT_WRITE_MAX_BUFFERED
        ):
            return False
        started = time.monotonic()
        if not transport.write(text_frame(text)):
            return False  # closing: the queue's writer finds out and ends the session
        self._written(started)
        return True

    def rtt_ms(self) -> float | None:
        return self._rtt

    def close_with(self, error: ErrorMessage) -> None:
        if self._closing:
            return
        if error.fatal and error.code != ErrorCode.shutting_down:
            log.info("closing %s: %s (%s)", self._who(), error.code, printable(error.message))
        self._put(error.model_dump_json())
        if error.code == ErrorCode.frame_too_large:
            code = CLOSE_TOO_BIG
        elif error.code == ErrorCode.shutting_down:
            code = CLOSE_RESTART
        else:
            code = CLOSE_POLICY
        self._put(_Close(code, str(error.code)))
        self._closing = True
        self._stop_reading()
        # The referee learns it now, not once run() has unwound: by the time the peer reads
        # the error, the bot is already disconnected for everyone else.
        self._detach()

    def _stop_reading(self) -> None:
        """Stop the reader at once: it may be parked in receive() for good, waiting for a peer
        that never sends again. (From the reader itself there is nothing to stop: it sees
        ``_closing`` at its next receive.)"""
        reader = self._reader
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()

    def _detach(self) -> None:
        if self.phase is Phase.LOGGED_IN:
            self.phase = Phase.CLOSED
            self.referee.disconnected(self)

    # --- the connection -----------------------------------------------------------------

    async def run(self) -> None:
        reader = self._reader = asyncio.create_task(self._serve())
        if self._closing:  # closed before the reader existed
            reader.cancel()
        try:
            # A close decided elsewhere (watchdog, referee, a full queue) cancels the reader.
            await asyncio.wait((reader,))
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self._detach()
            self.phase = Phase.CLOSED
            deadline = time.monotonic() + CLOSE_GRACE_S
            flushed = True
            writer = self._writer
            if self._closing and writer is not None:
                # Let the fatal error and the close frame go out.
                try:
                    await asyncio.wait_for(asyncio.shield(writer), CLOSE_GRACE_S)
                except (TimeoutError, asyncio.CancelledError):
                    flushed = False
                except Exception:
                    pass
            writer = self._writer
            if writer is not None:
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await writer
            if self._transport is not None:
                # Written is not gone: the transport takes up to 64 KiB without a send waiting,
                # and closes only once that is out. However the session ended (a fatal error, the
                # peer's close, the server's shutdown), a peer that does not read must not keep
                # the connection, and its buffer, beyond the grace.
                try:
                    flushed = flushed and await self._drained(deadline)
                except asyncio.CancelledError:
                    flushed = False
                if not flushed:
                    # The peer does not read: drop the connection and what was buffered for it,
                    # rather than keep both until the peer reads or goes away.
                    self._transport.abort()
            self.finished.set()

    async def _drained(self, deadline: float) -> bool:
        """Whether the transport's buffer empties by ``deadline``."""
        assert self._transport is not None
        while self._transport.write_buffer_size():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_DRAIN_POLL_S)
        return True

    async def _serve(self) -> None:
        try:
            if not await self._handshake():
                return
            self._ping_due = time.monotonic() + max(self._heartbeat_s, 0.01)
            self._watch()
            if self._transport is not None:
                # From now on the connection hands text messages straight to _on_text (when
                # nothing waits in ASGI's queue before them); the read loop below keeps what
                # comes through ASGI: binary frames, the disconnect, and what queued meanwhile.
                self._transport.on_text = self._on_text
            try:
                await self._read_loop()
            finally:
                if self._transport is not None:
                    self._transport.on_text = None
                if self._watch_timer is not None:
                    self._watch_timer.cancel()
                    self._watch_timer = None
        except Exception:
            log.exception("bot connection %s failed", self._who())

    async def _write_loop(self) -> None:
        try:
            await self._write_queued()
        finally:
            self._writer = None

    async def _write_queued(self) -> None:
        """Write what is queued, in order, until nothing is (then the task ends)."""
        while self._out:
            item = self._out.pop(0)
            started = self._writing_since = time.monotonic()
            try:
                if isinstance(item, _Close):
                    await self.websocket.close(item.code, item.reason)
                    return
                self._queued_chars -= len(item)
                await self.websocket.send_text(item)
                self._written(started)
            except Exception:
                # The peer is gone: stop reading too; the bot counts as disconnected.
                self._closing = True
                self._stop_reading()
                self._detach()
                return
            finally:
                self._writing_since = None

    def _written(self, started: float) -> None:
        """Remember a message the transport took, until it has left the server."""
        if self._transport is None:
            return
        end = self._transport.written
        unsent = self._unsent
        if unsent and started - unsent[-1][1] < self._unsent_grain_s:
            unsent[-1] = (end, unsent[-1][1])
        else:
            unsent.append((end, started))

    def _oldest_unsent(self) -> float | None:
        """When the writing of the oldest message that has not left the server began (None: every
        message has left)."""
        unsent = self._unsent
        if unsent:
            assert self._transport is not None
            sent = self._transport.sent()
            gone = 0
            while gone < len(unsent) and unsent[gone][0] <= sent:
                gone += 1
            del unsent[:gone]
            if unsent:
                return unsent[0][1]
        # Still being handed over (a send waiting for the transport to take more).
        return self._writing_since

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
        self.client = hello.client
        running = self.referee.login(self)
        if self.check_role is CheckRole.checker:
            await self.referee.mark_checker(self.bot_id)
        log.info(
            "login %s from %s (%s)%s",
            self.bot_name,
            self._peer(),
            printable(hello.client) or "no client name",
            f"; resyncing {len(running)} match(es)" if running else "",
        )
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
            if message is not None:
                self._act(message, received_at)

    def _on_text(self, text: str) -> None:
        """A text message handed over by the connection as it was parsed (logged in only).

        The same checks and dispatch as the read loop's, run from the connection's
        ``data_received``: an exception must not escape into the transport.
        """
        if self._closing:
            return
        received_at = self._last_heard = time.monotonic()
        try:
            message = self._admit_text(text, received_at)
            if message is not None:
                self._act(message, received_at)
        except Exception:
            log.exception("bot connection %s failed", self._who())
            self._fatal(ErrorCode.internal_error, "the server failed on this connection")

    def _act(self, message: ClientMessage, received_at: float) -> None:
        try:
            productive = self._dispatch(message, received_at)
        except RefereeError as e:
            self.send(e.to_message())
        except Exception:
            log.exception("bot %s: failed on %s", self.bot_name, type(message).__name__)
            self._error(ErrorCode.internal_error, "the server failed on this message")
        else:
            if productive:
                self._bucket.refund()

    def _admit(self, raw: Mapping[str, Any], received_at: float) -> ClientMessage | None:
        """Frame checks, rate limit and parsing; None when the frame was refused (and said so).

        A token is taken for every frame that gets this far (refunded later when the message
        turns out to be part of playing); an accepted move is played right here, before the rate
        limit, and None is returned.
        """
        text = raw.get("text")
        if text is None:
            data = raw.get("bytes") or b""
            if len(data) > MAX_FRAME_BYTES:
                self._fatal(ErrorCode.frame_too_large, f"a {len(data)}-byte frame is over 64 KiB")
            elif self._allowed(received_at) or self._count_strike():
                self._error(ErrorCode.binary_frame, "binary frames are refused; send JSON text")
            return None
        return self._admit_text(text, received_at)

    def _admit_text(self, text: str, received_at: float) -> ClientMessage | None:
        # Characters are at most 4 bytes: encode only when the text could be over the limit.
        size = len(text)
        if size > MAX_FRAME_BYTES or (
            size * 4 > MAX_FRAME_BYTES and len(text.encode(errors="replace")) > MAX_FRAME_BYTES
        ):
            self._fatal(ErrorCode.frame_too_large, "a frame is over 64 KiB")
            return None
        allowed = self._allowed(received_at)
        warning: WireError | None = None
        try:
            message = parse_client_frame(text)
        except WireError as e:
            if e.salvaged is None:
                # Refused either way; beyond the rate it still counts towards closing a flood.
                if allowed or self._count_strike():
                    self._error(e.code, e.message, e.match_id)
                return None
            # Only the move's info was at fault: the move counts, the bot is told what was
            # dropped.
            message, warning = e.salvaged, e
        if isinstance(message, Pong) and message.id in self._pings:
            # The answer to the server's own ping is never dropped: it measures the latency
            # grace, and it costs nothing.
            self._dispatch(message, received_at)
            if allowed:
                self._bucket.refund()
            return None
        if isinstance(message, MakeMove) and self.phase is Phase.LOGGED_IN:
            if warning is not None:
                self._error(warning.code, warning.message, warning.match_id)
            try:
                self.referee.move(self, message, received_at)
            except RefereeError as e:
                # Refused by the referee (stale, not its turn, ...): said as such; beyond the
                # rate it still counts towards closing a flood.
                if allowed or self._count_strike():
                    self.send(e.to_message())
                return None
            if allowed:
                self._bucket.refund()
            return None
        if not allowed:
            self._strike(message.type, getattr(message, "match_id", None))
            return None
        return message

    def _allowed(self, now: float) -> bool:
        # Strikes are forgiven only once the bucket is full again, i.e. after the bot has been
        # quiet for burst / rate seconds: a flood cannot reset them by pausing briefly.
        self._bucket.refill(now)
        if self._bucket.full():
            self._strikes = 0
        return self._bucket.take(now)

    def _count_strike(self) -> bool:
        """One more message beyond the rate; False once that closed the connection."""
        self._strikes += 1
        if self._strikes > self._bucket.burst:
            self._fatal(ErrorCode.rate_limited, "too many messages; closing the connection")
            return False
        return True

    def _strike(self, dropped: str, match_id: str | None = None) -> None:
        if not self._count_strike():
            return
        # Every dropped message is answered (a bot can resend exactly what was lost): a flood
        # gets at most a burst of these small answers before the fatal one.
        wait_ms = self._bucket.wait_ms()
        self.send(
            ErrorMessage(
                code=ErrorCode.rate_limited,
                message=(
                    f"too many messages: this {dropped!r} was dropped and not acted on; "
                    f"send it again after {wait_ms} ms"
                ),
                fatal=False,
                match_id=match_id,
                retry_after_ms=wait_ms,
            )
        )

    def _dispatch(self, message: ClientMessage, received_at: float) -> bool:
        """Act on a message; True when it was part of playing (its token is refunded)."""
        referee = self.referee
        if isinstance(message, Ping):
            self.send(Pong(id=message.id))
        elif isinstance(message, Pong):
            sent = self._pings.pop(message.id, None)
            if sent is not None:
                self._rtt = (received_at - sent) * 1000
                return True
        elif isinstance(message, Hello):
            self._error(ErrorCode.invalid_message, "hello was already accepted on this connection")
        elif isinstance(message, JoinLobby):
            return referee.join(self, message)
        elif isinstance(message, LeaveLobby):
            referee.leave(self, message)
        elif isinstance(message, Challenge):
            referee.challenge(self, message)
        elif isinstance(message, AcceptChallenge):
            referee.accept(self, message)
            return True
        elif isinstance(message, DeclineChallenge):
            referee.decline(self, message)
            return True
        elif isinstance(message, Resign):
            referee.resign(self, message)
        elif isinstance(message, MakeMove):
            referee.move(self, message, received_at)
            return True
        return False

    def _watch(self) -> None:
        """The watchdog: ping every heartbeat; close a silent connection or one whose messages
        do not leave. Runs on a timer that it sets again for its next wake."""
        self._watch_timer = None
        if self._closing:
            return
        heartbeat = max(self._heartbeat_s, 0.01)  # a zero setting must not spin the loop
        now = time.monotonic()
        try:
            wake = self._watch_at(now, heartbeat)
        except Exception:
            log.exception("bot connection %s: the watchdog failed", self._who())
            wake = now + heartbeat
        if wake is not None and not self._closing:
            loop = asyncio.get_running_loop()
            self._watch_timer = loop.call_at(loop.time() + max(0.0, wake - now), self._watch)

    def _watch_at(self, now: float, heartbeat: float) -> float | None:
        """One look of the watchdog; when to look again (None: the connection is closing)."""
        silence = heartbeat * self._heartbeat_misses
        quiet = now - self._last_heard
        if quiet >= silence:
            self._fatal(
                ErrorCode.heartbeat_timeout,
                f"nothing received for {quiet:.1f} s ({self._heartbeat_misses} heartbeats "
                f"of {heartbeat:g} s); answer every ping with pong",
            )
            return None
        # Not only a send that waits: the transport takes up to 64 KiB, and the kernel more,
        # before one does, and a bot that stops reading (or whose TCP stalls) once the server
        # has little more to say would never make one wait.
        unsent_since = self._oldest_unsent()
        if unsent_since is not None and now - unsent_since >= self._send_timeout_s:
            self._slow(f"a message could not be written for {self._send_timeout_s:g} s")
            return None
        if now >= self._ping_due:
            self._ping()
            self._ping_due = now + heartbeat
        # Wake for the next ping, the silence deadline, or the write deadline; with nothing
        # unsent, the writer is looked at again within half the send timeout.
        if unsent_since is not None:
            write_deadline = unsent_since + self._send_timeout_s
        else:
            write_deadline = now + self._send_timeout_s / 2
        return min(self._ping_due, self._last_heard + silence, write_deadline)

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
        self._out.clear()
        self._queued_chars = 0
        self._fatal(ErrorCode.slow_consumer, f"{why}; read your socket (closing the connection)")

    def _error(self, code: ErrorCode, message: str, match_id: str | None = None) -> None:
        self.send(ErrorMessage(code=code, message=message, fatal=False, match_id=match_id))

    def _fatal(self, code: ErrorCode, message: str) -> None:
        self.close_with(ErrorMessage(code=code, message=message, fatal=True))

    def _peer(self) -> str:
        client = self.websocket.scope.get("client")
        if not client:
            return "?"
        # Behind a proxy, uvicorn takes the address from X-Forwarded-For, without a port (0).
        return f"{client[0]}:{client[1]}" if client[1] else str(client[0])

    def _who(self) -> str:
        return (
            f"bot {self.bot_name}"
            if self.bot_name
            else f"connection {self._peer()} (not logged in)"
        )


def printable(text: str, limit: int = 200) -> str:
    """``text`` for one line of the server's log: cut short, every control or invisible character
    (newline, escape, NUL, ...) written as an escape, so that no client can forge log lines or
    drive the instructor's terminal."""
    return escape_controls(clip(text, limit))


def check_role(websocket: WebSocket) -> CheckRole | None:
    """The ``arena check-bot`` role the connection's handshake declares (CHECK_HEADER), if any."""
    value = websocket.headers.get(CHECK_HEADER, "").strip().lower()
    try:
        return CheckRole(value) if value else None
    except ValueError:
        return None
