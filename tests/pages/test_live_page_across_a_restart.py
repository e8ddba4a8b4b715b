"""A live match page open while the server restarts: the match is kept, the page says the server
is restarting, follows the resumed match once the server is back (its stream reconnects), and
at the end reloads into the replay, which notes the restart. It never lands on the browser's own
error page (which runs none of the site's script, so it would never come back)."""

from __future__ import annotations

import asyncio
import random
import signal
import threading
import time
from typing import Any

import pytest
from _browser import Browser
from _server_process import start_server_process

from ply_arena.protocol.client import BotClient
from ply_arena.protocol.messages import TimeControl

#: Set once the server is back: until then each bot plays its first move and then thinks, so
#: that the match is surely still running when the server stops, however slow the machine is.
RELEASE = threading.Event()
_moves: dict[int, int] = {}


def first_move_then_think(state: Any, legal_moves: list[str], clock: Any) -> str:
    seat = state.player
    _moves[seat] = _moves.get(seat, 0) + 1
    if _moves[seat] > 1:
        RELEASE.wait(60)
    return random.choice(legal_moves)


@pytest.mark.parametrize(
    ("how", "notice"),
    [
        (signal.SIGTERM, "The server is restarting"),
        (signal.SIGKILL, "Connection to the server lost"),
    ],
    ids=["sigterm", "sigkill"],
)
async def test_the_live_page_follows_the_match_across_a_restart_into_its_replay(
    db_url: str, browser: Browser, how: signal.Signals, notice: str
) -> None:
    RELEASE.clear()
    _moves.clear()
    db = db_url
    server = start_server_process(db, house_bots="none")
    port = server.port
    tokens = [server.create_bot(name) for name in ("ann", "bob")]
    # 30 s a move: the thinking bot never runs out of time during the test.
    long_moves = TimeControl(move_ms=30_000, bank_ms=0)
    clients = [
        BotClient(server.ws_url, t, first_move_then_think, game="connect_four", games=1,
                  max_backoff_s=0.5, max_retries=100, time_control=long_moves)
        for t in tokens
    ]  # fmt: skip
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        deadline = time.monotonic() + 30
        while not clients[0].matches:
            assert time.monotonic() < deadline, "no match started"
            await asyncio.sleep(0.05)
        match_id = next(iter(clients[0].matches))
        page = await browser.page()
        page_address = f"{server.url}/matches/{match_id}"
        await page.goto(page_address)
        await page.locator("#moves tr").first.wait_for()  # live: a move has arrived

        if how == signal.SIGKILL:  # a crash: no word to anyone, the connection just goes
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait(timeout=10)
        # SIGTERM (a clean stop) unless killed: the match stays, to be resumed.
        await asyncio.to_thread(server.stop)
        await page.locator("#result", has_text=notice).wait_for(timeout=20_000)
        assert page.url.startswith(page_address)
        # No clock runs while no server hosts the match (it is charged to nobody).
        await page.locator(".clock.running").first.wait_for(state="detached", timeout=5_000)

        server = start_server_process(db, port=port, house_bots="none")
        RELEASE.set()  # the bots play on once they are back
        # The page follows the resumed match to its end, then shows its replay.
        await page.locator("#slider").wait_for(timeout=60_000)
        assert page.url.startswith(page_address)
        await page.locator("#resumed", has_text="went on from ply").wait_for()
        assert "Aborted" not in await page.locator("#result").inner_text()
        await browser.shot(page, "live-page-after-restart")
        assert browser.dialogs == []
    finally:
        RELEASE.set()
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.stop()
