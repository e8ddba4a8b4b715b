"""Debian's nginx, configured as docs/server.md says, in front of two ``arena serve`` processes
on one PostgreSQL database: bots (the kit) register and connect through it and play the house
bots of whichever process nginx gave them; after kill -9 of one process, its bots reconnect
through nginx to the other one, which takes their matches over once the dead one's lease has run
out, and every match ends ``normal``, each stored once."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time
from pathlib import Path

import httpx
import pytest
import websockets
from _nginx import Nginx, require_nginx
from _rebuild import assert_ratings_equal_a_rebuild
from _server_process import ADMIN_TOKEN, start_server_process
from _sql import rows as stored_rows

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock
from ply_arena.protocol.verify import verify_record

pytestmark = pytest.mark.postgresql_only

SETTINGS = {
    "house_bots": "tic_tac_toe=random",
    "house_wait_s": "0.05",
    "lease_s": "1.5",  # a take-over within a few seconds
}
BOTS = 6
#: Matches each bot plays: play goes on for seconds, long enough to be cut.
GAMES = 8


def slow_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    # Shorter than the kit's first wait before reconnecting (0.2 s or more): a move thought
    # when the process died is dropped, not sent to the other process before it has taken the
    # match over (which would answer unknown_match; the kit would give the match up).
    time.sleep(0.03)
    return random.choice(legal_moves)


#: Each match, the pid of the process that plays (or played) it, its status and its moves.
MATCHES = (
    "SELECT m.id, i.pid, m.status, (SELECT count(*) FROM moves v WHERE v.match_id = m.id) "
    "FROM matches m LEFT JOIN instances i ON i.id = m.owner"
)


async def _both_playing(db_url: str, victim: int, other: int) -> set[str]:
    """Once process ``victim`` plays a match with two moves or more and ``other`` has played
    one too: the victim's running matches."""
    async with asyncio.timeout(60):
        while True:
            rows = await stored_rows(db_url, MATCHES)
            cut = {i for i, pid, status, plies in rows
                   if pid == victim and status == "running" and plies >= 2}  # fmt: skip
            if cut and any(pid == other for _, pid, _, _ in rows):
                return cut
            await asyncio.sleep(0.05)


def _register(url: str, name: str) -> str:
    answer = httpx.post(
        f"{url}/api/bots",
        json={"name": name},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        timeout=10,
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["token"])


@pytest.mark.timeout(180)
async def test_bots_through_nginx_go_on_on_the_other_process_after_a_kill(
    db_url: str, tmp_path: Path
) -> None:
    require_nginx()
    first = start_server_process(db_url, **SETTINGS)
    second = start_server_process(db_url, **SETTINGS)
    try:
        victim, survivor = first.proc.pid, second.proc.pid
        with Nginx(tmp_path / "nginx", [first.port, second.port]) as front:
            bots = [
                BotClient(front.ws_url, _register(front.url, f"proxied{i}"), slow_random,
                          game="tic_tac_toe", games=GAMES, max_retries=50)
                for i in range(BOTS)
            ]  # fmt: skip
            playing = [asyncio.create_task(bot.run()) for bot in bots]
            try:
                cut = await _both_playing(db_url, victim, survivor)
                first.proc.send_signal(signal.SIGKILL)
                await asyncio.to_thread(first.proc.wait, 10)
                async with asyncio.timeout(90):
                    ends = await asyncio.gather(*playing)
            finally:
                for task in playing:
                    task.cancel()
                await asyncio.gather(*playing, return_exceptions=True)
            # nginx found the dead process refusing connections and went to the other one.
            assert "connect() failed (111: Connection refused)" in front.error_log()
        for bot, bot_ends in zip(bots, ends, strict=True):
            assert bot.lost_track == [], bot.lost_track
            assert [e.termination.value for e in bot_ends] == ["normal"] * GAMES, bot_ends
        played = {e.match_id for bot_ends in ends for e in bot_ends}
        assert cut <= played
        stored = await stored_rows(db_url, MATCHES)
        assert len(stored) == len({i for i, _, _, _ in stored}) == len(played)  # once each
        assert all(status == "finished" for _, _, status, _ in stored), stored
        taken = {i: pid for i, pid, _, _ in stored if i in cut}
        assert taken == dict.fromkeys(cut, survivor)  # the cut matches went on there
        with httpx.Client(base_url=second.url, timeout=10) as http:
            for match_id in cut:
                record = http.get(f"/api/matches/{match_id}/record").json()
                assert len(record["resumed"]) == 1, record["resumed"]
                assert verify_record(record).ok
    finally:
        first.stop()
        second.stop()
    await assert_ratings_equal_a_rebuild(db_url)


async def _welcomed(url: str, token: str) -> None:
    """A bot's connection through nginx gets its welcome (a 502 raises)."""
    async with websockets.connect(url, open_timeout=5) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "welcome"


@pytest.mark.timeout(120)
async def test_a_process_restarted_after_a_kill_takes_connections_at_once(
    db_url: str, tmp_path: Path
) -> None:
    """With the documented configuration, nginx does not keep a process that once refused
    connections marked as failed: when the other one then stops, bots reconnect to the
    restarted one at once (with nginx's failure accounting on, they got 502 for up to its
    fail_timeout)."""
    require_nginx()
    first = start_server_process(db_url, **SETTINGS)
    second = start_server_process(db_url, **SETTINGS)
    try:
        with Nginx(tmp_path / "nginx", [first.port, second.port]) as front:
            token = _register(front.url, "restarted")
            first.proc.send_signal(signal.SIGKILL)
            await asyncio.to_thread(first.proc.wait, 10)
            for _ in range(4):  # nginx tries the dead one, is refused, goes to the other
                await _welcomed(front.ws_url, token)
            assert "connect() failed (111: Connection refused)" in front.error_log()
            first.stop()  # the dead one's pipe and log
            first = start_server_process(db_url, port=first.port, **SETTINGS)
            await asyncio.to_thread(second.stop)
            started = time.monotonic()
            await _welcomed(front.ws_url, token)  # only the restarted process is left
            assert time.monotonic() - started < 5
    finally:
        first.stop()
        second.stop()
