"""The checker's relay: the bot under test connects here instead of to the arena.

Every frame is passed on unchanged, both ways, and written down (:class:`Frame`) with the time
it passed, so the checker sees exactly what the bot sent and what it was sent: its ``hello``,
its ``pong`` to each ``ping``, the ``ply`` of each ``move`` next to the ``turn`` it answers.
Besides passing frames on, the relay does three things, each written down as well:

- it **accepts the checker's challenges** for the bot (the ``challenge_received`` is not passed
  on; ``accept`` goes to the arena in the bot's name), so any bot, in any language, can be
  checked without code to accept challenges: the bot sees its matches start as lobby matches do
  (:meth:`Relay.accept_together` holds several to start their matches at the same moment);
- it **pings the bot** itself when asked (ids from :data:`INJECTED_PING_BASE` up; their pongs
  stop here), to see whether pings are answered while the bot thinks;
- it **cuts the bot's connection** when a given match next sends the bot a turn, as a server
  restart would: the turn is not passed on, the arena's side is dropped (no close frame, as when
  a server dies), and the bot gets what a restarting server sends (the fatal ``shutting_down``,
  then close 1012 with that reason); the bot must reconnect and be resynced by the arena.

The token in ``hello`` is passed on but never kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.server import Server, ServerConnection
from websockets.http11 import Request, Response

from ply_arena.server.checkbot._changes import Changes
from ply_arena.server.referee.connections import CHECK_HEADER, CheckRole

#: Ids of the pings the relay sends the bot itself: far above the arena's (1, 2, 3, ...).
INJECTED_PING_BASE = 2**50
#: The path bots connect to, as on the arena.
BOT_PATH = "/ws"
#: What the relay's cut sends the bot: the arena's own restart frames (server/referee).
CLOSE_RESTART = 1012
RESTART_REASON = "shutting_down"
RESTART: dict[str, Any] = {
    "type": "error",
    "code": RESTART_REASON,
    "message": "the server is restarting (imitated by arena check-bot); reconnect with "
    "backoff: your running matches are kept and resume where they stood",
    "fatal": True,
    "match_id": None,
}

Direction = Literal["to_bot", "from_bot"]
#: Close codes that may be sent in a close frame (RFC 6455 section 7.4).
_SENDABLE = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014})


@dataclass(frozen=True)
class Frame:
    """One frame that passed through the relay (or was held back, see ``note``)."""

    at: float  # time.monotonic()
    link: int
    direction: Direction
    #: The frame's JSON object; None when it is not one (binary, bad JSON): passed on anyway.
    message: dict[str, Any] | None
    #: Why the frame was not simply passed on: "accepted for the bot" (a challenge),
    #: "cut" (the turn on which the connection was cut), "injected" (the relay's own ping),
    #: "answer to the relay's ping" (a pong kept here).
    note: str = ""

    @property
    def type(self) -> str | None:
        kind = self.message.get("type") if self.message is not None else None
        return kind if isinstance(kind, str) else None

    @property
    def match_id(self) -> str | None:
        value = self.message.get("match_id") if self.message is not None else None
        return value if isinstance(value, str) else None


@dataclass
class Link:
    """One connection of a bot through the relay (a reconnection is a new link)."""

    number: int
    opened_at: float
    #: The bot's name, from the arena's ``welcome`` (None until logged in, or never).
    bot: str | None = None
    #: The bot's ``hello`` without its token, and when it came.
    hello: dict[str, Any] | None = None
    hello_at: float | None = None
    closed_at: float | None = None
    #: Who ended it: "bot" (it closed or dropped), "server" (the arena closed it), "relay" (the
    #: checker cut it, or the check ended).
    closed_by: Literal["bot", "server", "relay"] | None = None
    close_code: int | None = None
    close_reason: str = ""
    #: The arena could not be reached for this link.
    upstream_error: str | None = None
    down: ServerConnection | None = field(default=None, repr=False)
    up: ClientConnection | None = field(default=None, repr=False)


@dataclass
class Cut:
    """A cut to come: ``match_id`` None binds it to the next match the checker starts with the
    bot (the relay sees its match_start before any of its turns)."""

    match_id: str | None
    #: Cut on the bot's nth turn of the match (1: the first turn it is sent).
    nth: int
    seen: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    at: float | None = None
    link: int | None = None


class Relay:
    """Listens for bots on ``host:port`` and relays each connection to ``upstream`` (the arena's
    ``ws://HOST:PORT/ws``). ``checker`` is the name of the checker's bot, whose challenges are
    accepted for the bots that come through."""

    def __init__(self, upstream: str, checker: str) -> None:
        self.upstream = upstream
        self.checker = checker
        self.frames: list[Frame] = []
        self.links: dict[int, Link] = {}
        self.url = ""
        self._numbers = itertools.count(1)
        self._ping_ids = itertools.count(INJECTED_PING_BASE)
        self._injected: set[int] = set()  # ids of the relay's own pings
        self._cuts: list[Cut] = []
        #: accept_together: how many challenges to hold, and those held (link, challenge id).
        self._together = 0
        self._held: list[tuple[Link, Any]] = []
        self._server: Server | None = None
        self._changes = Changes()
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- running -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen; returns the URL bots must be given (``ws://HOST:PORT/ws``)."""
        self._server = await websockets.serve(
            self._handle,
            host,
            port,
            process_request=_only_bot_path,
            max_size=None,  # the arena enforces its own limit and says so
            ping_interval=None,  # transparent: no keepalive pings of the relay's own
            compression=None,
        )
        sock = next(iter(self._server.sockets))
        bound_host, bound_port = sock.getsockname()[:2]
        shown = host if host not in ("", "0.0.0.0", "::") else bound_host
        self.url = f"ws://{shown}:{bound_port}{BOT_PATH}"
        return self.url

    async def stop(self) -> None:
        """Close every link (as the relay's doing) and stop listening."""
        for link in list(self.links.values()):
            if link.closed_at is None:
                self._closed(link, "relay", 1001, "the check is over")
                for ws in (link.down, link.up):
                    if ws is not None:
                        with contextlib.suppress(Exception):
                            await asyncio.wait_for(ws.close(1001, "the check is over"), 2)
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        for task in list(self._tasks):
            task.cancel()

    # --- what the checker asks -----------------------------------------------------------------

    def live_link(self, bot: str) -> Link | None:
        """The bot's open, logged-in link (the newest), if any."""
        for link in sorted(self.links.values(), key=lambda x: -x.number):
            if link.bot == bot and link.closed_at is None:
                return link
        return None

    async def wait_for(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``ready()`` (looked at after every frame and every change of a link);
        False when ``timeout`` seconds passed first."""
        return await self._changes.wait_until(ready, timeout)

    async def ping(self, bot: str) -> int | None:
        """Send the bot a ``ping`` of the relay's own; its id (None: the bot is not connected)."""
        link = self.live_link(bot)
        if link is None or link.down is None:
            return None
        ping_id = next(self._ping_ids)
        self._injected.add(ping_id)
        message = {"type": "ping", "id": ping_id}
        self._record(link, "to_bot", message, "injected")
        with contextlib.suppress(websockets.ConnectionClosed):
            await link.down.send(json.dumps(message))
        return ping_id

    def pending_pings(self, bot: str) -> int:
        """Pings sent to the bot's open links and not answered yet."""
        live = {
            link.number for link in self.links.values() if link.bot == bot and not link.closed_at
        }
        pending: dict[tuple[int, Any], int] = {}
        for frame in self.frames:
            if frame.link not in live or frame.message is None:
                continue
            key = (frame.link, frame.message.get("id"))
            if frame.direction == "to_bot" and frame.type == "ping":
                pending[key] = pending.get(key, 0) + 1
            elif frame.direction == "from_bot" and frame.type == "pong" and pending.get(key):
                pending[key] -= 1
        return sum(pending.values())

    def cut_on_turn(self, match_id: str | None, nth: int) -> Cut:
        """Cut the bot's connection instead of passing on its ``nth`` turn of ``match_id`` (None:
        of the next match the checker starts with it)."""
        cut = Cut(match_id, nth)
        self._cuts.append(cut)
        return cut

    async def accept_together(self, count: int) -> None:
        """Hold the checker's next challenges until ``count`` have come, then accept them all
        at once, so that their matches start at the same moment. (Called again with a smaller
        count when the arena refused some of them.)"""
        self._together = count
        await self._accept_held()

    def cancel_cut(self, cut: Cut) -> None:
        with contextlib.suppress(ValueError):
            self._cuts.remove(cut)

    # --- one connection ------------------------------------------------------------------------

    async def _handle(self, down: ServerConnection) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        link = Link(number=next(self._numbers), opened_at=time.monotonic(), down=down)
        self.links[link.number] = link
        self._touch()
        try:
            try:
                up = await websockets.connect(
                    self.upstream,
                    # the bot under check plays the checker's matches only (never rated)
                    additional_headers={CHECK_HEADER: CheckRole.relay.value},
                    max_size=None,
                    ping_interval=None,
                    compression=None,
                    open_timeout=10,
                    close_timeout=2,
                )
            except Exception as exc:
                link.upstream_error = f"{type(exc).__name__}: {exc}"
                self._closed(link, "relay", 1011, "the checker cannot reach the arena")
                with contextlib.suppress(Exception):
                    await down.close(1011, "the checker cannot reach the arena")
                return
            link.up = up
            from_bot = asyncio.create_task(self._pump(link, "from_bot"))
            to_bot = asyncio.create_task(self._pump(link, "to_bot"))
            try:
                await asyncio.wait((from_bot, to_bot), return_when=asyncio.FIRST_COMPLETED)
                # The other side's pump sees the end too, and says who ended it and how.
                await asyncio.wait((from_bot, to_bot), timeout=3)
            finally:
                for pump in (from_bot, to_bot):
                    pump.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await pump
                self._closed(link, "relay", None, "")  # only if nothing said otherwise
                await _finish(up)
                await _finish(down)
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _pump(self, link: Link, direction: Direction) -> None:
        source: Any = link.down if direction == "from_bot" else link.up
        target: Any = link.up if direction == "from_bot" else link.down
        source_side: Literal["bot", "server"] = "bot" if direction == "from_bot" else "server"
        try:
            async for data in source:
                message = _parse(data)
                forward: bool | None
                if direction == "from_bot":
                    forward = self._from_bot(link, message)
                else:
                    forward = await self._to_bot(link, message)
                if forward is None:
                    return  # cut
                if forward:
                    try:
                        await target.send(data)
                    except websockets.ConnectionClosed:
                        return  # the other side ended it: its own pump says how
        except websockets.ConnectionClosed:
            pass
        if link.closed_at is None:
            # The side we read from ended it: pass its close on, code and reason.
            code, reason = source.close_code, source.close_reason or ""
            self._closed(link, source_side, code, reason)
            if code in _SENDABLE:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(target.close(code, reason), 2)
            else:
                target.transport.abort()  # no close frame came: none goes on either

    def _from_bot(self, link: Link, message: dict[str, Any] | None) -> bool:
        kind = message.get("type") if message is not None else None
        if kind == "hello" and message is not None:
            hello = {k: v for k, v in message.items() if k != "token"}  # never kept
            if link.hello is None:
                link.hello, link.hello_at = hello, time.monotonic()
            self._record(link, "from_bot", hello)
            return True
        if kind == "pong" and message is not None and message.get("id") in self._injected:
            self._record(link, "from_bot", message, "answer to the relay's ping")
            return False
        self._record(link, "from_bot", message)
        return True

    async def _to_bot(self, link: Link, message: dict[str, Any] | None) -> bool | None:
        """Whether to pass the frame on (None: the connection was cut)."""
        kind = message.get("type") if message is not None else None
        if message is None:
            self._record(link, "to_bot", None)
            return True
        if kind == "welcome" and isinstance(message.get("bot"), str):
            link.bot = message["bot"]
        elif kind == "challenge_received" and message.get("challenger") == self.checker:
            self._record(link, "to_bot", message, "accepted for the bot")
            self._held.append((link, message.get("challenge_id")))
            await self._accept_held()
            return False
        elif kind == "match_start":
            seats = message.get("seats")
            players = [s.get("bot") for s in seats if isinstance(s, dict)] if seats else []
            for cut in self._cuts:
                if cut.match_id is None and self.checker in players:
                    cut.match_id = message.get("match_id")
                    break
        elif kind == "turn":
            for cut in self._cuts:
                if cut.match_id == message.get("match_id") and not cut.done.is_set():
                    cut.seen += 1
                    if cut.seen >= cut.nth:
                        self._record(link, "to_bot", message, "cut")
                        cut.at, cut.link = time.monotonic(), link.number
                        self._closed(link, "relay", CLOSE_RESTART, RESTART_REASON)
                        cut.done.set()
                        if link.up is not None:
                            link.up.transport.abort()  # to the arena, the bot just vanished
                        await self._restart(link)
                        return None
        self._record(link, "to_bot", message)
        return True

    async def _restart(self, link: Link) -> None:
        """Tell the bot what a restarting arena tells it, then close as the arena would."""
        if link.down is None:
            return
        self._record(link, "to_bot", RESTART, "the checker imitates a server restart")
        with contextlib.suppress(Exception):
            await link.down.send(json.dumps(RESTART))
            await asyncio.wait_for(link.down.close(CLOSE_RESTART, RESTART_REASON), 2)
        link.down.transport.abort()

    async def _accept_held(self) -> None:
        if not self._held or len(self._held) < self._together:
            return
        held, self._held, self._together = self._held, [], 0
        for link, challenge_id in held:
            if link.up is not None:
                accept = {"type": "accept", "challenge_id": challenge_id}
                with contextlib.suppress(websockets.ConnectionClosed):
                    await link.up.send(json.dumps(accept))

    # --- bookkeeping ---------------------------------------------------------------------------

    def _record(
        self, link: Link, direction: Direction, message: dict[str, Any] | None, note: str = ""
    ) -> None:
        self.frames.append(Frame(time.monotonic(), link.number, direction, message, note))
        self._touch()

    def _closed(
        self, link: Link, by: Literal["bot", "server", "relay"], code: int | None, reason: str
    ) -> None:
        if link.closed_at is not None:
            return
        link.closed_at = time.monotonic()
        link.closed_by = by
        link.close_code = code
        link.close_reason = reason
        self._touch()

    def _touch(self) -> None:
        self._changes.touch()


def _parse(data: str | bytes) -> dict[str, Any] | None:
    if not isinstance(data, str):
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def _finish(ws: ServerConnection | ClientConnection) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(), 2)
    with contextlib.suppress(Exception):
        ws.transport.abort()


def _only_bot_path(connection: ServerConnection, request: Request) -> Response | None:
    if request.path.partition("?")[0] == BOT_PATH:
        return None
    return connection.respond(
        HTTPStatus.NOT_FOUND,
        f"bots connect to {BOT_PATH} (the arena's path): ws://HOST:PORT{BOT_PATH}\n",
    )
