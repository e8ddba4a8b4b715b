"""The bus on PostgreSQL's LISTEN/NOTIFY, on the arena's own database: no other service to run.

Two connections of its own (asyncpg, outside SQLAlchemy's pool, which would hand a LISTENing
connection to another task): one LISTENs to every subscribed channel and hands each
notification to the handlers on the event loop; the other sends what ``publish`` queued, in
order, many messages per transaction (one ``pg_notify`` per part through ``unnest``: one round
trip and one commit for a whole batch, since PostgreSQL serialises the commits of notifying
transactions across the database server). That connection runs with ``synchronous_commit = off``:
a notification is never durable anyway (the queue is emptied by a restart), so waiting for the
commit's WAL flush would add a disk write to every hop and buy nothing.

What PostgreSQL imposes, and what this does about it:

- A payload is shorter than 8000 bytes: a message whose JSON is longer goes as several parts,
  sent in order in one batch, and is put together again by each receiver (a frame of a match's
  history can be tens of KB). Each payload is ``SENDER:SEQ:PART:PARTS:TEXT``; the sequence
  number also keeps two equal messages apart (PostgreSQL delivers one of two identical
  notifications of a transaction).
- A channel is an identifier of at most 63 bytes: the bus's channel ``NAME`` is PostgreSQL's
  ``a.NAME`` when that fits, else ``h.`` and the name's SHA-256 (quoted by asyncpg's LISTEN, so
  any text goes, case kept).
- Notifications go to the connections listening at commit time: what is published while the
  listening connection is down is lost. It is watched (asyncpg's termination callback, and a
  ``SELECT 1`` every ``PROBE_S`` for a connection that died silently); on a loss the bus counts
  it (``losses``), reconnects with backoff, LISTENs again, then calls ``on_gap``. A message
  received in part before a loss is dropped (``broken``); a batch whose sending failed, and a
  message published while the queue is full (``QUEUE_MAX_BYTES``, the database unreachable),
  are dropped (``dropped``). At most once, as the module bus.py says.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any

import asyncpg

from ply_arena.server.cluster.bus import Bus, BusClosedError, Message, check_channel, encode

log = logging.getLogger(__name__)

#: NOTIFY refuses a payload of 8000 bytes or more (BLCKSZ - NAMEDATALEN - 128 - 1).
PAYLOAD_MAX_BYTES = 7999
#: Room kept in each part for its header's two numbers (up to 10 digits each) and colons.
_PART_NUMBERS = 22
#: A channel name is an identifier: NAMEDATALEN - 1 bytes.
CHANNEL_MAX_BYTES = 63
#: One transaction of the sender carries at most this many parts, or this many bytes: enough to
#: spread the commit's cost, short enough not to hold the database's notify lock for long.
BATCH_MAX_PARTS = 500
BATCH_MAX_BYTES = 1_000_000
#: What may wait to be sent while the database is unreachable; past it, new messages are dropped.
QUEUE_MAX_BYTES = 32_000_000
#: Reconnection backoff (doubling, with jitter), and the liveness probe of the listening connection.
RECONNECT_MIN_S = 0.05
RECONNECT_MAX_S = 5.0
PROBE_S = 10.0
PROBE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 10.0
#: How long ``close`` waits for the queue to be sent.
FLUSH_TIMEOUT_S = 5.0

_NOTIFY = "SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS m(c, p)"


def pg_channel(channel: str) -> str:
    """PostgreSQL's channel for the bus's ``channel``: distinct names stay distinct."""
    name = "a." + channel
    if len(name.encode()) <= CHANNEL_MAX_BYTES:
        return name
    return "h." + hashlib.sha256(channel.encode()).hexdigest()[:56]


def split(sender: str, seq: int, text: str) -> list[str]:
    """The payloads that carry ``text``, each under PostgreSQL's limit, cut between characters
    (a payload is text: half a UTF-8 character is not)."""
    prefix = f"{sender}:{seq}:"
    if len(prefix) + 4 + len(text.encode()) <= PAYLOAD_MAX_BYTES:
        return [f"{prefix}0:1:{text}"]
    data = text.encode()
    room = PAYLOAD_MAX_BYTES - len(prefix) - _PART_NUMBERS
    chunks: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + room, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # a continuation byte
            end -= 1
        chunks.append(data[start:end].decode())
        start = end
    return [f"{prefix}{i}:{len(chunks)}:{chunk}" for i, chunk in enumerate(chunks)]


class PostgresBus(Bus):
    """The shared bus; ``dsn`` is asyncpg's (``bus.asyncpg_dsn(db_url)``). See the module."""

    def __init__(self, dsn: str, *, on_gap: Callable[[], None] | None = None) -> None:
        super().__init__()
        self._dsn = dsn
        self._on_gap = on_gap
        #: This bus's name on the wire and in pg_stat_activity's application_name.
        self.tag = secrets.token_hex(4)
        #: Messages not sent (queue full, or their batch failed).
        self.dropped = 0
        #: Messages received in part only (their other parts were lost in a gap).
        self.broken = 0
        self._seq = 0
        self._started = False
        self._closing = False
        self._names: dict[str, str] = {}  # PostgreSQL's channel -> the bus's
        self._partial: dict[tuple[str, str], tuple[str, list[str]]] = {}
        self._outbox: deque[tuple[str, str]] = deque()
        self._outbox_bytes = 0
        self._mail = asyncio.Event()
        self._wake = asyncio.Event()
        self._wanted = 0  # bumped by each change of the channels listened to
        self._done = 0  # the last change in effect
        self._synced = asyncio.Condition()
        self._tasks: list[asyncio.Task[None]] = []

    # --- life ------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        sender = await self._connect("send")
        try:
            listener = await self._connect("listen")
        except BaseException:
            sender.terminate()
            raise
        self._started = True
        self._tasks = [
            asyncio.create_task(self._send_loop(sender), name=f"bus-send-{self.tag}"),
            asyncio.create_task(self._listen_loop(listener), name=f"bus-listen-{self.tag}"),
        ]
        await self.listening()

    async def close(self) -> None:
        if not self._started or self._closing:
            return
        self._closing = True
        self._handlers.clear()
        self._mail.set()
        self._wake.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._tasks[0]), FLUSH_TIMEOUT_S)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        async with self._synced:
            self._synced.notify_all()

    async def _connect(self, role: str) -> Any:
        return await asyncpg.connect(
            self._dsn,
            timeout=CONNECT_TIMEOUT_S,
            server_settings={
                "application_name": f"ply-arena bus {role} {self.tag}",
                # Notifications are not durable: no commit of the bus waits for the disk.
                "synchronous_commit": "off",
            },
        )

    # --- publishing ------------------------------------------------------------------------

    def publish(self, channel: str, message: Message) -> None:
        check_channel(channel)
        text = encode(message)
        if not self._started or self._closing:
            raise BusClosedError("publish on a bus that is not started (or closed)")
        self._seq += 1
        parts = split(self.tag, self._seq, text)
        size = sum(len(part) for part in parts)
        if self._outbox_bytes + size > QUEUE_MAX_BYTES:
            self.dropped += 1
            if self.dropped & (self.dropped - 1) == 0:  # 1, 2, 4, 8, ...: said, not flooded
                log.warning("bus: %d messages dropped (the database does not answer)", self.dropped)
            return
        name = pg_channel(channel)
        self._outbox.extend((name, part) for part in parts)
        self._outbox_bytes += size
        self._mail.set()

    def _take_batch(self) -> tuple[list[str], list[str]]:
        channels: list[str] = []
        payloads: list[str] = []
        size = 0
        while self._outbox and len(payloads) < BATCH_MAX_PARTS and size < BATCH_MAX_BYTES:
            channel, payload = self._outbox.popleft()
            channels.append(channel)
            payloads.append(payload)
            size += len(payload)
        self._outbox_bytes -= size
        return channels, payloads

    async def _reconnect(self, role: str, doing: str) -> Any:
        """A new connection for ``role`` (``send``, ``listen``), tried again with a growing,
        jittered wait until one is made (the task is cancelled when the bus closes)."""
        delay = RECONNECT_MIN_S
        while True:
            try:
                return await self._connect(role)
            except (OSError, asyncpg.PostgresError, TimeoutError) as error:
                log.warning("bus: cannot reconnect to %s (%s); again soon", doing, error)
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(2 * delay, RECONNECT_MAX_S)

    async def _send_loop(self, connection: Any) -> None:
        try:
            while True:
                if not self._outbox:
                    if self._closing:
                        return
                    self._mail.clear()
                    await self._mail.wait()
                    continue
                if connection is None or connection.is_closed():
                    connection = await self._reconnect("send", "publish")
                channels, payloads = self._take_batch()
                try:
                    await connection.execute(_NOTIFY, channels, payloads)
                except Exception as error:
                    # Whether it committed is unknown: not sent again (at most once).
                    self.dropped += len({p.split(":", 2)[1] for p in payloads})
                    log.warning("bus: %d notifications lost in sending: %s", len(payloads), error)
                    if not connection.is_closed():
                        connection.terminate()
                    connection = None
        finally:
            if connection is not None and not connection.is_closed():
                connection.terminate()

    # --- listening -------------------------------------------------------------------------

    def _channel_added(self, channel: str) -> None:
        self._names[pg_channel(channel)] = channel
        self._changed()

    def _channel_removed(self, channel: str) -> None:
        self._names.pop(pg_channel(channel), None)
        self._changed()

    def _changed(self) -> None:
        self._wanted += 1
        self._wake.set()

    async def listening(self) -> None:
        if not self._started or self._closing:
            raise BusClosedError("listening() on a bus that is not started (or closed)")
        wanted = self._wanted
        async with self._synced:
            await self._synced.wait_for(lambda: self._done >= wanted or self._closing)

    async def _listen_loop(self, connection: Any) -> None:
        gap = False
        while True:
            if connection is None:
                connection = await self._reconnect("listen", "listen")
            try:
                await self._serve(connection, gap)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("bus: the listening connection failed: %s", error)
            finally:
                if not connection.is_closed():
                    connection.terminate()
            if self._closing:
                return
            connection = None
            gap = True
            self.losses += 1
            # The rest of a message cut by the gap will not come.
            self.broken += len(self._partial)
            self._partial.clear()
            log.warning("bus: lost the listening connection (loss %d); reconnecting", self.losses)

    async def _serve(self, connection: Any, gap: bool) -> None:
        """Keep ``connection`` LISTENing to the wanted channels until it is lost."""
        lost = False

        def on_lost(_connection: Any) -> None:
            nonlocal lost
            lost = True
            self._wake.set()

        connection.add_termination_listener(on_lost)
        listened: set[str] = set()
        while not self._closing:
            self._wake.clear()
            wanted, names = self._wanted, set(self._names)
            for name in names - listened:
                await connection.add_listener(name, self._on_notify)
                listened.add(name)
            for name in listened - names:
                await connection.remove_listener(name, self._on_notify)
                listened.discard(name)
            async with self._synced:
                self._done = wanted
                self._synced.notify_all()
            if gap:
                gap = False
                self._call_on_gap()
            if self._wanted != wanted:
                continue
            try:
                await asyncio.wait_for(self._wake.wait(), PROBE_S)
            except TimeoutError:
                await asyncio.wait_for(connection.fetchval("SELECT 1"), PROBE_TIMEOUT_S)
            if lost or connection.is_closed():
                return

    def _call_on_gap(self) -> None:
        if self._on_gap is None:
            return
        try:
            self._on_gap()
        except Exception:
            log.exception("bus: the on_gap callback failed")

    def _on_notify(self, _connection: Any, _pid: int, name: str, payload: str) -> None:
        channel = self._names.get(name)
        if channel is None:
            return
        try:
            sender, seq, index, count, body = payload.split(":", 4)
            if count != "1":
                text = self._assemble((name, sender), seq, int(index), int(count), body)
                if text is None:
                    return
            else:
                text = body
            message = json.loads(text)
        except ValueError:
            # Someone else's NOTIFY on our channel (psql, say), or a garbled one.
            log.warning("bus: not a bus message on channel %r: %.80r", channel, payload)
            return
        self._deliver(channel, message)

    def _assemble(
        self, key: tuple[str, str], seq: str, index: int, count: int, body: str
    ) -> str | None:
        """One part of a message; the whole text once its last part is here. A sender's parts
        arrive in order, one message after another, so one message in progress per sender and
        channel is enough."""
        held = self._partial.get(key)
        if index == 0:
            if held is not None:
                self.broken += 1
            held = self._partial[key] = (seq, [])
        elif held is None or held[0] != seq or len(held[1]) != index:
            # The rest of a message whose beginning was lost (counted once, when noticed).
            if held is not None:
                del self._partial[key]
                self.broken += 1
            return None
        held[1].append(body)
        if len(held[1]) < count:
            return None
        del self._partial[key]
        return "".join(held[1])
