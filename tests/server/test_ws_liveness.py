"""Liveness: a bot that goes silent or stops reading its socket is disconnected, with a coded
fatal error, while its matches go on under the disconnect rules and every other match carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import websockets
from _ws_client import WsBot, rederive, start_pair
from conftest import LiveServer
from websockets.asyncio.client import ClientConnection

from ply_arena.server.transport import CountingTransport, TransportHandle
from ply_arena.server.ws.session import CLOSE_GRACE_S, Session

Message = dict[str, Any]


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


def connected(srv: LiveServer, name: str) -> bool:
    return srv.app.state.referee.connections.by_name(name) is not None


async def wait_until(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll ``check`` (server state, read from the test's thread); seconds it took."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"timed out waiting until {what}"
        await asyncio.sleep(0.01)
    return time.monotonic() - start


def record(srv: LiveServer, match_id: str) -> Message:
    response = srv.api("GET", f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_a_silent_bot_is_closed_and_may_reconnect_to_finish(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(heartbeat_s=0.2, heartbeat_misses=3)
    name_a, token_a = srv.create_bot()
    _, token_b = srv.create_bot()
    name_c, token_c = srv.create_bot()
    # a never answers pings nor sends anything after joining: silent.
    a = await WsBot.connect(srv.ws_url, token_a, answer_pings=False)
    b = await WsBot.connect(srv.ws_url, token_b)
    # c does not answer pings either, but keeps sending its own: any frame is a sign of life.
    c = await WsBot.connect(srv.ws_url, token_c, answer_pings=False)
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 5000}}
    silent_since = time.monotonic()  # a's last frame (the join) reaches the server after this
    await a.send(join)
    await b.send(join)
    mid = (await a.expect("match_start"))["match_id"]
    b_plays = asyncio.create_task(b.play(mid, timeout=10))

    async def chatty() -> None:
        for i in range(30):
            await c.send({"type": "ping", "id": 1000 + i})
            await asyncio.sleep(0.05)

    chatting = asyncio.create_task(chatty())
    error = await a.expect_error("heartbeat_timeout", timeout=5)
    waited = time.monotonic() - silent_since
    assert error["fatal"] is True and "3 heartbeats" in error["message"]
    # 3 heartbeats of 0.2 s since the last frame (the join), with slack for a busy machine.
    assert 0.6 <= waited < 3.0, waited
    assert await a.expect_closed() == 1008
    assert not connected(srv, name_a)
    # The match goes on (a's clock runs) and a may come back for it.
    assert record(srv, mid)["status"] == "running"

    a2 = await WsBot.connect(srv.ws_url, token_a)
    assert a2.welcome is not None and a2.welcome["matches"] == [mid]
    end = await a2.play(mid, timeout=10)
    assert end["termination"] == "normal"
    assert (await b_plays) == end
    rederive(record(srv, mid))

    await chatting
    assert connected(srv, name_c)
    assert not any(m["type"] == "error" for m in c.log)
    assert sum(m["type"] == "pong" for m in c.log) == 30


class Stalling:
    """A raw client that can stop reading its socket (a small receive buffer, and the websockets
    library's own flow control at one frame), to make the server's writes block."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def connect(cls, srv: LiveServer, token: str) -> Stalling:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", srv.settings.port))
        ws = await websockets.connect(srv.ws_url, sock=sock, max_queue=1, max_size=None)
        self = cls(ws)
        await self.send({"type": "hello", "protocol": 1, "token": token, "client": "stalling"})
        assert (await self.expect("welcome"))["protocol"] == 1
        return self

    async def send(self, message: Message) -> None:
        await self.ws.send(json.dumps(message))

    def burst(self, messages: list[Message]) -> None:
        """Send ``messages`` in one write (one TCP segment on the loopback): all of them reach
        the server before any answer can fill this client's receive buffer. (Sent one by one
        while that buffer is full, frames can stall in TCP retransmission backoff on the
        loopback, the kernel dropping the server's segments that carry their acknowledgements.)
        """
        for message in messages:
            self.ws.protocol.send_text(json.dumps(message).encode())
        self.ws.transport.write(b"".join(self.ws.protocol.data_to_send()))

    async def expect(self, kind: str) -> Message:
        while True:
            message: Message = json.loads(await asyncio.wait_for(self.ws.recv(), 5))
            if message["type"] == kind:
                return message

    async def drain(self, timeout: float) -> list[Message]:
        """Read everything until the server closes the connection."""
        got: list[Message] = []
        async with asyncio.timeout(timeout):
            try:
                while True:
                    got.append(json.loads(await self.ws.recv()))
            except websockets.ConnectionClosed:
                return got


@pytest.mark.parametrize("trigger", ["queue_bound", "send_timeout"])
async def test_a_bot_that_stops_reading_is_closed_as_a_slow_consumer(
    start_server: Callable[..., LiveServer], trigger: str
) -> None:
    limits = (
        {"max_outbound_frames": 50, "send_timeout_s": 60.0}
        if trigger == "queue_bound"
        else {
            "max_outbound_frames": 1_000_000,
            "max_outbound_bytes": 1 << 30,
            "send_timeout_s": 0.3,
        }
    )
    srv = start_server(send_buffer=4096, rate_limit_per_s=1e6, rate_limit_burst=1_000_000, **limits)
    name_a, token_a = srv.create_bot()
    _, token_b = srv.create_bot()
    _, token_c = srv.create_bot()
    _, token_d = srv.create_bot()

    a = await Stalling.connect(srv, token_a)
    b = await WsBot.connect(srv.ws_url, token_b)
    # a's first move may take 3 s: time enough, even on a busy machine, to set up the other match
    # and for the server to give up on a before a's clock runs out with a still connected.
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 3000}}
    await a.send(join)
    await b.send(join)
    start = await a.expect("match_start")
    mid, seat_a = start["match_id"], start["your_seat"]
    b_plays = asyncio.create_task(b.play(mid, timeout=10))

    # Another match runs meanwhile and must not notice anything.
    c, d, start_c, _ = await start_pair(srv.ws_url, token_c, token_d, move_ms=2000)
    other = asyncio.gather(c.play(start_c["match_id"]), d.play(start_c["match_id"], delay=0.02))

    # a stops reading and floods pings; every pong the server owes it piles up. The flood runs
    # in a task: once the server gives up on a it stops reading a's socket too, and a send may
    # then block until the connection goes away.
    sent = 0

    async def flood() -> None:
        nonlocal sent
        while True:
            for _ in range(200):
                await a.send({"type": "ping", "id": sent})
                sent += 1
            await asyncio.sleep(0)

    flooding = asyncio.create_task(flood())
    await wait_until(lambda: not connected(srv, name_a), 30, "the server gives up on a")
    flooding.cancel()
    with contextlib.suppress(asyncio.CancelledError, websockets.ConnectionClosed):
        await flooding
    # Once a reads again, it gets what was in flight, then the coded error and the close.
    received = await a.drain(timeout=CLOSE_GRACE_S + 3)
    assert len(received) < sent
    error = received[-1]
    assert (error["type"], error["code"], error["fatal"]) == ("error", "slow_consumer", True)
    why = "messages are waiting" if trigger == "queue_bound" else "could not be written for 0.3 s"
    assert why in error["message"], error["message"]
    assert a.ws.close_code == 1008

    # a counts as disconnected: its clock runs out and it loses the match on `disconnect`.
    end = await b_plays
    assert (end["termination"], end["at_fault"]) == ("disconnect", seat_a)
    rederive(record(srv, mid))
    end_c, end_d = await asyncio.wait_for(other, 20)
    assert end_c == end_d and end_c["termination"] == "normal"
    # The server still serves everyone, a included once it reads again.
    a2 = await WsBot.connect(srv.ws_url, token_a)
    assert a2.welcome is not None and a2.welcome["matches"] == []


#: A server where only the send timeout can give up on a bot that stopped reading: a small send
#: buffer (the kernel holds little), no heartbeat (no heartbeat_timeout, and no server pings, to
#: step in meanwhile), no rate limit and no queue bound (a burst is answered at once).
_ONLY_THE_SEND_TIMEOUT: dict[str, Any] = {
    "send_buffer": 4096,
    "heartbeat_s": 60,
    "rate_limit_per_s": 1e6,
    "rate_limit_burst": 1_000_000,
    "max_outbound_frames": 1_000_000,
}


def session_of(srv: LiveServer, name: str) -> Session:
    """The server's session of a connected bot (read from the test's thread)."""
    conn = srv.app.state.referee.connections.by_name(name)
    assert isinstance(conn, Session), f"{name} is not connected"
    return conn


#: Pings a stalling bot sends in one burst before going quiet: their pongs (about 40 KB) are more
#: than the kernel's buffers hold (the server's 4 KiB send buffer and the bot's 4 KiB receive
#: buffer, doubled by Linux), yet less than the transport's 64 KiB, beyond which a send waits.
BURST = 1500


def ping_burst(a: Stalling) -> None:
    pongs = sum(len(f'{{"type":"pong","id":{i}}}') + 2 for i in range(BURST))
    assert 24 * 1024 < pongs < 60 * 1024, pongs
    a.burst([{"type": "ping", "id": i} for i in range(BURST)])


async def test_a_bot_that_stops_reading_is_closed_even_when_no_send_ever_waits(
    start_server: Callable[..., LiveServer],
) -> None:
    """A bot that stops reading while the server has less than 64 KiB more to send it: the
    transport takes it all, so no send ever waits. The slow-consumer test met this on a busy
    machine (its flood of pings stalled in TCP backoff with ~30 KB of pongs in the transport), and
    the bot stayed connected, its own frames keeping its heartbeat fresh, until the test gave up.
    A message counts as written once it has left the server, not once the transport has it."""
    srv = start_server(send_timeout_s=0.3, **_ONLY_THE_SEND_TIMEOUT)
    name_a, token_a = srv.create_bot()
    a = await Stalling.connect(srv, token_a)
    ping_burst(a)
    await wait_until(lambda: not connected(srv, name_a), 10, "the server gives up on a")
    received = await a.drain(timeout=CLOSE_GRACE_S + 3)
    error = received[-1]
    assert (error["type"], error["code"], error["fatal"]) == ("error", "slow_consumer", True)
    assert "could not be written for 0.3 s" in error["message"], error["message"]
    assert a.ws.close_code == 1008
    # Every pong had been handed over before the server gave up: a reads them, then the error.
    assert [m["id"] for m in received if m["type"] == "pong"] == list(range(BURST))


async def test_the_server_stops_within_the_grace_beside_a_bot_that_stopped_reading(
    start_server: Callable[..., LiveServer],
) -> None:
    """Bytes the transport holds for a bot that does not read: the shutdown's closing error and
    close frame go in after them, and the transport would close only once they are out. The
    connection is aborted after the grace instead of holding up the server's stop."""
    srv = start_server(send_timeout_s=60, **_ONLY_THE_SEND_TIMEOUT)
    name_a, token_a = srv.create_bot()
    a = await Stalling.connect(srv, token_a)
    session = session_of(srv, name_a)
    ping_burst(a)

    def pongs_left_in_the_transport() -> bool:
        # Every ping answered, and the last pongs in the transport's buffer: no send waits.
        assert session._transport is not None
        buffered = session._transport.write_buffer_size()
        return not session._out and session._writing_since is None and buffered > 0

    await wait_until(pongs_left_in_the_transport, 10, "the server holds pongs for a")
    assert connected(srv, name_a)
    started = time.monotonic()
    srv.stop()  # blocks this loop: a does not read anyway
    assert time.monotonic() - started < CLOSE_GRACE_S + 3
    # The connection was dropped under a, with the closing error still behind the pongs.
    received = await a.drain(timeout=5)
    assert not any(m["type"] == "error" for m in received)


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's send queue is read on Linux")
async def test_bytes_waiting_in_the_kernel_have_not_left_the_server() -> None:
    """TransportHandle.sent: what a peer that does not read leaves in the kernel's send queue
    (and in the transport's buffer) has not been sent; once the peer reads, everything has."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, listener.getsockname())
    transport, _ = await loop.create_connection(asyncio.Protocol, sock=sock)
    peer, _ = listener.accept()
    listener.close()
    counting = CountingTransport(transport)
    handle = TransportHandle(counting)
    size = 1 << 20
    try:
        counting.write(b"x" * size)
        await asyncio.sleep(0.1)
        assert handle.written == size
        buffered = handle.write_buffer_size()
        assert 0 < buffered < size
        in_kernel = size - buffered - handle.sent()
        assert in_kernel > 0, "the kernel's unsent bytes count as not sent"

        peer.setblocking(False)
        got = 0
        async with asyncio.timeout(10):
            while got < size:
                got += len(await loop.sock_recv(peer, 1 << 16))
        await wait_until(lambda: handle.sent() == size, 5, "everything has left")
    finally:
        transport.close()
        peer.close()


async def test_a_bot_that_reads_late_gets_every_message_in_order(
    start_server: Callable[..., LiveServer],
) -> None:
    """A message goes straight to the connection while nothing waits before it and the
    transport's buffer is nearly empty, and through the session's queue otherwise: a bot that
    stops reading while the server answers 4,000 pings (about 100 KB) has its first pongs
    written at once and the rest queued, and once it reads again it gets all of them, in order."""
    srv = start_server(send_timeout_s=30.0, max_outbound_bytes=1 << 30, **_ONLY_THE_SEND_TIMEOUT)
    name, token = srv.create_bot()
    a = await Stalling.connect(srv, token)
    count = 4000
    a.burst([{"type": "ping", "id": i} for i in range(count)])
    # Both ways were taken: some pongs wait in the queue behind those the transport holds.
    await wait_until(lambda: len(session_of(srv, name)._out) > 0, 10, "pongs are queued")
    ids: list[int] = []
    while len(ids) < count:
        message = json.loads(await asyncio.wait_for(a.ws.recv(), 10))
        if message["type"] == "pong":
            ids.append(message["id"])
    assert ids == list(range(count))
    assert connected(srv, name)
