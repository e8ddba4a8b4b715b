"""The bus between the arena's processes: prompt wake-ups and relayed frames, never facts.

Usage::

    bus = open_bus(settings.db_url, on_gap=resync)   # LocalBus on SQLite, PostgresBus on PostgreSQL
    await bus.start()
    unsubscribe = bus.subscribe("match.Mx1", handler)   # handler(message: dict) on the event loop
    await bus.listening()                 # every subscription so far is in effect (a round trip)
    bus.publish("match.Mx1", {"type": "move", "move": "e4"})   # never blocks the caller
    unsubscribe()                         # the handler is not called again once this returns
    await bus.close()

Delivery is **at most once**: a message reaches every handler subscribed to its channel, on any
process, when nothing goes wrong, and the messages of one publisher to one channel arrive in
the order they were published; but the shared bus (server/cluster/bus_postgres.py) loses what
is published while a listening connection is down, and what was queued when its publishing
connection broke. It says so (``losses``, and ``on_gap`` once it listens again), so that the
referee re-reads the database then: the database holds the facts (matches, moves, ownership),
the bus only says "look now" and carries frames that are worth nothing a few seconds later.

Messages are JSON objects. Both implementations deliver a decoded copy (the handlers of one
process share it: do not change it), so a message that works on one process (SQLite) works
between processes (PostgreSQL): a value JSON cannot carry fails at ``publish`` on both, and
tuples arrive as lists on both. A process receives its own messages, as any other subscriber.
"""

from __future__ import annotations

import asyncio
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)

Message = dict[str, Any]
Handler = Callable[[Message], None]
Unsubscribe = Callable[[], None]


class BusClosedError(RuntimeError):
    """``publish`` on a bus that was not started or is closed."""


def encode(message: Message) -> str:
    """The message as compact JSON text (``TypeError``/``ValueError`` for what JSON cannot
    carry, NaN included: PostgreSQL's and other languages' parsers refuse it)."""
    if not isinstance(message, dict):
        raise TypeError(f"a bus message is a dict (a JSON object), not {type(message).__name__}")
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def check_channel(channel: str) -> None:
    """Any text is a channel name except one with a NUL character (PostgreSQL's text cannot
    hold it); refused on every bus alike."""
    if not isinstance(channel, str) or "\x00" in channel:
        raise ValueError(f"a bus channel is text without NUL characters, not {channel!r}")


class Bus(ABC):
    """What the referee uses; see the module's docstring for the guarantees."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = {}
        #: Times the bus lost its listening connection (each a gap in which messages were lost).
        self.losses = 0

    @abstractmethod
    async def start(self) -> None:
        """Connect (raises when the database cannot be reached) and listen to the channels
        subscribed so far."""

    @abstractmethod
    async def close(self) -> None:
        """Send what was published so far (briefly), then stop: no handler is called after."""

    @abstractmethod
    def publish(self, channel: str, message: Message) -> None:
        """Send ``message`` to every subscriber of ``channel``; returns at once (the message is
        encoded now, so an unencodable one raises here, and sent from the event loop)."""

    @abstractmethod
    async def listening(self) -> None:
        """Return once every subscription made so far is in effect: a message published
        anywhere after this returns reaches them."""

    def subscribe(self, channel: str, handler: Handler) -> Unsubscribe:
        """Call ``handler(message)`` on the event loop for each message on ``channel``, from now
        on (after :meth:`listening` for certain); returns the call that ends it."""
        check_channel(channel)
        handlers = self._handlers.get(channel)
        if handlers is None:
            handlers = self._handlers[channel] = []
            self._channel_added(channel)
        handlers.append(handler)
        done = False

        def unsubscribe() -> None:
            nonlocal done
            if done:
                return
            done = True
            handlers.remove(handler)
            if not handlers and self._handlers.get(channel) is handlers:
                del self._handlers[channel]
                self._channel_removed(channel)

        return unsubscribe

    @abstractmethod
    def _channel_added(self, channel: str) -> None:
        """A first handler for ``channel``: the shared bus starts listening to it."""

    @abstractmethod
    def _channel_removed(self, channel: str) -> None:
        """The last handler of ``channel`` went: the shared bus stops listening to it."""

    def _deliver(self, channel: str, message: Message) -> None:
        # A copy of the list: a handler may unsubscribe (itself or another) while it runs.
        for handler in list(self._handlers.get(channel, ())):
            try:
                handler(message)
            except Exception:
                # One faulty handler must not starve the others, nor stop the bus's reader.
                log.exception("bus handler %r failed on channel %r", handler, channel)


class LocalBus(Bus):
    """The bus of one process (SQLite): the same guarantees, without a database. A message is
    handed to the event loop with ``call_soon`` (so never inside ``publish``, as a shared bus
    never does either), in publication order; it is never lost."""

    def __init__(self) -> None:
        super().__init__()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()

    async def close(self) -> None:
        self._loop = None
        self._handlers.clear()

    def publish(self, channel: str, message: Message) -> None:
        check_channel(channel)
        text = encode(message)
        if self._loop is None:
            raise BusClosedError("publish on a bus that is not started (or closed)")
        # Decoded once per message, as a shared bus decodes once per process.
        self._loop.call_soon(self._deliver_text, channel, text)

    def _deliver_text(self, channel: str, text: str) -> None:
        if self._loop is not None and channel in self._handlers:
            self._deliver(channel, json.loads(text))

    async def listening(self) -> None:
        return

    # Nothing to listen to: the handlers are all there is.
    def _channel_added(self, channel: str) -> None:
        pass

    def _channel_removed(self, channel: str) -> None:
        pass


def asyncpg_dsn(db_url: str) -> str:
    """The DSN asyncpg's ``connect`` takes for the arena's SQLAlchemy URL:
    ``postgresql+asyncpg://user:pw@host:5432/db`` gives ``postgresql://user:pw@host:5432/db``
    (the password kept, percent-encoded as in the URL)."""
    parsed = make_url(db_url)
    if parsed.get_backend_name() not in ("postgresql", "postgres"):
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string()}")
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def open_bus(db_url: str, *, on_gap: Callable[[], None] | None = None) -> Bus:
    """The bus for the arena's database: a :class:`LocalBus` for SQLite (one process), a
    PostgreSQL bus on the same database otherwise; ``on_gap`` is called each time the shared
    bus listens again after losing its connection (re-read the database then)."""
    if make_url(db_url).get_backend_name() == "sqlite":
        return LocalBus()
    # Imported here: asyncpg is the postgres extra's, absent from an SQLite install.
    from ply_arena.server.cluster.bus_postgres import PostgresBus

    return PostgresBus(asyncpg_dsn(db_url), on_gap=on_gap)
