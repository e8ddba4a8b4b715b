"""A server stopped or killed in the middle of a match: the next server on the same database
resumes it, the bots (the kit) reconnect, and the same match ends ``normal``, stored once with
every move, and re-derives from its record (dice included).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from _rebuild import assert_ratings_equal_a_rebuild
from _server_process import ADMIN_TOKEN, ServerProcess, start_server_process

from ply_arena import games
from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock
from ply_arena.protocol.messages import TimeControl
from ply_arena.protocol.verify import verify_record
from ply_arena.reference_agents.registry import make


def slow_random(state: State, legal_moves: list[str], clock: Clock) -> str:
    time.sleep(0.03)  # a match lasts long enough to be cut
    return random.choice(legal_moves)


def slow_maxn(game: str) -> Callable[[State, list[str], Clock], str]:
    """max^n at depth 1: a three-player Chinese checkers match ends in a few hundred plies."""
    agent = make("maxn", games.get(game), depth=1)

    def choose(state: State, legal_moves: list[str], clock: Clock) -> str:
        time.sleep(0.01)
        move, _ = agent.choose(state)
        return games.get(game).format_move(state, move)

    return choose


async def _running_match(srv: ServerProcess, plies: int) -> tuple[str, int]:
    """The running match once it has at least ``plies`` stored: its id and its plies."""
    async with httpx.AsyncClient(base_url=srv.url, timeout=5) as http:
        async with asyncio.timeout(60):
            while True:
                page = (await http.get("/api/matches?status=running")).json()
                if page["total"] and page["matches"][0]["plies"] >= plies:
                    return page["matches"][0]["id"], page["matches"][0]["plies"]
                await asyncio.sleep(0.05)


async def _cut_and_resume(
    db_url: str, game: str, seats: int, choose: Any, how: signal.Signals
) -> tuple[ServerProcess, str, int, list[BotClient]]:
    srv = start_server_process(db_url, house_bots="none")
    again: ServerProcess | None = None
    tokens = [srv.create_bot(f"resume{i}") for i in range(seats)]
    bots = [
        BotClient(srv.ws_url, token, choose, game=game, games=1, max_retries=50) for token in tokens
    ]
    playing = [asyncio.create_task(bot.run()) for bot in bots]
    try:
        cut, plies = await _running_match(srv, 6)
        if how == signal.SIGKILL:
            srv.proc.send_signal(signal.SIGKILL)
            srv.proc.wait(timeout=10)
        else:
            assert await asyncio.to_thread(srv.stop) in (0, -15), srv.log
            assert "left to resume at the next start" in srv.log, srv.log
        srv.stop()
        again = start_server_process(db_url, port=srv.port, house_bots="none")
        async with asyncio.timeout(90):
            results = await asyncio.gather(*playing)
    finally:
        await _end(playing, srv, again if not results_ok(playing) else None)
    assert again is not None
    for bot, ends in zip(bots, results, strict=True):
        # The same match, played to its end: nothing lost, nothing aborted, nothing replayed.
        assert bot.lost_track == [], bot.lost_track
        assert [(e.match_id, e.termination.value) for e in ends] == [(cut, "normal")], ends
    return again, cut, plies, bots


async def _end(playing: list[asyncio.Task[Any]], *servers: ServerProcess | None) -> None:
    """Stop the bots' tasks, then the servers (those given)."""
    for task in playing:
        task.cancel()
    await asyncio.gather(*playing, return_exceptions=True)
    for server in servers:
        if server is not None:
            server.stop()


def results_ok(tasks: list[asyncio.Task[Any]]) -> bool:
    return all(t.done() and not t.cancelled() and t.exception() is None for t in tasks)


def _check_record(srv: ServerProcess, cut: int | str, plies_at_cut: int) -> dict[str, Any]:
    with httpx.Client(base_url=srv.url, timeout=10) as http:
        listed = http.get("/api/matches").json()
        assert listed["total"] == 1, listed  # stored once
        record = http.get(f"/api/matches/{cut}/record").json()
    assert record["status"] == "finished" and record["termination"] == "normal", record
    assert [e["ply"] for e in record["moves"]] == list(range(record["plies"]))
    # Resumed once, from what was stored (a kill -9 may lose the last few ms of moves).
    assert len(record["resumed"]) == 1, record["resumed"]
    assert plies_at_cut <= record["resumed"][0]["ply"] < record["plies"]
    found = verify_record(record)
    assert found.ok, found.problems
    return record


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
async def test_a_match_cut_by_a_stop_is_resumed_and_ends_normally(
    db_url: str, how: signal.Signals
) -> None:
    srv, cut, plies, _ = await _cut_and_resume(db_url, "othello", 2, slow_random, how)
    try:
        record = _check_record(srv, cut, plies)
        assert record["rated"] is True
        if how == signal.SIGKILL:
            assert "resuming 1 match(es)" in srv.log, srv.log
    finally:
        srv.stop()
    await assert_ratings_equal_a_rebuild(db_url)


@pytest.mark.parametrize(
    ("game", "seats"), [("chinese_checkers", 3), ("backgammon", 2)], ids=["chinese", "backgammon"]
)
async def test_three_players_and_dice_survive_a_kill_9(db_url: str, game: str, seats: int) -> None:
    choose = slow_maxn(game) if game == "chinese_checkers" else slow_random
    srv, cut, plies, _ = await _cut_and_resume(db_url, game, seats, choose, signal.SIGKILL)
    try:
        record = _check_record(srv, cut, plies)
        if game == "backgammon":
            # Every roll, before and after the restart, is the committed seed's (verify re-rolls
            # each one from the seed revealed at the end).
            after = [e for e in record["moves"] if e["seat"] is None and e["ply"] >= plies]
            assert after and record["dice"]["seed"] is not None
    finally:
        srv.stop()
    await assert_ratings_equal_a_rebuild(db_url)


def _arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.run(
        [sys.executable, "-m", "ply_arena", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **(env or {})},
        check=False,
    )


#: Held until the abort is done: the bots' first match must still run when the command comes.
HOLD = threading.Event()


_chosen: list[int] = []


def held_after_two_plies(state: State, legal_moves: list[str], clock: Clock) -> str:
    _chosen.append(1)
    if len(_chosen) > 2:  # both bots have moved once: the match is under way, and stays
        HOLD.wait(60)
    return random.choice(legal_moves)


async def test_an_instructor_aborts_matches_with_arena_matches_abort(db_url: str) -> None:
    srv = start_server_process(db_url, house_bots="none")
    tokens = [srv.create_bot(f"abort{i}") for i in range(2)]
    # 30 s a move: the held bot never runs out of time while the commands run.
    hold = TimeControl(move_ms=30_000, bank_ms=0)
    bots = [
        BotClient(srv.ws_url, token, held_after_two_plies, game="othello", games=1, max_retries=0,
                  time_control=hold)
        for token in tokens
    ]  # fmt: skip
    playing = [asyncio.create_task(bot.run()) for bot in bots]
    HOLD.clear()
    _chosen.clear()
    try:
        cut, _ = await _running_match(srv, 2)
        url = ("--url", srv.url)
        # An id the server refuses is said, and does not stop the others (exit status 1); the
        # admin token may come from the server's own variable.
        done = await asyncio.to_thread(
            _arena, "matches", "abort", "nope", cut, *url, env={"ARENA_ADMIN_TOKEN": ADMIN_TOKEN}
        )
        assert (done.returncode, done.stdout) == (1, f"aborted {cut}\n"), done
        assert done.stderr == "error (not_found): no match 'nope'\n"
        HOLD.set()  # the next match plays through
        # The bots were told, and the kit plays another match in its place.
        async with asyncio.timeout(60):
            results = await asyncio.gather(*playing)
        for ends in results:
            first, *_, last = ends
            assert (first.match_id, first.termination.value) == (cut, "aborted")
            assert last.termination.value == "normal" and len(ends) == 2
        record = httpx.get(f"{srv.url}/api/matches/{cut}", timeout=10).json()
        assert record["status"] == "aborted" and record["rated"] is False
        again = await asyncio.to_thread(
            _arena, "matches", "abort", "--all", *url, "--token", ADMIN_TOKEN
        )
        assert (again.returncode, again.stdout) == (0, "no match was running\n"), again.stderr
        over = await asyncio.to_thread(
            _arena, "matches", "abort", cut, *url, "--token", ADMIN_TOKEN
        )
        assert over.returncode == 1 and over.stderr.startswith("error (conflict): match"), over
        wrong = await asyncio.to_thread(_arena, "matches", "abort", cut, *url, "--token", "nope")
        assert wrong.returncode == 1 and "error (unauthorized)" in wrong.stderr, wrong.stderr
        neither = await asyncio.to_thread(_arena, "matches", "abort", *url, "--token", "x")
        assert neither.returncode == 2 and "or --all" in neither.stderr, neither.stderr
    finally:
        HOLD.set()
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        srv.stop()


async def test_a_match_that_ended_while_the_kit_was_away_is_returned_from_its_record(
    db_url: str,
) -> None:
    """The server is killed and the running match is aborted in its database meanwhile
    (``arena matches abort --db``): back,
    the kit does not find it in ``welcome``, reads its record and returns its ``match_end``
    rebuilt from it with the others (an aborted one does not count: another is played)."""
    srv = start_server_process(db_url, house_bots="none")
    again: ServerProcess | None = None
    tokens = [srv.create_bot(f"away{i}") for i in range(2)]
    bots = [
        BotClient(srv.ws_url, token, slow_random, game="othello", games=1, max_retries=50)
        for token in tokens
    ]
    playing = [asyncio.create_task(bot.run()) for bot in bots]
    try:
        cut, _ = await _running_match(srv, 2)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(timeout=10)
        # The administrator ends it while no server runs, so that it is not resumed.
        done = await asyncio.to_thread(_arena, "matches", "abort", "--all", "--db", db_url)
        assert (done.returncode, done.stdout) == (0, f"aborted {cut}\n"), done
        again = start_server_process(db_url, port=srv.port, house_bots="none")
        async with asyncio.timeout(90):
            results = await asyncio.gather(*playing)
    finally:
        await _end(playing, srv, again)
    for bot, ends in zip(bots, results, strict=True):
        assert bot.lost_track == [cut] and bot.lost_aborted == 1
        first, second = ends
        assert (first.match_id, first.termination.value) == (cut, "aborted")
        assert second.termination.value == "normal", ends
