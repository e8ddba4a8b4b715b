"""The connections below the app: what uvicorn leaves to a server facing hostile clients.

``arena serve`` and the tests' live server run uvicorn with the two protocol classes below
(``ply_arena.server.app.uvicorn_config``):

- :class:`ArenaHttpProtocol` (h11) closes a connection whose request does not arrive whole within
  ``settings.http_request_timeout_s`` of its first byte (or of the connection): uvicorn has no
  header timeout, so a client sending half a request could hold a connection for ever.
- :class:`ArenaWebSocketProtocol` (uvicorn's websockets-sansio) answers the two frame errors that
  uvicorn handles below the app with the protocol's coded error before closing, and without a
  traceback in the log: a frame over 64 KiB (``frame_too_large``, close 1009; refused from its
  header, before its payload is read) and a text frame that is not UTF-8 (``bad_json``, close
  1007). WebSocket-level pings, which the app never sees, are rate-limited and answered only
  while the peer reads; the closing handshake waits 1 s, not 10. It also puts a
  :class:`TransportHandle` in the ASGI scope, so that a session can tell which of its messages
  have left the server (ASGI's send returns once a frame is in the transport's buffer, which
  takes up to 64 KiB without a word, and the kernel's send queue holds more), and abort a
  connection whose peer stopped reading (ASGI itself has no way to drop a connection whose close
  frame cannot be written); so that the spectator stream can write one serialised frame to
  many connections without a task and an ASGI round per spectator; and so that a logged-in bot's
  session can take its text messages as they are parsed (``TransportHandle.on_text``) and write
  its answers as frames, without an ASGI round per message either way.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import PayloadTooBig
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import MAX_FRAME_BYTES, ErrorMessage

if sys.platform == "linux":
    import fcntl

log = logging.getLogger(__name__)

#: The ASGI scope extension holding a TransportHandle.
SCOPE_KEY = "ply_arena.transport"


class Flag:
    """asyncio.Event's ``set``, ``clear``, ``is_set`` and ``wait``, for an object every
    connection has: asyncio.Event allocates a deque for its waiters up front (about 0.8 KB with
    its block), for every idle connection; here the waiters' list exists only while some wait
    (docs/benchmarks.md, "Idle bots")."""

    __slots__ = ("_value", "_waiters")

    def __init__(self, value: bool = False) -> None:
        self._value = value
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if self._value:
            return
        self._value = True
        for waiter in self._waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> bool:
        if self._value:
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = []
        waiters.append(waiter)
        try:
            await waiter
            return True
        finally:
            waiters.remove(waiter)
            if not waiters and self._waiters is waiters:
                self._waiters = None


class ReceiveQueue:
    """What uvicorn's WebSocket protocol needs of its ASGI receive queue (``put_nowait``,
    ``get``, ``empty``), without asyncio.Queue's three deques and event (about 3 KB for every
    idle connection: docs/benchmarks.md, "Idle bots"). Unbounded like uvicorn's; the getters'
    list exists only while some wait."""

    __slots__ = ("_getters", "_items")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._getters: list[asyncio.Future[None]] | None = None

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        self._wake_next()

    def _wake_next(self) -> None:
        for getter in self._getters or ():
            if not getter.done():
                getter.set_result(None)
                return

    async def get(self) -> Any:
        while not self._items:
            getter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            getters = self._getters
            if getters is None:
                getters = self._getters = []
            getters.append(getter)
            try:
                await getter
            except BaseException:
                if self._items and not getter.cancelled():
                    # As asyncio.Queue.get: woken, then cancelled before it ran: pass the
                    # wake-up on, so that no item waits while another getter sleeps.
                    self._wake_next()
                raise
            finally:
                getters.remove(getter)
                if not getters and self._getters is getters:
                    self._getters = None
        # Few items at a time (uvicorn pauses reading while one waits): a list's pop(0) is fine.
        return self._items.pop(0)


class CountingTransport:
    """A connection's transport as uvicorn's WebSocket protocol sees it: the same transport,
    counting the bytes written to it (everything uvicorn writes goes through ``write``)."""

    __slots__ = ("_transport", "written")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        #: Bytes written so far: frames, the handshake's answer, close frames, pongs.
        self.written = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += memoryview(data).nbytes
        self._transport.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        for data in list_of_data:
            self.write(data)

    # Asked on every message a bot is sent (server/ws/session.py, TransportHandle): direct,
    # rather than through __getattr__.
    def get_write_buffer_size(self) -> int:
        return int(self._transport.get_write_buffer_size())

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


#: Linux's SIOCOUTQNSD ioctl: the bytes in a TCP socket's send queue not sent yet. A peer that
#: does not read closes its receive window, and what the server wrote then waits there.
_SIOCOUTQNSD = 0x894B


class TransportHandle:
    """What a session may do to its connection beyond ASGI: tell how much of what it wrote has
    left the server, and drop the connection at once; and, for the spectator stream, write
    frames already serialised (one encoding for every spectator, no task per spectator:
    server/spectate/watcher.py)."""

    __slots__ = ("_fd", "_protocol", "_transport", "on_text")

    def __init__(
        self, transport: CountingTransport, protocol: WebSocketsSansIOProtocol | None = None
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        sock = transport.get_extra_info("socket")
        self._fd: int = sock.fileno() if sock is not None else -1
        #: A logged-in session's reader (server/ws/session.py): the connection's text messages
        #: are handed to it as they are parsed, while nothing waits in ASGI's receive queue
        #: before them; None: every message goes through ASGI's receive.
        self.on_text: Callable[[str], None] | None = None

    def can_send(self) -> bool:
        """Whether a data frame may be written now: the handshake is done, and no close frame
        was sent or received (RFC 6455: no data after a close)."""
        protocol = self._protocol
        return (
            protocol is not None
            and protocol.handshake_complete
            and not protocol.close_sent
            and not protocol.disconnected
            and protocol.conn.state is State.OPEN
            and not self._transport.is_closing()
        )

    def write(self, frames: bytes) -> bool:
        """Write whole WebSocket frames (server frames: unmasked; RSV bits clear, which is valid
        with or without permessage-deflate); False when the connection no longer takes data
        (see can_send).

        Nothing waits: what the kernel does not take stays in the transport's buffer, which the
        caller bounds (write_buffer_size)."""
        if not self.can_send():
            return False
        self._transport.write(frames)
        return True

    @property
    def written(self) -> int:
        """Bytes written to the connection so far."""
        return self._transport.written

    def sent(self) -> int:
        """How many of the bytes written have left the server: neither in the transport's buffer
        nor waiting in the kernel's send queue for the peer's receive window (Linux; elsewhere
        what the kernel took counts as sent)."""
        return self._transport.written - self.write_buffer_size() - self._kernel_unsent()

    def abort(self) -> None:
        """Close the TCP connection now, discarding whatever is still buffered for the peer."""
        if not self._transport.is_closing() or self._transport.get_write_buffer_size():
            self._transport.abort()

    def write_buffer_size(self) -> int:
        """Bytes in the transport's buffer: written, not yet taken by the kernel."""
        return int(self._transport.get_write_buffer_size())

    def _kernel_unsent(self) -> int:
        # Not once the transport is closing: its descriptor may be closed and reused.
        if sys.platform != "linux" or self._fd < 0 or self._transport.is_closing():
            return 0
        try:
            answer = fcntl.ioctl(self._fd, _SIOCOUTQNSD, bytes(4))
        except OSError:
            return 0
        return max(0, int.from_bytes(answer, sys.byteorder, signed=True))


def transport_handle(scope: Mapping[str, Any]) -> TransportHandle | None:
    """The handle ArenaWebSocketProtocol put in ``scope`` (None under another server)."""
    handle = scope.get("extensions", {}).get(SCOPE_KEY)
    return handle if isinstance(handle, TransportHandle) else None


def _error_frame(code: ErrorCode, message: str) -> bytes:
    """A fatal protocol error as a ready-to-write text frame (server frames are not masked)."""
    text = ErrorMessage(code=code, message=message, fatal=True).model_dump_json()
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=False)


#: WebSocket-level pings (opcode 9, below the JSON protocol) a client may send: this many per
#: second, in bursts of ``PING_BURST``; beyond, the connection is closed (1008).
PING_RATE = 10.0
PING_BURST = 30
#: A pong is not queued while this much is already waiting to be written to the peer (RFC 6455
#: lets an endpoint answer only the latest ping): a client that pings and never reads cannot
#: make the server buffer pongs for it.
PONG_BUFFER_LIMIT = 64 * 1024
#: Seconds to wait for the peer's reply to our close frame before dropping the connection
#: (uvicorn's default is 10, during which it keeps reading whatever the peer sends).
CLOSE_TIMEOUT_S = 1.0


class ArenaWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets-sansio protocol with coded frame errors, bounded pings, a short
    closing handshake and an abort handle."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.close_timeout = CLOSE_TIMEOUT_S
        self._ping_tokens = float(PING_BURST)
        self._ping_at = self.loop.time()
        self._handle: TransportHandle | None = None
        # Lighter than the asyncio.Queue and asyncio.Event uvicorn made, which allocate their
        # deques up front: every idle connection holds them (docs/benchmarks.md, "Idle bots").
        # uvicorn uses only put_nowait / get / empty of the one, set / clear / wait of the other.
        self.queue = ReceiveQueue()  # type: ignore[assignment]
        self.writable = Flag(True)  # type: ignore[assignment]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Everything uvicorn writes to this connection is counted (TransportHandle.sent).
        counting = CountingTransport(cast(asyncio.Transport, transport))
        super().connection_made(cast(asyncio.Transport, counting))

    def handle_ping(self) -> None:
        if self.close_sent or self.transport.is_closing():
            self.conn.data_to_send()  # closing: no pong, and nothing more to say
            return
        now = self.loop.time()
        self._ping_tokens = min(PING_BURST, self._ping_tokens + (now - self._ping_at) * PING_RATE)
        self._ping_at = now
        if self._ping_tokens < 1.0:
            log.info("closing %s: WebSocket pings faster than %g/s", _peer(self), PING_RATE)
            self.conn.data_to_send()  # the pong websockets prepared: not sent
            self.conn.fail(1008, "too many WebSocket pings")
            self.handle_parser_exception()
            return
        self._ping_tokens -= 1.0
        output = self.conn.data_to_send()  # the pong websockets prepared
        if self.transport.get_write_buffer_size() < PONG_BUFFER_LIMIT:
            self.transport.write(b"".join(output))

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            # The app task was created but has not run yet: it sees the handle.
            self._handle = TransportHandle(cast(CountingTransport, self.transport), self)
            scope["extensions"][SCOPE_KEY] = self._handle

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # uvicorn keeps the handshake's request and response, headers and all, for the
            # connection's life; neither is read again once the answer is written (a few KB
            # per connected bot: docs/benchmarks.md, "Idle bots"). The request also stays in
            # websockets' parser (a local of its generator, for the connection's life): its
            # headers are emptied so that they go.
            self.request.headers.clear()
            self.request = None  # type: ignore[assignment]
            self.response = None  # type: ignore[assignment]

    def handle_parser_exception(self) -> None:
        if isinstance(self.conn.parser_exc, PayloadTooBig) and not self.transport.is_closing():
            # websockets refused the frame from its header and queued the close (1009): say why
            # first, as the protocol documents.
            log.info("closing %s: frame_too_large (a message over 64 KiB)", _peer(self))
            self.transport.write(
                _error_frame(
                    ErrorCode.frame_too_large,
                    f"a frame is over {MAX_FRAME_BYTES // 1024} KiB; closing the connection",
                )
            )
        super().handle_parser_exception()

    def send_receive_event_to_app(self) -> None:
        if self.curr_msg_data_type == "text" and not self.close_sent:
            data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
            try:
                text = data.decode()
            except UnicodeDecodeError:
                # uvicorn would log a traceback for every such frame; a client must not be able
                # to fill the log. RFC 6455 closes with 1007; the coded error comes first.
                self.frames = []
                log.info("closing %s: bad_json (a text frame is not UTF-8)", _peer(self))
                self.transport.write(
                    _error_frame(ErrorCode.bad_json, "a text frame is not valid UTF-8")
                )
                self.conn.send_close(1007, "invalid UTF-8")
                self.handle_parser_exception()
                return
            handle = self._handle
            if handle is not None and handle.on_text is not None and self.queue.empty():
                # Straight to the session, as the message is parsed: no ASGI queue, no task
                # woken for it, no pause and resume of reading per message (uvicorn pauses
                # reading until the app has taken each one). The queue keeps what comes
                # before the session's login, and anything behind a message still in it, so
                # the order holds.
                self.frames = []
                handle.on_text(text)
                return
        super().send_receive_event_to_app()


def _peer(protocol: Any) -> str:
    client = protocol.client
    return f"connection {client[0]}:{client[1]}" if client else "a connection"


class ArenaHttpProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's arrival.

    uvicorn makes the protocol itself, so the deadline is a class attribute: use
    :func:`http_protocol` for a class with another one.
    """

    request_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._request_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self.transport.get_protocol() is not self or self.conn.their_state not in (
            h11.IDLE,
            h11.SEND_BODY,
        ):
            self._disarm()  # the request is whole (or the connection became a WebSocket)

    def _arm(self) -> None:
        self._disarm()
        self._request_timer = self.loop.call_later(self.request_timeout_s, self._request_late)

    def _disarm(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _request_late(self) -> None:
        self._request_timer = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            return  # a whole request is being answered
        partial = self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0])
        if partial and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            # Part of a request came and nothing was answered yet: say why, as an HTTP server
            # should. (An app that answered without the body, e.g. 401, has said enough.)
            self.transport.write(_REQUEST_TIMEOUT)
        log.debug("closing %s: no whole request within %g s", self.client, self.request_timeout_s)
        self.transport.close()


#: The 408 answer, JSON like every other REST error.
_TIMEOUT_BODY = (
    b'{"error":{"code":"bad_request","message":"the request did not arrive whole in time: send '
    b'the headers and the body at once"}}'
)
_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-type: application/json\r\n"
    + f"content-length: {len(_TIMEOUT_BODY)}\r\n\r\n".encode()
    + _TIMEOUT_BODY
)


def http_protocol(request_timeout_s: float) -> type[ArenaHttpProtocol]:
    """ArenaHttpProtocol with its own request deadline."""
    return type("ArenaHttpProtocol", (ArenaHttpProtocol,), {"request_timeout_s": request_timeout_s})
