"""A bot stops when it should: a ``choose`` that never returns holds neither the process nor Ctrl+C.

Real subprocesses (a student's script, run as a student runs it) against a real server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from games import State
from protocol.client import CHOOSE_THREAD, BotClient, Clock
from protocol.messages import TimeControl

ROOT = Path(__file__).resolve().parents[2]
GAME = "tic_tac_toe"

#: A student's bot whose choose() sleeps far longer than any test: 40 s, as the tester's did.
SLEEPY_BOT = """
import logging, sys, time
from protocol.client import run_bot
from protocol.messages import TimeControl

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
    with caplog.at_level(logging.WARNING, logger="protocol.client"):
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
