"""The session's own limits, pinned exactly: the token bucket's arithmetic, frames that are refused
anyway costing a strike only beyond the rate, and the 64 KiB frame limit checked by the session
itself (not only by the transport, server/transport.py, which refuses a larger frame from its
header under uvicorn: under another ASGI server, or Starlette's TestClient, the session is the
only check)."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import uvicorn
from _ws_client import WsBot
from conftest import LiveServer

from ply_arena.protocol.messages import MAX_FRAME_BYTES
from ply_arena.server.app import create_app
from ply_arena.server.settings import Settings
from ply_arena.server.ws.session import TokenBucket

# --- the token bucket --------------------------------------------------------------------------


def _bucket(rate: float, burst: int, tokens: float, at: float = 100.0) -> TokenBucket:
    bucket = TokenBucket(rate, burst)
    bucket.tokens = tokens
    bucket._at = at
    return bucket


def test_take_spends_a_token_when_there_is_one() -> None:
    bucket = _bucket(rate=1.0, burst=3, tokens=1.0)
    assert bucket.take(100.0) is True  # exactly one token is enough
    assert bucket.tokens == 0.0
    assert bucket.take(100.0) is False
    assert bucket.tokens == 0.0


def test_take_refills_by_the_time_passed_up_to_the_burst() -> None:
    bucket = _bucket(rate=2.0, burst=3, tokens=0.0)
    assert bucket.take(100.5) is True  # half a second at 2/s: one token, spent
    assert bucket.tokens == pytest.approx(0.0)
    assert bucket.take(100.75) is False  # a quarter second: half a token
    assert bucket.tokens == pytest.approx(0.5)
    bucket.refill(200.0)  # long quiet: full, never more
    assert bucket.tokens == 3.0 and bucket.full()


def test_refund_gives_one_token_back_up_to_the_burst() -> None:
    bucket = _bucket(rate=1.0, burst=2, tokens=0.5)
    bucket.refund()
    assert bucket.tokens == 1.5
    bucket.refund()
    assert bucket.tokens == 2.0


@pytest.mark.parametrize(
    ("rate", "tokens", "expected"),
    [
        (2.0, 0.5, 250),  # half a token missing at 2 a second
        (2.0, 0.0, 500),
        (3.0, 0.0, 334),  # 333.3 ms rounded up: a retry sooner would be dropped again
        (2.0, 1.0, 1),  # a token is there: at least 1 ms all the same
        (2.0, 5.0, 1),
        (0.5, 0.0, 2000),  # a slow rate below one a second
        (0.0, 0.0, 1000),  # no refill at all: a second, not a division by zero
    ],
)
def test_wait_ms_is_the_time_until_the_next_token(
    rate: float, tokens: float, expected: int
) -> None:
    assert _bucket(rate=rate, burst=5, tokens=tokens).wait_ms() == expected


# --- refused frames within the rate --------------------------------------------------------------


@pytest.fixture(autouse=True)
async def _close_bots() -> AsyncIterator[None]:
    yield
    await WsBot.close_all()


BURST = 5


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\x00\x01binary", "binary_frame"),
        ("{not json", "bad_json"),
        ({"type": "move", "match_id": "nosuchmatch", "ply": 0, "move": "a1"}, "unknown_match"),
    ],
    ids=["binary", "bad_json", "refused_move"],
)
async def test_frames_refused_within_the_rate_cost_no_strike(
    start_server: Callable[..., LiveServer], frame: Any, code: str
) -> None:
    """A burst of refused frames, all within the bucket, each gets its own error and the
    connection stays open; one more, beyond the rate, is the first strike (still answered with
    its own code: resending it would not help). Had the frames within the rate counted as
    strikes, the one beyond it would close the connection (more strikes than the burst)."""
    srv = start_server(rate_limit_per_s=0.5, rate_limit_burst=BURST)
    _, token = srv.create_bot()
    bot = await WsBot.connect(srv.ws_url, token)
    # The handshake spent a token (hello is not part of playing): refill it first.
    await bot.send({"type": "pong", "id": 999})  # an unasked-for pong costs nothing else
    for _ in range(BURST + 1):
        await bot.send(frame)
    for _ in range(BURST + 1):
        assert (await bot.expect("error", timeout=10))["code"] in (code, "rate_limited")
    errors = [m for m in bot.log if m["type"] == "error"]
    assert all(e["fatal"] is False for e in errors), errors
    # Still connected and served (the ping may be dropped as rate limited: either is an answer).
    await bot.send({"type": "ping", "id": 7})
    answer = await bot.recv(timeout=10)
    assert answer["type"] in ("pong", "error") and answer.get("fatal") is not True, answer


# --- the session's own frame limit ---------------------------------------------------------------


@pytest.fixture
def plain_server(db_url: str) -> Iterator[str]:
    """The app under plain uvicorn (``uvicorn ply_arena.server.app:create_app --factory``, as
    someone may deploy it): uvicorn's own WebSocket protocol, whose frame limit is 16 MiB, so
    nothing but the session stands between a large frame and the parser. The WebSocket URL."""
    settings = Settings(
        db_url=db_url,
        admin_token="admin-token-for-tests",
        print_admin_token=False,
        house_bots="",
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), ws="websockets-sansio", log_level="warning")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    started = threading.Event()
    while not server.started and thread.is_alive():
        started.wait(0.01)
    assert server.started, "uvicorn did not start"
    yield f"ws://127.0.0.1:{port}/ws"
    server.should_exit = True
    thread.join(timeout=30)
    sock.close()


def _pad_to(prefix: str, suffix: str, fill: str, size: int) -> str:
    """``prefix + fill * k + suffix`` of exactly ``size`` UTF-8 bytes (an ASCII ``x`` or three
    make up the rest)."""
    room = size - len((prefix + suffix).encode())
    per = len(fill.encode())
    return prefix + fill * (room // per) + "x" * (room % per) + suffix


async def test_a_binary_frame_over_the_limit_is_refused_from_its_size(plain_server: str) -> None:
    bot = await WsBot.connect(plain_server)
    await bot.send(b"\x00" * (MAX_FRAME_BYTES + 1))
    error = await bot.expect("error")
    assert (error["code"], error["fatal"]) == ("frame_too_large", True)
    assert await bot.expect_closed() == 1009


async def test_a_binary_frame_of_exactly_the_limit_is_refused_as_binary(plain_server: str) -> None:
    bot = await WsBot.connect(plain_server)
    await bot.send(b"\x00" * MAX_FRAME_BYTES)
    error = await bot.expect("error")
    assert (error["code"], error["fatal"]) == ("binary_frame", False)


@pytest.mark.parametrize("fill", ["x", "\u00e9", "\U0001f600"], ids=["ascii", "two", "four"])
async def test_a_text_frame_over_the_limit_in_bytes_is_refused(
    plain_server: str, fill: str
) -> None:
    """Counted in UTF-8 bytes, not characters: one byte over, in fewer characters than that."""
    text = _pad_to('{"type": "ping", "pad": "', '"}', fill, MAX_FRAME_BYTES + 1)
    assert len(text.encode()) == MAX_FRAME_BYTES + 1
    bot = await WsBot.connect(plain_server)
    await bot.send(text)
    error = await bot.expect("error")
    assert (error["code"], error["fatal"]) == ("frame_too_large", True)
    assert await bot.expect_closed() == 1009


@pytest.mark.parametrize("fill", ["x", "\u00e9", "\U0001f600"], ids=["ascii", "two", "four"])
async def test_a_text_frame_of_exactly_the_limit_is_read(plain_server: str, fill: str) -> None:
    """Exactly 64 KiB is allowed: the frame is parsed (and refused for what it says), not for
    its size."""
    text = _pad_to('{"type": "ping", "id": 1, "pad": "', '"}', fill, MAX_FRAME_BYTES)
    assert len(text.encode()) == MAX_FRAME_BYTES
    bot = await WsBot.connect(plain_server)
    await bot.send(text)
    error = await bot.expect("error")
    assert error["code"] != "frame_too_large" and error["fatal"] is False, error
