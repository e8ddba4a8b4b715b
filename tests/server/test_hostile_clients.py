"""Hostile clients against a real `arena serve` process while honest bots play.

Every class of bad input the protocol documents (docs/protocol.md, "Errors") and every one that
independent testing found getting through is sent, before and after login, over WebSocket and
HTTP. The test asserts, for each: a coded error or a documented close; and, for the whole run:
no traceback in the server's log, every honest match finished ``normal`` and stored intact, and
the server's resident memory bounded during the attack and back under a bound afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import websockets
from _server_process import ServerProcess, start_server_process
from _ws_client import Message, WsBot, rederive

from ply_arena.protocol.messages import MAX_FRAME_BYTES

#: Resident memory the server may grow by, over its size with honest bots playing: during the
#: attack, and once the attackers are gone. (Before the fixes, forty connections that never read
#: made it hold ~300 MB, and one logged-in bot that stopped reading ~50 MB in 30 s.)
PEAK_GROWTH_KIB = 64 * 1024
AFTER_GROWTH_KIB = 32 * 1024

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    srv = start_server_process(
        tmp_path / "arena.db",
        hello_timeout_s="3",
        http_request_timeout_s="1",
        send_timeout_s="2",
    )
    yield srv
    srv.stop()
    print(srv.log)  # shown by pytest when the test fails


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


@dataclass
class Honest:
    """Two well-behaved bots playing tic-tac-toe match after match in the background."""

    a: WsBot
    b: WsBot
    ends: list[Message] = field(default_factory=list)
    match_ids: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 2000}}
        while not self.stop.is_set():
            await self.a.send(join)
            await self.b.send(join)
            start = await self.a.expect("match_start", timeout=20)
            mid = start["match_id"]
            self.match_ids.append(mid)
            end, _ = await asyncio.gather(
                self.a.play(mid, timeout=20, delay=0.01), self.b.play(mid, timeout=20, delay=0.01)
            )
            self.ends.append(end)


async def login(srv: ServerProcess, name: str) -> WsBot:
    return await WsBot.connect(srv.ws_url, srv.create_bot(name))


async def refused(
    bot: WsBot, frame: str | bytes | Message, code: str, *, fatal: bool = False
) -> Message:
    """Send ``frame``; the answer is an error with ``code``, small, and as fatal as expected."""
    await bot.send(frame if isinstance(frame, str | bytes) else json.dumps(frame))
    error = await bot.expect("error", timeout=10)
    assert (error["code"], error["fatal"]) == (code, fatal), (str(frame)[:80], error)
    # Nothing a client sends is echoed back at length.
    assert len(json.dumps(error)) < 1024, error
    return error


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


class Stalled:
    """A raw client that never reads: a tiny receive buffer and one-frame flow control."""

    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def connect(cls, url: str, port: int) -> Stalled:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        ws = await websockets.connect(url, sock=sock, max_queue=1, max_size=None)
        return cls(ws)

    async def flood(self, frame: str, seconds: float) -> int:
        """Send ``frame`` over and over for ``seconds`` (or until the server drops us)."""
        sent = 0
        with contextlib.suppress(TimeoutError, websockets.ConnectionClosed, OSError):
            async with asyncio.timeout(seconds):
                while True:
                    await self.ws.send(frame)
                    sent += 1
                    # A send into a socket with room does not yield: let the other clients
                    # (the honest bots among them) have the event loop too.
                    await asyncio.sleep(0)
        return sent

    async def control_pings(self, seconds: float) -> None:
        """WebSocket ping frames as fast as they go, for ``seconds`` or until dropped."""
        with contextlib.suppress(TimeoutError, websockets.ConnectionClosed, OSError):
            async with asyncio.timeout(seconds):
                for i in range(10**9):
                    await self.ws.ping(i.to_bytes(8, "big") * 15)
                    await asyncio.sleep(0)

    def close(self) -> None:
        """Drop the connection (a client that never reads would never finish a close
        handshake)."""
        self.ws.transport.abort()


async def memory_attack(srv: ServerProcess, baseline: int) -> int:
    """Forty connections that never read, each sending 60 KB frames holding a 60 KB unknown
    key before hello (each error used to echo the key back in full), and five logged-in bots
    that stop reading and flood pings. Returns the peak RSS seen (KiB)."""
    key = "k" * 60_000
    big = json.dumps({"type": "hello", "protocol": 1, "token": "t", key: 1})
    assert len(big) < MAX_FRAME_BYTES
    stalled = [await Stalled.connect(srv.ws_url, srv.port) for _ in range(40)]
    readers = []
    for i in range(5):
        token = srv.create_bot(f"stall{i}")
        bot = await Stalled.connect(srv.ws_url, srv.port)
        await bot.ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token}))
        readers.append(bot)
    peak = baseline

    async def watch() -> None:
        nonlocal peak
        while True:
            peak = max(peak, srv.rss_kib())
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    ping = json.dumps({"type": "ping", "id": 1})
    # And WebSocket-level pings (opcode 9, below the JSON protocol) from clients that never
    # read: each used to queue a pong the server kept for ever.
    pingers = [await Stalled.connect(srv.ws_url, srv.port) for _ in range(3)]
    await asyncio.gather(
        *(s.flood(big, 4.0) for s in stalled),
        *(r.flood(ping, 4.0) for r in readers),
        *(p.control_pings(4.0) for p in pingers),
    )
    watcher.cancel()
    for client in (*stalled, *readers, *pingers):
        client.close()
    return peak


async def raw_http(port: int, data: bytes, wait: float) -> bytes:
    """Send ``data`` and read until the server closes (at most ``wait`` seconds)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    async with asyncio.timeout(wait):
        received = await reader.read()
    writer.close()
    return received


async def test_hostile_clients_get_coded_answers_while_honest_bots_play(
    server: ServerProcess,
) -> None:
    srv = server
    honest = Honest(await login(srv, "honest_a"), await login(srv, "honest_b"))
    playing = asyncio.create_task(honest.run())
    while len(honest.ends) < 3:  # warmed up: the baseline includes matches being played
        await asyncio.sleep(0.05)
    baseline = srv.rss_kib()

    # --- before hello ------------------------------------------------------------------
    anon = await WsBot.connect(srv.ws_url)
    await refused(anon, nested(1000), "bad_json")
    await refused(
        anon, '{"type": "hello", "protocol": 1, "token": ' + nested(1000) + "}", "bad_json"
    )
    await refused(anon, "{not json", "bad_json")
    await refused(anon, b"\x00\x01", "binary_frame")
    await refused(anon, {"type": "ping"}, "hello_required")
    await refused(anon, {"type": "teleport"}, "unknown_type")
    error = await refused(
        anon, {"type": "hello", "protocol": 1, "token": "t", "x" * 60_000: 1}, "invalid_message"
    )
    assert "..." in error["message"]  # the 60 KB key is quoted, cut short
    await refused(anon, {"type": "hello", "protocol": "1", "token": "t"}, "invalid_message")
    await refused(
        anon, {"type": "hello", "protocol": 1, "token": "not-a-token"}, "bad_token", fatal=True
    )
    assert await anon.expect_closed() == 1008
    for hello, code in [
        ({"type": "hello", "protocol": 2, "token": "t"}, "unsupported_version"),
        ({"type": "hello", "protocol": 1, "token": ""}, "bad_token"),
    ]:
        bot = await WsBot.connect(srv.ws_url)
        await refused(bot, hello, code, fatal=True)
        assert await bot.expect_closed() == 1008
    # A text frame that is not UTF-8: coded error, then close 1007 (RFC 6455).
    bot = await WsBot.connect(srv.ws_url)
    await bot.ws.send(b'{"type": "ping", "id": "\xff\xfe"}', text=True)
    error = await bot.expect_error("bad_json")
    assert error["fatal"] is True and "UTF-8" in error["message"]
    assert await bot.expect_closed() == 1007
    # Frames over the limit: just over, and far over what uvicorn would buffer.
    for size in (MAX_FRAME_BYTES + 1, 2 * 1024 * 1024):
        bot = await WsBot.connect(srv.ws_url)
        # The server refuses the frame from its header: it may close before the client has
        # finished sending it.
        with contextlib.suppress(websockets.ConnectionClosed):
            await bot.send(json.dumps({"type": "ping", "pad": "x" * size}))
        assert (await bot.expect_error("frame_too_large"))["fatal"] is True
        assert await bot.expect_closed() == 1009
    # No hello at all: hello_timeout (3 s here).
    bot = await WsBot.connect(srv.ws_url)
    assert (await bot.expect_error("hello_timeout", timeout=10))["fatal"] is True
    assert await bot.expect_closed() == 1008

    # --- after login ---------------------------------------------------------------------
    mallory = await login(srv, "mallory")
    # A match certain to be running while mallory moves in it (the honest pair's end quickly):
    # two bots in a queue of their own who never move, on a long clock.
    idle = [await login(srv, f"idle{i}") for i in range(2)]
    slow = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 30_000}}
    for bot in idle:
        await bot.send(slow)
    running_mid = (await idle[0].expect("match_start", timeout=20))["match_id"]
    for frame, code in [
        (nested(1000), "bad_json"),
        (
            '{"type": "move", "match_id": "m", "ply": 0, "move": "a1", "info": {"pv": '
            + nested(500)
            + "}}",
            "bad_json",
        ),
        ('{"type": "move", "match_id": "\\ud800", "ply": 0, "move": "a1"}', "bad_json"),
        ('{"type": "resign", "match_id": "\\ud800"}', "bad_json"),
        ({"type": "ping", "id": 2**70}, "invalid_message"),
        ({"type": "ping", "id": -1}, "invalid_message"),
        ({"type": "move", "match_id": "m", "ply": "0", "move": "a1"}, "invalid_message"),
        ({"type": "move", "match_id": "m", "ply": 0.5, "move": "a1"}, "invalid_message"),
        ({"type": "move", "match_id": "m", "ply": True, "move": "a1"}, "invalid_message"),
        ({"type": "hello", "protocol": 1, "token": "again"}, "invalid_message"),
        ({"type": "join", "game": "chess"}, "unknown_game"),
        (
            {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 10}},
            "bad_time_control",
        ),
        (
            {
                "type": "join",
                "game": "tic_tac_toe",
                "time_control": {"move_ms": 100, "bank_ms": 10**9},
            },
            "bad_time_control",
        ),
        ({"type": "challenge", "game": "tic_tac_toe", "opponents": ["nobody"]}, "unknown_bot"),
        ({"type": "accept", "challenge_id": "nope"}, "unknown_challenge"),
        ({"type": "move", "match_id": "nope", "ply": 0, "move": "a1"}, "unknown_match"),
        ({"type": "move", "match_id": running_mid, "ply": 0, "move": "a1"}, "not_in_match"),
        (b"\x00binary", "binary_frame"),
    ]:
        await refused(mallory, frame, code)
    # A move whose info cannot be stored (not JSON numbers, too long) is played without it:
    # the warning names the match, then the move itself is answered (here: no such match).
    for info in ('{"score": NaN}', '{"score": -Infinity}', '{"score": 1e999}', '{"depth": "3"}'):
        frame = '{"type": "move", "match_id": "m", "ply": 0, "move": "a1", "info": ' + info + "}"
        warning = await refused(
            mallory, frame, "bad_json" if "score" in info else "invalid_message"
        )
        assert warning["match_id"] == "m" and "the move itself was played" in warning["message"]
        assert (await mallory.expect("error"))["code"] == "unknown_match"
    # An id far over the limit is refused, quoted short (not echoed back in full).
    error = await refused(
        mallory,
        {"type": "move", "match_id": "m" * 60_000, "ply": 0, "move": "a1"},
        "invalid_message",
    )
    assert len(error["message"]) < 400 and error.get("match_id") is None
    await mallory.send({"type": "ping", "id": 77})
    await mallory.expect("pong", id=77)  # none of that was fatal

    # In a match of its own: out of turn, stale ply, unparseable, then illegal (forfeit).
    eve = await login(srv, "eve")
    join = {"type": "join", "game": "tic_tac_toe", "time_control": {"move_ms": 5000}}
    await mallory.send(join)
    await eve.send(join)
    start = await mallory.expect("match_start")
    mid = start["match_id"]
    mover, other = (mallory, eve) if start["your_seat"] == 0 else (eve, mallory)
    await mover.expect("turn", match_id=mid)
    await refused(other, {"type": "move", "match_id": mid, "ply": 0, "move": "b2"}, "not_your_turn")
    await refused(mover, {"type": "move", "match_id": mid, "ply": 3, "move": "b2"}, "stale_ply")
    await refused(mover, {"type": "move", "match_id": mid, "ply": 0, "move": "z9"}, "invalid_move")
    end = await mover.expect("match_end", match_id=mid)
    assert end["termination"] == "illegal_move"

    # A flood: dropped with rate_limited (naming the dropped message), then closed.
    await mallory.send({"type": "leave"})
    for i in range(400):
        await mallory.send({"type": "ping", "id": i})
    warning = await mallory.expect_error("rate_limited")
    assert (
        warning["fatal"] is False and warning["retry_after_ms"] > 0 and "ping" in warning["message"]
    )
    fatal = await mallory.expect_error("rate_limited")
    while not fatal["fatal"]:
        fatal = await mallory.expect_error("rate_limited")
    assert await mallory.expect_closed() == 1008

    # Free text a bot sends ends up in the log escaped: no forged lines, no terminal codes.
    forger = await WsBot.connect(srv.ws_url)
    await forger.send(
        {
            "type": "hello",
            "protocol": 1,
            "token": srv.create_bot("forger"),
            "client": "x\nINFO:     closing bot honest_a: forged\x1b[2J\x00",
        }
    )
    await forger.expect("welcome")

    # --- memory --------------------------------------------------------------------------
    peak = await memory_attack(srv, baseline)
    assert peak - baseline < PEAK_GROWTH_KIB, (baseline, peak)

    # --- HTTP ----------------------------------------------------------------------------
    async with httpx.AsyncClient(base_url=srv.url, timeout=10) as http:
        admin = {"Authorization": "Bearer hostile-test-admin-token"}
        for params in ({"offset": str(2**63)}, {"offset": "9" * 5000}, {"limit": "-1"}):
            r = await http.get("/api/matches", params=params)
            assert (r.status_code, r.json()["error"]["code"]) == (400, "bad_request"), r.text
        for body, code in [
            ({"name": "okname\n"}, "bad_request"),
            ({"name": "x" * 65}, "bad_request"),
        ]:
            r = await http.post("/api/bots", json=body, headers=admin)
            assert (r.status_code, r.json()["error"]["code"]) == (400, code), r.text
        for raw, code in [
            ('{"name": ' + nested(5000) + "}", "bad_json"),
            ('{"name": NaN}', "bad_json"),
            ("{", "bad_json"),
            ('{"name": "' + "y" * 100_000 + '"}', "bad_request"),
        ]:
            r = await http.post("/api/bots", content=raw, headers=admin)
            assert (r.status_code, r.json()["error"]["code"]) == (400, code), r.text
        assert (await http.post("/api/bots", json={"name": "x"})).status_code == 401
    # Half a request, or none: the connection is closed after the request deadline (1 s here).
    half = await raw_http(srv.port, b"GET /api/health HTTP/1.1\r\nHost: x\r\n", wait=5)
    assert half.startswith(b"HTTP/1.1 408"), half
    assert b'{"error":{"code":"bad_request"' in half  # JSON, as every REST error
    assert await raw_http(srv.port, b"", wait=5) == b""

    # --- the honest matches, the log, the memory afterwards --------------------------------
    honest.stop.set()
    await asyncio.wait_for(playing, 30)
    assert honest.ends and all(e["termination"] == "normal" for e in honest.ends)
    async with httpx.AsyncClient(base_url=srv.url, timeout=10) as http:
        for match_id in honest.match_ids:
            record = (await http.get(f"/api/matches/{match_id}")).json()
            rederive(record)
        # Every stored match is still servable (the bad frames stored nothing unreadable).
        listed = (await http.get("/api/matches", params={"limit": 200})).json()
        for item in listed["matches"]:
            assert (await http.get(f"/api/matches/{item['id']}")).status_code == 200
    after = srv.rss_kib()
    assert after - baseline < AFTER_GROWTH_KIB, (baseline, peak, after)
    assert srv.stop() in (0, -15)
    assert "Traceback" not in srv.log, srv.log
    assert "Exception in ASGI" not in srv.log, srv.log
    assert "forged" in srv.log and "\nINFO:     closing bot honest_a: forged" not in srv.log
    assert "\x1b" not in srv.log and "\x00" not in srv.log
    # Each WebSocket-level pinger was closed by the server (a client that never reads may not see
    # the close frame itself), and the log says why, once per connection.
    assert srv.log.count("WebSocket pings faster than") == 3, srv.log


@pytest.mark.parametrize("attack", ["half_headers", "half_body", "silent_connection"])
async def test_http_connections_cannot_be_held_open(server: ServerProcess, attack: str) -> None:
    """uvicorn has no header timeout: without one, a client sending half a request (or nothing)
    holds a connection for ever. Here the request deadline is 1 s."""
    data = {
        "half_headers": b"GET /api/health HTTP/1.1\r\nHost: x\r\n",
        "half_body": b"POST /api/bots HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
        b"Authorization: Bearer hostile-test-admin-token\r\n\r\n{",
        "silent_connection": b"",
    }[attack]
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    received = await raw_http(server.port, data, wait=10)
    assert loop.time() - t0 < 8
    assert received == (b"" if attack == "silent_connection" else received)
    if attack != "silent_connection":
        assert received.startswith(b"HTTP/1.1 408"), received
    # The server goes on serving, and logged no traceback for the dropped request.
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        assert (await http.get("/api/health")).status_code == 200
    server.stop()
    assert "Traceback" not in server.log, server.log
