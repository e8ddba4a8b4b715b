"""A server crash in the middle of a match: the bot kit reconnects to the restarted server, learns
that the match it lost was aborted, and plays another in its place (games=1 means one real match).
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from typing import Any

import httpx
from _server_process import start_server_process

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock


def slow_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    time.sleep(0.05)  # a match lasts long enough to be cut
    return random.choice(legal_moves)


async def test_a_match_lost_to_a_crash_is_played_again(db_url: str) -> None:
    db = db_url
    srv = start_server_process(db, house_bots="none")
    tokens = [srv.create_bot(f"crash{i}") for i in range(2)]
    bots = [
        BotClient(srv.ws_url, token, slow_random, game="othello", games=1, max_retries=50)
        for token in tokens
    ]
    playing = [asyncio.create_task(bot.run()) for bot in bots]
    again: Any = None
    try:
        async with httpx.AsyncClient(base_url=srv.url, timeout=5) as http:
            async with asyncio.timeout(30):
                while True:
                    page = (await http.get("/api/matches?status=running")).json()
                    if page["total"] and page["matches"][0]["plies"] >= 4:
                        cut = page["matches"][0]["id"]
                        break
                    await asyncio.sleep(0.05)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(timeout=10)
        again = start_server_process(db, port=srv.port, house_bots="none")
        async with asyncio.timeout(90):
            results = await asyncio.gather(*playing)
    finally:
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        srv.stop()
        if again is not None:
            again.stop()
    for bot, ends in zip(bots, results, strict=True):
        assert bot.lost_track == [cut] and bot.lost_aborted == 1, (bot.lost_track, ends)
        # The match in its place was played to its end.
        assert [e.termination.value for e in ends] == ["normal"], ends
        assert ends[0].match_id != cut
