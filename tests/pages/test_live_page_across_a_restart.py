"""A live match page open while the server restarts: the match ends aborted, and the page waits
for the server to answer before it reloads into the replay, instead of landing on the browser's
own error page (which runs none of the site's script, so it would never come back)."""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _browser import Browser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from _server_process import start_server_process

from ply_arena.protocol.client import BotClient
from ply_arena.protocol.messages import TimeControl

#: Set when the test is over: until then each bot plays its first move and then thinks, so that
#: the match is surely still running when the server stops, however slow the machine is.
RELEASE = threading.Event()
_moves: dict[int, int] = {}


def first_move_then_think(state: Any, legal_moves: list[str], clock: Any) -> str:
    seat = state.player
    _moves[seat] = _moves.get(seat, 0) + 1
    if _moves[seat] > 1:
        RELEASE.wait(60)
    return random.choice(legal_moves)


async def test_the_live_page_reloads_into_the_replay_once_the_server_is_back(
    db_url: str, browser: Browser
) -> None:
    db = db_url
    server = start_server_process(db, house_bots="none")
    port = server.port
    tokens = [server.create_bot(name) for name in ("ann", "bob")]
    # 30 s a move: the thinking bot never runs out of time during the test.
    long_moves = TimeControl(move_ms=30_000, bank_ms=0)
    clients = [
        BotClient(server.ws_url, t, first_move_then_think, game="connect_four", games=1,
                  reconnect=False, time_control=long_moves)
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
        await page.goto(f"{server.url}/matches/{match_id}")
        await page.locator("#moves tr").first.wait_for()  # live: a move has arrived

        # From the stop until the new server is up, the page's requests for its own address are
        # refused, as by a server that is down: a graceful stop on a busy machine can outlast
        # the page's first try (1.5 s after match_end), and the stopping server would then
        # still serve the replay (the page would never have to wait).
        page_address = f"{server.url}/matches/{match_id}"

        async def refused(route: Any) -> None:
            await route.abort("connectionrefused")

        await page.route(page_address, refused)
        await asyncio.to_thread(server.stop)  # SIGTERM: the match ends aborted
        await page.locator("#result", has_text="not answering").wait_for(timeout=20_000)
        assert page.url.startswith(page_address)

        server = start_server_process(db, port=port, house_bots="none")
        await page.unroute(page_address, refused)
        await page.locator("#result", has_text="Aborted").wait_for(timeout=30_000)
        assert page.url.startswith(f"{server.url}/matches/{match_id}")
        assert await page.locator("#slider").count() == 1  # the replay, with its controls
        await browser.shot(page, "live-page-after-restart")
        assert browser.dialogs == []
    finally:
        RELEASE.set()
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.stop()
