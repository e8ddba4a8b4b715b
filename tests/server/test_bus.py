"""The bus between processes (server/cluster/bus.py): the same behaviours from the LocalBus of
one process (the SQLite pass) and from two PostgreSQL buses on two connections each, as two
processes would have them (``--store postgresql``); then what only PostgreSQL has: parts of big
messages, channel names mapped to identifiers, a listening connection killed and re-made.

Every wait is for an event (a handler called, the bus listening again), bounded by ``WAIT_S``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from _waiting import until

from ply_arena.server.cluster.bus import (
    Bus,
    BusClosedError,
    LocalBus,
    asyncpg_dsn,
    encode,
    open_bus,
)
from ply_arena.server.cluster.bus_postgres import (
    CHANNEL_MAX_BYTES,
    PAYLOAD_MAX_BYTES,
    PostgresBus,
    pg_channel,
    split,
)

pytestmark = pytest.mark.timeout(60)
#: Generous: a busy two-core machine may stall the loop for seconds; nothing waits this long
#: unless something is broken.
WAIT_S = 30.0


class Inbox:
    """A handler that keeps what it gets; ``await inbox.wait(n)`` until it has ``n``."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()

    def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self._arrived.set()

    async def wait(self, count: int) -> list[dict[str, Any]]:
        async with asyncio.timeout(WAIT_S):
            while len(self.messages) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.messages


@pytest.fixture
async def buses(db_url: str) -> AsyncIterator[tuple[Bus, Bus]]:
    """(publisher, subscriber): one LocalBus twice on SQLite, two PostgreSQL buses otherwise."""
    first = open_bus(db_url)
    second = first if isinstance(first, LocalBus) else open_bus(db_url)
    await first.start()
    await second.start()
    yield first, second
    await second.close()
    await first.close()


def frame(i: int, size: int = 300) -> dict[str, Any]:
    """A message about the size of a bot's frame."""
    return {"type": "turn", "i": i, "pad": "x" * max(0, size - 40)}


async def test_bus_delivers_between_two_buses(buses: tuple[Bus, Bus], db_store: str) -> None:
    publisher, subscriber = buses
    assert isinstance(subscriber, PostgresBus if db_store == "postgresql" else LocalBus)
    inbox = Inbox()
    subscriber.subscribe("match.M1", inbox)
    await subscriber.listening()
    sent = {"type": "move", "seat": 1, "ok": True, "think": 1.5, "none": None, "pair": (1, 2)}
    sent["text"] = 'é ü 🂡 "quoted" back\\slash'
    publisher.publish("match.M1", sent)
    # Never inside publish: the caller goes on first, on either bus.
    assert inbox.messages == []
    (got,) = await inbox.wait(1)
    # JSON on both buses: the tuple comes back a list, the rest as sent.
    assert got == {**sent, "pair": [1, 2]}


async def test_bus_delivers_own_messages(buses: tuple[Bus, Bus]) -> None:
    publisher, _ = buses
    inbox = Inbox()
    publisher.subscribe("lobby", inbox)
    await publisher.listening()
    publisher.publish("lobby", {"n": 1})
    assert await inbox.wait(1) == [{"n": 1}]


async def test_bus_listens_to_what_was_subscribed_before_it_started(
    buses: tuple[Bus, Bus], db_url: str
) -> None:
    publisher, _ = buses
    late = open_bus(db_url) if not isinstance(publisher, LocalBus) else publisher
    inbox = Inbox()
    late.subscribe("match.early", inbox)
    await late.start()  # listening once started
    try:
        publisher.publish("match.early", {"n": 1})
        assert await inbox.wait(1) == [{"n": 1}]
    finally:
        if late is not publisher:
            await late.close()


async def test_bus_keeps_each_channels_order(buses: tuple[Bus, Bus]) -> None:
    publisher, subscriber = buses
    a, b = Inbox(), Inbox()
    subscriber.subscribe("match.a", a)
    subscriber.subscribe("match.b", b)
    await subscriber.listening()
    count = 2000
    for i in range(count):
        publisher.publish("match.a" if i % 3 else "match.b", frame(i))
    await a.wait(count - len(range(0, count, 3)))
    await b.wait(len(range(0, count, 3)))
    assert [m["i"] for m in a.messages] == [i for i in range(count) if i % 3]
    assert [m["i"] for m in b.messages] == list(range(0, count, 3))


async def test_bus_carries_big_messages_whole_and_in_order(buses: tuple[Bus, Bus]) -> None:
    """100 KB (a match's history in a frame) in several parts on PostgreSQL, between small
    messages; sizes about the limit of one notification, with characters of 2 and 4 bytes
    that a cut must not split."""
    publisher, subscriber = buses
    inbox = Inbox()
    subscriber.subscribe("match.big", inbox)
    await subscriber.listening()
    sent: list[dict[str, Any]] = [
        {"i": 0, "history": "e2e4 " * 20_000},  # 100 KB of ASCII
        {"i": 1},
        {"i": 2, "history": "é🂡x" * 14_000},  # 98 KB of text, 100 KB+ in UTF-8
        {"i": 3},
    ]
    for size in range(PAYLOAD_MAX_BYTES - 40, PAYLOAD_MAX_BYTES + 40, 3):
        sent.append({"i": len(sent), "pad": "é" * (size // 4) + "a" * (size - 2 * (size // 4))})
    for message in sent:
        publisher.publish("match.big", message)
    assert await inbox.wait(len(sent)) == sent
    if isinstance(subscriber, PostgresBus):
        assert (subscriber.broken, publisher.dropped) == (0, 0)  # type: ignore[attr-defined]


ODD_NAMES = [
    "Match.X",
    "match.x",
    'a "quoted" name; DROP TABLE bots',
    "ünïcödé 🂡",
    "",
    "x" * 200,
    "x" * 199 + "y",  # differs from the one above after PostgreSQL's 63 bytes
]


async def test_bus_keeps_many_channels_apart(buses: tuple[Bus, Bus]) -> None:
    publisher, subscriber = buses
    channels = [f"bot.b{i}" for i in range(300)] + ODD_NAMES
    inboxes = {channel: Inbox() for channel in channels}
    for channel, inbox in inboxes.items():
        subscriber.subscribe(channel, inbox)
    await subscriber.listening()
    for round_ in range(3):
        for channel in channels:
            publisher.publish(channel, {"channel": channel, "round": round_})
    for channel, inbox in inboxes.items():
        got = await inbox.wait(3)
        assert got == [{"channel": channel, "round": r} for r in range(3)], channel


async def test_bus_unsubscribe(buses: tuple[Bus, Bus]) -> None:
    publisher, subscriber = buses
    first, second, marker = Inbox(), Inbox(), Inbox()
    stop_first = subscriber.subscribe("match.u", first)
    stop_second = subscriber.subscribe("match.u", second)
    await subscriber.listening()
    publisher.publish("match.u", {"n": 1})
    await first.wait(1)
    await second.wait(1)

    stop_first()
    stop_first()  # a second call changes nothing
    publisher.publish("match.u", {"n": 2})
    assert [m["n"] for m in await second.wait(2)] == [1, 2]
    assert first.messages == [{"n": 1}]

    # The last handler gone, the channel is dropped; a message on it, then one on another
    # channel: once the second is here, the first would have been too.
    stop_second()
    subscriber.subscribe("match.marker", marker)
    await subscriber.listening()
    publisher.publish("match.u", {"n": 3})
    publisher.publish("match.marker", {"n": 4})
    await marker.wait(1)
    assert (len(first.messages), len(second.messages)) == (1, 2)


async def test_bus_unsubscribe_inside_a_handler(buses: tuple[Bus, Bus]) -> None:
    """A handler that unsubscribes itself gets no later message, and the others still do."""
    publisher, subscriber = buses
    once: list[dict[str, Any]] = []
    everything = Inbox()

    def first_only(message: dict[str, Any]) -> None:
        once.append(message)
        stop()

    stop = subscriber.subscribe("match.once", first_only)
    subscriber.subscribe("match.once", everything)
    await subscriber.listening()
    for n in range(3):
        publisher.publish("match.once", {"n": n})
    await everything.wait(3)
    assert once == [{"n": 0}]


async def test_bus_handler_failure_spares_the_others(
    buses: tuple[Bus, Bus], caplog: pytest.LogCaptureFixture
) -> None:
    publisher, subscriber = buses
    inbox = Inbox()

    def failing(message: dict[str, Any]) -> None:
        raise RuntimeError("a handler's bug")

    subscriber.subscribe("match.f", failing)
    subscriber.subscribe("match.f", inbox)
    await subscriber.listening()
    with caplog.at_level(logging.ERROR, logger="ply_arena.server.cluster.bus"):
        publisher.publish("match.f", {"n": 1})
        publisher.publish("match.f", {"n": 2})
        assert await inbox.wait(2) == [{"n": 1}, {"n": 2}]
    assert sum("a handler's bug" in r.exc_text for r in caplog.records if r.exc_text) == 2


async def test_bus_refuses_what_it_cannot_carry(db_url: str) -> None:
    bus = open_bus(db_url)
    with pytest.raises(BusClosedError):
        bus.publish("c", {"n": 1})
    await bus.start()
    try:
        with pytest.raises(TypeError):
            bus.publish("c", {"when": object()})
        with pytest.raises(ValueError):
            bus.publish("c", {"x": float("nan")})
        with pytest.raises(TypeError):
            bus.publish("c", ["not", "a", "dict"])  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            bus.publish("nul\x00channel", {})
        with pytest.raises(ValueError):
            bus.subscribe("nul\x00channel", Inbox())
    finally:
        await bus.close()
    with pytest.raises(BusClosedError):
        bus.publish("c", {"n": 1})


# --- PostgreSQL only -----------------------------------------------------------------------


async def _terminate(db_url: str, application_name: str) -> None:
    """End the backend of the bus's connection, as a restart or a network cut would."""
    admin = await asyncpg.connect(asyncpg_dsn(db_url))
    try:
        # Not in the WHERE clause: PostgreSQL may call a condition's functions before the
        # others are checked, which would end every backend.
        ended = await admin.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            application_name,
        )
    finally:
        await admin.close()
    assert [row[0] for row in ended] == [True], f"no backend named {application_name!r}"


@pytest.mark.postgresql_only
async def test_bus_listens_again_after_its_connection_is_killed(db_url: str) -> None:
    gaps = asyncio.Event()
    publisher = PostgresBus(asyncpg_dsn(db_url))
    subscriber = PostgresBus(asyncpg_dsn(db_url), on_gap=gaps.set)
    await publisher.start()
    await subscriber.start()
    try:
        inbox, other = Inbox(), Inbox()
        subscriber.subscribe("match.r", inbox)
        await subscriber.listening()
        publisher.publish("match.r", {"n": 1})
        await inbox.wait(1)

        await _terminate(db_url, f"ply-arena bus listen {subscriber.tag}")
        # A channel subscribed during the gap is listened to on the new connection too.
        subscriber.subscribe("match.r2", other)
        async with asyncio.timeout(WAIT_S):
            await gaps.wait()
        assert subscriber.losses == 1
        await subscriber.listening()
        publisher.publish("match.r", {"n": 2, "big": "z" * 30_000})
        publisher.publish("match.r2", {"n": 3})
        assert [m["n"] for m in await inbox.wait(2)] == [1, 2]
        assert await other.wait(1) == [{"n": 3}]
    finally:
        await subscriber.close()
        await publisher.close()


@pytest.mark.postgresql_only
async def test_bus_publishes_again_after_its_connection_is_killed(db_url: str) -> None:
    """The batch in flight when the publishing connection dies may be lost (at most once);
    the messages after it go out on a new connection, in order."""
    publisher = PostgresBus(asyncpg_dsn(db_url))
    subscriber = PostgresBus(asyncpg_dsn(db_url))
    await publisher.start()
    await subscriber.start()
    try:
        inbox = Inbox()
        subscriber.subscribe("match.p", inbox)
        await subscriber.listening()
        publisher.publish("match.p", {"n": 0})
        await inbox.wait(1)
        await _terminate(db_url, f"ply-arena bus send {publisher.tag}")
        sent = 0

        def arrived_or_dropped() -> bool:
            return len(inbox.messages) > 1 or publisher.dropped == sent

        # Each message is either delivered or counted as dropped: send until one gets through.
        while len(inbox.messages) == 1:
            sent += 1
            publisher.publish("match.p", {"n": sent})
            await until(arrived_or_dropped, WAIT_S, "a message delivered or dropped")
        for n in range(sent + 1, sent + 50):
            publisher.publish("match.p", {"n": n})
        got = [m["n"] for m in await inbox.wait(1 + 49 + 1)]
        assert got == [0, *range(sent, sent + 50)]
        assert publisher.dropped == sent - 1
    finally:
        await subscriber.close()
        await publisher.close()


@pytest.mark.postgresql_only
async def test_bus_ignores_notifications_it_did_not_send(
    buses: tuple[Bus, Bus], db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, subscriber = buses
    inbox = Inbox()
    subscriber.subscribe("match.n", inbox)
    await subscriber.listening()
    stranger = await asyncpg.connect(asyncpg_dsn(db_url))
    try:
        with caplog.at_level(logging.WARNING, logger="ply_arena.server.cluster.bus_postgres"):
            await stranger.execute(f"NOTIFY \"{pg_channel('match.n')}\", 'hello'")
            sender, seq = "ffffffff", 1
            (payload,) = split(sender, seq, encode({"from": "psql"}))
            await stranger.execute("SELECT pg_notify($1, $2)", pg_channel("match.n"), payload)
            assert await inbox.wait(1) == [{"from": "psql"}]
    finally:
        await stranger.close()
    assert any("not a bus message" in r.getMessage() for r in caplog.records)


# --- pure parts (no database) ---------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 7_900, 7_990, 8_000, 16_000, 100_000])
@pytest.mark.parametrize("alphabet", ["a", "é", "🂡", "aé🂡"])
def test_split_parts_fit_a_notification(size: int, alphabet: str) -> None:
    text = (alphabet * (size // len(alphabet) + 1))[:size]
    parts = split("1a2b3c4d", 123_456, text)
    assert all(len(part.encode()) <= PAYLOAD_MAX_BYTES for part in parts)
    fields = [part.split(":", 4) for part in parts]
    assert [(f[0], f[1], f[2], f[3]) for f in fields] == [
        ("1a2b3c4d", "123456", str(i), str(len(parts))) for i in range(len(parts))
    ]
    assert "".join(f[4] for f in fields) == text


def test_channel_names_fit_and_stay_distinct() -> None:
    names = [pg_channel(name) for name in [*ODD_NAMES, "a" * 61, "a" * 62]]
    assert all(len(name.encode()) <= CHANNEL_MAX_BYTES for name in names)
    assert len(set(names)) == len(names)
    assert pg_channel("match.M1") == "a.match.M1"


def test_asyncpg_dsn_from_the_arenas_url() -> None:
    assert asyncpg_dsn("postgresql+asyncpg://arena:p%40ss@db.example:5433/arena") == (
        "postgresql://arena:p%40ss@db.example:5433/arena"
    )
    assert asyncpg_dsn("postgresql+asyncpg://arena@127.0.0.1/t1") == (
        "postgresql://arena@127.0.0.1/t1"
    )
    with pytest.raises(ValueError):
        asyncpg_dsn("sqlite+aiosqlite:///arena.db")
    assert isinstance(open_bus("sqlite+aiosqlite:///arena.db"), LocalBus)
