"""A bot stops when it should: a ``choose`` that never returns holds neither the process nor Ctrl+C.

Real subprocesses (a student's script, run as a student runs it) against a real server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

import ply_arena.protocol.client as kit
from ply_arena.games import State
from ply_arena.protocol.client import CHOOSE_THREAD, BotClient, Clock
from ply_arena.protocol.messages import TimeControl, Welcome

ROOT = Path(__file__).resolve().parents[2]
GAME = "tic_tac_toe"

#: A student's bot whose choose() sleeps far longer than any test: 40 s, as the tester's did.
SLEEPY_BOT = """
import logging, sys, time
from ply_arena.protocol.client import run_bot
from ply_arena.protocol.messages import TimeControl

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")

def choose(state, legal_moves, clock):
    print("thinking", flush=True)
    time.sleep(40)
    return legal_moves[0]

url, token, move_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
ends = run_bot(url, token, choose, game="tic_tac_toe", games=1,
               time_control=TimeControl(move_ms=move_ms))
print("returned", ends[0].termination.value, flush=True)
"""


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def start_sleepy_bot(tmp_path: Path, url: str, token: str, move_ms: int) -> Any:
    (tmp_path / "bot.py").write_text(SLEEPY_BOT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "bot.py", url, token, str(move_ms),
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_sigint,  # Ctrl+C as a terminal sends it, however pytest was started
    )  # fmt: skip


def default_sigint() -> None:
    # A suite started in the background by a shell inherits SIGINT ignored; a user's bot does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def read_line(proc: Any, timeout: float = 20) -> str:
    line: bytes = await asyncio.wait_for(proc.stdout.readline(), timeout)
    return line.decode().strip()


async def test_one_ctrl_c_stops_a_bot_whose_choose_never_returns(
    live_server: Any, tmp_path: Path
) -> None:
    _, token = live_server.create_bot()
    _, opponent_token = live_server.create_bot()
    tc = TimeControl(move_ms=30_000)  # no timeout during the test: only Ctrl+C can end it
    opponent = BotClient(
        live_server.ws_url, opponent_token, random_choose, game=GAME, games=1, time_control=tc
    )
    opponent_task = asyncio.create_task(opponent.run())
    proc = await start_sleepy_bot(tmp_path, live_server.ws_url, token, tc.move_ms)
    try:
        assert await read_line(proc) == "thinking"
        proc.send_signal(signal.SIGINT)  # once
        pressed = time.monotonic()
        _, err = await asyncio.wait_for(proc.communicate(), 10)
        assert time.monotonic() - pressed < 5
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        opponent.stop()
        await asyncio.wait_for(opponent_task, 10)
    assert proc.returncode == 130
    assert err.decode().rstrip().endswith("stopped by Ctrl+C"), err.decode()
    assert "Traceback" not in err.decode()


async def test_the_process_ends_when_run_bot_returns_though_choose_still_sleeps(
    live_server: Any, tmp_path: Path
) -> None:
    # The server forfeits the sleeper on time and run_bot returns; the 40 s sleep must not keep
    # the process alive (a ThreadPoolExecutor worker would be joined at exit).
    _, token = live_server.create_bot()
    _, opponent_token = live_server.create_bot()
    tc = TimeControl(move_ms=200)
    opponent = BotClient(
        live_server.ws_url, opponent_token, random_choose, game=GAME, games=1, time_control=tc
    )
    opponent_task = asyncio.create_task(opponent.run())
    proc = await start_sleepy_bot(tmp_path, live_server.ws_url, token, tc.move_ms)
    try:
        assert await read_line(proc) == "thinking"
        assert await read_line(proc) == "returned timeout"
        returned = time.monotonic()
        _, err = await asyncio.wait_for(proc.communicate(), 10)
        assert time.monotonic() - returned < 3
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await asyncio.wait_for(opponent_task, 10)
    assert proc.returncode == 0, err.decode()
    assert "(timeout) while choose() was still thinking about ply" in err.decode()


async def test_a_late_answer_is_logged_as_discarded(
    live_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _, token = live_server.create_bot()
    _, opponent_token = live_server.create_bot()
    tc = TimeControl(move_ms=100)
    release = threading.Event()

    def slow(state: State, legal_moves: list[str], clock: Clock) -> str:
        release.wait(20)  # until the match is over
        return legal_moves[-1]

    bot = BotClient(live_server.ws_url, token, slow, game=GAME, games=1, time_control=tc)
    opponent = BotClient(
        live_server.ws_url, opponent_token, random_choose, game=GAME, games=1, time_control=tc
    )
    with caplog.at_level(logging.WARNING, logger="ply_arena.protocol.client"):
        (end,), _ = await asyncio.wait_for(asyncio.gather(bot.run(), opponent.run()), 30)
        assert end.termination.value == "timeout"
        release.set()
        for thread in threading.enumerate():
            if thread.name == CHOOSE_THREAD:
                thread.join(10)
    (late,) = [r for r in caplog.records if "the answer is discarded" in r.getMessage()]
    text = late.getMessage()
    assert text.startswith("choose() answered '") and f"of match {end.match_id} after" in text
    assert text.endswith("but the match ended meanwhile (timeout): the answer is discarded")


# --- stop() in every state: run() returns ------------------------------------------------------


class FakeConnection:
    """A connection that the test drops when it wants, to the loop turn: it answers the hello
    with a welcome, and its close() waits until the test drops it (the server's answer)."""

    def __init__(self) -> None:
        self.frames: asyncio.Queue[str | None] = asyncio.Queue()
        self.gone = asyncio.Event()

    async def send(self, frame: str) -> None:
        if json.loads(frame)["type"] == "hello":
            welcome = {
                "type": "welcome", "protocol": 1, "bot": "kit", "server": "fake/1",
                "heartbeat_ms": 15000, "matches": [],
            }  # fmt: skip
            self.frames.put_nowait(json.dumps(welcome))

    async def close(self) -> None:
        await self.gone.wait()

    def drop(self) -> None:
        if not self.gone.is_set():
            self.frames.put_nowait(None)
            self.gone.set()

    def __await__(self) -> Generator[Any, None, FakeConnection]:
        # ``await websockets.connect(...)`` as well as ``async with websockets.connect(...)``.
        return asyncio.sleep(0, self).__await__()

    def __aiter__(self) -> FakeConnection:
        return self

    async def __anext__(self) -> str:
        frame = await self.frames.get()
        if frame is None:
            raise StopAsyncIteration
        return frame

    async def __aenter__(self) -> FakeConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.drop()


class Counting(BotClient):
    """A bot that reports every welcome, in ``welcomes``."""

    def __init__(self) -> None:
        super().__init__("ws://127.0.0.1:9/ws", "token", random_choose, game=GAME, games=0)
        self.welcomes: asyncio.Queue[None] = asyncio.Queue()

    async def on_welcome(self, message: Welcome) -> None:
        await super().on_welcome(message)
        self.welcomes.put_nowait(None)


async def test_run_returns_after_stop_however_close_the_connection_went_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The ladder test hung once: a bot's connection went down (its own stop() after its last
    # match) and the harness called stop() again a loop turn later. stop() sets the keeper's
    # wake-up event; the session's end then cancelled the keeper, and asyncio.wait_for (Python
    # 3.11) swallowed that cancellation as the event was set: the keeper went on for ever and
    # run() never returned. Every order of the two within a few loop turns, both ways.
    for turns in range(-6, 7):
        conn = FakeConnection()
        monkeypatch.setattr(kit.websockets, "connect", lambda *a, conn=conn, **k: conn)
        bot = Counting()
        task = asyncio.create_task(bot.run())
        await asyncio.wait(
            [task, asyncio.ensure_future(bot.welcomes.get())], return_when=asyncio.FIRST_COMPLETED
        )
        assert not task.done(), task.result()  # else: why run() ended before the welcome
        first, then = (conn.drop, bot.stop) if turns < 0 else (bot.stop, conn.drop)
        first()
        for _ in range(abs(turns)):
            await asyncio.sleep(0)  # one loop turn
        then()
        done, _ = await asyncio.wait([task], timeout=5)
        if not done:
            task.cancel()
        how = f"stop() {abs(turns)} loop turn(s) {'after' if turns < 0 else 'before'} the drop"
        assert done, f"run() did not return: {how}"
        assert task.result() == [], how


async def test_stop_while_the_opening_handshake_hangs_returns_at_once() -> None:
    # A server that accepts the TCP connection and never answers the handshake: run() waited
    # for the whole open_timeout (10 s) after stop(), then raised ConnectionError.
    accepted = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        await reader.read()  # until the bot goes away
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        bot = BotClient(f"ws://127.0.0.1:{port}/ws", "token", random_choose, game=GAME)
        task = asyncio.create_task(bot.run())
        await accepted.wait()
        bot.stop()
        assert await asyncio.wait_for(task, 3) == []


async def test_a_bot_reconnects_however_close_a_wake_up_came_to_the_drop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same swallowed cancellation without stop(): any handler that wakes the keeper (here
    # on_error) just before the connection drops left the session waiting for the keeper for
    # ever, and the bot never reconnected.
    error = {"type": "error", "code": "unknown_challenge", "message": "late", "fatal": False}
    for turns in range(6):
        conns: list[FakeConnection] = []

        def connect(*args: Any, conns: list[FakeConnection] = conns, **kwargs: Any) -> Any:
            conns.append(FakeConnection())
            return conns[-1]

        monkeypatch.setattr(kit.websockets, "connect", connect)
        bot = Counting()
        task = asyncio.create_task(bot.run())
        await asyncio.wait_for(bot.welcomes.get(), 10)
        conns[0].frames.put_nowait(json.dumps(error))
        for _ in range(turns):
            await asyncio.sleep(0)
        conns[0].drop()
        try:
            await asyncio.wait_for(bot.welcomes.get(), 10)  # the backoff is 0.25 s
        except TimeoutError:
            raise AssertionError(f"no reconnection: the drop came {turns} turn(s) after") from None
        finally:
            bot.stop()
            for conn in conns:
                conn.drop()
            assert await asyncio.wait_for(task, 5) == []
