"""kill -9 of ``arena serve`` in the middle of a tournament, and a restart on the same database:
the tournament resumes and completes, the matches the kill cut are resumed (not replayed), no
game is lost or played twice, its rounds are those an uninterrupted run draws, and the ratings
equal a rebuild."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx
import pytest
from _rebuild import assert_ratings_equal_a_rebuild
from _server_process import ADMIN_TOKEN, start_server_process
from _waiting import until_read
from sqlalchemy import text

from ply_arena.protocol.client import BotClient
from ply_arena.server.db.database import Database
from ply_arena.server.tournaments.schedule import round_robin

ENTRANTS = [f"crash{i}" for i in range(5)]


def slow_random(state: Any, legal_moves: list[str], clock: Any) -> str:
    # A few milliseconds a move: long enough that the kill lands mid-tournament.
    time.sleep(0.03)
    return random.choice(legal_moves)


def _api(url: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    return httpx.request(method, url + path, headers=headers, timeout=30, **kwargs)


async def _doc(url: str) -> dict[str, Any]:
    response = await asyncio.to_thread(_api, url, "GET", "/api/tournaments/crashproof")
    assert response.status_code == 200, response.text
    doc: dict[str, Any] = response.json()
    return doc


@pytest.mark.parametrize("format", ["round_robin", "swiss"])
async def test_a_killed_server_resumes_its_tournament_without_losing_or_repeating_a_game(
    db_url: str, format: str
) -> None:
    db = db_url
    server = start_server_process(db)
    port = server.port
    tokens = [server.create_bot(name) for name in ENTRANTS]
    # Two Swiss rounds of five can always be paired without a rematch (more may not be, and the
    # tournament then ends early, by design).
    rounds = {"rounds": 2} if format == "swiss" else {}
    created = _api(
        server.url,
        "POST",
        "/api/tournaments",
        json={
            "name": "crashproof",
            "game": "tic_tac_toe",
            "format": format,
            "bots": ENTRANTS,
            "concurrency": 2,
            "no_show_s": 60,
            **rounds,
        },
    )
    assert created.status_code == 201, created.text
    clients = [
        BotClient(
            server.ws_url, token, slow_random, game="tic_tac_toe", lobby=False, games=0,
            max_backoff_s=0.5,
        )
        for token in tokens
    ]  # fmt: skip
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until_read(
            lambda: asyncio.sleep(0, all(c.bot_name for c in clients)), 30, "bots logged in"
        )
        assert _api(server.url, "POST", "/api/tournaments/crashproof/start").status_code == 200

        async def some_decided_some_playing() -> bool:
            doc = await _doc(server.url)
            games = [g for r in doc["schedule"] for g in r["games"]]
            # Swiss: in the middle of the second round (each round is two games and a bye).
            return doc["games"]["decided"] >= 3 and any(g["status"] == "playing" for g in games)

        await until_read(some_decided_some_playing, 60, "a tournament under way")
        server.proc.kill()  # kill -9: no shutdown, no aborted matches written
        server.proc.wait(timeout=10)
        server.stop()
        before = await _games(db)
        assert any(status == "playing" for _, _, status, _ in before)

        server = start_server_process(db, port=port)  # the bots reconnect to the same address

        async def finished() -> bool:
            return (await _doc(server.url))["status"] == "finished"

        await until_read(finished, 120, "the resumed tournament to finish")
        doc = await _doc(server.url)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.stop()

    games = [g for r in doc["schedule"] for g in r["games"]]
    played = [g for g in games if g["match_id"] is not None]  # not a Swiss bye
    if format == "round_robin":
        # The rounds are those of an uninterrupted run: the same games, boards and seats.
        expected = round_robin(ENTRANTS)  # unrated entrants are seeded by name
        got = [[tuple(g["bots"]) for g in r["games"]] for r in doc["schedule"]]
        assert got == [list(r) for r in expected]
        assert len(played) == 20
    else:
        assert len(doc["schedule"]) == 2 and len(played) == 4
    assert all(g["status"] == "finished" for g in played)
    # Nothing was played again: the games cut by the kill went on in their own matches.
    replayed = [g for g in games if g["replays"]]
    assert not replayed, f"played again: {replayed}; the restarted server's log:\n{server.log}"
    match_ids = [g["match_id"] for g in played]
    assert len(set(match_ids)) == len(played)
    cut = {match for _, match, status, _ in before if status == "playing"}
    assert cut and cut <= set(match_ids), (cut, match_ids)
    stored = dict(await _rows(db, "SELECT id, status FROM matches WHERE origin = 'tournament'"))
    assert stored == {m: "finished" for m in match_ids}  # one match per game, none aborted
    resumed = await _rows(db, "SELECT DISTINCT match_id FROM match_resumes")
    assert {m for (m,) in resumed} <= cut and resumed
    assert sum(r["games"] for r in doc["standings"]) == 2 * len(played)
    await assert_ratings_equal_a_rebuild(db)


async def _rows(db_url: str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of a query, on a connection of the test's own (the server's is another process)."""
    database = Database(db_url)
    try:
        async with database.session() as session:
            return [tuple(row) for row in (await session.execute(text(sql))).all()]
    finally:
        await database.dispose()


async def _games(db_url: str) -> list[tuple[int, str | None, str, str | None]]:
    """Each tournament game: id, match id, status, and its match's status (None: not stored)."""
    rows = await _rows(
        db_url,
        "SELECT g.id, g.match_id, g.status, m.status FROM tournament_games g"
        " LEFT JOIN matches m ON m.id = g.match_id ORDER BY g.id",
    )
    return [(int(a), b, str(c), d) for a, b, c, d in rows]


def slower_random(state: Any, legal_moves: list[str], clock: Any) -> str:
    # A game of about three seconds: the restart surely cuts the one under way.
    time.sleep(0.3)
    return random.choice(legal_moves)


async def test_a_paused_tournament_finishes_the_game_a_restart_cut_off(db_url: str) -> None:
    db = db_url
    server = start_server_process(db)
    port = server.port
    tokens = [server.create_bot(name) for name in ENTRANTS[:3]]
    created = _api(server.url, "POST", "/api/tournaments", json={
        "name": "crashproof", "game": "tic_tac_toe", "format": "round_robin",
        "bots": ENTRANTS[:3], "concurrency": 1})  # fmt: skip
    assert created.status_code == 201, created.text
    clients = [
        BotClient(server.ws_url, t, slower_random, game="tic_tac_toe", lobby=False, games=0,
                  max_backoff_s=0.5)
        for t in tokens
    ]  # fmt: skip
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        await until_read(lambda: asyncio.sleep(0, all(c.bot_name for c in clients)), 30, "logins")
        assert _api(server.url, "POST", "/api/tournaments/crashproof/start").status_code == 200

        async def playing() -> list[dict[str, Any]]:
            games = [g for r in (await _doc(server.url))["schedule"] for g in r["games"]]
            return [g for g in games if g["status"] == "playing"]

        await until_read(playing, 30, "a game under way")
        assert _api(server.url, "POST", "/api/tournaments/crashproof/pause").status_code == 200
        (cut,) = await playing()
        await asyncio.to_thread(server.stop)  # SIGTERM: the match under way is left running
        server = start_server_process(db, port=port)

        async def nothing_playing() -> bool:
            return not await playing()

        # The bots reconnect and play the cut game to its end; paused, nothing else starts.
        await until_read(nothing_playing, 60, "the cut game to end")
        doc = await _doc(server.url)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.stop()
    games = [g for r in doc["schedule"] for g in r["games"]]
    assert doc["status"] == "paused"
    assert sum(g["replays"] for g in games) == 0
    (ended,) = [g for g in games if g["match_id"] == cut["match_id"]]
    assert ended["status"] == "finished" and ended["bots"] == cut["bots"]
    assert [g["status"] for g in games].count("finished") == 1  # the pause held the others


async def test_a_restart_settles_each_cut_off_game_from_what_was_stored(
    live_server: Any, database: Any, store_match: Any
) -> None:
    """The director's recovery, reached on purpose and in-process: a restart finds two games
    left ``playing``. The one whose match was stored finished takes that result and is not
    played again; the one whose match was cut off is played again (the next start replays it) on
    SQLite, and followed on PostgreSQL (where a referee takes its match over)."""
    from _api import post

    from ply_arena.server.repositories import tournaments as repo
    from ply_arena.server.tournaments.director import Directors

    names = [live_server.create_bot(f"settle{i}")[0] for i in range(2)]
    made = post(live_server, "/api/tournaments", live_server.admin_token,
                name="settled", game="tic_tac_toe", bots=names)  # fmt: skip
    assert made.status_code == 201, made.text
    finished = await store_match(database, game="tic_tac_toe", seed=3, bots=names)
    cut_off = await store_match(database, game="tic_tac_toe", seed=4, bots=names, finish=False)
    async with database.session() as session:
        tournament = await repo.tournament_by_name(session, "settled")
        assert tournament is not None
        ids = [p.bot_id for p in await repo.participants(session, tournament)]
        await repo.add_round(session, tournament, 1, [ids, ids[::-1]])
        first, second = await repo.games_of(session, tournament)
        await repo.game_started(session, first.id, finished.match_id)
        await repo.game_started(session, second.id, cut_off.match_id)
        # Paused when the server went down: the next start settles its games, starts none.
        await repo.set_status(session, tournament, "paused")
        await session.commit()

    director = Directors(live_server.app.state.referee, database)
    await director.start()

    async with database.session() as session:
        tournament = await repo.tournament_by_name(session, "settled")
        assert tournament is not None
        first, second = await repo.games_of(session, tournament)
    assert (first.status, first.match_id, first.replays) == ("finished", finished.match_id, 0)
    assert first.termination == finished.termination == "normal"
    assert list(first.payoffs or []) == finished.payoffs
    if database.is_sqlite:
        assert (second.status, second.match_id, second.replays) == ("pending", None, 1)
    else:
        # Several processes may share PostgreSQL: a match stored as running that this one does
        # not play is another's, or one a referee takes over (this one's does, within a lease);
        # its game waits for it instead of being played twice.
        assert (second.status, second.match_id, second.replays) == ("playing", cut_off.match_id, 0)
        assert director.playing(tournament.id) == 1
    await director.stop()
